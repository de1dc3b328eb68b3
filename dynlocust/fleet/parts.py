"""A window's parts: each worker's `ClosedWindow` of one window, merged into the fleet's tally of it.

The merge (`dynlocust.fleet.merge`) decides when a window's parts are all in; this module merges them: counts
add and histograms merge (`WindowStats.merge`), each worker's own figures are kept beside the sum, and so is its
client's saturation evidence, which every part carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowError, WindowStats
from dynlocust.scenario.plan import Window


@dataclass(frozen=True)
class MergedParts:
    """The parts of one window merged: the fleet's tally, and each worker's figures and evidence."""

    stats: WindowStats
    observed: bool
    """Whether any worker sent a part (else `stats` is an empty tally of the window)."""
    saturations: dict[int, Saturation]
    workers: dict[str, dict[str, Any]]
    """Worker index (as text, for the results file) -> its offered, sent, accepted, throttled, dropped, schedule
    lag, CPU and client-bound reasons in this window."""


def merge_parts(window: Window, parts: Mapping[int, ClosedWindow], *, bin_seconds: float) -> MergedParts:
    """Merge window `window`'s parts (worker -> its part); none: an empty tally of `bin_seconds` bins."""
    saturations = {worker: _saturation(window.index, worker, part) for worker, part in parts.items()}
    stats: WindowStats | None = None
    workers: dict[str, dict[str, Any]] = {}
    for worker in sorted(parts):
        part = parts[worker]
        total = part.stats.total()
        workers[str(worker)] = {
            "offered": total.offered,
            "sent": total.sent,
            "accepted": total.accepted,
            "throttled": total.throttled,
            "dropped": part.stats.dropped,
            "lag_p50": part.stats.schedule_lag.percentile(0.5),
            "lag_p99": part.stats.schedule_lag.percentile(0.99),
            "cpu": saturations[worker].measured_cpu,
            "cpu_wait": saturations[worker].cpu_wait,
            "reasons": list(saturations[worker].reasons),
        }
        if stats is None:
            stats = part.stats.copy()
        else:
            stats.merge(part.stats)
    if stats is None:  # nobody observed it: an empty, partial window
        empty = WindowStats(window.index, window.start, window.duration, bin_seconds=bin_seconds)
        return MergedParts(empty, False, saturations, workers)
    return MergedParts(stats, True, saturations, workers)


def _saturation(index: int, worker: int, part: ClosedWindow) -> Saturation:
    """A worker's part always carries its client's evidence (only records written long ago lack it)."""
    if part.saturation is None:
        raise WindowError(f"window {index}: expected worker {worker}'s part with its saturation, found none")
    return part.saturation
