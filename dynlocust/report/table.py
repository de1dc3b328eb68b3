"""The window table in the style of the reference measurements, and one progress line per closed window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class WindowLike(Protocol):
    index: int
    phase: str
    summary: dict[str, Any]
    verdict: str


_MARKDOWN_ESCAPES = str.maketrans(
    {"\\": "\\\\", "|": "\\|", "`": "\\`", "*": "\\*", "[": "\\[", "]": "\\]", "&": "&amp;", "<": "&lt;", ">": "&gt;"}
)


def markdown_text(text: object) -> str:
    """`text` safe inside a Markdown line or table cell: one line, no HTML, no markup, no column separator.

    Names, verdicts, reasons and error messages come from results files and from the service's responses; copied
    raw, a pipe or a newline forges table cells and rows, and HTML runs in a viewer that renders it."""
    return " ".join(str(text).split()).translate(_MARKDOWN_ESCAPES)


COLUMNS = ("window", "target/s", "offered", "accepted/s", "throttled", "first throttle after", "p50", "p99", "verdict")


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def _row(w: WindowLike) -> tuple[str, ...]:
    s = w.summary
    first = s.get("first_throttle_s")
    throttled = s["throttled"] + s.get("unprocessed_requests", 0)
    return (
        str(w.index),
        f"{s['target_rate']:,.0f}",
        f"{s['offered']:,}",
        f"{s['accepted_per_s']:,.1f}",
        f"{throttled:,}",
        "-" if first is None else f"{first:.1f} s",
        _ms(s["latency"]["p50"]),
        _ms(s["latency"]["p99"]),
        w.verdict,
    )


def format_window_table(windows: Sequence[WindowLike]) -> str:
    """A Markdown table: paste it in a pull request, read it in a CI log."""
    rows = [COLUMNS, *(tuple(map(markdown_text, _row(w))) for w in windows)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def format_progress(window: WindowLike, total_windows: int, seconds_left: float | None = None) -> str:
    """One line per closed window for headless runs and CI logs."""
    s = window.summary
    throttled = s["throttled"] + s.get("unprocessed_requests", 0)
    left = "" if seconds_left is None else f", {max(seconds_left, 0.0):,.0f} s left"
    return (
        f"window {window.index + 1}/{total_windows} ({window.phase}): target {s['target_rate']:,.0f}/s, "
        f"offered {s['offered']:,}, sent {s['sent']:,}, accepted {s['accepted_per_s']:,.1f}/s, "
        f"throttled {throttled:,}, dropped {s['dropped']:,}, p99 {_ms(s['latency']['p99'])} -> {window.verdict}"
        f"{left}"
    )
