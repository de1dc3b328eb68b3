"""The end of a run: the window table, the conclusion, the path of the report, and what the exit code means.

Those are what a person scrolls to the bottom of a headless run for. They are printed from Locust's `quit` event,
the last thing Locust does (after its own summary tables) and the one that carries the process's real exit code;
the table and the conclusion are printed here only (`FleetMerge.table_in_epilogue`), so each appears once. `arm` is
called once by a headless run's shutdown (`dynlocust.plugin.teardown`) with the closed results file; the report is
built from that file alone (`dynlocust.observe.report.build`), beside it.

A web UI process runs one run per Start, and each ends completely when it ends: it prints its table then, and
its report is built then (`build`), so the DynamoDB tab can link to it. When the process quits, `arm_ended` has
kept one line per run with that run's own exit code; the last line is the process's, the worst of them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode, exit_line, say, worst
from dynlocust.plugin import safety
from dynlocust.plugin.context import RunOutcome


@dataclass(frozen=True)
class _Armed:
    """What to print for one run when Locust quits."""

    out: TextIO
    results: Path | None = None
    """A headless run's results file: its table, conclusion and report come now."""
    table: bool = True
    ended: RunOutcome | None = None
    """A web UI run, ended and reported already: one line."""


_pending: list[_Armed] = []
_lines_only: list[TextIO] = []
"""Where to print the exit code's line of each run that ended with no results file (its set-up failed)."""


def conclusion(report: Any) -> str | None:
    """The run's conclusion in words (a `RunReport`'s, decided once by `observe.conclusion`); None without windows."""
    if not report.windows or report.conclusion is None:
        return None
    return str(report.conclusion.text)


def prints_table(options: Any) -> bool:
    """Whether the epilogue will print the window table and conclusion of a run with Locust's parsed `options`."""
    return bool(getattr(options, "headless", False))


def output(options: Any) -> TextIO:
    """Where the end of a run goes: stdout, or stderr when `--json` makes Locust's stats the run's stdout."""
    return sys.stderr if getattr(options, "json", False) else sys.stdout


def arm(options: Any, results_path: Path) -> None:
    """Build the report of `results_path` and print the epilogue when Locust quits (Locust's parsed `options`)."""
    if any(armed.results == results_path for armed in _pending):
        return
    _pending.append(_Armed(output(options), results_path, prints_table(options)))


def arm_ended(options: Any, outcome: RunOutcome) -> None:
    """Print `outcome`'s line, with its own exit code, when Locust quits."""
    if not any(armed.ended is not None and armed.ended.run_id == outcome.run_id for armed in _pending):
        _pending.append(_Armed(output(options), ended=outcome))


def fails_the_run(exc: Exception) -> bool:
    """Whether a report that could not be built fails its run (exit 1): it could not be written whole (a full disk)
    or building it broke. Results with nothing to report (none, or none before the first record) do not."""
    from dynlocust.observe.report.build import ReportWriteError

    return isinstance(exc, ReportWriteError) or not isinstance(exc, DynlocustError)


def build(results_path: Path, out: TextIO) -> tuple[Path | None, str, bool]:
    """Build the reports beside `results_path` (matplotlib's PNGs can take seconds) and print where they are: the
    HTML report's path, or None and why it was not written, and whether that fails the run (a report that could not
    be written whole does; a results file with nothing to report does not)."""
    from dynlocust.observe.report.build import build_reports

    try:
        built = build_reports(results_path)
    except Exception as exc:  # the exit code's line must come whatever went wrong here
        out.write(f"\nreport: not written ({exc})\n")
        return None, str(exc), fails_the_run(exc)
    report_path = built.files["html"][0]
    formats = ", ".join(kind for kind, paths in built.files.items() if paths)
    out.write(f"report: {report_path} ({formats} in {report_path.parent})\n")
    for reason in built.skipped:
        out.write(f"report: skipped {reason}\n")
    out.flush()
    return report_path, "", False


_notes: list[str] = []


