"""What a scenario will cost before it runs: requests, read and write units, dollars, and how long it takes.

Units come from item sizes and the DynamoDB rules (a write is 1 WRU per KB, per item, twice in a transaction, plus
one charge per GSI; a read is 1 RRU per 4 KB, half when eventually consistent); money from them through
`dynlocust.cost`, the very functions the cost ceiling and the reports use. It is an estimate: the run counts the
units the service reports, and a query or scan reads what it finds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dynlocust.cost import US_EAST_1, Prices, dollars, provisioned_dollars
from dynlocust.scenario.model import Operation, Scenario, Table
from dynlocust.scenario.plan import worst_case_plan

WRITE_UNIT = 1024
READ_UNIT = 4096
SCAN_PAGE = 1024 * 1024
"""A scan or query returns at most 1 MB per call."""


@dataclass(frozen=True)
class Estimate:
    requests: int
    read_units: float
    write_units: float
    seed_write_units: float
    duration: float
    """Seconds of planned windows (set-up and seeding come on top)."""
    peak_read_per_second: float
    peak_write_per_second: float
    prices: Prices = US_EAST_1

    @property
    def on_demand_dollars(self) -> float:
        return dollars(self.read_units, self.write_units + self.seed_write_units, self.prices)

    @property
    def provisioned_dollars(self) -> float:
        """Capacity for the peak window held for the whole run (what provisioned mode would bill)."""
        return provisioned_dollars(self.peak_read_per_second, self.peak_write_per_second, self.duration, self.prices)

    def lines(self, duration: str) -> list[str]:
        """Two lines for `dynlocust validate`; `duration` is the windows' total as the summary writes it."""
        seed = f" (+{self.seed_write_units:,.0f} to seed)" if self.seed_write_units else ""
        return [
            f"  estimate: {self.requests:,} requests, {self.read_units:,.0f} read units, "
            f"{self.write_units:,.0f} write units{seed}; {duration} of windows plus set-up",
            f"  cost on AWS: ${self.on_demand_dollars:.4f} on demand; provisioned for the peak "
            f"({self.peak_read_per_second:,.0f} RCU, {self.peak_write_per_second:,.0f} WCU): "
            f"${self.provisioned_dollars:.4f} (billed by the hour; us-east-1 prices)",
        ]


def _ceil_units(size: float, unit: int) -> int:
    return max(1, math.ceil(size / unit))


def request_units(op: Operation, table: Table, item_size: int) -> tuple[float, float]:
    """(read units, write units) one call of `op` consumes, from the sizes of what it writes or reads."""
    write_size = op.item_size or item_size
    read_size = table.seed.item_size if table.seed else write_size
    read_factor = 1.0 if op.consistent else 0.5
    write = _ceil_units(write_size, WRITE_UNIT) * (1 + len(table.gsis))
    if op.op in ("put", "conditional_put", "update", "delete", "batch_write"):
        return 0.0, float(write * op.items)
    if op.op == "transact_write":
        return 0.0, float(2 * write * op.items)
    if op.op in ("get", "batch_get"):
        return _ceil_units(read_size, READ_UNIT) * read_factor * op.items, 0.0
    if op.op == "scan":
        found = read_size * (op.limit or 100)
    else:  # query, gsi_query: the items of one partition key
        per_key = table.seed.items_per_partition if table.seed else 1
        found = read_size * (min(op.limit, per_key) if op.limit else per_key)
    return _ceil_units(min(found, SCAN_PAGE), READ_UNIT) * read_factor, 0.0


def estimate(scenario: Scenario, prices: Prices = US_EAST_1) -> Estimate:
    """The planned run's requests, units and duration (the mix's weights split every window's requests)."""
    plan = worst_case_plan(scenario, t0=0.0)
    weight = scenario.workload.total_weight
    read_per_call = write_per_call = 0.0
    for op in scenario.workload.operations:
        reads, writes = request_units(op, scenario.table(op.table), scenario.workload.item_size)
        read_per_call += reads * op.weight / weight
        write_per_call += writes * op.weight / weight
    peak = max((w.rate for w in plan.windows), default=0.0)
    seed = sum(
        t.seed.items * _ceil_units(t.seed.item_size, WRITE_UNIT) * (1 + len(t.gsis))
        for t in scenario.tables
        if t.seed and not t.use_existing
    )
    return Estimate(
        requests=plan.total_requests,
        read_units=plan.total_requests * read_per_call,
        write_units=plan.total_requests * write_per_call,
        seed_write_units=float(seed),
        duration=plan.total_duration,
        peak_read_per_second=math.ceil(peak * read_per_call),
        peak_write_per_second=math.ceil(peak * write_per_call),
        prices=prices,
    )
