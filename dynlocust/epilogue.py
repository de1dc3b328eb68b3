"""The end of a run: the window table, the conclusion, the path of the report, and what the exit code means.

Those are what a person scrolls to the bottom of a headless run for. They are printed from Locust's `quit` event,
the last thing Locust does (after its own summary tables) and the one that carries the process's real exit code;
the table and the conclusion are printed here only (`FleetReport.table_in_epilogue`), so each appears once. A web UI
run printed its table when it ended; it still gets its report and the path here. `arm` is called once by the run's
shutdown (`dynlocust.hooks`) with the closed results file; the report is built from that file alone
(`dynlocust.report.build`), beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from locust import events

from dynlocust.coordination import EXIT_ABORTED, EXIT_INCOMPLETE, EXIT_OK, EXIT_SLO
from dynlocust.errors import DynlocustError

EXIT_MEANINGS = {
    EXIT_OK: "passed: every window closed and every SLO held",
    DynlocustError.exit_code: "bad input: a scenario, option or set-up the run could not use (see the error above)",
    EXIT_SLO: "an SLO failed (see 'SLO failed' above)",
    EXIT_ABORTED: "aborted: stopped by a ceiling or a signal before the plan's end",
    EXIT_INCOMPLETE: "a worker was lost: its windows are partial",
}
"""dynlocust's exit codes (defined in `dynlocust.coordination` and `dynlocust.errors`) in words."""

_pending: list[tuple[Path, TextIO, bool]] = []
"""(results file, where to print, whether with the table and conclusion) of each run to end."""


def exit_meaning(code: int) -> str:
    return EXIT_MEANINGS.get(code, "not one of dynlocust's exit codes (set by Locust)")


def conclusion(report: Any) -> str | None:
    """The run's conclusion in words (a `RunReport`'s, decided once by `dynlocust.conclusion`); None without windows."""
    if not report.windows or report.conclusion is None:
        return None
    return str(report.conclusion.text)


def prints_table(options: Any) -> bool:
    """Whether the epilogue will print the window table and conclusion of a run with Locust's parsed `options`."""
    return bool(getattr(options, "headless", False))


def arm(options: Any, results_path: Path) -> None:
    """Build the report of `results_path` and print the epilogue when Locust quits (Locust's parsed `options`).

    With `--json` Locust's stats are the run's stdout, so the epilogue goes to stderr.
    """
    if any(path == results_path for path, _, _ in _pending):
        return
    out = sys.stderr if getattr(options, "json", False) else sys.stdout
    _pending.append((results_path, out, prints_table(options)))


def write(results_path: Path, out: TextIO, table: bool = True, *, exit_code: int) -> Path | None:
    """Print the window table and conclusion, then build the reports beside `results_path` (matplotlib's PNGs can
    take seconds) and print their path and the exit code's meaning; the HTML report's path."""
    from dynlocust.report.build import build_reports, load_report
    from dynlocust.report.table import format_window_table

    report_path: Path | None = None
    try:
        report = load_report(results_path)
        if table and report.windows:
            out.write("\n" + format_window_table(report.windows) + "\n")
        line = conclusion(report)
        if table and line is not None:
            out.write(f"\nconclusion: {line}\n")
        out.flush()
        built = build_reports(results_path, report=report)
    except Exception as exc:  # the exit code's line must come whatever went wrong here
        out.write(f"\nreport: not written ({exc})\n")
    else:
        report_path = built.files["html"][0]
        formats = ", ".join(kind for kind, paths in built.files.items() if paths)
        out.write(f"report: {report_path} ({formats} in {report_path.parent})\n")
        for reason in built.skipped:
            out.write(f"report: skipped {reason}\n")
    out.write(f"exit code {exit_code}: {exit_meaning(exit_code)}\n")
    out.flush()
    return report_path


def _on_quit(exit_code: int, **_kwargs: Any) -> None:
    while _pending:
        write(*_pending.pop(0), exit_code=exit_code)


events.quit.add_listener(_on_quit)
