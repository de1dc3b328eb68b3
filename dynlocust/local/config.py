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
    # connection limits (issue 16): a slow, idle or greedy client can hold only bounded time, sockets and memory
    header_timeout: float = 10.0  # seconds from a request's first byte until its head is complete
    body_timeout: float = 30.0  # seconds from the end of the head until the body is complete
    idle_timeout: float = 60.0  # seconds a keep-alive connection may wait for its next request
    max_connections: int = 1000  # open connections at once; more are answered 503 and closed
    max_buffered_bytes: int = 64 * 1024 * 1024  # request bodies being received at once, all connections together
