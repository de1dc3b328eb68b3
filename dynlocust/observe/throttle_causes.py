"""Why requests were throttled, in words: the cause of a full shared budget, and the index that said no.

A throttle's reason alone misleads in two common cases. On an on-demand table of the embedded endpoint, reads and
writes share one budget (docs/local-endpoint-capacity.md), so writes over the ceiling get reads refused with
`TableReadKeyRangeThroughputExceeded`: the endpoint says so in its own header (`dynlocust.dynamodb.THROTTLE_CAUSES`;
the service sends none, so against AWS there is nothing to say). And a GSI over its limit refuses the base-table
write that would update it, naming itself only in the reason's resource. The tally counts both per window
(`throttle_causes`, `throttled_index`); this module words them once, for the conclusion and every report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynlocust.dynamodb import CAUSE_MIX, CAUSE_READS, CAUSE_WRITES
from dynlocust.request.outcomes import ThrottlingReason

SHARED = "the table's shared on-demand capacity"
CAUSE_TEXT = {
    CAUSE_WRITES: f"reads throttled: writes over the ceiling hold {SHARED}",
    CAUSE_READS: f"writes throttled: reads over the ceiling hold {SHARED}",
    CAUSE_MIX: f"reads and writes throttled: neither is over the ceiling alone, together they fill {SHARED}",
}


def index_text(index: str, reason: str) -> str:
    """`writes to items throttled by GSI by_owner (IndexWriteKeyRangeThroughputExceeded)`, or its read form."""
    access = ThrottlingReason(reason).access
    if access == "write":
        return f"writes to items throttled by GSI {index} ({reason})"
    if access == "read":
        return f"reads of index {index} throttled ({reason})"
    return f"requests throttled by index {index} ({reason})"


@dataclass(frozen=True)
class Explanation:
    """One explained kind of throttle: its words, how many requests, and the windows (indexes) it happened in."""

    text: str
    requests: int
    windows: tuple[int, ...]

    @property
    def count(self) -> str:
        """`1 request`, `1,204 requests`."""
        return f"{self.requests:,} request{'' if self.requests == 1 else 's'}"


def explain(records: Sequence[Mapping[str, Any]]) -> list[Explanation]:
    """The explained throttles of window records (each with `index` and `summary`), most frequent first."""
    found: dict[str, tuple[int, list[int]]] = {}

    def add(text: str, n: int, window: int) -> None:
        total, windows = found.get(text, (0, []))
        found[text] = (total + n, [*windows, window] if window not in windows else windows)

    for r in sorted(records, key=lambda r: int(r["index"])):
        summary = r.get("summary") or {}
        for cause, n in (summary.get("throttle_causes") or {}).items():
            if n:
                add(CAUSE_TEXT.get(cause, f"throttled: {cause}"), int(n), int(r["index"]))
        for key, n in (summary.get("throttled_index") or {}).items():
            index, _, reason = key.partition("|")
            if n:
                add(index_text(index, reason), int(n), int(r["index"]))
    ordered = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [Explanation(text, n, tuple(windows)) for text, (n, windows) in ordered]
