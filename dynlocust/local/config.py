"""Options of the local endpoint, shared by the command line, the embedded starter and the server."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LocalConfig:
    """Everything that shapes one local endpoint; defaults give a plain, fast, capacity-emulating server."""

    host: str = "127.0.0.1"
    port: int = 8000
    region: str = "us-east-1"
    account_id: str = "000000000000"
    create_delay: float = 0.0
    verify_signatures: bool = False
    credentials: dict[str, str] = field(default_factory=dict, repr=False)
    capacity: bool = True
    capacity_scale: float = 1.0
    time_scale: float = 1.0
    latency_model: bool = False
