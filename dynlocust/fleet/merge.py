"""The fleet's merge: window parts from every worker merged exactly, in order, into the fleet's windows.

The noun here is the *merge* (`FleetMerge`): it collects each worker's parts and, once every live worker has sent
a window, merges them (`dynlocust.fleet.parts`) and hands the merged window to the `WindowJudge`
(`dynlocust.fleet.judge`: verdict, SLOs), the `FleetOutput` (`dynlocust.fleet.output`: results file, progress
lines) and, at the end, `fleet_exit_code` (`dynlocust.fleet.exit_code`). A standalone run is a fleet of one, so
the same pieces serve both cases.

Workers send each closed window as a `ClosedWindow` (its `to_dict()` on the wire); the merge adds those of one
window index (counts add, histograms merge), flags the window partial when a worker was lost, and keeps the merged
window as a `ClosedWindow` too.

Locust custom messages between master and workers (all payloads are plain dicts, msgpack-safe):
- `dynlocust:plan` master -> worker: T0, run id, physical table names, worker index and count, endpoint, the
  master's clock (for the offset estimate) and a digest of the scenario text, so a worker with another file refuses.
- `dynlocust:clock` worker -> master: the master's timestamp echoed with the worker's own clock.
- `dynlocust:window` worker -> master: one closed window of one worker.
- `dynlocust:done` worker -> master: the worker's totals once its schedule is over.
- `dynlocust:hello` worker -> master: sent once its handlers are registered; a worker that says hello to a running
  fleet joins it from the next window that starts far enough ahead.
- `dynlocust:probe` master -> worker: a ceiling search's next probe (`index`, `start`, the fleet's `rate`: each
  worker takes its share), or `end`: the search stopped after that many windows.
- `dynlocust:replan` master -> worker: after a worker is lost, the survivors' new shares from a window not yet
  started on (the lost share is re-balanced, and the windows from there on are whole again).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.exit_codes import ExitCode, worst
from dynlocust.fleet.exit_code import failed_cause, fleet_exit_code
from dynlocust.fleet.judge import WindowJudge, inconclusive
from dynlocust.fleet.output import FleetOutput
from dynlocust.fleet.parts import merge_parts
from dynlocust.observe import warm_check
from dynlocust.observe.conclusion import Conclusion, conclude
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.results import ResultsError, ResultsWriter
from dynlocust.run.saturation import Thresholds
from dynlocust.run.search import CeilingSearch, bracket_text
from dynlocust.run.search import sentence as search_sentence
from dynlocust.run.table_state import TableStatePoller
from dynlocust.run.tally import WindowStats
from dynlocust.scenario.model import Scenario
from dynlocust.scenario.plan import Plan

PLAN = "dynlocust:plan"
CLOCK = "dynlocust:clock"
WINDOW = "dynlocust:window"
DONE = "dynlocust:done"
REPLAN = "dynlocust:replan"
HELLO = "dynlocust:hello"
PROBE = "dynlocust:probe"


CLOCK_SKEW_LIMIT = 0.05
"""Seconds of estimated clock offset between master and a worker above which the run is marked skewed."""


@dataclass
class FleetMerge:
    """Collects window parts from `worker_count` workers and closes each fleet window once, in order."""

    scenario: Scenario
    plan: Plan
    results: ResultsWriter
    worker_count: int
    prices: Prices = US_EAST_1
    out: TextIO = field(default_factory=lambda: sys.stdout)
    on_finished: Callable[[int], None] = lambda code: None
    clock: Callable[[], float] = time.time
    parts: dict[int, dict[int, ClosedWindow]] = field(default_factory=dict)
    """Window index -> worker -> that worker's part of the window, until the window is closed."""
    done: dict[int, dict[str, Any]] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)
    clock_offsets: dict[int, float] = field(default_factory=dict)
    rebalanced_from: dict[int, int] = field(default_factory=dict)
    joined_from: dict[int, int] = field(default_factory=dict)
    """Worker that joined mid-run -> the first window it has a share of."""
    """Lost worker -> the first window whose share the survivors took over."""
    closed: list[ClosedWindow] = field(default_factory=list)
    """The fleet's windows, merged and judged, in order, `settled` (the results file has their histograms)."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """The merged window records as written to the results file, less their histograms (`output.UNKEPT`): the
    conclusion reads their summaries, verdicts and saturation."""
    warm: list[warm_check.WarmFinding] | None = None
    """The scenario's warm throughput claims judged on the first window, once it has closed."""
    exit_code: int | None = None
    abort_reason: str | None = None
    write_error: str | None = None
    """Why a results record could not be written: the run stops at once and fails (exit 1)."""
    conclusion: Conclusion | None = None
    """The run's finding in words, once it has finished."""
    thresholds: Thresholds = field(default_factory=Thresholds)
    """Applied to the fleet's summed counts of each window (each worker judges its own part with its own)."""
    table_in_epilogue: bool = False
    """The window table and conclusion are printed by `dynlocust.plugin.epilogue`, last, after Locust's own tables."""
    table_states: TableStatePoller | None = None
    """The poll of the tables' state at each window's end (master or standalone): a window waits for its poll."""
    search: CeilingSearch | None = None
    """A ceiling search's state: each merged window's verdict decides the next probe (`dynlocust.run.search`)."""
    on_probe: Callable[[int, float, float], None] = lambda index, start, rate: None
    """Hands the next probe (window index, start, the fleet's rate) to the workers, or to the local run."""
    on_search_end: Callable[[int], None] = lambda windows: None
    """Tells the workers, or the local run, that the search stopped after `windows` probes."""
    probe_lead: float = 0.25
    """Seconds between deciding a probe and its start: the decision must reach every worker first."""

    @property
    def judge(self) -> WindowJudge:
        return WindowJudge(self.scenario, self.thresholds, self.prices)

    @property
    def output(self) -> FleetOutput:
        return FleetOutput(self.results, self.out, self.records)

    def start(self, **run_fields: Any) -> None:
        """Write the run record; one that cannot be written (a full disk) finishes the run failed at once."""
        if self.search is not None:  # its probes after the first are not planned yet: the record says so
            run_fields["search"] = dataclasses.asdict(self.search.search)
        plan = self.plan if self.search is None else self.plan.truncated(1)
        try:
            self.output.run_started(self.scenario, plan, self.worker_count, **run_fields)
        except ResultsError as exc:
            self._results_failed(exc)

    # -- inputs ------------------------------------------------------------------------------------------------

    def add_window(self, worker: int, record: ClosedWindow) -> None:
        self.parts.setdefault(record.index, {})[worker] = record
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
        self.output.note(f"worker {worker} lost: its share of the remaining windows is missing")
        self._advance()

    def add_worker(self) -> int:
        """A worker joined mid-run: it gets the next index; `worker_joined` says from which window it reports."""
        self.worker_count += 1
        self.joined_from[self.worker_count - 1] = len(self.plan.windows)  # nothing expected until it has a share
        return self.worker_count - 1

    def worker_joined(self, worker: int, from_window: int) -> None:
        self.joined_from[worker] = from_window
        self.output.note(f"worker {worker} joined: it takes a share from window {from_window + 1}")

    def rebalance(self, worker: int, from_window: int) -> None:
        """The survivors took over lost `worker`'s share from `from_window` on: it is not missing there."""
        if worker not in self.rebalanced_from:
            self.rebalanced_from[worker] = from_window
            self.output.note(f"re-balanced worker {worker}'s share over the others from window {from_window + 1}")

    def table_state_polled(self, index: int) -> None:
        """The tables' state at window `index`'s end is in: that window may close now."""
        self._advance()

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
            parts = self.parts.get(index, {})
            expected = {w for w in range(self.worker_count) if index >= self.joined_from.get(w, 0)} - self.lost
            missing = [
                w
                for w in range(self.worker_count)
                if w not in parts
                and index >= self.joined_from.get(w, 0)
                and not (w in self.rebalanced_from and index >= self.rebalanced_from[w])
            ]
            # a worker that is done without this window stopped early: it will never send it
            if not expected <= set(parts) | set(self.done):
                return
            if self.table_states is not None and not self.table_states.ready(index):
                return  # the poll at this window's end calls `table_state_polled` (within the deadline)
            self._close(index, parts, missing)
            self.parts.pop(index, None)  # merged into `closed`: a long run keeps one copy of each window
        if set(self.done) | self.lost >= set(range(self.worker_count)) and not self.finished:
            self._finish()

    def _close(self, index: int, parts: dict[int, ClosedWindow], missing: list[int]) -> None:
        window = self.plan.windows[index]
        merged = merge_parts(window, parts, bin_seconds=self.scenario.bin)
        stats, observed = merged.stats, merged.observed
        if missing:
            stats.mark_partial()
        closed = self.judge.judge(
            window,
            stats,
            observed=observed,
            saturations=merged.saturations,
            workers=merged.workers,
            missing=missing,
            rebalanced=sorted(w for w, first in self.rebalanced_from.items() if index >= first),
        )
        if self.table_states is not None and index in self.table_states.states:
            closed = dataclasses.replace(closed, table_state=self.table_states.states[index])
        if index == 0:
            self.warm = warm_check.check(self.scenario, stats)
        self.closed.append(closed.settled())  # a long run keeps each window's figures, not its histograms
        if self.search is not None:
            self._next_probe(index, stats if observed else None, closed)
        try:
            self.output.window_closed(closed, len(self.plan.windows), self.seconds_left(), missing)
        except ResultsError as exc:
            self._results_failed(exc)

    def seconds_left(self) -> float:
        """Until the plan's end; a search's undecided probes have no times yet: at most their windows' length."""
        if self.search is None:
            return self.plan.end - self.clock()
        return sum(w.duration for w in self.plan.windows[len(self.closed) :])

    def _next_probe(self, index: int, stats: WindowStats | None, closed: ClosedWindow) -> None:
        """The search takes probe `index`'s merged verdict, then decides the next probe or ends the plan."""
        search = self.search
        assert search is not None and closed.verdict_detail is not None
        window = self.plan.windows[index]
        search.observe_window(index, window.rate, closed.verdict_detail, stats)
        probe = search.probes[-1]
        seen = f"probe {index + 1} at {window.rate:,.1f}/s: {probe.outcome}"
        if search.stopped is None and self.abort_reason is None and index + 1 < len(self.plan.windows):
            cooldown = self.scenario.search.cooldown if self.scenario.search is not None else 0.0
            start = max(window.end + cooldown, self.clock() + self.probe_lead)
            rate = search.next_rate()
            self.plan = self.plan.with_probe(index + 1, start, rate)
            self._follow_plan()
            self.output.note(f"search: {seen}; {bracket_text(search)}; next {rate:,.1f}/s")
            self.on_probe(index + 1, start, rate)
            return
        self.plan = self.plan.truncated(index + 1)
        self._follow_plan()
        self.output.note(f"search: {seen}; {bracket_text(search)}; stopped ({search.stopped or 'the run stopped'})")
        self.on_search_end(index + 1)

    def _follow_plan(self) -> None:
        """The table-state polls follow a search's re-timed windows."""
        if self.table_states is not None:
            self.table_states.boundaries = tuple(w.end for w in self.plan.windows)

    def _end_search(self, code: ExitCode) -> ExitCode:
        """Write the search's `ceiling` record; a search that found no ceiling DynamoDB set is inconclusive (8)."""
        assert self.search is not None
        if self.search.stopped is None and not self.search.found:
            self.search.stopped = "unjudged"  # the run stopped (a ceiling, a signal) before the search did
        try:
            self.results.write(self.search.record())
        except ResultsError as exc:
            self._results_failed(exc)
            return ExitCode(worst([code, ExitCode.FAILED]))
        if self.search.found:
            return code
        return ExitCode(worst([code, ExitCode.INCONCLUSIVE]))

    def _results_failed(self, exc: ResultsError) -> None:
        """A record could not be written whole: the run stops now (teardown runs) and fails, naming the path."""
        if self.write_error is None:
            self.write_error = str(exc)
            self.output.note(f"results not written: {exc}; stopping the run")
        if not self.finished:
            self._finish()

    def _finish(self) -> None:
        warm = self.warm if self.warm is not None else warm_check.check(self.scenario, None)
        failures = [f for w in self.closed for f in w.slo_failures] + [f.failure for f in warm if f.failure]
        skewed = {w: o for w, o in self.clock_offsets.items() if abs(o) > CLOCK_SKEW_LIMIT}
        ended = fleet_exit_code(
            workers_lost=bool(self.lost),
            aborted=bool(self.abort_reason),
            slos_failed=bool(failures),
            inconclusive=inconclusive([w.verdict_detail for w in self.closed], len(self.plan.windows)),
        )
        failed = failed_cause(self.closed, write_error=self.write_error)
        code = ExitCode(worst([ended, ExitCode.FAILED if failed else ExitCode.PASSED]))
        self.exit_code = code
        totals = {key: sum(d.get(key, 0) for d in self.done.values()) for key in ("sent", "read_units", "write_units")}
        conclusion = conclude(self.records)
        if self.search is not None:
            code = self._end_search(code)
            conclusion = dataclasses.replace(
                conclusion, text=f"{search_sentence(self.search.record())} {conclusion.text}"
            )
        if warm:
            conclusion = dataclasses.replace(conclusion, text=f"{conclusion.text} {warm_check.sentence(warm)}")
        self.conclusion = conclusion
        end = {
            "exit_code": code,
            "abort_reason": self.abort_reason,
            "failed": failed,
            "slo_failures": failures,
            "lost_workers": sorted(self.lost),
            "clock_offsets": {str(w): o for w, o in self.clock_offsets.items()},
            "clock_skew": bool(skewed),
            "cost_dollars": dollars(totals["read_units"], totals["write_units"], self.prices),
            "windows_closed": len(self.closed),
            "windows_planned": len(self.plan.windows),
            "conclusion": conclusion.to_dict(),
            **totals,
        }
        if self.table_states is not None:
            self.table_states.stop()
            before, after = self.table_states.before, self.table_states.last()
            end["table_state"] = after
            for line in warm_check.described(self.scenario, before, after):
                self.output.note(line)
        if warm:
            end["warm_throughput"] = [f.to_dict() for f in warm]
        try:
            self.output.run_ended(end, self.closed, conclusion, table=not self.table_in_epilogue, skewed=skewed)
        except ResultsError as exc:
            if self.write_error is None:
                self.write_error = str(exc)
                self.output.note(f"results not written: {exc}")
                code = self.exit_code = ExitCode(worst([code, ExitCode.FAILED]))
        self.on_finished(code)
