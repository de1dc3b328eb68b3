"""`dynlocust report RESULTS`: every report format, rebuilt from a results file alone.

The results file is the only input, so a report can be rebuilt anywhere, any time, including from what a killed
run left behind: windows are read back as `WindowStats` (merged across workers by window index) and a run with
no `end` record, missing windows or a cut last line is reported as *partial*, never passed off as complete.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynlocust.cost import US_EAST_1
from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.observe.conclusion import Conclusion, conclude, window_list
from dynlocust.observe.plan import CapacityPlan, build_plan
from dynlocust.observe.throttle_causes import Explanation, explain
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.results import ResultsError, read_results, results_file
from dynlocust.run.saturation import Saturation, combine
from dynlocust.run.tally import WindowError, WindowStats
from dynlocust.run.verdict import Verdict

REPORT_DIR = "report"


class ReportError(DynlocustError):
    """A results file that holds nothing a report can be built from."""


class ReportWriteError(ReportError):
    """A report file that could not be written whole (a full disk): the run that wrote it fails."""


@dataclass
class BinReport:
    """One bin of one window: its time since T0 and what happened in it."""

    window: int
    bin: int
    t: float
    """Seconds from the run's T0 to the bin's start."""
    seconds: float
    offered: int
    sent: int
    accepted: int
    throttled: int
    throttled_by: dict[str, int]
    latency: dict[str, float | None]

    def per_s(self, count: int) -> float:
        return count / self.seconds if self.seconds > 0 else 0.0


@dataclass
class WindowReport:
    """One window as a report reads it, all workers merged and laid out in bins: built from a results file's
    `ClosedWindow`s (or, in the web UI, from the fleet's). It fits `dynlocust.observe.report.table.WindowLike`, as the
    fleet's `ClosedWindow` does. A window still running has no `verdict_detail`."""

    index: int
    phase: str
    start: float
    duration: float
    summary: dict[str, Any]
    verdict: str
    slo_failures: list[str]
    saturation: Saturation | None
    workers: int
    bins: list[BinReport]
    verdict_detail: Verdict | None = None
    stats: WindowStats | None = None
    """The merged statistics themselves (per-bin histograms), for readers that test more than the summary."""
    table_state: dict[str, Any] | None = None
    """The tables' state at the window's end (`dynlocust.run.table_state`), when it was polled."""


@dataclass
class RunReport:
    """What a results file says about one run."""

    source: Path
    run: dict[str, Any]
    end: dict[str, Any] | None
    windows: list[WindowReport]
    planned: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    """Why the run is partial (empty when it is complete)."""
    warnings: list[str] = field(default_factory=list)
    """What a reader should know that does not make the run partial (clock skew)."""
    conclusion: Conclusion | None = None
    """The run's finding in words (from the end record, else from the windows); None while a run is live."""
    failure: str | None = None
    """Why a run whose windows all closed failed (exit 1: a window's requests failed): said in its status, not a
    reason to call it partial. Windows missing (a results file that could not be written whole) make it partial."""
    ceiling: dict[str, Any] | None = None
    """A ceiling search's `ceiling` record (`dynlocust.run.search`), if the run was one."""

    @property
    def partial(self) -> bool:
        return bool(self.notes)

    @property
    def run_id(self) -> str:
        return str(self.run.get("run_id", self.source.parent.name))

    @property
    def scenario(self) -> str:
        return str(self.run.get("scenario", "?"))

    @property
    def t0(self) -> float:
        t0 = self.run.get("t0")
        if t0 is not None:
            return float(t0)
        return min((w.start for w in self.windows), default=0.0)

    def throttles(self) -> dict[str, int]:
        """Throttled requests of the whole run by `code|reason`, most frequent first."""
        totals: dict[str, int] = {}
        for w in self.windows:
            for key, n in w.summary["throttled_by"].items():
                totals[key] = totals.get(key, 0) + n
        return dict(sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])))

    def capacity_plan(self) -> CapacityPlan | None:
        """A ceiling search's capacity plan at the ceiling it found, for every report format (`dynlocust plan`
        gives it at other targets); None when the run was no search or found no rate to plan at."""
        if not self.ceiling:
            return None
        windows = [
            {"type": "window", "summary": w.summary, "table_state": w.table_state, "bins": _operation_units(w.stats)}
            for w in self.windows
        ]
        try:
            return build_plan([{"type": "run", **self.run}, *windows, self.ceiling], None)
        except DynlocustError:
            return None

    def explanations(self) -> list[Explanation]:
        """Why requests were throttled, where the run knows (a shared on-demand budget, an index's limit)."""
        return explain([window_record(w) for w in self.windows])

    def status(self) -> str:
        if self.partial:
            return "PARTIAL"
        return "complete"


