"""The fleet's exit code: the one `dynlocust.exit_codes.ExitCode` a run's end is given, from what ended it.

The noun here is the run's *exit code*, picked once when the fleet finishes (`FleetMerge`), then written in the
end record and handed to Locust. What makes a run *failed* (exit 1) is decided by `failed_cause` alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynlocust.exit_codes import ExitCode
from dynlocust.run.closed_window import ClosedWindow


def fleet_exit_code(*, workers_lost: bool, aborted: bool, slos_failed: bool, inconclusive: bool = False) -> ExitCode:
    """A lost worker first (its windows are partial, whatever else happened), then an abort, then a run too few of
    whose windows were judged (`dynlocust.fleet.judge.inconclusive`: its SLOs held or failed on noise), then a
    failed SLO."""
    if workers_lost:
        return ExitCode.WORKER_LOST
    if aborted:
        return ExitCode.ABORTED
    if inconclusive:
        return ExitCode.INCONCLUSIVE
    if slos_failed:
        return ExitCode.SLO_FAILED
    return ExitCode.PASSED


def commonest_error(summary: Mapping[str, Any]) -> str:
    """The error seen most often in a window's `summary` as `kind:code` (timeouts as `timeout:code`), to name it."""
    seen = {**summary["errors_by"], **{f"timeout:{code}": n for code, n in summary["timeouts_by"].items()}}
    if not seen:
        return "no error code recorded"
    name, count = max(seen.items(), key=lambda item: item[1])
    return f"{name} x{count}"


def failed_cause(closed: Sequence[ClosedWindow], *, write_error: str | None = None) -> str | None:
    """Why the run failed (exit 1), or None: its results or report could not be written completely, or a window's
    requests failed: its verdict reads `errors` (errors reached the verdict's error fraction of sent requests and
    outnumbered the throttles; an endpoint that stopped answering is one). The first such window is named."""
    if write_error is not None:
        return write_error
    for window in closed:
        if window.verdict_detail is not None and "errors" in window.verdict_detail.labels:
            summary = window.summary
            return (
                f"window {window.index + 1}: {summary['errors']} of {summary['sent']} requests failed "
                f"({commonest_error(summary)})"
            )
    return None
