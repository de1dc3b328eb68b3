"""What the capacity model keeps per table or GSI: its specification, its budgets (lanes of a GCRA per kind),
and the throttle it answers with. The rules that fill them are `dynlocust.local.capacity`'s."""

from __future__ import annotations

from dataclasses import dataclass

from dynlocust.errors import ConfigurationError
from dynlocust.local.capacity_figures import (
    BASE_READ,
    BASE_WRITE,
    HEADROOM,
    ON_DEMAND,
    PROVISIONED,
)


@dataclass(frozen=True)
class ResourceSpec:
    """One table or one GSI as configured (unscaled units); the server builds one per resource."""

    table: str
    index: str | None
    arn: str
    billing_mode: str
    read_capacity: float | None = None
    write_capacity: float | None = None
    warm_read: float | None = None
    warm_write: float | None = None
    max_read: float | None = None
    max_write: float | None = None


@dataclass(frozen=True)
class Throttle:
    """A rejection: the error code, one throttling reason, the resource ARN and the service's message.

    `cause` is this endpoint's own word on a shared on-demand budget (`CAUSE_*`, None elsewhere): which kind's
    demand filled it, with both kinds' offered load as fractions of the ceiling. The server sends it in the
    `x-dynlocust-throttle-cause` header; the service has no such field, so clients that ignore it lose nothing.
    """

    code: str
    reason: str
    resource: str
    message: str
    cause: str | None = None


class Budget:
    """A GCRA bucket: `tat` in clock seconds, `tol` the burst tolerance in seconds."""

    __slots__ = ("tat", "tol")

    def __init__(self, tat: float, tol: float) -> None:
        self.tat = tat
        self.tol = tol


class Lane:
    """Everything one kind (read or write) of one resource checks on each charge."""

    __slots__ = (
        "big",
        "budget",
        "inv",
        "max_inv",
        "max_tat",
        "max_tol",
        "offered",
        "offered_prev",
        "ok",
        "part_inv",
        "part_tol",
        "parts",
        "t_ceiling",
        "t_key",
        "t_max",
        "units",
    )

    def __init__(self) -> None:
        self.big = 1.0  # largest charge seen, in units: the floors keep room for MIN_TOLERANCE_COSTS of them
        self.budget = Budget(0.0, 0.0)
        self.offered = 0.0  # cost (s of the budget) offered at the ceiling check in the current bin
        self.offered_prev = 0.0  # the same for the bin before
        self.inv = 0.0
        self.max_inv = 0.0
        self.max_tat = 0.0
        self.max_tol = 0.0
        self.part_inv = 0.0
        self.part_tol = 0.0
        self.parts: dict[str, float] = {}
        self.t_ceiling: Throttle | None = None
        self.t_key: Throttle | None = None
        self.t_max: Throttle | None = None
        self.ok = 0
        self.units = 0.0


class Resource:
    __slots__ = (
        "base_read",
        "base_write",
        "bent",
        "bin_end",
        "bin_over",
        "bin_start",
        "bin_used",
        "causes",
        "ceil_read",
        "ceil_write",
        "created",
        "last_od",
        "level",
        "od_seconds",
        "od_since",
        "offer_span",
        "offer_start",
        "on_demand",
        "peak",
        "read",
        "spec",
        "steps",
        "throttled",
        "win_start",
        "win_used",
        "write",
    )

    def __init__(self, spec: ResourceSpec) -> None:
        self.spec = spec
        self.on_demand = spec.billing_mode == ON_DEMAND
        self.read = Lane()
        self.write = Lane()
        self.base_read = BASE_READ
        self.base_write = BASE_WRITE
        self.ceil_read = BASE_READ * HEADROOM
        self.ceil_write = BASE_WRITE * HEADROOM
        self.created = 0.0
        self.level = 0
        self.peak = 0.0
        self.win_start = 0.0
        self.win_used = 0.0
        self.bin_start = 0.0
        self.bin_end = 0.0
        self.bin_used = 0.0
        self.bin_over = False
        self.od_since = -1.0
        self.last_od = -1.0
        self.od_seconds = 0.0
        self.throttled: dict[str, int] = {}
        self.causes: dict[str, int] = {}
        self.steps: list[tuple[float, float]] = []
        self.bent: dict[str, str] = {}  # "write burst" -> the notice said when a floor bent that figure
        self.offer_start = 0.0
        self.offer_span = 0.0


def check_spec(spec: ResourceSpec) -> None:
    where = f"resource {spec.table!r}" + (f" index {spec.index!r}" if spec.index else "")
    if spec.billing_mode not in (ON_DEMAND, PROVISIONED):
        raise ConfigurationError(
            f"capacity model: expected billing_mode {ON_DEMAND!r} or {PROVISIONED!r}, "
            f"found {spec.billing_mode!r} for {where}"
        )
    if spec.billing_mode == PROVISIONED:
        for name in ("read_capacity", "write_capacity"):
            value = getattr(spec, name)
            if value is None or value <= 0:
                raise ConfigurationError(
                    f"capacity model: expected a positive {name} for provisioned {where}, found {value!r}"
                )
    for name in ("warm_read", "warm_write", "max_read", "max_write"):
        value = getattr(spec, name)
        if value is not None and value <= 0 and not (name.startswith("max") and value == -1):
            raise ConfigurationError(f"capacity model: expected {name} > 0 or None for {where}, found {value!r}")


def kind_of(lane: Lane, res: Resource) -> str:
    return "Write" if lane is res.write else "Read"