def note(line: str) -> None:
    """A warning said at the start that the end summary repeats, just before the exit line (once however often)."""
    if line not in _notes:
        _notes.append(line)


def arm_exit_line(options: Any) -> None:
    """Print only the `exit code N: ...` line when Locust quits: the run ended before it had results to report."""
    out = sys.stderr if getattr(options, "json", False) else sys.stdout
    if out not in _lines_only:  # once, however many ends of the run asked for it
        _lines_only.append(out)


def write(results_path: Path, out: TextIO, table: bool = True, *, exit_code: int) -> tuple[Path | None, int]:
    """Print the window table and conclusion, then build the reports beside `results_path` (matplotlib's PNGs can
    take seconds) and print their path and the exit code's meaning; the HTML report's path and the exit code, which
    is `FAILED` when a report file could not be written whole."""
    from dynlocust.observe.report.build import build_reports, load_report
    from dynlocust.observe.report.table import format_window_table

    report_path: Path | None = None
    try:
        report = load_report(results_path)
        if table and report.windows:
            out.write("\n" + format_window_table(report.windows) + "\n")
        line = conclusion(report)
        if table and line is not None:
            out.write(f"\nconclusion: {line}\n")
        if table and report.end is not None and report.end.get("failed"):
            out.write(f"run failed: {report.end['failed']}\n")
        out.flush()
        built = build_reports(results_path, report=report)
    except Exception as exc:  # the exit code's line must come whatever went wrong here
        out.write(f"\nreport: not written ({exc})\n")
        if fails_the_run(exc):
            out.write(f"run failed: report not written: {exc}\n")
            exit_code = worst([exit_code, ExitCode.FAILED])
    else:
        report_path = built.files["html"][0]
        formats = ", ".join(kind for kind, paths in built.files.items() if paths)
        out.write(f"report: {report_path} ({formats} in {report_path.parent})\n")
        for reason in built.skipped:
            out.write(f"report: skipped {reason}\n")
    exit_code = _with_late_signal(exit_code)
    _say_with_notes(exit_code, out)
    return report_path, exit_code


def _say_with_notes(code: int, out: TextIO) -> None:
    """The warnings noted at the start again, then the exit line."""
    for line in _notes:
        out.write(line + "\n")
    say(code, out)


def _with_late_signal(exit_code: int) -> int:
    """`exit_code`, or aborted (4) if it outranks it and a signal arrived while the process was shutting down (while
    Locust printed its tables, or the report was being built)."""
    return worst([exit_code, ExitCode.ABORTED]) if safety.interrupted_during_shutdown() else exit_code


def run_line(outcome: RunOutcome) -> str:
    """One run of a web UI process, with its own exit code and its report."""
    report = f"report {outcome.report}, " if outcome.report is not None else ""
    return f"run {outcome.run_id}: {report}{exit_line(outcome.exit_code)}"


def on_quit(exit_code: int, **_kwargs: Any) -> None:
    """Locust's `quit`: print the end of every armed run; the process's `exit_code` comes last. A report that could
    not be written fails the process: Locust exits with the code it fired, so the changed code leaves as
    `SystemExit` (Locust's event hook lets it through; it exits right after firing `quit`)."""
    armed, _pending[:] = list(_pending), []
    ended = [a for a in armed if a.ended is not None]
    code = exit_code
    for a in armed:
        if a.results is not None:
            _, code = write(a.results, a.out, a.table, exit_code=code)
    if ended:
        code = _with_late_signal(code)
        out = ended[0].out
        out.write(f"\n{len(ended)} run{'s' if len(ended) > 1 else ''} in this process:\n")
        for a in ended:
            assert a.ended is not None
            out.write(run_line(a.ended) + "\n")
        _say_with_notes(code, out)
    if not ended and not any(a.results is not None for a in armed):
        code = _with_late_signal(code)
        for out in _lines_only:  # no other line says it: a run whose set-up failed still gets its exit line
            say(code, out)
    _lines_only.clear()
    safety.settle_signals()
    if code != exit_code:
        raise SystemExit(code)
