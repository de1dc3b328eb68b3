"""The fleet's view of a run: window reports from every worker merged exactly, then verdicts, SLOs and the end.

A standalone run is a fleet of one, so the same `FleetReport` writes the results file, the progress lines and the
final window table in both cases. Workers send each closed window as a `ClosedRecord` (its `to_dict()` on the
wire); the report merges those of one window index (counts add, histograms merge) once every live worker has sent
it, flags the window partial when a worker was lost, and keeps the merged window as a `ClosedRecord` too.

Locust custom messages between master and workers (all payloads are plain dicts, msgpack-safe):
- `dynlocust:plan` master -> worker: T0, run id, physical table names, worker index and count, endpoint, the
  master's clock (for the offset estimate) and a digest of the scenario text, so a worker with another file refuses.
- `dynlocust:clock` worker -> master: the master's timestamp echoed with the worker's own clock.
- `dynlocust:window` worker -> master: one closed window of one worker.
- `dynlocust:done` worker -> master: the worker's totals once its schedule is over.
- `dynlocust:hello` worker -> master: sent once its handlers are registered; a worker that says hello to a running
  fleet joins it from the next window that starts far enough ahead.
- `dynlocust:replan` master -> worker: after a worker is lost, the survivors' new shares from a window not yet
  started on (the lost share is re-balanced, and the windows from there on are whole again).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from dynlocust.conclusion import conclude
from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.diff.shape import scenario_shape
from dynlocust.report.table import format_progress, format_window_table
from dynlocust.results import ResultsWriter
from dynlocust.saturation import Saturation, Thresholds, combine
from dynlocust.scenario.model import Scenario
from dynlocust.scenario.plan import Plan
from dynlocust.slo import check_window
from dynlocust.windows import ClosedRecord, WindowError, WindowStats, verdict

PLAN = "dynlocust:plan"
CLOCK = "dynlocust:clock"
WINDOW = "dynlocust:window"
DONE = "dynlocust:done"
REPLAN = "dynlocust:replan"
HELLO = "dynlocust:hello"

EXIT_OK = 0
EXIT_SLO = 3
EXIT_ABORTED = 4
EXIT_INCOMPLETE = 5
"""Exit codes: SLOs broken; stopped by a ceiling or a signal; a worker was lost (numbers are incomplete)."""

CLOCK_SKEW_LIMIT = 0.05
"""Seconds of estimated clock offset between master and a worker above which the run is marked skewed."""


def _saturation(index: int, worker: int, part: ClosedRecord) -> Saturation:
    """A worker's part always carries its client's evidence (only records written long ago lack it)."""
    if part.saturation is None:
        raise WindowError(f"window {index}: expected worker {worker}'s part with its saturation, found none")
    return part.saturation


@dataclass
class FleetReport:
    """Collects window reports from `worker_count` workers and reports each window once, in order."""

    scenario: Scenario
    plan: Plan
    results: ResultsWriter
    worker_count: int
    prices: Prices = US_EAST_1
    out: TextIO = field(default_factory=lambda: sys.stdout)
    on_finished: Callable[[int], None] = lambda code: None
    clock: Callable[[], float] = time.time
    received: dict[int, dict[int, ClosedRecord]] = field(default_factory=dict)
    """Window index -> worker -> that worker's part."""
    done: dict[int, dict[str, Any]] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)
    clock_offsets: dict[int, float] = field(default_factory=dict)
    rebalanced_from: dict[int, int] = field(default_factory=dict)
    joined_from: dict[int, int] = field(default_factory=dict)
    """Worker that joined mid-run -> the first window it has a share of."""
    """Lost worker -> the first window whose share the survivors took over."""
    closed: list[ClosedRecord] = field(default_factory=list)
    """The fleet's windows, merged and judged, in order."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """The merged window records as written to the results file (what the conclusion reads)."""
    exit_code: int | None = None
    abort_reason: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    """Applied to the fleet's summed counts of each window (each worker judges its own part with its own)."""
    table_in_epilogue: bool = False
    """The window table and conclusion are printed by `dynlocust.epilogue`, last, after Locust's own tables."""

    def start(self, **run_fields: Any) -> None:
        windows = [
            {"index": w.index, "start": w.start, "duration": w.duration, "rate": w.rate, "phase": w.phase}
            for w in self.plan.windows
        ]
        self.results.write_run(
            scenario=self.scenario.name,
            source=self.scenario.source,
            shape=scenario_shape(self.scenario),
            t0=self.plan.t0,
            worker_count=self.worker_count,
            windows=windows,
            **run_fields,
        )

    # -- inputs ------------------------------------------------------------------------------------------------

    def add_window(self, worker: int, record: ClosedRecord) -> None:
        self.received.setdefault(record.index, {})[worker] = record
        self._advance()

    def worker_done(self, worker: int, totals: dict[str, Any]) -> None:
        self.done[worker] = totals
        if totals.get("abort_reason") and self.abort_reason is None:
            self.abort_reason = f"worker {worker}: {totals['abort_reason']}"
        self._advance()

    def abort(self, reason: str) -> None:
        """End the run now with `reason` (exit code 4): it was interrupted before its workers reported the end, e.g.
        during set-up. The windows closed so far stay; the end record says why."""
        if not self.finished:
            self.abort_reason = reason
            self._finish()

    def worker_lost(self, worker: int) -> None:
        if worker in self.lost or worker in self.done:
            return
        self.lost.add(worker)
        self.out.write(f"worker {worker} lost: its share of the remaining windows is missing\n")
        self._advance()

    def add_worker(self) -> int:
        """A worker joined mid-run: it gets the next index; `worker_joined` says from which window it reports."""
        self.worker_count += 1
        self.joined_from[self.worker_count - 1] = len(self.plan.windows)  # nothing expected until it has a share
        return self.worker_count - 1

    def worker_joined(self, worker: int, from_window: int) -> None:
        self.joined_from[worker] = from_window
        self.out.write(f"worker {worker} joined: it takes a share from window {from_window + 1}\n")

    def rebalance(self, worker: int, from_window: int) -> None:
        """The survivors took over lost `worker`'s share from `from_window` on: it is not missing there."""
        if worker not in self.rebalanced_from:
            self.rebalanced_from[worker] = from_window
            self.out.write(f"re-balanced worker {worker}'s share over the others from window {from_window + 1}\n")

    def record_clock(self, worker: int, master_sent: float, worker_time: float) -> None:
        """Offset estimate from one round trip: the worker's clock minus the master's at the midpoint."""
        now = self.clock()
        self.clock_offsets[worker] = worker_time - (master_sent + (now - master_sent) / 2)

    # -- merging -----------------------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.exit_code is not None

    def _advance(self) -> None:
        while len(self.closed) < len(self.plan.windows):
            index = len(self.closed)
            reports = self.received.get(index, {})
            expected = {w for w in range(self.worker_count) if index >= self.joined_from.get(w, 0)} - self.lost
            missing = [
                w
                for w in range(self.worker_count)
                if w not in reports
                and index >= self.joined_from.get(w, 0)
                and not (w in self.rebalanced_from and index >= self.rebalanced_from[w])
            ]
            # a worker that is done without this window stopped early: it will never send it
            if not expected <= set(reports) | set(self.done):
                return
            self._close(index, reports, missing)
        if set(self.done) | self.lost >= set(range(self.worker_count)) and not self.finished:
            self._finish()

    def _close(self, index: int, reports: dict[int, ClosedRecord], missing: list[int]) -> None:
        window = self.plan.windows[index]
        stats: WindowStats | None = None
        per_worker: dict[str, dict[str, Any]] = {}
        saturations = {worker: _saturation(index, worker, part) for worker, part in reports.items()}
        for worker in sorted(reports):
            part = reports[worker]
            total = part.stats.total()
            per_worker[str(worker)] = {
                "offered": total.offered,
                "sent": total.sent,
                "accepted": total.accepted,
                "throttled": total.throttled,
                "dropped": part.stats.dropped,
                "lag_p50": part.stats.schedule_lag.percentile(0.5),
                "lag_p99": part.stats.schedule_lag.percentile(0.99),
                "cpu": saturations[worker].cpu,
                "reasons": list(saturations[worker].reasons),
            }
            if stats is None:
                stats = part.stats.copy()
            else:
                stats.merge(part.stats)
        observed = stats is not None
        if stats is None:  # nobody observed it: an empty, partial window
            stats = WindowStats(index, window.start, window.duration, bin_seconds=self.scenario.bin)
        if missing:
            stats.mark_partial()
        saturation = combine(saturations, self.thresholds)
        summary = stats.report_summary(self.prices)
        detail = verdict(stats if observed else None, saturation, planned=window.requests)
        closed = ClosedRecord(
            stats,
            window.phase,
            summary,
            saturation,
            verdict_detail=detail,
            slo_failures=check_window(self.scenario.slos, index, window.phase, summary),
            workers=per_worker,
            missing_workers=missing,
            rebalanced=sorted(w for w, first in self.rebalanced_from.items() if index >= first),
        )
        self.closed.append(closed)
        record = closed.to_dict()
        self.results.write_window(**record)
        self.records.append({"type": "window", **record})
        line = format_progress(closed, len(self.plan.windows), self.plan.end - self.clock())
        if missing:
            line += f" (missing workers {missing})"
        self.out.write(line + "\n")
        self.out.flush()

    def _finish(self) -> None:
        failures = [f for w in self.closed for f in w.slo_failures]
        skewed = {w: o for w, o in self.clock_offsets.items() if abs(o) > CLOCK_SKEW_LIMIT}
        if self.lost:
            code = EXIT_INCOMPLETE
        elif self.abort_reason:
            code = EXIT_ABORTED
        elif failures:
            code = EXIT_SLO
        else:
            code = EXIT_OK
        self.exit_code = code
        totals = {key: sum(d.get(key, 0) for d in self.done.values()) for key in ("sent", "read_units", "write_units")}
        conclusion = conclude(self.records)
        self.results.write_end(
            exit_code=code,
            abort_reason=self.abort_reason,
            slo_failures=failures,
            lost_workers=sorted(self.lost),
            clock_offsets={str(w): o for w, o in self.clock_offsets.items()},
            clock_skew=bool(skewed),
            cost_dollars=dollars(totals["read_units"], totals["write_units"], self.prices),
            windows_closed=len(self.closed),
            windows_planned=len(self.plan.windows),
            conclusion=conclusion.to_dict(),
            **totals,
        )
        if not self.table_in_epilogue:
            self.out.write("\n" + format_window_table(self.closed) + "\n")
            self.out.write(f"\nconclusion: {conclusion.text}\n")
        if self.abort_reason:
            self.out.write(f"\nrun stopped early: {self.abort_reason}\n")
        if self.lost:
            self.out.write(f"\nincomplete: workers {sorted(self.lost)} were lost; their windows are partial\n")
        for worker, offset in skewed.items():
            self.out.write(f"clock skew: worker {worker} is {offset * 1000:+.1f} ms off the master\n")
        for failure in failures:
            self.out.write(f"SLO failed: {failure}\n")
        self.out.flush()
        self.on_finished(code)