def _operation_units(stats: WindowStats | None) -> list[dict[str, Any]]:
    """A window's consumed units by operation, bin by bin, as its record in the results file has them."""
    if stats is None:
        return []
    return [
        {"operations": {k: {"read_units": t.read_units, "write_units": t.write_units} for k, t in b.operations.items()}}
        for b in stats.bins
    ]


_PRECEDENCE = ("not-run", "partial", "client-bound", "errors", "throttled", "ok")
"""`VERDICTS` in the order `verdict.verdict` checks them."""


def _worst(verdicts: Sequence[str]) -> str:
    # precedence of verdict.verdict: the first that applies to any worker applies to the window
    for v in _PRECEDENCE:
        if v in verdicts:
            return v
    return verdicts[0] if verdicts else "partial"


def window_from_stats(
    stats: WindowStats,
    *,
    bin_summaries: list[dict[str, Any]] | None = None,
    phase: str,
    verdict: str,
    t0: float,
    slo_failures: Sequence[str] = (),
    saturation: Saturation | None = None,
    workers: int = 1,
    verdict_detail: Verdict | None = None,
) -> WindowReport:
    """A `WindowReport` of (merged) window statistics, as read back from results or live from a run (a settled
    `ClosedWindow` gives its `bin_summaries`: its statistics have no bins left)."""
    summary = stats.report_summary(US_EAST_1)
    bins = [
        BinReport(
            window=stats.index,
            bin=b,
            t=stats.start - t0 + bs["offset_s"],
            seconds=min(stats.duration - bs["offset_s"], stats.bin_seconds),
            offered=bs["offered"],
            sent=bs["sent"],
            accepted=bs["accepted"],
            throttled=bs["throttled"],
            throttled_by=bs["throttled_by"],
            latency=bs["latency"],
        )
        for b, bs in enumerate(stats.bin_summaries() if bin_summaries is None else bin_summaries)
    ]
    return WindowReport(
        index=stats.index,
        phase=phase,
        start=stats.start,
        duration=stats.duration,
        summary=summary,
        verdict=verdict,
        slo_failures=list(slo_failures),
        saturation=saturation,
        workers=workers,
        bins=bins,
        verdict_detail=verdict_detail,
        stats=stats,
    )


def _window_report(records: list[dict[str, Any]], phase_of: dict[int, str], t0: float, workers: int) -> WindowReport:
    """One window from its records: one already merged by the master (it names its `workers`), or one per worker."""
    try:
        closed = [ClosedWindow.from_dict(r) for r in records]
        merged = [r for r in closed if r.merged]
        parts = merged[:1] or closed
        stats = parts[0].stats  # read from the file just now: this window's own to merge into
        for r in parts[1:]:
            stats.merge(r.stats)
    except WindowError as exc:
        raise ReportError(f"window index {records[0].get('index')}: expected window statistics, found {exc}") from exc
    first = merged[0] if merged else None
    seen = len(parts) if first is None else len(first.workers or {}) or workers - len(first.missing_workers or [])
    if seen < workers:
        stats.mark_partial()
    sats = {
        r.worker_index if r.worker_index is not None else i: r.saturation
        for i, r in enumerate(parts)
        if r.saturation is not None
    }
    saturation = None if not sats else next(iter(sats.values())) if merged else combine(sats)
    if merged and not stats.partial:
        detail = merged[0].verdict_detail or Verdict((merged[0].verdict,))  # decided by the master when it closed
    else:  # a worker's own records, or a window short of workers: the most severe label applies
        label = _worst([r.verdict for r in parts])
        if stats.partial and label not in ("not-run", "partial"):
            label = "partial"
        reasons = saturation.reasons if label == "client-bound" and saturation is not None else ()
        detail = Verdict((label,), reasons=reasons)
    report = window_from_stats(
        stats,
        phase=parts[0].phase or phase_of.get(stats.index, ""),
        verdict=detail.label,
        t0=t0,
        slo_failures=[f for r in parts for f in r.slo_failures],
        saturation=saturation,
        workers=seen,
        verdict_detail=detail,
    )
    report.table_state = first.table_state if first is not None else None
    return report


