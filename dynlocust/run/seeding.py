"""Seeding paces itself to the table's capacity: set-up, not measurement, so it finishes at whatever rate the
table takes, bounded only by a time limit derived from the table's capacity (never by a count of sends, which low
capacity alone would exhaust).

Why paced rather than sent as fast as the pool can: unpaced, eight greenlets sending batches of 25 at a table
that takes a few writes a second got ~8 unprocessed items back for every item written (60 items at 20 WRU/s: 490
unprocessed items and 13 wholly throttled sends). The time was the same, since the table's capacity bounds it
either way; the waste was throttled traffic and a burst bucket left empty. So the sends share one `SeedPace`: a
send rate in write units per second that starts at the capacity the table is known to have (its provisioned
WCU, else its warm throughput or a new on-demand table's baseline, times the local endpoint's capacity scale),
grows additively while every item is taken (quickly back to the known capacity, slowly above it) and falls by
30% when a send comes back throttled or with unprocessed items (AIMD, as TCP does), so it settles at the rate
the table actually takes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gevent.pool import Pool

from dynlocust.dynamodb import MAX_BATCH_WRITE, THROTTLE_CODES
from dynlocust.errors import DynlocustError
from dynlocust.scenario.model import LocalTarget, Scenario, Table

BASE_WRITE_UNITS = 4000.0
"""A new on-demand table (and each GSI) takes up to 4,000 WRU/s (../shared/reference/dynamodb-facts.md)."""
MIN_SEED_S = 60.0
SLACK = 10.0
"""The limit is 10x the time the items take at the table's write capacity: throttles and backoff cost time."""
BATCH_S = 0.25
"""A send carries at most this many seconds of the paced rate: well within the 0.85 s of burst a new table holds
(dynlocust/local/capacity.py, from ../shared/reference/service-behaviour.md), so a paced batch is taken whole."""
RECOVER = 0.25
PROBE = 0.01
"""Additive increase per fully taken send, as fractions of the known capacity: quick back up to the known
capacity after a cut, slow above it (where only a grown or warm table has room)."""
DECREASE = 0.7
"""Multiplicative decrease on a send that came back throttled or with unprocessed items."""
MIN_RATE = 0.02
MAX_RATE = 10.0
"""The paced rate stays within these fractions of the known capacity (a grown table may take more)."""
CREDIT_S = 0.5
"""Seconds of the paced rate that may go at once: half the 0.85 s of burst a new table holds (same source), so the
first sends use the table's burst; forfeited on a cut, when the table's own burst is spent."""
MAX_PAUSE_S = 1.0
"""Longest single sleep, so the time limit and a teardown are noticed while waiting for the next send."""


class SeedError(DynlocustError):
    """Seeding could not finish within its time limit, or the table refused a write for another reason."""


def write_units_per_second(table: Table, scenario: Scenario) -> float:
    """The write rate the table should take: provisioned, else its warm throughput or a new table's baseline."""
    if table.billing == "provisioned" and table.provisioned is not None:
        rate = float(table.provisioned.write)
    else:
        rate = max(BASE_WRITE_UNITS, float(table.warm_throughput.write if table.warm_throughput else 0))
        if table.max_on_demand is not None and table.max_on_demand.write > 0:
            rate = min(rate, float(table.max_on_demand.write))
    if isinstance(scenario.target, LocalTarget):
        rate *= scenario.target.capacity_scale
    return max(rate, 1e-6)


def units_per_item(table: Table) -> float:
    """Write units one seed item of `table` costs (`item_units`)."""
    return item_units(table.seed.item_size if table.seed is not None else 1, len(table.gsis))


