"""The ceiling search: which rate to probe next, from the verdict of the last merged window, and when to stop.

The noun is the *search* (`CeilingSearch`), its *probes* (one window each) and its *bracket*: `low`, the highest
rate a clean probe proved DynamoDB sustains, and `high`, the lowest rate a probe was throttled at. The rate grows
by `factor` from `from` until a probe is throttled (or shrinks by it while the first probes are throttled), then
bisects the bracket. It stops when `(high - low) / low < precision` (`precision`), after `max_windows` probes
(`max_windows`), or at a window the client limited (`client-bound`): a client limit is never the table's ceiling.

A probe is judged on its *steady part*: after its first statistics bin (the burst, and the bunching of the first
sends), without the bins where the client stalled (`steady_part`). It is throttled when DynamoDB refused more than
`THROTTLE_SHARE` of the precision of the steady sends. A clean probe proves less than its rate: DynamoDB lets a
burst through before it throttles (at most `burst` seconds of the ceiling,
`dynlocust.scenario.model.burst_seconds`), so a probe of `window` seconds at rate R, a share s of it not sent and a
share f of the rest refused, shows only that the ceiling is at least `R * (1 - s) * (1 - f) * window / (window +
burst)`: the bracket's `low`. The scenario format requires `window >= 4 * burst / precision`, so a clean probe hides
at most a quarter of the precision and the bracket can close. The bisection runs between the highest clean rate and
the lowest throttled one, so every probe narrows it. A throttled probe proves the ceiling is below R (with the burst
spent, nothing below the ceiling is refused).

Pure: no clock, no I/O. `FleetMerge` feeds it each merged window and hands the workers the next rate.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from dynlocust.run.tally import WindowStats
from dynlocust.run.verdict import Verdict
from dynlocust.scenario.model import LocalTarget, Scenario, Search, burst_seconds

Outcome = Literal["clean", "throttled", "client-bound", "partial", "unjudged"]
Stopped = Literal["precision", "max_windows", "client-bound", "unjudged", "inconsistent"]


THROTTLE_SHARE = 0.1
"""Of the precision, the share of a probe's steady sends that must be throttled for the probe to count as throttled.

Above the ceiling by a fraction e, DynamoDB refuses about e / (1 + e) of the sends once the burst is spent; the
probes the search must tell apart are a quarter to a half of the precision over it (`BURST_SHARE`), so refusals at
a tenth of the precision are the service's limit, while a throttle or two among thousands is the client's jitter
(a late send bunching the next ones) meeting a small burst. A clean probe's proof discounts what was refused."""


@dataclass(frozen=True)
class Steady:
    """A probe window's steady part (after its first statistics bin, which holds the burst and the start's
    bunching) and the whole window's refused share."""

    sent: int
    throttled: int
    refused: float
    """Throttled sends over sent sends in the whole window (what a clean probe's proof discounts)."""
    shortfall: float = 0.0
    """Planned sends of the whole window that the client did not send, over the planned (discounted too)."""

    @property
    def throttled_share(self) -> float:
        return self.throttled / self.sent if self.sent else 0.0


def steady_part(stats: WindowStats, burst: float) -> Steady:
    """The steady part of a window: its bins from `max(burst, one bin)` after its start in which the client sent
    every due send. A bin where it dropped some stalled and then sent the rest in a bunch: throttles there are its
    own doing (all bins after the first if none is left)."""
    skip = max(burst, stats.bin_seconds)
    late = [b for i, b in enumerate(stats.bins) if i * stats.bin_seconds >= skip - 1e-9] or stats.bins
    bins = [b for b in late if b.sent >= b.offered] or late
    total = stats.total()
    return Steady(
        sum(b.sent for b in bins),
        sum(b.throttled for b in bins),
        total.throttled / total.sent if total.sent else 0.0,
        max(0.0, 1.0 - total.sent / total.offered) if total.offered else 0.0,
    )


def outcome_of(verdict: Verdict, steady: Steady | None, threshold: float, precision: float = 0.0) -> Outcome:
    """What a probe's verdict says about the ceiling. Throttles in the steady part above `threshold` of its sends
    mean DynamoDB refused load the client offered (if the client offered less than planned, the ceiling is lower
    still). A client-bound window otherwise proves nothing about DynamoDB, unless the client sent all but less
    than `precision` of the window: then what it sent was accepted, a clean probe at the rate it did offer. A
    partial window (a worker lost or late) is probed again; errors or a window not run cannot be judged; the rest
    is clean."""
    if verdict.label == "partial" and verdict.ran > 0:
        return "partial"  # a worker lost or late: the probe is played again once its share is re-balanced
    if "partial" in verdict.labels or verdict.label in ("not-run", "errors"):
        return "unjudged"
    if "throttled" in verdict.labels and steady is not None and steady.throttled_share > threshold:
        return "throttled"
    if "client-bound" in verdict.labels and (steady is None or steady.shortfall >= precision):
        return "client-bound"
    return "clean"


