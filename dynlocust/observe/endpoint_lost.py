"""An endpoint lost mid-run, named: when it stopped answering and how, read off the closed windows' errors.

A killed endpoint (a kill -9 of the embedded one, a crashed proxy) leaves a run that goes on sending until its plan
ends: every later request fails at once with a connection error, so every window closes as `errors`. The
conclusion's own sentence says the test failed; this one says why, in a clause of its own: from which window every
request failed with a connection error (refused, reset, closed) and how many did, so a reader looks at the endpoint
and not at DynamoDB or the client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dynlocust.request.outcomes import CONNECTION
from dynlocust.scenario.plan import window_list, window_number

_PREFIX = f"{CONNECTION}:"


def _connection_errors(record: Mapping[str, Any]) -> dict[str, int]:
    errors = (record.get("summary") or {}).get("errors_by") or {}
    return {k[len(_PREFIX) :]: int(n) for k, n in errors.items() if k.startswith(_PREFIX)}


def _words(code: str) -> str:
    """`ConnectionRefused` -> `connection refused`."""
    return " ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", code)).lower() or "connection error"


def _dead(record: Mapping[str, Any]) -> bool:
    """Not one request accepted, and every error a connection error: nothing answered in this window."""
    summary = record.get("summary") or {}
    errors = summary.get("errors_by") or {}
    lost = sum(_connection_errors(record).values())
    return bool(lost) and not summary.get("accepted") and lost == sum(int(n) for n in errors.values())


def sentence(records: Sequence[Mapping[str, Any]]) -> str | None:
    """`The endpoint stopped answering in window 2 (connection refused: 24 of its 59 requests, then all 180 of
    windows 3-4).`, or None when the run's last window still reached it."""
    windows = sorted(records, key=lambda r: int(r["index"]))
    tail: list[Mapping[str, Any]] = []
    for record in reversed(windows):
        if not _dead(record):
            break
        tail.insert(0, record)
    if not tail:
        return None
    before = windows[len(windows) - len(tail) - 1] if len(tail) < len(windows) else None
    first = before if before is not None and _connection_errors(before) else None
    kinds: dict[str, int] = {}
    for record in ([first] if first is not None else []) + tail:
        for code, n in _connection_errors(record).items():
            kinds[code] = kinds.get(code, 0) + n
    how = " / ".join(_words(code) for code in sorted(kinds, key=lambda c: -kinds[c]))
    after = sum(sum(_connection_errors(r).values()) for r in tail)
    later = window_list([int(r["index"]) for r in tail])
    if first is None:
        start = window_number(int(tail[0]["index"]))
        return f"The endpoint stopped answering from window {start} on ({how}: all {after:,} requests of {later})."
    n = sum(_connection_errors(first).values())
    sent = int((first.get("summary") or {}).get("sent") or n)
    return (
        f"The endpoint stopped answering in window {window_number(int(first['index']))} ({how}: {n:,} of its "
        f"{sent:,} requests, then all {after:,} of {later})."
    )
