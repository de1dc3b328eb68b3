"""Requests counted into a window's tally without sending them: what tests of tallies, merges and results build.

A run counts each request from its `RequestRecord` (`WindowStats.add`, `WindowBook.add`); tests count outcomes
they describe by keyword instead, at an `at` of their choosing."""

from __future__ import annotations

from collections.abc import Sequence

from dynlocust.request.outcomes import KINDS, THROTTLED
from dynlocust.run.tally import WindowBook, WindowError, WindowStats


def count_outcome(
    into: WindowStats | WindowBook,
    *,
    at: float,
    window: int | None = None,
    kind: str,
    code: str | None = None,
    reasons: Sequence[str] = (),
    cause: str | None = None,
    index_reasons: Sequence[tuple[str, str]] = (),
    unprocessed: int = 0,
    latency: float,
    latency_from_intended: float,
    read_units: float = 0.0,
    write_units: float = 0.0,
    operation: str | None = None,
) -> None:
    """Count one answered (or failed) request; latencies in seconds, `at` its intended send time.

    Into a `WindowBook`, it goes to window `window` (a ticket's) or, if None, the window covering `at`, and is
    counted as unrouted when that is not the book's. `operation` (the scenario operation's label) also counts it in
    that operation's sub-tally of the bin. A throttle's `cause` (the embedded endpoint's word on a shared budget)
    and `index_reasons` ((index, reason) of an index that refused it) are counted too.
    """
    if isinstance(into, WindowBook):
        stats = into.get(window) if window is not None else next((w for w in into if w.start <= at < w.end), None)
        if stats is None:
            into.unrouted += 1
            return
    else:
        stats = into
    if kind not in KINDS:
        raise WindowError(f"window {stats.index}: expected kind in {KINDS}, found {kind!r}")
    stats.count(
        at, kind, code, reasons, unprocessed, latency, latency_from_intended, read_units, write_units, operation
    )
    if kind == THROTTLED and (cause or index_reasons):
        stats.count_why(at, operation, cause, index_reasons)