@dataclass(frozen=True)
class Probe:
    """One probe window: its index, the fleet's offered rate, what it showed, and the throttle reasons it saw."""

    index: int
    rate: float
    outcome: Outcome
    reasons: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    """The bracket once this probe was taken (what the report draws)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "rate": self.rate,
            "outcome": self.outcome,
            "reasons": list(self.reasons),
            "resources": list(self.resources),
            "low": self.low,
            "high": self.high,
        }


def throttle_reasons(stats: WindowStats) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The throttle reasons a window saw (most frequent first) and the indexes whose limit refused it."""
    total = stats.total()
    reasons: Counter[str] = Counter()
    for key, n in total.throttled_by.items():
        code, _, reason = key.partition("|")
        reasons[reason or code] += n
    indexes: Counter[str] = Counter()
    for key, n in total.throttled_index.items():
        indexes[key.partition("|")[0]] += n
    return tuple(r for r, _ in reasons.most_common()), tuple(i for i, _ in indexes.most_common())


@dataclass
class CeilingSearch:
    """The state of one search: its probes so far, the bracket, and why it stopped (`None` while it runs)."""

    search: Search
    burst: float
    """Wall-clock seconds of the longest burst the target lets through (`dynlocust.scenario.model.burst_seconds`)."""
    tables: tuple[str, ...] = ()
    """The tables the probed operations address (the resource when no index's limit refused the probes)."""
    capacity_scale: float | None = None
    """The embedded endpoint's capacity scale, when the search ran against it (None: a remote target)."""
    probes: list[Probe] = field(default_factory=list)
    low: float | None = None
    high: float | None = None
    clean: float | None = None
    """The highest rate a probe was clean at: the bisection's lower end (`low` is what such probes proved)."""
    stopped: Stopped | None = None

    @property
    def steady_share(self) -> float:
        """The part of a clean probe's rate it proves the table sustains (see the module docstring)."""
        return self.search.window / (self.search.window + self.burst)

    @property
    def width(self) -> float | None:
        """The bracket's width relative to its low end, once both ends are known."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / self.low

    def next_rate(self) -> float:
        """The rate of the next probe (the search has not stopped)."""
        if not self.probes:
            return self.search.start
        if self.probes[-1].outcome == "partial":
            return self.probes[-1].rate
        if self.clean is not None and self.high is not None:
            return (self.clean + self.high) / 2
        last = next(p.rate for p in reversed(self.probes) if p.outcome != "partial")
        return last / self.search.factor if self.clean is None else last * self.search.factor

    def observe_window(self, index: int, rate: float, verdict: Verdict, stats: WindowStats | None) -> None:
        """Take the merged window of the probe at `rate` (`stats` None: nobody observed it)."""
        steady = steady_part(stats, self.burst) if stats is not None else None
        reasons, indexes = throttle_reasons(stats) if stats is not None else ((), ())
        self.observe(index, rate, verdict, steady, reasons, indexes)

    def observe(
        self,
        index: int,
        rate: float,
        verdict: Verdict,
        steady: Steady | None,
        reasons: tuple[str, ...] = (),
        resources: tuple[str, ...] = (),
    ) -> None:
        """Take the verdict and steady part of the probe at `rate`; sets `stopped` when the search is over."""
        precision = self.search.precision
        outcome = outcome_of(verdict, steady, THROTTLE_SHARE * precision, precision)
        if outcome != "throttled":
            reasons, resources = (), ()
        if outcome == "clean":
            sent_share = (1.0 - steady.refused) * (1.0 - steady.shortfall) if steady is not None else 1.0
            proven = rate * sent_share * self.steady_share
            self.low = proven if self.low is None else max(self.low, proven)
            self.clean = rate if self.clean is None else max(self.clean, rate)
        elif outcome == "throttled":
            self.high = rate if self.high is None else min(self.high, rate)
        self.probes.append(Probe(index, rate, outcome, reasons, resources, self.low, self.high))
        if outcome == "client-bound" or outcome == "unjudged":
            self.stopped = outcome
            return
        width = self.width
        if width is not None and width <= 0:
            self.stopped = "inconsistent"  # a clean probe proved more than a throttled one allowed: say so
        elif width is not None and width < self.search.precision:
            self.stopped = "precision"
        elif len(self.probes) >= self.search.max_windows:
            self.stopped = "max_windows"

    @property
    def found(self) -> bool:
        """A ceiling was bracketed (a clean and a throttled probe), and the search stopped by its own rule."""
        return self.low is not None and self.high is not None and self.stopped in ("precision", "max_windows")

    @property
    def limited_by(self) -> str | None:
        """`dynamodb` when a ceiling was found, `client` when the fleet could not offer a probe's rate, else None."""
        if self.stopped == "client-bound":
            return "client"
        return "dynamodb" if self.found else None

    @property
    def rate(self) -> float | None:
        """The ceiling's estimate (the bracket's middle) or, when the client stopped the search, the rate it could
        not offer."""
        if self.stopped == "client-bound":
            return self.probes[-1].rate
        if self.low is not None and self.high is not None:
            return (self.low + self.high) / 2
        return None

    def record(self) -> dict[str, Any]:
        """The `ceiling` record of the results file."""
        reasons: Counter[str] = Counter()
        indexes: Counter[str] = Counter()
        for probe in self.probes:
            reasons.update(probe.reasons)
            indexes.update(probe.resources)
        resource = indexes.most_common(1)[0][0] if indexes else ", ".join(self.tables)
        return {
            "type": "ceiling",
            "operation": self.search.op or "mix",
            "low": self.low,
            "high": self.high,
            "rate": self.rate,
            "limited_by": self.limited_by,
            "reasons": [r for r, _ in reasons.most_common()],
            "resource": resource,
            "resource_kind": "index" if indexes else "table",
            "windows": len(self.probes),
            "stopped": self.stopped,
            "precision": self.search.precision,
            "window_s": self.search.window,
            "burst_s": self.burst,
            "capacity_scale": self.capacity_scale,
            "probes": [p.to_dict() for p in self.probes],
        }


