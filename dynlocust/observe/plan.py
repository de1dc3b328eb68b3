"""A capacity plan from a ceiling search's results: the units a table took at its ceiling, the settings and the cost
of a target rate, and the caveats the run can see (`dynlocust plan RESULTS --target 8000/s`).

The noun is the *plan*. Its figures come from the results file alone: the `ceiling` record (`dynlocust.run.search`),
the windows' consumed units per accepted request, and the tables' state polled at each window's end. Prices are
`dynlocust.cost.Prices` (dated, with their source); the plan prints the date.

The units each table and each GSI sustained at the ceiling are each operation's consumed units (the windows' bins
count them per operation) over the run's accepted requests, times the ceiling, on the resource the operation
addressed: a read through an index on that index, the rest on its table. Requests ask for `ReturnConsumedCapacity`
TOTAL, which gives a write's units with its GSIs' share included, so a GSI's write units are within its table's
figure, and the plan says so for every GSI the tables' state lists.

The choices the documentation leaves to us, said once:
- `OnDemandThroughput` maximum: the target's units plus `CAP_HEADROOM` (a runaway client is stopped a quarter above
  the plan, not at the table's ceiling);
- `WarmThroughput`: the target's units, when they exceed what the table takes at once today (a new on-demand
  table: 4,000 write / 12,000 read units/s);
- provisioned capacity: the target's units over `AUTOSCALING_TARGET`, the utilisation an auto-scaling policy then
  targets (70 %, the console's default);
- a month is 30 days (720 hours).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dynlocust.cost import US_EAST_1, Prices
from dynlocust.errors import ConfigurationError
from dynlocust.run.results import read_results, results_file

CAP_HEADROOM = 0.25
AUTOSCALING_TARGET = 0.70
MONTH_S = 30 * 24 * 3600
SHORT_WINDOW_S = 60.0
"""A probe shorter than this on AWS cannot see the growth of an on-demand table under sustained demand."""


@dataclass(frozen=True)
class Units:
    """Read and write units per second (or per request)."""

    read: float
    write: float

    def times(self, k: float) -> Units:
        return Units(self.read * k, self.write * k)


@dataclass
class CapacityPlan:
    """The plan's figures (for tests and the report) and its lines (for people)."""

    resource: str
    ceiling: float | None
    target: float
    per_request: Units
    at_ceiling: Units | None
    at_target: Units
    on_demand_max: Units
    warm: Units
    provisioned: Units
    cost_per_million: float
    on_demand_month: float
    provisioned_month: float
    prices: Prices
    caveats: list[str] = field(default_factory=list)
    by_resource: dict[str, Units] = field(default_factory=dict)
    """Units per second each table (`table T`) and each GSI read through (`index I of T`) sustained at the ceiling."""
    gsis: tuple[str, ...] = ()
    """`index I of T` of every GSI the tables' state lists: their write units are within their table's."""

    def lines(self) -> list[str]:
        def pair(u: Units, fmt: str = ",.0f") -> str:
            return f"{u.read:{fmt}} read / {u.write:{fmt}} write units/s"

        ceiling = f"{self.ceiling:,.1f}/s" if self.ceiling is not None else "not found"
        out = [f"capacity plan for {self.resource}: ceiling {ceiling}, target {self.target:,.1f}/s"]
        out.append(f"  units per request: {self.per_request.read:.3f} read, {self.per_request.write:.3f} write")
        if self.at_ceiling is not None:
            out.append(f"  sustained at the ceiling: {pair(self.at_ceiling, ',.1f')}")
            for name, units in self.by_resource.items():
                out.append(f"  sustained at the ceiling by {name}: {pair(units, ',.1f')}")
            for name in self.gsis:
                out.append(f"  {name}: its write units are within its table's (consumed capacity TOTAL)")
        out.append(f"  at the target: {pair(self.at_target, ',.1f')}")
        out.append(f"  on demand: OnDemandThroughput maximum {pair(self.on_demand_max)} (target + 25 %)")
        out.append(f"  on demand: WarmThroughput before launch {pair(self.warm)}")
        out.append(f"  provisioned: {pair(self.provisioned)}, auto-scaling target utilisation {AUTOSCALING_TARGET:.0%}")
        out.append(
            f"  cost: ${self.cost_per_million:,.4f} per million requests on demand; per 30-day month at the "
            f"target ${self.on_demand_month:,.2f} on demand, ${self.provisioned_month:,.2f} provisioned"
        )
        out.append(f"  prices as of {self.prices.as_of}: {self.prices.source}")
        out += [f"  caveat: {c}" for c in self.caveats]
        return out


