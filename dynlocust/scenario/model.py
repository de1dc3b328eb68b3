"""The scenario data model: what a YAML scenario means once loaded and checked.

Every class is a frozen dataclass so a scenario can be shared by the master, the workers and the report without
anyone changing it under the others. Durations are seconds (float), rates are requests/s of the whole fleet, sizes
are bytes. The loader (`dynlocust.scenario.loader`) is the only place that builds these from text and the only
place that checks them; the constructors trust their arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from dynlocust.dynamodb import ON_DEMAND_BURST_S
from dynlocust.errors import DynlocustError

KeyType = Literal["S", "N", "B"]
Billing = Literal["on_demand", "provisioned"]
Projection = Literal["all", "keys_only", "include"]
TransportName = Literal["boto3", "fast"]
ShardMode = Literal["hash", "round_robin", "random"]
OpKind = Literal[
    "put",
    "conditional_put",
    "get",
    "query",
    "gsi_query",
    "scan",
    "update",
    "delete",
    "transact_write",
    "batch_write",
    "batch_get",
]

OP_KINDS: tuple[OpKind, ...] = get_args(OpKind)
"""Every operation kind, in the order `OpKind` lists them (the order the schema and the docs show)."""

#: Operations that create new items: their keys default to the workload's key distribution. Every other operation
#: addresses items that must already exist to mean anything, so its keys default to the table's seeded keyspace.
#: (Whether a request *writes* is the API's business: `dynlocust.request.record.is_write`.)
FRESH_KEY_OPS: frozenset[OpKind] = frozenset({"put", "conditional_put", "transact_write", "batch_write"})
WRITE_OPS: frozenset[OpKind] = FRESH_KEY_OPS | {"update", "delete"}
"""The operations a search with `op: write` keeps (the others read)."""


class ScenarioError(DynlocustError):
    """A scenario cannot be used as written; the message is one paragraph: `file:line: key.path: what`."""

    def __init__(self, source: str, line: int | None, path: str, message: str) -> None:
        self.source = source
        self.line = line
        self.path = path
        self.detail = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {path}: {message}" if path else f"{where}: {message}")


# --------------------------------------------------------------------------------------------------- target


@dataclass(frozen=True)
class LocalTarget:
    """The embedded local endpoint; `capacity_scale` shrinks the emulated capacity so a laptop can hit it."""

    capacity_scale: float = 1.0
    time_scale: float = 1.0


@dataclass(frozen=True)
class RemoteTarget:
    """A real (or compatible) endpoint. Fields left `None` come from command-line options / env at run time."""

    endpoint: str | None = None
    region: str | None = None
    profile: str | None = None


Target = LocalTarget | RemoteTarget


# --------------------------------------------------------------------------------------------------- tables


GSI_VALUES = 100
"""Distinct values a GSI key attribute without `values` gets (a hash of the item key): few enough that a GSI query
finds items, enough to spread them."""


@dataclass(frozen=True)
class KeyAttribute:
    """A key attribute; `values` (GSI key attributes only) is the distribution writes draw its values from."""

    name: str
    type: KeyType = "S"
    values: KeySpec | None = None


@dataclass(frozen=True)
class Throughput:
    """A read/write pair: provisioned capacity units, warm throughput or an on-demand maximum."""

    read: int
    write: int


@dataclass(frozen=True)
class Gsi:
    name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None = None
    projection: Projection = "all"
    non_key_attributes: tuple[str, ...] = ()
    provisioned: Throughput | None = None
    max_on_demand: Throughput | None = None


@dataclass(frozen=True)
class Seed:
    """Items written before the run so reads find something: keys `keyspace_key(0 .. items-1)`."""

    items: int
    item_size: int = 1024
    items_per_partition: int = 1


@dataclass(frozen=True)
class Table:
    """One table of the scenario. `name` is logical: the run creates `<name>-<run id>` unless
    `use_existing` is set, in which case it writes into `existing_table_name` (acknowledged explicitly)."""

    name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None = None
    billing: Billing = "on_demand"
    provisioned: Throughput | None = None
    warm_throughput: Throughput | None = None
    max_on_demand: Throughput | None = None
    gsis: tuple[Gsi, ...] = ()
    use_existing: bool = False
    existing_table_name: str | None = None
    seed: Seed | None = None

    def gsi(self, name: str) -> Gsi | None:
        return next((g for g in self.gsis if g.name == name), None)

    @property
    def keyspace(self) -> int | None:
        """Number of seeded partition keys (`None` if the table is not seeded)."""
        if self.seed is None:
            return None
        return -(-self.seed.items // self.seed.items_per_partition)


# --------------------------------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class UniformKeys:
    """Uniform keys: fresh random UUIDs, or uniform over `keyspace` keys when one is known."""

    keyspace: int | None = None


@dataclass(frozen=True)
class ZipfKeys:
    """Zipf over `keyspace` keys ranked 0..N-1: P(rank k) ~ 1/(k+1)^s."""

    s: float = 1.1
    keyspace: int | None = None


@dataclass(frozen=True)
class HotSpotKeys:
    """A `fraction` of the keyspace receives `traffic` of the requests."""

    fraction: float = 0.01
    traffic: float = 0.9
    keyspace: int | None = None


@dataclass(frozen=True)
class SequentialKeys:
    """Keys `start, start+1, ...`, strided across workers so no two workers produce the same key."""

    start: int = 0
    keyspace: int | None = None


@dataclass(frozen=True)
class ShardedKeys:
    """Write sharding: each base key gets a suffix `#<shard>` with shard in 0..shards-1."""

    shards: int = 4
    mode: ShardMode = "hash"
    base: KeySpec = field(default_factory=UniformKeys)


KeySpec = UniformKeys | ZipfKeys | HotSpotKeys | SequentialKeys | ShardedKeys


# --------------------------------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class Operation:
    """One entry of the weighted operation mix.

    `keys` is resolved by the loader: the op's own `keys`, else the workload's, with a missing keyspace
    filled in from the table's seed for operations that read existing items; `None` only for `scan`.
    `items` is the number of items per call for batch and transaction operations, 1 otherwise.
    """

    op: OpKind
    weight: float
    table: str
    label: str
    consistent: bool = False
    index: str | None = None
    filter: str | None = None
    items: int = 1
    limit: int | None = None
    item_size: int | None = None
    keys: KeySpec | None = None


@dataclass(frozen=True)
class Workload:
    item_size: int
    keys: KeySpec
    operations: tuple[Operation, ...]

    @property
    def total_weight(self) -> float:
        return sum(o.weight for o in self.operations)


# --------------------------------------------------------------------------------------------------- load


@dataclass(frozen=True)
class Step:
    """One window of constant offered load."""

    rate: float
    duration: float


SearchOp = Literal["write", "read"]

BURST_SHARE = 0.25
"""Of a search's precision, the most a probe window's burst may hide: the window is at least
`burst / (BURST_SHARE * precision)` long. A probe that far over the ceiling may pass clean (the burst absorbs its
excess), so the bracket can close only if such probes are rarer than half the precision: a quarter leaves room
for the throttles a probe must show to count (`dynlocust.run.search.THROTTLE_SHARE`)."""


def burst_seconds(target: Target) -> float:
    """Wall-clock seconds of the longest on-demand burst at `target` (`ON_DEMAND_BURST_S`): the service's, or the
    embedded endpoint's, whose clock runs `time_scale` times faster."""
    return ON_DEMAND_BURST_S / target.time_scale if isinstance(target, LocalTarget) else ON_DEMAND_BURST_S