def new_search(scenario: Scenario) -> CeilingSearch | None:
    """The search state of a scenario that is a ceiling search (`None` for a fixed plan)."""
    if scenario.search is None:
        return None
    tables = tuple(dict.fromkeys(o.table for o in scenario.workload.operations))
    target = scenario.target
    scale = target.capacity_scale if isinstance(target, LocalTarget) else None
    return CeilingSearch(scenario.search, burst_seconds(target), tables, capacity_scale=scale)


def longest_search(search: Search, deadline: float) -> float:
    """Seconds a search lasts at most from its T0 (what the watchdog holds it to: its undecided probes are planned a
    day ahead): each of its `max_windows` probes, the wait for the probe's last calls (`deadline`) before its verdict
    decides the next, and the cool-down after it. The lead a decision needs to reach the fleet is in the watchdog's
    margin."""
    return search.max_windows * (search.window + deadline + search.cooldown)


def plan_end(end: float, t0: float, search: Search | None, deadline: float) -> float:
    """When a run's plan ends (`end`: its last window's end); for a search, its longest course, since its undecided
    probes are planned a day ahead and a search stuck waiting for a decision would never reach that end."""
    return end if search is None else min(end, t0 + longest_search(search, deadline))


def bracket_text(search: CeilingSearch) -> str:
    """The bracket so far, for progress lines: `ceiling in [190.2, 211.0] (10.9 %)`."""
    low = "?" if search.low is None else f"{search.low:,.1f}"
    high = "?" if search.high is None else f"{search.high:,.1f}"
    width = search.width
    return f"ceiling in [{low}, {high}]" + ("" if width is None else f" ({width:.1%})")


def sentence(record: dict[str, Any]) -> str:
    """The ceiling record in words (the conclusion's first sentence)."""
    op = {"write": "write", "read": "read"}.get(str(record.get("operation")), "")
    kind = f"{op} ceiling" if op else "ceiling"
    windows = record["windows"]
    found = f"found in {windows} window{'s' if windows != 1 else ''}"
    if record["limited_by"] == "client":
        return (
            f"The client, not DynamoDB, stopped the {kind} search: the fleet could not offer {record['rate']:,.0f}/s "
            f"(window {windows}), so that is no ceiling of the table; add workers or concurrency."
        )
    if record["limited_by"] != "dynamodb" or record["low"] is None:
        sustained = f"; it sustained {record['low']:,.0f}/s" if record["low"] is not None else ""
        why = "stopped after max_windows" if record["stopped"] == "max_windows" else f"stopped ({record['stopped']})"
        missing = "was throttled" if record["high"] is None else "was clean"
        return f"No {kind} found: no probe {missing} ({why}{sustained})."
    reasons = f", {', '.join(record['reasons'])}" if record["reasons"] else ""
    stopped = "" if record["stopped"] == "precision" else f"; stopped by {record['stopped']} before the precision"
    resource = f"{record.get('resource_kind', 'table')} {record['resource']}"
    return (
        f"DynamoDB's {kind} for {resource} is {record['rate']:,.0f}/s (between {record['low']:,.0f} and "
        f"{record['high']:,.0f}{reasons}), {found}{stopped}."
    )