def item_units(size: int, gsis: int) -> float:
    """Write units one item of `size` bytes costs: 1 WRU per KB started, charged again to each of `gsis` GSIs."""
    return float(-(-size // 1024) * (1 + gsis))


def seed_time_limit(table: Table, scenario: Scenario) -> float:
    """Seconds seeding may take: SLACK x (units to write / write rate), at least MIN_SEED_S."""
    if table.seed is None:
        return 0.0
    units = table.seed.items * units_per_item(table)
    return max(MIN_SEED_S, SLACK * units / write_units_per_second(table, scenario))


@dataclass
class SeedPace:
    """The send rate a table's seeding greenlets share: a GCRA schedule at `rate` write units/s with
    `CREDIT_S` of burst, AIMD-adjusted."""

    known: float
    """The capacity the table is known to have (write units/s): the starting rate."""
    clock: Callable[[], float]
    rate: float = 0.0
    next_at: float = float("-inf")
    cut_at: float = float("-inf")
    cuts: int = 0

    def __post_init__(self) -> None:
        self.rate = self.rate or self.known

    def batch_size(self, per_item: float) -> int:
        return max(1, min(MAX_BATCH_WRITE, int(self.rate * BATCH_S / per_item)))

    def reserve(self, units: float) -> float:
        """Book `units` on the schedule; returns the clock time at which they may be sent."""
        now = self.clock()
        self.next_at = max(self.next_at, now)
        at = max(now, self.next_at - CREDIT_S)
        self.next_at += units / self.rate
        return at

    def taken(self, sent_at: float, whole: bool) -> None:
        """A send made at `sent_at` came back; `whole` when every item of it was written."""
        if whole:
            step = RECOVER if self.rate < self.known else PROBE
            self.rate = min(self.rate + step * self.known, MAX_RATE * self.known)
        elif sent_at >= self.cut_at:  # sends already in flight at the last cut saw the same shortage: cut once
            self.rate = max(self.rate * DECREASE, MIN_RATE * self.known)
            self.cut_at = self.clock()
            self.next_at = max(self.next_at, self.cut_at + CREDIT_S)
            self.cuts += 1


@dataclass
class Seeder:
    """Writes one table's seed items through `concurrency` greenlets paced by one `SeedPace`."""

    client: Any
    name: str
    per_item: float
    pace: SeedPace
    limit_s: float
    sleep: Callable[[float], None]
    stopping: Callable[[], Exception | None] = lambda: None
    """Returns the error that ends seeding early (a teardown under way), else None."""
    written: int = 0
    sends: int = 0
    pending: deque[dict[str, Any]] = field(default_factory=deque)
    in_flight: int = 0
    deadline: float = float("inf")

    def run(self, items: list[dict[str, Any]], concurrency: int = 8) -> int:
        """BatchWriteItem every item, or raise `SeedError` when the time limit passes; returns the items written."""
        self.pending.extend({"PutRequest": {"Item": item}} for item in items)
        self.deadline = self.pace.clock() + self.limit_s
        if concurrency <= 1:
            failure = self._try_work()
        else:
            pool = Pool(concurrency)
            results = [pool.spawn(self._try_work) for _ in range(concurrency)]
            pool.join()
            failure = next((r.value for r in results if r.value is not None), None)
        if failure is not None:
            raise failure
        return self.written

    def _try_work(self) -> Exception | None:
        # returned, not raised: a pool greenlet that raises prints a traceback of its own
        try:
            self._work()
            return None
        except Exception as exc:
            self.pending.clear()  # the other greenlets stop at their next send
            return exc

    def _work(self) -> None:
        while self.pending:
            batch = [self.pending.popleft() for _ in range(min(self.pace.batch_size(self.per_item), len(self.pending)))]
            self.in_flight += len(batch)
            try:
                at = self.pace.reserve(len(batch) * self.per_item)
                self._wait_until(at)
                left = self._send(batch)
            finally:
                self.in_flight -= len(batch)
            self.written += len(batch) - len(left)
            self.pending.extendleft(reversed(left))
            self.pace.taken(at, not left)
            if left:
                self._check_deadline()

    def _wait_until(self, at: float) -> None:
        while True:
            error = self.stopping()
            if error is not None:
                raise error
            self._check_deadline()
            now = self.pace.clock()
            if now >= at:
                return
            self.sleep(min(at - now, MAX_PAUSE_S))

    def _send(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.sends += 1
        try:
            response = self.client.batch_write_item(RequestItems={self.name: batch})
        except self.client.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in THROTTLE_CODES:
                raise
            return batch
        left: list[dict[str, Any]] = response.get("UnprocessedItems", {}).get(self.name, [])
        return left

    def _check_deadline(self) -> None:
        if self.pace.clock() >= self.deadline:
            left = len(self.pending) + self.in_flight
            raise SeedError(
                f"table {self.name!r}: expected seeding to finish within its time limit of {self.limit_s:.0f} s "
                f"(from the table's write capacity, {self.pace.known:g} write units/s), found {self.written} items "
                f"written and {left} left after {self.sends} sends"
            )
