"""Capacity (throttling) model of the local endpoint, calibrated to `reference/service-behaviour.md`.

Why a model at all: a load test against an endpoint that never says no rehearses nothing. This one says no the
way a brand-new DynamoDB table was measured to: nothing rejected up to the baseline, a short burst above it, then
a flat ceiling that grows in sudden steps under sustained over-demand.

Every limit is a GCRA token bucket (one float per bucket: the "theoretical arrival time", TAT). A request of cost
``c`` seconds is accepted when ``max(TAT, now) + c - now <= tolerance``; that is a token bucket refilled at the
rate with ``tolerance * rate`` units of burst, and a request that would overdraw it is rejected and consumes
nothing. A request larger than the whole bucket is still accepted when the bucket is full (else a 400 KB item
could never be written at a tiny ``capacity_scale``).

Calibration (all rates times ``capacity_scale``, all durations divided by ``time_scale``):

* On-demand ceiling: one budget shared by reads and writes (a linear mix, 1 WRU = 3 RRU at the defaults): a read
  costs ``units / read_ceiling`` seconds, a write ``units / write_ceiling``. Baselines 4,000 WRU/s and
  12,000 RRU/s (``WarmThroughput`` replaces them when higher); the ceiling is baseline x 4,130/4,000, so 4,000
  offered never throttles and over-demand is accepted at 4,130/s exactly.
* Burst: 0.85 s of the baseline (3,400 WRU for a new table). First throttle at ``B / (offered - ceiling)``:
  8,000 offered -> 0.88 s, 6,000 -> 1.82 s, 5,000 (the first 1,000/s step above baseline, what the measurement
  calls just above) -> 3.91 s; 4,200 -> 48.6 s (barely above the ceiling, the burst lasts long).
* Over-demand: a one-second bin in which at least one request hit the table/index ceiling. A run of over-demand
  survives gaps up to 60 s; a longer quiet spell resets it (the reached level stays: partitions do not merge).
* Growth: after 480 s of over-demand (the first ceiling held 8 full minutes) the ceiling steps up by a quarter
  of the baseline (1,000 WRU/s new), then every further 600 s of over-demand: 4,130 -> 5,130 (8 min) -> 6,130
  (18 min) -> 7,130 (28 min), so ~7,000/s after 34 min at 8,000 offered, below a clean doubling. A step never
  takes the ceiling beyond twice the peak accepted rate (best 10 s window so far); growth stops when demand
  fits. Not modelled: the plateau near 7,000/s a 2019 study saw under 9,000 offered (here 8,130 at 38 min).
* Reads above 12,000 RRU/s were not measured (the client fleet was the limit): they use the same mechanism in
  read units (ceiling 12,390 RRU/s, burst 10,200 RRU, shared growth).
* Reason of a ceiling throttle: ``KeyRangeThroughputExceeded``. The 16 documented reasons have no "new table"
  kind; a new table's ceiling is its partitions' limits (4,000 WRU = 4 x 1,000) and growth is partition splits,
  which the service reports as key-range throttles (hence the hot-key hint in the measured message).
  ``AccountLimitExceeded`` is kept for the per-table quota (40,000 RRU and 40,000 WRU) when it is what binds.
* ``OnDemandThroughput`` max: a separate bucket per kind at the max rate with 1 s of burst, checked first,
  reason ``MaxOnDemandThroughputExceeded``, with the on-demand message (no other wording was observed).
* Per partition key value: 1,000 write and 3,000 read units/s, 1 s of burst, reason ``KeyRangeThroughputExceeded``
  (checked before the table budget, so a hot key throttles while the table is under its ceiling).
* Provisioned: a bucket per kind at the provisioned rate holding up to 300 s of unused capacity; a new
  resource starts with 1 s of credit (at least one unit) and accrues the rest while idle.
* A write to a table with GSIs is several charges; when a later one throttles, ``refund`` the earlier ones.

Time scale floors (``time_scale`` > 1 only; at ``time_scale`` 1 every figure above holds as stated). Dividing a
tolerance by ``time_scale`` can push it below one request's cost or below the jitter of real arrivals (at
capacity_scale 0.01 and time_scale 60 the table's burst is 0.57 units, 14 ms against a 24 ms cost): such a GCRA
accepts a request only when the previous one has fully drained, so 80 jittery writes/s offered were accepted at
~28/s instead of 41.3/s, and a grown ceiling was never reached. So every tolerance is at least
``MIN_TOLERANCE_S`` of wall-clock time and ``MIN_TOLERANCE_COSTS`` units, capped at its unscaled value; the
burst then lasts longer than its scaled figure (at 0.01 and 60: 3.3 units, first throttle at 80 offered after
0.085 s, not 0.88 s / 60). Likewise the peak window is at least
``MIN_PEAK_WINDOW_S`` (so a burst in a tiny window is no peak) and the over-demand grace at least ``MIN_GRACE_S``
(so arrival jitter does not break a run). Growth timing (holds, bins) is scaled exactly.

Not thread-safe: the server calls it from one thread (greenlets switch only on I/O).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dynlocust.errors import ConfigurationError

ON_DEMAND = "PAY_PER_REQUEST"
PROVISIONED = "PROVISIONED"

BASE_WRITE = 4000.0
BASE_READ = 12000.0
HEADROOM = 4130.0 / 4000.0
BURST_S = 0.85
GROWTH_STEP = 0.25
FIRST_HOLD_S = 480.0
NEXT_HOLD_S = 600.0
GRACE_S = 60.0
BIN_S = 1.0
PEAK_WINDOW_S = 10.0
TABLE_QUOTA = 40000.0
PARTITION_WRITE = 1000.0
PARTITION_READ = 3000.0
PARTITION_BURST_S = 1.0
MAX_CAP_BURST_S = 1.0
PROVISIONED_CREDIT_S = 300.0
PROVISIONED_START_CREDIT_S = 1.0
PRUNE_ABOVE = 1024
# Floors under time scaling (module docstring). 0.08 s leaves the table burst at time_scale 10 as scaled (0.082 s).
MIN_TOLERANCE_S = 0.08
MIN_TOLERANCE_COSTS = 3.0
MIN_PEAK_WINDOW_S = 1.0
MIN_GRACE_S = 0.5

ON_DEMAND_TABLE_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
ON_DEMAND_INDEX_MESSAGE = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is "
    "automatically scaling your index so please try again shortly."
)
PROVISIONED_TABLE_MESSAGE = (
    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your "
    "provisioning level with the UpdateTable API."
)
PROVISIONED_INDEX_MESSAGE = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
    "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
    "with the UpdateTable API."
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
    """A rejection: the error code, one throttling reason, the resource ARN and the service's message."""

    code: str
    reason: str
    resource: str
    message: str


