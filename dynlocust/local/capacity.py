"""Capacity (throttling) model of the local endpoint: one documented model, each limit with its source.

Why a model at all: a load test against an endpoint that never says no rehearses nothing. This one says no the
way DynamoDB documents and was measured to. Sources, cited by name below: the developer guide (DG) pages
"Pre-warming a table for on-demand capacity mode" (pre-warming-on-demand-capacity-mode.html), "Understanding
DynamoDB warm throughput" and "... in different scenarios" (warm-throughput.html, warm-throughput-scenarios.html),
"DynamoDB on-demand capacity mode" (on-demand-capacity-mode.html), "Quotas" (Limits.html), "DynamoDB burst and
adaptive capacity" (burst-adaptive-capacity.html), "Key range throughput exceeded" (throttling-key-range-limit-
exceeded-mitigation.html), the API reference's OnDemandThroughput and ProvisionedThroughput; and the project's
measurement of a new on-demand table, ../shared/reference/service-behaviour.md ("service-behaviour": its table
"On-demand write ceiling of a new table") with ../shared/reference/dynamodb-facts.md ("facts": "Capacity and
money").
docs/local-endpoint-capacity.md says the same for users.

Every limit is a GCRA token bucket (one float per bucket: the "theoretical arrival time", TAT). A request of cost
`c` seconds is accepted when `max(TAT, now) + c - now <= tolerance`; that is a token bucket refilled at the
rate with `tolerance * rate` units of burst, and a request that would overdraw it is rejected and consumes
nothing. A request larger than the whole bucket is still accepted when the bucket is full.

The limits (all rates times `capacity_scale`, all durations divided by `time_scale`):

* New on-demand table or GSI: "up to 4,000 writes per second and 12,000 reads per second" (DG pre-warming; the
  DG warm-throughput scenarios: a new on-demand table "starts with a warm throughput of 12,000 read units per
  second and 4,000 write units per second"; facts: "or a linear mix"). Reads and writes combine: the model gives
  them ONE budget, a read costing `units / read_ceiling` seconds of it, a write `units / write_ceiling`
  (1 WRU = 3 RRU at the defaults), so 2,000 WRU/s + 6,000 RRU/s fills it exactly. The measured ceiling is
  baseline x 4,130/4,000 (service-behaviour: "pinned at 4,130 +/- 2 writes/s"), so 4,000 offered never throttles.
* The choice the documentation leaves open: how that one budget is shared between reads and writes under
  over-demand. The model arbitrates first come, first served on the budget: a request is accepted when what has
  refilled covers it, so under over-demand the cheaper requests (a 1 RRU read costs a third of a 1 WRU write)
  get through more often than their share of arrivals. Why shared rather than two budgets: the table-level
  figure is documented as one capacity ("4,000 ... or 12,000", a linear mix), while the separate figures are
  per partition (below), which a two-budget model would have turned into a table-level 16,000 units. Why a
  rehearsal must say so: with writes over the ceiling, reads far below 12,000 RRU/s are refused; such a ceiling
  throttle carries `Throttle.cause` (`CAUSE_WRITES` "writes-over-ceiling", `CAUSE_READS`,
  `CAUSE_MIX`, with both kinds' offered load as fractions of the ceiling), sent as the response header
  `x-dynlocust-throttle-cause` beside the service's own `ThrottlingReasons` (unchanged, so any client works).
  The client reads it onto the request record (`Outcome.cause`), the window tally counts it (`throttle_causes`)
  and the report and conclusion word it ("reads throttled: writes over the ceiling hold the table's shared
  on-demand capacity"); against the service, which sends no such header, nothing changes.
* Burst: 0.85 s of the baseline (3,400 WRU for a new table). First throttle at `B / (offered - ceiling)`:
  8,000 offered -> 0.88 s, 6,000 -> 1.82 s, 5,000 -> 3.91 s (service-behaviour: "first throttle 0.9 to 3.8 s;
  the higher the offered rate, the sooner"); 4,200 -> 48.6 s.
* Growth (DG pre-warming: "twice its previous peak ... throttling can still occur if the throughput exceeds
  twice the previous peak within the same 30 minutes"; service-behaviour: "sudden steps of ~1,000/s ... the
  first ceiling held for 8 full minutes; after 34 min: 7,000/s"): over-demand is a one-second bin in which a
  request hit the ceiling; a run of it survives gaps up to 60 s. After 480 s of over-demand the ceiling steps
  up by a quarter of the baseline, then every further 600 s: 4,130 -> 5,130 -> 6,130 -> 7,130, never beyond
  twice the peak accepted rate (best 10 s window); growth stops when demand fits. Reads above 12,000 RRU/s were
  not measured (the client fleet was the limit) and use the same mechanism in read units.
* Warm throughput (DG warm-throughput: "the number of read and write operations your DynamoDB table can
  instantaneously support"): `WarmThroughput` replaces a baseline when higher, never lowers a grown ceiling.
* Per partition key value: 1,000 write and 3,000 read units/s (DG warm-throughput scenarios: "each individual
  partition is limited to 1,000 write units per second and 3,000 read units per second"), separate buckets per
  kind (DG key range: "partition-level throttling operates independently for reads and writes"), 1 s of burst,
  reason `KeyRangeThroughputExceeded`, checked before the table budget so a hot key throttles below the ceiling.
* Reason of a table ceiling throttle: `KeyRangeThroughputExceeded`: the 16 documented reasons have no "new
  table" kind; a new table's ceiling is its partitions' limits and its growth is partition splits (hence the
  hot-key hint in the measured message).
* The account's per-table quota (DG on-demand: "bounded by the table-level throughput quota"; facts: "default
  quota 40,000 RRU and 40,000 WRU per table"): caps the ceiling, reason `AccountLimitExceeded`.
* On-demand maximum (API OnDemandThroughput: "the maximum number of read and write units for the specified
  on-demand table"; -1 removes it): a separate bucket per kind at the max rate with 1 s of burst, checked first,
  reason `MaxOnDemandThroughputExceeded`.
* Provisioned: a bucket per kind at the provisioned rate: reads and writes have their own budgets (API
  ProvisionedThroughput: `ReadCapacityUnits` is "the maximum number of strongly consistent reads consumed per
  second before DynamoDB returns a ThrottlingException", `WriteCapacityUnits` "the maximum number of writes
  consumed per second before DynamoDB returns a ThrottlingException"), so writes never refuse a read and no cause
  is ever needed; each holds up to 300 s of unused capacity (DG burst: "retains up to five minutes (300 seconds)
  of unused read and write capacity"); a new resource starts with 1 s of credit and accrues the rest while idle.
* A write to a table with GSIs is several charges (each GSI is its own resource, DG "each new GSI" as a table);
  when a later one throttles, `refund` the earlier ones.

Scaling keeps the shape (issue 30). A scaled run offers `capacity_scale` x the requests for `1/time_scale` of
the time with the same item sizes, so a bucket scaled exactly holds `capacity_scale / time_scale` x the
requests it held unscaled: at x0.025 and x0.1 a GSI table's partition bucket held 2.5 units, under one 4 KB
write, and such a GCRA accepts a request only when the previous one has drained, so a hot key was refused at a
quarter of its ceiling. So every tolerance is floored at room for `MIN_TOLERANCE_COSTS` (3) of the largest
request the bucket has seen (whose units grow the floor when they arrive) and `MIN_TOLERANCE_S` of wall-clock
arrival jitter, capped at what the unscaled bucket holds in units (`unscaled_s / capacity_scale`); a provisioned
table's start credit is reckoned in its first request's size, and an over-demand run survives quiet spells of
`GRACE_REFILLS` (100) refills of the largest request (sparse large writes show over-demand only every few bins).
Unscaled (both factors 1) every figure above holds exactly. A floor that bends a figure is said once per
resource and figure through `notify` (the endpoint's console) and kept in the snapshot's `floors`; the burst
then lasts longer than its scaled figure. Source of the 3 and 100: the smallest values with which
tests/unit/local/test_capacity_scaling.py's matrix (100 B-400 KB, GSI or not, hot key, on-demand and provisioned,
x0.025 down to duration x0.05) throttles at the unscaled fraction of the ceiling within 2%; the 3 also keeps
the calibrated time-scale-60 replay (80 jittery writes/s accepted at 41.3/s, not ~28/s). Likewise the peak window
is at least `MIN_PEAK_WINDOW_S` and the over-demand grace at least `MIN_GRACE_S`; growth timing is exact.

Not thread-safe: the server calls it from one thread (greenlets switch only on I/O).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dynlocust.dynamodb import CAUSE_MIX, CAUSE_READS, CAUSE_WRITES
from dynlocust.errors import ConfigurationError
from dynlocust.local.capacity_figures import (
    BIN_S,
    GRACE_S,
    HEADROOM,
    MAX_CAP_BURST_S,
    MIN_CAUSE_WINDOW_S,
    MIN_GRACE_S,
    MIN_PEAK_WINDOW_S,
    ON_DEMAND_INDEX_MESSAGE,
    ON_DEMAND_TABLE_MESSAGE,
    PARTITION_BURST_S,
    PARTITION_READ,
    PARTITION_WRITE,
    PEAK_WINDOW_S,
    PROVISIONED_CREDIT_S,
    PROVISIONED_INDEX_MESSAGE,
    PROVISIONED_TABLE_MESSAGE,
)
from dynlocust.local.capacity_growth import OnDemandGrowth
from dynlocust.local.capacity_resources import (
    Budget,
    Lane,
    Resource,
    ResourceSpec,
    Throttle,
    check_spec,
    kind_of,
)

if TYPE_CHECKING:
    from dynlocust.local.cloudwatch import MinuteCounters


class CapacityModel(OnDemandGrowth):
    """Decides, per request, whether a table or GSI has the capacity for it; see the module docstring."""

    def __init__(
        self,
        *,
        capacity_scale: float = 1.0,
        time_scale: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        if not capacity_scale > 0 or not time_scale > 0:
            raise ConfigurationError(
                "capacity model: expected capacity_scale > 0 and time_scale > 0, "
                f"found capacity_scale={capacity_scale!r}, time_scale={time_scale!r}"
            )
        self.capacity_scale = float(capacity_scale)
        self.time_scale = float(time_scale)
        self._clock = clock
        self._notify = notify
        self._bin = BIN_S / self.time_scale
        self._grace = max(GRACE_S / self.time_scale, MIN_GRACE_S)
        self._peak_window = max(PEAK_WINDOW_S / self.time_scale, MIN_PEAK_WINDOW_S)
        self._cause_window = max(self._bin, MIN_CAUSE_WINDOW_S)
        self._resources: dict[str, dict[str | None, Resource]] = {}
        self.minutes: MinuteCounters | None = None
        """CloudWatch's per-minute counters (`dynlocust.local.cloudwatch`), told every acceptance and refusal."""

    # ---- configuration -------------------------------------------------------------------------------------

    def add_resource(self, spec: ResourceSpec) -> None:
        """Register a new table or GSI with fresh state (a full burst allowance, baseline ceiling)."""
        check_spec(spec)
        res = Resource(spec)
        now = self._clock()
        res.created = res.bin_start = res.win_start = res.offer_start = now
        res.bin_end = now + self._bin
        self._configure(res, spec, now, fresh=True)
        self._resources.setdefault(spec.table, {})[spec.index] = res

    def update_resource(self, spec: ResourceSpec) -> None:
        """Apply an UpdateTable: keeps reached growth and bucket state unless the billing mode changed."""
        current = self._resources.get(spec.table, {}).get(spec.index)
        if current is None or (current.spec.billing_mode != spec.billing_mode):
            self.add_resource(spec)
            return
        check_spec(spec)
        self._configure(current, spec, self._clock(), fresh=False)

    def remove_table(self, table: str) -> None:
        """Forget a table and all its GSIs (unknown tables are ignored: DeleteTable reports its own errors)."""
        self._resources.pop(table, None)

    def _configure(self, res: Resource, spec: ResourceSpec, now: float, *, fresh: bool) -> None:
        res.spec = spec
        cs = self.capacity_scale
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
                res.write.budget = res.read.budget = Budget(now, 0.0)
            self._apply_ceilings(res, now)
        else:
            code = "ProvisionedThroughputExceededException"
            message = PROVISIONED_INDEX_MESSAGE if spec.index else PROVISIONED_TABLE_MESSAGE
            for lane, rate in ((res.read, spec.read_capacity), (res.write, spec.write_capacity)):
                assert rate is not None
                lane.inv = 1.0 / (rate * cs)
                tol = self._tolerance(res, lane, "burst credit", PROVISIONED_CREDIT_S, lane.inv, lane.big)
                if fresh:
                    lane.budget = Budget(now + tol - self._start_credit(res, lane), tol)
                lane.budget.tol = tol
                lane.t_ceiling = Throttle(
                    code, f"{prefix}{kind_of(lane, res)}ProvisionedThroughputExceeded", spec.arn, message
                )
        for lane, max_units, part_rate in (
            (res.read, spec.max_read, PARTITION_READ),
            (res.write, spec.max_write, PARTITION_WRITE),
        ):
            kind = kind_of(lane, res)
            lane.part_inv = 1.0 / (part_rate * cs)
            lane.part_tol = self._tolerance(res, lane, "partition burst", PARTITION_BURST_S, lane.part_inv, lane.big)
            lane.t_key = Throttle(code, f"{prefix}{kind}KeyRangeThroughputExceeded", spec.arn, message)
            if res.on_demand and max_units is not None and max_units > 0:
                lane.max_inv = 1.0 / (max_units * cs)
                lane.max_tol = self._tolerance(res, lane, "maximum burst", MAX_CAP_BURST_S, lane.max_inv, lane.big)
                if fresh:
                    lane.max_tat = now
                lane.t_max = Throttle(code, f"{prefix}{kind}MaxOnDemandThroughputExceeded", spec.arn, message)
            else:
                lane.max_inv = 0.0
                lane.t_max = None

    # ---- the hot path --------------------------------------------------------------------------------------

    def charge(self, table: str, index: str | None, kind: str, units: float, partition: str) -> Throttle | None:
        """Charge `units` of `kind` ("read" | "write") to one resource and one partition key value.

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
        if units > lane.big:
            self._grow_floors(res, lane, units)
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
        lane.offered += cost
        if bt + cost - now > budget.tol and bt > now:
            res.bin_over = True
            return self._reject(res, self._shared_cause(res, lane, now) if res.on_demand else lane.t_ceiling)
        budget.tat = bt + cost
        parts[partition] = new_pt
        if lane.max_inv:
            lane.max_tat = new_mt
        res.bin_used += cost
        lane.ok += 1
        lane.units += units
        if self.minutes is not None:
            self.minutes.consumed(table, index, kind, units)
        return None

    def refund(self, table: str, index: str | None, kind: str, units: float, partition: str) -> None:
        """Undo an accepted `charge` with the same arguments.

        For writes that touch several resources (a table and its GSIs): when a later resource throttles, the
        request is rejected as a whole, so what the earlier ones accepted must be given back.
        """
        try:
            res = self._resources[table][index]
        except KeyError:
            return
        lane = res.write if kind == "write" else res.read
        cost = units * lane.inv
        lane.budget.tat -= cost  # what was offered stays offered (the cause's load counts the attempt)
        res.bin_used -= cost
        pt = lane.parts.get(partition)
        if pt is not None:
            lane.parts[partition] = pt - units * lane.part_inv
        if lane.max_inv:
            lane.max_tat -= units * lane.max_inv
        lane.ok -= 1
        lane.units -= units
        if self.minutes is not None:
            self.minutes.consumed(table, index, kind, -units)

    def _reject(self, res: Resource, throttle: Throttle | None) -> Throttle:
        assert throttle is not None
        counts = res.throttled
        counts[throttle.reason] = counts.get(throttle.reason, 0) + 1
        if self.minutes is not None:
            self.minutes.throttled(res.spec.table, res.spec.index, throttle.reason)
        return throttle

    def _shared_cause(self, res: Resource, lane: Lane, now: float) -> Throttle | None:
        """The ceiling throttle of an on-demand budget, with the cause when the other kind's demand filled it.

        Load = cost offered at the ceiling check over the current and the previous cause window, as a fraction
        of the ceiling (1.0 = exactly the ceiling). The rejected kind over the ceiling on its own is no news.
        """
        plain = lane.t_ceiling
        span = now - res.offer_start + res.offer_span
        if plain is None or span <= 0:
            return plain
        write = (res.write.offered + res.write.offered_prev) / span
        read = (res.read.offered + res.read.offered_prev) / span
        own, other = (write, read) if lane is res.write else (read, write)
        if own >= 1.0 or other <= 0.0:
            return plain
        cause = CAUSE_MIX if other < 1.0 else CAUSE_READS if lane is res.write else CAUSE_WRITES
        res.causes[cause] = res.causes.get(cause, 0) + 1
        return replace(plain, cause=f"{cause}; write-load={write:.2f}; read-load={read:.2f}")

    # ---- observation ---------------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Current ceilings and allowances per resource, keyed `table` or `table/index/name`.

        Rates are units/s and allowances units, both scaled (what this endpoint enforces).
        """
        now = self._clock()
        out: dict[str, Any] = {}
        for table, by_index in self._resources.items():
            for index, res in by_index.items():
                out[table if index is None else f"{table}/index/{index}"] = self._describe(res, now)
        return out

    def _describe(self, res: Resource, now: float) -> dict[str, Any]:
        spec = res.spec
        info: dict[str, Any] = {
            "table": spec.table,
            "index": spec.index,
            "arn": spec.arn,
            "billing_mode": spec.billing_mode,
            "accepted": {"read": res.read.ok, "write": res.write.ok},
            "accepted_units": {"read": res.read.units, "write": res.write.units},
            "throttled": dict(res.throttled),
            "throttle_causes": dict(res.causes),
            "floors": dict(res.bent),
            "largest_request_units": {"read": res.read.big, "write": res.write.big},
            "partitions_tracked": len(res.read.parts) + len(res.write.parts),
        }
        for name, lane in (("read", res.read), ("write", res.write)):
            rate = 1.0 / lane.inv
            budget = lane.budget
            info[f"{name}_ceiling"] = rate
            info[f"{name}_allowance"] = max(0.0, (budget.tol - max(budget.tat - now, 0.0)) * rate)
            info[f"{name}_burst"] = budget.tol * rate
            info[f"{name}_partition_burst"] = lane.part_tol / lane.part_inv
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