def load_report(path: str | os.PathLike[str]) -> RunReport:
    """Read a results file (or a run directory) into a `RunReport`; a killed run's file gives a partial report."""
    source = results_file(path)
    cut: list[str] = []
    records = read_results(source, on_truncated=cut.append)
    runs = [r for r in records if r["type"] == "run"]
    ends = [r for r in records if r["type"] == "end"]
    window_records = [r for r in records if r["type"] == "window"]
    if not runs and not window_records:
        raise ReportError(f"results file {source}: expected a run record and windows, found {len(records)} records")
    run = runs[0] if runs else {}
    try:
        planned = list(run.get("windows", []))
        phase_of = {int(w["index"]): str(w.get("phase", "")) for w in planned}
        workers = max([int(r.get("worker_count", 1)) for r in runs] or [1])
        t0 = float(run["t0"]) if "t0" in run else min(float(r["start"]) for r in window_records)
        by_index: dict[int, list[dict[str, Any]]] = {}
        for r in window_records:
            by_index.setdefault(int(r["index"]), []).append(r)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(
            f"results file {source}: expected run and window records as dynlocust writes them, "
            f"found a malformed one ({exc!r})"
        ) from exc
    try:
        windows = [_window_report(by_index[i], phase_of, t0, workers) for i in sorted(by_index)]
    except ReportError as exc:
        raise ReportError(f"results file {source}: {exc}") from exc

    notes: list[str] = []
    if not runs:
        notes.append("the run record is missing")
    if not ends:
        notes.append("the run did not finish: no end record (killed or still running)")
    end = ends[-1] if ends else None
    failure = str(end["failed"]) if end is not None and end.get("failed") else None
    if failure is not None and planned and len(windows) < len(planned):
        notes.append(f"the run failed: {failure}")
    if end is not None and end.get("abort_reason"):
        notes.append(f"the run stopped early: {end['abort_reason']}")
    if end is not None and end.get("lost_workers"):
        notes.append(f"workers {end['lost_workers']} were lost")
    if planned and len(windows) < len(planned):
        notes.append(f"{len(windows)} of {len(planned)} planned windows closed")
    short = [w.index for w in windows if w.workers < workers]
    if short:
        notes.append(
            f"{window_list(short)} {'has' if len(short) == 1 else 'have'} results from fewer than {workers} workers"
        )
    notes.extend(cut)
    warnings = []
    if end is not None and end.get("clock_skew"):
        offsets = ", ".join(f"worker {w}: {o * 1000:+.1f} ms" for w, o in (end.get("clock_offsets") or {}).items())
        warnings.append(f"worker clocks are skewed from the master's ({offsets})")
    if end is not None and end.get("conclusion"):
        conclusion = Conclusion.from_dict(end["conclusion"])
    else:  # a run that did not finish, or one recorded before conclusions were written
        conclusion = conclude([window_record(w) for w in windows])
    return RunReport(
        source=source,
        run=run,
        end=end,
        windows=windows,
        planned=planned,
        notes=notes,
        warnings=warnings,
        conclusion=conclusion,
        failure=failure,
        ceiling=next((r for r in reversed(records) if r["type"] == "ceiling"), None),
    )


def window_record(w: WindowReport) -> dict[str, Any]:
    """The parts of a window record that `conclude` reads, from a `WindowReport`."""
    return {
        "index": w.index,
        "summary": w.summary,
        "verdict": w.verdict,
        "verdict_detail": (w.verdict_detail or Verdict((w.verdict,))).to_dict(),
        "saturation": w.saturation.to_dict() if w.saturation is not None else None,
    }


@dataclass
class Built:
    """The files one build wrote, by format."""

    report: RunReport
    files: dict[str, list[Path]]
    skipped: list[str]


def build_reports(
    results_path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, report: RunReport | None = None
) -> Built:
    """Write HTML, Markdown, CSV and (with matplotlib) PNG reports of a results file into `out_dir`.

    `out_dir` defaults to `report/` beside the results file; `report` is that file's, if already loaded.
    """
    from dynlocust.observe.report import csvout, html, markdown, plots

    report = report if report is not None else load_report(results_path)
    out = Path(out_dir) if out_dir is not None else report.source.parent / REPORT_DIR
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportWriteError(f"report directory {out}: expected a writable directory, found {exc}") from exc
    files: dict[str, list[Path]] = {}
    skipped: list[str] = []
    files["html"] = [_write(out / "report.html", html.render(report))]
    files["markdown"] = [_write(out / "summary.md", markdown.render(report))]
    files["csv"] = [_write(out / name, text) for name, text in csvout.render(report).items()]
    try:
        files["png"] = plots.write_pngs(report, out)
    except plots.PngUnavailable as exc:
        files["png"] = []
        skipped.append(str(exc))
    return Built(report=report, files=files, skipped=skipped)


def _write(path: Path, text: str) -> Path:
    """Write `path` through a temporary file renamed into place, so a full disk never leaves it truncated."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ReportWriteError(f"report file {path}: expected to write it, found {exc}") from exc
    return path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynlocust report",
        description="Build the HTML, Markdown, CSV and PNG reports of a run from its results file.",
    )
    parser.add_argument("results", help="results.jsonl of a run, or its run directory")
    parser.add_argument("-o", "--out", default=None, help="output directory (default: report/ beside the results)")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not print the Markdown summary")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `dynlocust report`: 0 when written, 2 on an error the user can fix."""
    args = build_parser().parse_args(argv)
    try:
        built = build_reports(args.results, args.out)
    except (ReportError, ResultsError) as exc:
        print(f"dynlocust: error: {exc}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    if not args.quiet:
        from dynlocust.observe.report import markdown

        print(markdown.render(built.report))
    for kind, paths in built.files.items():
        for p in paths:
            print(f"{kind}: {p}")
    for reason in built.skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