class _Budget:
    """A GCRA bucket: ``tat`` in clock seconds, ``tol`` the burst tolerance in seconds."""

    __slots__ = ("tat", "tol")

    def __init__(self, tat: float, tol: float) -> None:
        self.tat = tat
        self.tol = tol


class _Lane:
    """Everything one kind (read or write) of one resource checks on each charge."""

    __slots__ = (
        "budget",
        "inv",
        "max_inv",
        "max_tat",
        "max_tol",
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
        self.budget = _Budget(0.0, 0.0)
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


class _Resource:
    __slots__ = (
        "base_read",
        "base_write",
        "bin_end",
        "bin_over",
        "bin_start",
        "bin_used",
        "ceil_read",
        "ceil_write",
        "created",
        "last_od",
        "level",
        "od_seconds",
        "od_since",
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
        self.read = _Lane()
        self.write = _Lane()
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
        self.steps: list[tuple[float, float]] = []


def _check_spec(spec: ResourceSpec) -> None:
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


class CapacityModel:
    """Decides, per request, whether a table or GSI has the capacity for it; see the module docstring."""

    def __init__(
        self,
        *,
        capacity_scale: float = 1.0,
        time_scale: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not capacity_scale > 0 or not time_scale > 0:
            raise ConfigurationError(
                "capacity model: expected capacity_scale > 0 and time_scale > 0, "
                f"found capacity_scale={capacity_scale!r}, time_scale={time_scale!r}"
            )
        self.capacity_scale = float(capacity_scale)
        self.time_scale = float(time_scale)
        self._clock = clock
        self._bin = BIN_S / self.time_scale
        self._grace = max(GRACE_S / self.time_scale, MIN_GRACE_S)
        self._peak_window = max(PEAK_WINDOW_S / self.time_scale, MIN_PEAK_WINDOW_S)
        self._resources: dict[str, dict[str | None, _Resource]] = {}

    # ---- configuration -------------------------------------------------------------------------------------

    def add_resource(self, spec: ResourceSpec) -> None:
        """Register a new table or GSI with fresh state (a full burst allowance, baseline ceiling)."""
        _check_spec(spec)
        res = _Resource(spec)
        now = self._clock()
        res.created = res.bin_start = res.win_start = now
        res.bin_end = now + self._bin
        self._configure(res, spec, now, fresh=True)
        self._resources.setdefault(spec.table, {})[spec.index] = res

    def update_resource(self, spec: ResourceSpec) -> None:
        """Apply an UpdateTable: keeps reached growth and bucket state unless the billing mode changed."""
        current = self._resources.get(spec.table, {}).get(spec.index)
        if current is None or (current.spec.billing_mode != spec.billing_mode):
            self.add_resource(spec)
            return
        _check_spec(spec)
        self._configure(current, spec, self._clock(), fresh=False)

    def remove_table(self, table: str) -> None:
        """Forget a table and all its GSIs (unknown tables are ignored: DeleteTable reports its own errors)."""
        self._resources.pop(table, None)

    def _configure(self, res: _Resource, spec: ResourceSpec, now: float, *, fresh: bool) -> None:
        res.spec = spec
        cs = self.capacity_scale
        ts = self.time_scale
        prefix = "Index" if spec.index else "Table"
        if res.on_demand:
            code = "ThrottlingException"
            message = ON_DEMAND_INDEX_MESSAGE if spec.index else ON_DEMAND_TABLE_MESSAGE
            # Warm throughput raises the baseline; it never lowers a ceiling the table already grew to.
            res.base_write = max(res.base_write, spec.warm_write or 0.0)
            res.base_read = max(res.base_read, spec.warm_read or 0.0)
            res.ceil_write = max(res.ceil_write, res.base_write * HEADROOM)
            res.ceil_read = max(res.ceil_read, res.base_read * HEADROOM)
            if fresh:
                res.write.budget = res.read.budget = _Budget(now, 0.0)
            self._apply_ceilings(res, now)
        else:
            code = "ProvisionedThroughputExceededException"
            message = PROVISIONED_INDEX_MESSAGE if spec.index else PROVISIONED_TABLE_MESSAGE
            for lane, rate in ((res.read, spec.read_capacity), (res.write, spec.write_capacity)):
                assert rate is not None
                lane.inv = 1.0 / (rate * cs)
                tol = _tolerance(PROVISIONED_CREDIT_S, ts, lane.inv)
                if fresh:
                    start_credit = max(PROVISIONED_START_CREDIT_S / ts, lane.inv)
                    lane.budget = _Budget(now + tol - start_credit, tol)
                lane.budget.tol = tol
                lane.t_ceiling = Throttle(
                    code, f"{prefix}{_kind(lane, res)}ProvisionedThroughputExceeded", spec.arn, message
                )
        for lane, max_units, part_rate in (
            (res.read, spec.max_read, PARTITION_READ),
            (res.write, spec.max_write, PARTITION_WRITE),
        ):
            kind = _kind(lane, res)
            lane.part_inv = 1.0 / (part_rate * cs)
            lane.part_tol = _tolerance(PARTITION_BURST_S, ts, lane.part_inv)
            lane.t_key = Throttle(code, f"{prefix}{kind}KeyRangeThroughputExceeded", spec.arn, message)
            if res.on_demand and max_units is not None and max_units > 0:
                lane.max_inv = 1.0 / (max_units * cs)
                lane.max_tol = _tolerance(MAX_CAP_BURST_S, ts, lane.max_inv)
                if fresh:
                    lane.max_tat = now
                lane.t_max = Throttle(code, f"{prefix}{kind}MaxOnDemandThroughputExceeded", spec.arn, message)
            else:
                lane.max_inv = 0.0
                lane.t_max = None

    def _apply_ceilings(self, res: _Resource, now: float) -> None:
        """Set on-demand costs and ceiling reasons from the grown ceilings (and the per-table quota).

        Outstanding debt is kept in units, not seconds, so a step up takes effect at once.
        """
        old_inv = res.write.inv
        cs = self.capacity_scale
        spec = res.spec
        prefix = "Index" if spec.index else "Table"
        message = ON_DEMAND_INDEX_MESSAGE if spec.index else ON_DEMAND_TABLE_MESSAGE
        for lane, level_rate in ((res.read, res.ceil_read), (res.write, res.ceil_write)):
            quota_bound = level_rate >= TABLE_QUOTA
            lane.inv = 1.0 / (min(level_rate, TABLE_QUOTA) * cs)
            limit = "AccountLimitExceeded" if quota_bound else "KeyRangeThroughputExceeded"
            lane.t_ceiling = Throttle("ThrottlingException", f"{prefix}{_kind(lane, res)}{limit}", spec.arn, message)
        budget = res.write.budget
        if old_inv and budget.tat > now:
            budget.tat = now + (budget.tat - now) * res.write.inv / old_inv
        # The burst is BURST_S of the baseline in units; as a tolerance it is measured at the current ceiling.
        budget.tol = _tolerance(BURST_S * res.base_write * cs * res.write.inv, self.time_scale, res.write.inv)

    # ---- the hot path --------------------------------------------------------------------------------------

    def charge(self, table: str, index: str | None, kind: str, units: float, partition: str) -> Throttle | None:
        """Charge ``units`` of ``kind`` ("read" | "write") to one resource and one partition key value.

        Returns None when accepted (capacity consumed) or the Throttle when rejected (nothing consumed).
        An unknown table or index is not throttled: the store reports ResourceNotFound on its own.
        """
        try:
            res = self._resources[table][index]
        except KeyError:
            return None
        now = self._clock()
        if now >= res.bin_end:
            self._roll(res, now)
        lane = res.write if kind == "write" else res.read
        if lane.max_inv:
            mt = lane.max_tat
            if mt < now:
                mt = now
            new_mt = mt + units * lane.max_inv
            if new_mt - now > lane.max_tol and mt > now:
                return self._reject(res, lane.t_max)
        parts = lane.parts
        pt = parts.get(partition, now)
        if pt < now:
            pt = now
        new_pt = pt + units * lane.part_inv
        if new_pt - now > lane.part_tol and pt > now:
            return self._reject(res, lane.t_key)
        budget = lane.budget
        bt = budget.tat
        if bt < now:
            bt = now
        cost = units * lane.inv
        if bt + cost - now > budget.tol and bt > now:
            res.bin_over = True
            return self._reject(res, lane.t_ceiling)
        budget.tat = bt + cost
        parts[partition] = new_pt
        if lane.max_inv:
            lane.max_tat = new_mt
        res.bin_used += cost
        lane.ok += 1
        lane.units += units
        return None

    def refund(self, table: str, index: str | None, kind: str, units: float, partition: str) -> None:
        """Undo an accepted ``charge`` with the same arguments.

        For writes that touch several resources (a table and its GSIs): when a later resource throttles, the
        request is rejected as a whole, so what the earlier ones accepted must be given back.
        """
        try:
            res = self._resources[table][index]
        except KeyError:
            return
        lane = res.write if kind == "write" else res.read
        cost = units * lane.inv
        lane.budget.tat -= cost
        res.bin_used -= cost
        pt = lane.parts.get(partition)
        if pt is not None:
            lane.parts[partition] = pt - units * lane.part_inv
        if lane.max_inv:
            lane.max_tat -= units * lane.max_inv
        lane.ok -= 1
        lane.units -= units

    def _reject(self, res: _Resource, throttle: Throttle | None) -> Throttle:
        assert throttle is not None
        counts = res.throttled
        counts[throttle.reason] = counts.get(throttle.reason, 0) + 1
        return throttle

    def _roll(self, res: _Resource, now: float) -> None:
        """Close the one-second bin: over-demand run, growth step, peak; prune idle partition entries."""
        binlen = self._bin
        if res.on_demand:
            # Peak accepted write-equivalent rate (unscaled units per clock second) over 10 s windows, so the
            # burst of the first second does not count as a peak. Before any step: the bin was charged at the
            # old cost.
            res.win_used += res.bin_used / res.write.inv / self.capacity_scale
            span = res.bin_end - res.win_start
            if span >= self._peak_window - 1e-9:
                rate = res.win_used / span
                if rate > res.peak:
                    res.peak = rate
                res.win_used = 0.0
                res.win_start = -1.0
            if res.bin_over:
                if res.od_since < 0 or res.bin_start - res.last_od > self._grace:
                    res.od_since = res.bin_start
                    res.last_od = res.bin_start
                # Unscaled seconds credited towards growth, bridged pauses included (as the hold timer counts).
                res.od_seconds += (res.bin_end - res.last_od) * self.time_scale
                res.last_od = res.bin_end
                hold = (FIRST_HOLD_S if res.level == 0 else NEXT_HOLD_S) / self.time_scale
                if res.bin_end - res.od_since >= hold - 1e-9:
                    self._step(res, now)
                    res.od_since = res.bin_end
            elif res.od_since >= 0 and now - res.last_od > self._grace:
                res.od_since = -1.0
        for lane in (res.read, res.write):
            if len(lane.parts) > PRUNE_ABOVE:
                lane.parts = {k: v for k, v in lane.parts.items() if v > now}
        res.bin_start = res.bin_end if now < res.bin_end + binlen else now
        res.bin_end = res.bin_start + binlen
        if res.win_start < 0:
            res.win_start = res.bin_start
        res.bin_used = 0.0
        res.bin_over = False

    def _step(self, res: _Resource, now: float) -> None:
        """One sudden growth step, never beyond twice the peak accepted write-equivalent rate (unscaled)."""
        peak = res.peak
        if min(res.ceil_read, res.ceil_write) >= TABLE_QUOTA:
            return
        target = min(res.ceil_write + GROWTH_STEP * res.base_write, 2.0 * peak)
        if target <= res.ceil_write:
            return
        ratio = target / res.ceil_write
        res.level += 1
        res.ceil_write = target
        res.ceil_read *= ratio
        res.steps.append((res.bin_end, target * self.capacity_scale))
        self._apply_ceilings(res, now)

    # ---- observation ---------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Current ceilings and allowances per resource, keyed ``table`` or ``table/index/name``.

        Rates are units/s and allowances units, both scaled (what this endpoint enforces).
        """
        now = self._clock()
        out: dict[str, Any] = {}
        for table, by_index in self._resources.items():
            for index, res in by_index.items():
                out[table if index is None else f"{table}/index/{index}"] = self._describe(res, now)
        return out

    def _describe(self, res: _Resource, now: float) -> dict[str, Any]:
        spec = res.spec
        info: dict[str, Any] = {
            "table": spec.table,
            "index": spec.index,
            "arn": spec.arn,
            "billing_mode": spec.billing_mode,
            "accepted": {"read": res.read.ok, "write": res.write.ok},
            "accepted_units": {"read": res.read.units, "write": res.write.units},
            "throttled": dict(res.throttled),
            "partitions_tracked": len(res.read.parts) + len(res.write.parts),
        }
        for name, lane in (("read", res.read), ("write", res.write)):
            rate = 1.0 / lane.inv
            budget = lane.budget
            info[f"{name}_ceiling"] = rate
            info[f"{name}_allowance"] = max(0.0, (budget.tol - max(budget.tat - now, 0.0)) * rate)
            info[f"{name}_burst"] = budget.tol * rate
            info[f"max_{name}"] = 1.0 / lane.max_inv if lane.max_inv else None
        if res.on_demand:
            info.update(
                level=res.level,
                peak_write_rate=res.peak * self.capacity_scale,
                over_demand=res.od_since >= 0,
                over_demand_seconds=res.od_seconds,
                steps=[{"after_s": at - res.created, "write_ceiling": rate} for at, rate in res.steps],
            )
        return info


def _tolerance(unscaled_s: float, time_scale: float, inv: float) -> float:
    """``unscaled_s / time_scale``, but never below what lets a bucket of cost ``inv`` s/unit accept at its full
    rate under jittery arrivals, nor above ``unscaled_s`` (time_scale 1 stays exactly as calibrated)."""
    return max(unscaled_s / time_scale, min(unscaled_s, max(MIN_TOLERANCE_S, MIN_TOLERANCE_COSTS * inv)))


def _kind(lane: _Lane, res: _Resource) -> str:
    return "Write" if lane is res.write else "Read"
