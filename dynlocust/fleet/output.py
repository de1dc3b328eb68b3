"""The fleet's output: what a run writes while it merges, the results file and the lines on the console.

The noun here is the *output* (`FleetOutput`): the results writer's records (run, window, end), the progress
line of each closed window, the notes on workers lost, joined or re-balanced, and the closing lines. It decides
nothing: `FleetMerge` merges, `WindowJudge` judges, `fleet_exit_code` picks the code; this writes what they found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from dynlocust.observe.conclusion import Conclusion
from dynlocust.observe.diff.shape import scenario_shape
from dynlocust.observe.report.table import format_progress, format_window_table
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.results import ResultsError, ResultsWriter
from dynlocust.scenario.model import LocalTarget, Scenario
from dynlocust.scenario.plan import Plan

UNKEPT = ("bins", "pacing")
"""What the window records a run keeps for its conclusion leave out: the per-bin and the schedule-lag histograms
(tens of KB a window; the results file has them, and the summary their figures)."""


@dataclass(frozen=True)
class FleetOutput:
    """Writes one run's results file and console lines; `records` collects the window records as written, less
    what they need not keep (`UNKEPT`)."""

    results: ResultsWriter
    out: TextIO
    records: list[dict[str, Any]]

    def run_started(self, scenario: Scenario, plan: Plan, worker_count: int, **run_fields: Any) -> None:
        windows = [
            {"index": w.index, "start": w.start, "duration": w.duration, "rate": w.rate, "phase": w.phase}
            for w in plan.windows
        ]
        self.results.write_run(
            scenario=scenario.name,
            source=scenario.source,
            shape=scenario_shape(scenario),
            t0=plan.t0,
            worker_count=worker_count,
            windows=windows,
            capacity_scale=capacity_scale(scenario),
            **run_fields,
        )

    def note(self, line: str) -> None:
        """One line about the fleet itself (a worker lost, joined, its share re-balanced)."""
        self.out.write(line + "\n")

    def window_closed(self, closed: ClosedWindow, planned: int, seconds_left: float, missing: list[int]) -> None:
        """The window's record in the results file, then its progress line."""
        record = closed.to_dict()
        self.results.write_window(**record)
        self.records.append({"type": "window", **{k: v for k, v in record.items() if k not in UNKEPT}})
        line = format_progress(closed, planned, seconds_left)
        if missing:
            line += f" (missing workers {missing})"
        self.out.write(line + "\n")
        self.out.flush()

    def run_ended(
        self,
        end: dict[str, Any],
        closed: list[ClosedWindow],
        conclusion: Conclusion,
        *,
        table: bool,
        skewed: Mapping[int, float],
    ) -> None:
        """The end record `end`, then (`table`: unless the epilogue prints them) the window table and the
        conclusion, and why the run is not whole: its abort, lost workers, skewed clocks and failed SLOs."""
        try:
            self.results.write_end(**end)
        except ResultsError as exc:
            unwritten: ResultsError | None = exc
        else:
            unwritten = None
        if table:
            self.out.write("\n" + format_window_table(closed) + "\n")
            self.out.write(f"\nconclusion: {conclusion.text}\n")
        if end.get("failed"):
            self.out.write(f"\nrun failed: {end['failed']}\n")
        if end["abort_reason"]:
            self.out.write(f"\nrun stopped early: {end['abort_reason']}\n")
        if end["lost_workers"]:
            self.out.write(f"\nincomplete: workers {end['lost_workers']} were lost; their windows are partial\n")
        for worker, offset in skewed.items():
            self.out.write(f"clock skew: worker {worker} is {offset * 1000:+.1f} ms off the master\n")
        for failure in end["slo_failures"]:
            self.out.write(f"SLO failed: {failure}\n")
        self.out.flush()
        if unwritten is not None:
            raise unwritten


def capacity_scale(scenario: Scenario) -> float | None:
    """The embedded endpoint's capacity scale (scaling applied), which every capacity DescribeTable reports is
    emulated at; None for a remote target, whose figures are the service's own."""
    return scenario.target.capacity_scale if isinstance(scenario.target, LocalTarget) else None