def shortest_probe(precision: float, target: Target) -> float:
    """The shortest probe window a search at `precision` may use at `target` (see `BURST_SHARE`)."""
    return burst_seconds(target) / (BURST_SHARE * precision)


@dataclass(frozen=True)
class Search:
    """A ceiling search (`dynlocust.run.search` runs it): probe windows of `window` seconds from `start` req/s,
    times `factor` until one is throttled, then bisection until the bracket is narrower than `precision`, at most
    `max_windows` probes, `cooldown` seconds of rest between them; `op` restricts the mix to writes or reads."""

    start: float
    window: float
    factor: float = 1.5
    precision: float = 0.02
    max_windows: int = 15
    cooldown: float = 0.0
    op: SearchOp | None = None

    def planned_steps(self, max_rate: float) -> tuple[Step, ...]:
        """The probes at the highest rate each could offer (`start * factor^k`, at most `max_rate`)."""
        return tuple(Step(min(max_rate, self.start * self.factor**k), self.window) for k in range(self.max_windows))


@dataclass(frozen=True)
class Phase:
    """A named group of steps; `kind` records the sugar it was written with (ramp, steps, hold, search).

    A search's steps are its probes at the highest rates it could reach (`start * factor^k`): what ceilings and
    estimates plan for; the rates it offers are decided window by window."""

    name: str
    kind: Literal["ramp", "steps", "hold", "search"]
    steps: tuple[Step, ...]
    search: Search | None = None

    @property
    def duration(self) -> float:
        return sum(s.duration for s in self.steps)


@dataclass(frozen=True)
class Limits:
    """Hard ceilings: the run aborts itself past either one."""

    max_requests: int | None = None
    max_cost_dollars: float | None = None


@dataclass(frozen=True)
class Slo:
    """A per-window pass/fail rule. `window` is `"all"`, a window index (a scenario's number - 1), or a phase.

    The rule only applies to windows whose offered rate is within `[applies_from_rate, applies_below_rate)`.
    Thresholds left `None` are not checked.
    """

    window: str | int = "all"
    max_throttle_ratio: float | None = None
    max_error_ratio: float | None = None
    max_dropped_ratio: float | None = None
    max_p50_ms: float | None = None
    max_p99_ms: float | None = None
    min_achieved_ratio: float | None = None
    applies_below_rate: float | None = None
    applies_from_rate: float | None = None

    def applies_to(self, window_index: int, phase: str, rate: float) -> bool:
        if self.window != "all" and self.window != window_index and self.window != phase:
            return False
        if self.applies_below_rate is not None and rate >= self.applies_below_rate:
            return False
        return not (self.applies_from_rate is not None and rate < self.applies_from_rate)


# --------------------------------------------------------------------------------------------------- scenario


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str
    description: str
    target: Target
    transport: TransportName
    tables: tuple[Table, ...]
    workload: Workload
    phases: tuple[Phase, ...]
    concurrency: int
    deadline: float
    limits: Limits
    slos: tuple[Slo, ...]
    bin: float
    random_seed: int = 0

    @property
    def is_local(self) -> bool:
        return isinstance(self.target, LocalTarget)

    @property
    def search(self) -> Search | None:
        """The ceiling search, when the scenario is one (a search is a scenario's only phase)."""
        return self.phases[0].search if self.phases else None

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(s for p in self.phases for s in p.steps)

    @property
    def total_duration(self) -> float:
        return sum(p.duration for p in self.phases)

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)
