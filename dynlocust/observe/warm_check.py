"""The warm-throughput check: did a table take, at once, the rate its warm throughput claims?

Warm throughput is "the number of read and write operations your DynamoDB table can instantaneously support"
(DG "Understanding DynamoDB warm throughput", warm-throughput.html); a new on-demand table starts with 4,000 write
and 12,000 read units/s of it (DG "... warm throughput in different scenarios", warm-throughput-scenarios.html;
../shared/reference/dynamodb-facts.md "Capacity and money"), and `WarmThroughput` on CreateTable or UpdateTable
raises it. A scenario states the claim with a table's `warm_throughput: {read: N, write: M}`: the run creates the
table with it and the scenario offers that rate in its first window. This module judges that window, per table
and kind (writes, reads) the workload sends: the table *took* the claim when it accepted at least `HOLD_SHARE` of
the claimed units/s; it *did not hold* when it throttled below that; and when neither, the window offered less
than the claim, which then was *not tested*. A claim that did not hold fails the run like an SLO (exit 3).

On the embedded endpoint every figure is the service's times the endpoint's `capacity_scale`, so the claim is
compared in the run's own scale and said with both figures. Units are what the service reported consumed
(`ReturnConsumedCapacity`): a table's GSI writes count too, so a claim is checked best on a table without GSIs.
A pure function of the scenario and the window records, as `dynlocust.observe.conclusion` is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dynlocust.run.table_state import units_text
from dynlocust.run.tally import WindowStats
from dynlocust.scenario.model import LocalTarget, Scenario

WRITE_OPS = frozenset({"put", "conditional_put", "update", "delete", "transact_write", "batch_write"})
"""Scenario operations that spend write units; every other one spends read units."""

HOLD_SHARE = 0.95
"""A claim holds when the first window accepted at least this share of it: an open-model window offered at the
claim accepts all of it unless something refused, less only the sends a busy client dropped (judged apart, by the
window's verdict). A throttled table that still accepted this much was offered more than its claim."""

Outcome = Literal["holds", "did not hold", "not tested"]


@dataclass(frozen=True)
class WarmClaim:
    """One table's warm throughput of one kind, and the scenario operations that spend it."""

    table: str
    kind: Literal["write", "read"]
    units: float
    """Units per second as the service states them (the scenario's, DescribeTable's)."""
    scale: float
    """The embedded endpoint's capacity scale (1 for a remote table)."""
    labels: tuple[str, ...]

    @property
    def effective(self) -> float:
        """Units per second this run's table should take at once (the claim, in the run's scale)."""
        return self.units * self.scale

    def text(self) -> str:
        scaled = f"{self.units:,.0f}/s x{self.scale:g} capacity scale = " if self.scale != 1 else ""
        return f"{scaled}{self.effective:,.0f} {self.kind} units/s"


def claims(scenario: Scenario) -> list[WarmClaim]:
    """The claims a scenario states: each table's warm throughput, for each kind its operations spend."""
    scale = scenario.target.capacity_scale if isinstance(scenario.target, LocalTarget) else 1.0
    out = []
    for table in scenario.tables:
        if table.warm_throughput is None:
            continue
        ops = [o for o in scenario.workload.operations if o.table == table.name]
        for kind, units in (("write", table.warm_throughput.write), ("read", table.warm_throughput.read)):
            labels = tuple(o.label for o in ops if (o.op in WRITE_OPS) == (kind == "write"))
            if labels:
                out.append(WarmClaim(table.name, kind, float(units), scale, labels))  # type: ignore[arg-type]
    return out


@dataclass(frozen=True)
class WarmFinding:
    """What the first window says of one claim."""

    claim: WarmClaim
    outcome: Outcome
    took: float
    """Units per second the table accepted over the first window."""
    offered: float
    """Units per second sent (requests sent x units per accepted request)."""
    throttled_after_s: float | None
    """Seconds from the first window's start to its first throttle of these operations, if any."""

    @property
    def text(self) -> str:
        c = self.claim
        if self.outcome == "holds":
            return f"table {c.table} took {self.took:,.0f} {c.kind} units/s at once: warm throughput holds " \
                   f"(its claim: {c.text()})"  # fmt: skip
        if self.outcome == "did not hold":
            after = f"{self.throttled_after_s:.1f} s" if self.throttled_after_s is not None else "the first window"
            return (
                f"table {c.table} throttled at {self.took:,.0f} {c.kind} units/s after {after}: "
                f"the warm throughput claim of {c.text()} did not hold"
            )
        return (
            f"table {c.table}'s first window offered {self.offered:,.0f} {c.kind} units/s, under its warm "
            f"throughput of {c.text()}: the claim was not tested (offer it in the first window)"
        )

    @property
    def failure(self) -> str | None:
        """The run's failure line when the claim did not hold (it fails the run as an SLO does)."""
        return f"warm throughput: {self.text}" if self.outcome == "did not hold" else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.claim.table,
            "kind": self.claim.kind,
            "claimed_units_per_s": self.claim.units,
            "capacity_scale": self.claim.scale,
            "outcome": self.outcome,
            "took_units_per_s": self.took,
            "offered_units_per_s": self.offered,
            "throttled_after_s": self.throttled_after_s,
            "text": self.text,
        }


def judge(claim: WarmClaim, stats: WindowStats | None) -> WarmFinding:
    """`claim` against the statistics of the run's first window, merged (None: it never closed)."""
    if stats is None:
        return WarmFinding(claim, "not tested", 0.0, 0.0, None)
    total = stats.total()
    subs = [total.operation(label) for label in claim.labels]
    units = sum(s.write_units if claim.kind == "write" else s.read_units for s in subs)
    accepted = sum(s.accepted for s in subs)
    sent = sum(s.sent for s in subs)
    refused = sum(s.throttled + s.unprocessed_items for s in subs)
    per_request = units / accepted if accepted else 1.0
    took, offered = units / stats.duration, sent * per_request / stats.duration
    starts = [s.first_throttle_at for s in subs if s.first_throttle_at is not None]
    after = min(starts) - stats.start if starts else None
    if took >= HOLD_SHARE * claim.effective:
        outcome: Outcome = "holds"
    elif refused:
        outcome = "did not hold"
    else:
        outcome = "not tested"
    return WarmFinding(claim, outcome, took, offered, after)


def check(scenario: Scenario, first: WindowStats | None) -> list[WarmFinding]:
    """Every claim of `scenario` judged on its first window's merged statistics (None: it never closed)."""
    return [judge(c, first) for c in claims(scenario)]


def sentence(findings: Sequence[WarmFinding]) -> str:
    """The conclusion's sentence on the claims: `Warm throughput: table t took 8,000 write units/s at once: ...`."""
    return "Warm throughput: " + "; ".join(f.text for f in findings) + "."


def described(scenario: Scenario, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """For each table with a claim: the `WarmThroughput` DescribeTable gave before the run and after it."""

    def warm(poll: Mapping[str, Any] | None, table: str) -> str:
        state = ((poll or {}).get("tables") or {}).get(table)
        if not state:
            return "not read"
        if state.get("error"):
            return f"not read ({state['error']})"
        value = state.get("warm")
        status = f" ({value['status']})" if value and value.get("status") else ""
        return f"{units_text(value)} read/write units/s{status}"

    return [
        f"warm throughput of table {t.name} (DescribeTable): before the run {warm(before, t.name)}; "
        f"after it {warm(after, t.name)}"
        for t in scenario.tables
        if t.warm_throughput is not None
    ]
