"""The report's table-state section: what DescribeTable said of each table before the run and at each window's end.

One row per table per poll (`dynlocust.run.table_state`), with what changed since the poll before, so an
UpdateTable, autoscaling or an index backfill during the run shows next to the window in which it happened.
The Markdown summary, the HTML report and the web UI's DynamoDB tab all take their rows from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from dynlocust.observe.conclusion import window_number
from dynlocust.run.table_state import changes, describe

HEADER = ("window", "table", "state", "changed since the poll before")
BEFORE = "before"


class HasTableState(Protocol):
    index: int
    table_state: dict[str, Any] | None


def rows(
    before: Mapping[str, Any] | None, windows: Sequence[HasTableState], scale: float | None = None
) -> list[tuple[str, str, str, str]]:
    """(window, table, state, changes) for the poll before the run, then each window that has a state; `scale` is
    the local endpoint's capacity scale (the run record's `capacity_scale`), None for a real table."""
    out: list[tuple[str, str, str, str]] = []
    previous = before
    for label, poll in [(BEFORE, before), *((str(window_number(w.index)), w.table_state) for w in windows)]:
        if not poll:
            continue
        prior = (previous or {}).get("tables") or {}
        for table, state in (poll.get("tables") or {}).items():
            found = changes(prior.get(table), state) if poll is not before else []
            out.append((label, table, describe(state, scale), "; ".join(found) or "-"))
        previous = poll
    return out


def cell(previous: Mapping[str, Any] | None, poll: Mapping[str, Any] | None, scale: float | None = None) -> str:
    """The web UI's one cell for a window: each table's state, and what changed since the poll before it."""
    if not poll:
        return "-"
    prior = (previous or {}).get("tables") or {}
    parts = []
    for table, state in (poll.get("tables") or {}).items():
        found = changes(prior.get(table), state)
        parts.append(f"{table}: {describe(state, scale)}" + (f" (changed: {'; '.join(found)})" if found else ""))
    return " | ".join(parts)