def _units_per_request(windows: Sequence[Mapping[str, Any]]) -> Units:
    accepted = sum(int(w["summary"].get("accepted", 0)) for w in windows)
    if not accepted:
        return Units(0.0, 0.0)
    read = sum(float(w["summary"].get("read_units", 0.0)) for w in windows)
    write = sum(float(w["summary"].get("write_units", 0.0)) for w in windows)
    return Units(read / accepted, write / accepted)


def _units_by_resource(windows: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> dict[str, Units]:
    """Units per accepted request of the run, by the table or index each operation addressed (see the module)."""
    accepted = sum(int(w["summary"].get("accepted", 0)) for w in windows)
    if not accepted:
        return {}
    workload = (run.get("shape") or {}).get("workload") or {}
    addressed = {
        str(o.get("label")): f"index {o['index']} of {o.get('table')}" if o.get("index") else f"table {o.get('table')}"
        for o in workload.get("operations") or ()
    }
    read: dict[str, float] = {}
    write: dict[str, float] = {}
    for w in windows:
        for b in w.get("bins") or ():
            for label, tally in (b.get("operations") or {}).items():
                name = addressed.get(label, f"operation {label}")
                read[name] = read.get(name, 0.0) + float(tally.get("read_units") or 0.0)
                write[name] = write.get(name, 0.0) + float(tally.get("write_units") or 0.0)
    return {name: Units(read[name] / accepted, write[name] / accepted) for name in sorted(read)}


def _gsis(windows: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """`index I of T` of every GSI in the last table state polled."""
    for w in reversed(windows):
        tables = (w.get("table_state") or {}).get("tables") or {}
        if tables:
            return tuple(f"index {i} of {t}" for t, state in tables.items() for i in (state.get("indexes") or {}))
    return ()


def _table_state(windows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    for w in reversed(windows):
        tables = (w.get("table_state") or {}).get("tables") or {}
        if tables:
            return dict(next(iter(tables.values())))
    return {}


def _caveats(ceiling: Mapping[str, Any], windows: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> list[str]:
    out = []
    if ceiling.get("limited_by") == "client":
        out.append(
            f"the client, not DynamoDB, stopped the search at {ceiling['rate']:,.0f}/s: the ceiling is above "
            "what this fleet offered; plan from a run with more workers"
        )
    elif ceiling.get("limited_by") != "dynamodb":
        out.append(f"the search found no ceiling (stopped: {ceiling.get('stopped')}): planned at what it sustained")
    reasons = [str(r) for r in ceiling.get("reasons") or ()]
    if any(r.startswith("Index") for r in reasons):
        out.append(f"GSI back-pressure: an index's limit throttled the table's writes ({', '.join(reasons)})")
    workload = (run.get("shape") or {}).get("workload") or {}
    keys = [workload.get("keys") or {}, *((o.get("keys") or {}) for o in workload.get("operations") or ())]
    skewed = any(isinstance(k, dict) and ("s" in k or "fraction" in k) for k in keys)  # zipf, hot_spot
    if skewed and any("KeyRange" in r for r in reasons):
        out.append(
            "hot keys: the throttles were per-partition limits under a skewed key distribution (zipf or "
            "hot_spot): the table's ceiling for evenly spread keys is higher"
        )
    scale = ceiling.get("capacity_scale")
    if scale is not None:
        out.append(
            f"measured on the embedded endpoint at capacity_scale {scale:g}: the same table on AWS takes these "
            f"figures / {scale:g}"
        )
    if ceiling.get("stopped") == "max_windows":
        out.append("the search stopped after max_windows before its bracket reached the precision")
    window_s = float(ceiling.get("window_s") or 0.0)
    if window_s < SHORT_WINDOW_S:
        out.append(
            f"a short run: {window_s:g} s probes (a rehearsal, or the embedded endpoint's scaled clock) cannot "
            "show how an on-demand table grows under sustained demand (8 minutes measured before its first step)"
        )
    return out


def build_plan(records: Sequence[Mapping[str, Any]], target: float | None, prices: Prices = US_EAST_1) -> CapacityPlan:
    """The plan of the results `records` at `target` requests/s (default: the ceiling found)."""
    ceilings = [r for r in records if r.get("type") == "ceiling"]
    if not ceilings:
        raise ConfigurationError("results: expected a ceiling search's results (a `ceiling` record), found none")
    ceiling = ceilings[-1]
    windows = [r for r in records if r.get("type") == "window"]
    run = next((r for r in records if r.get("type") == "run"), {})
    found = ceiling["rate"] if ceiling.get("limited_by") == "dynamodb" else None
    rate = target if target is not None else found if found is not None else ceiling.get("low")
    if rate is None or rate <= 0:
        raise ConfigurationError("--target: expected a rate such as 8000/s (the search found no ceiling to plan at)")
    per_request = _units_per_request(windows)
    at_target = per_request.times(rate)
    state = _table_state(windows)
    warm_now = state.get("warm") or {}
    warm = Units(
        max(math.ceil(at_target.read), int(warm_now.get("read") or 0)),
        max(math.ceil(at_target.write), int(warm_now.get("write") or 0)),
    )
    provisioned = Units(math.ceil(at_target.read / AUTOSCALING_TARGET), math.ceil(at_target.write / AUTOSCALING_TARGET))
    cost_per_million = per_request.read * prices.read_per_million + per_request.write * prices.write_per_million
    caveats = _caveats(ceiling, windows, run)
    if state.get("billing") == "PROVISIONED":
        caveats.append("the table was provisioned: its ceiling is its provisioned capacity (and burst credit)")
    return CapacityPlan(
        resource=str(ceiling.get("resource") or "the table"),
        ceiling=found,
        target=rate,
        per_request=per_request,
        at_ceiling=per_request.times(found) if found is not None else None,
        by_resource={k: u.times(found) for k, u in _units_by_resource(windows, run).items()} if found else {},
        gsis=_gsis(windows),
        at_target=at_target,
        on_demand_max=Units(
            math.ceil(at_target.read * (1 + CAP_HEADROOM)), math.ceil(at_target.write * (1 + CAP_HEADROOM))
        ),
        warm=warm,
        provisioned=provisioned,
        cost_per_million=cost_per_million,
        on_demand_month=rate * MONTH_S * cost_per_million / 1e6,
        provisioned_month=(provisioned.read * prices.read_unit_hour + provisioned.write * prices.write_unit_hour)
        * MONTH_S
        / 3600,
        prices=prices,
        caveats=caveats,
    )


def parse_rate(text: str) -> float:
    """`8000/s`, `8000` or `8,000/s` -> 8000.0."""
    cleaned = text.strip().removesuffix("/s").replace(",", "").replace("_", "")
    try:
        value = float(cleaned)
    except ValueError:
        raise ConfigurationError(f"--target: expected a rate such as 8000/s, found {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ConfigurationError(f"--target: expected a positive rate such as 8000/s, found {text!r}")
    return value


def main(argv: Sequence[str]) -> int:
    """`dynlocust plan RESULTS [--target N/s]`: print the capacity plan of a ceiling search's results."""
    parser = argparse.ArgumentParser(prog="dynlocust plan", description=main.__doc__)
    parser.add_argument("results", help="a results.jsonl of a ceiling search, or its run directory")
    parser.add_argument("--target", default=None, help="the rate to plan for, e.g. 8000/s (default: the ceiling)")
    args = parser.parse_args(argv)
    path = results_file(args.results)
    if not path.exists():
        raise ConfigurationError(f"results: expected a results file, found no such file {path}")
    records = read_results(path)
    plan = build_plan(records, parse_rate(args.target) if args.target is not None else None)
    print("\n".join(plan.lines()))
    return 0
