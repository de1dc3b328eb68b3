"""The window table in the style of the reference measurements, and one progress line per closed window."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from dynlocust.observe.conclusion import window_list, window_number
from dynlocust.observe.neutralise import markdown_text
from dynlocust.observe.throttle_causes import Explanation
from dynlocust.run.saturation import Saturation
from dynlocust.run.verdict import Verdict


class WindowLike(Protocol):
    """A closed window as the table and the progress line read it. Two classes fit it: the fleet's
    `dynlocust.run.closed_window.ClosedWindow` while a run closes its windows, and
    `dynlocust.observe.report.build.WindowReport` when a report is rebuilt from a results file (or the web UI shows
    one)."""

    @property
    def index(self) -> int: ...

    @property
    def phase(self) -> str: ...

    @property
    def summary(self) -> dict[str, Any]: ...

    @property
    def verdict(self) -> str: ...

    @property
    def saturation(self) -> Saturation | None: ...

    @property
    def verdict_detail(self) -> Verdict | None: ...


COLUMNS = (
    "window", "target/s", "offered (req)", "accepted/s", "throttled (req)", "first throttle after", "p50", "p99",
    "sent/due (req)", "cpu (cores)", "cpu wait", "late sends", "dropped (req)", "pool waits", "verdict", "reasons",
)  # fmt: skip
"""The service's figures, then the client's evidence (`dynlocust.run.saturation`), then the verdict and its reasons.
Each name says its unit: a count of requests in the window (req), a rate (/s); cells carry theirs (ms, s)."""


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def verdict_cell(w: WindowLike) -> str:
    """Every verdict of a window, the stronger evidence first, with the part of a partial window that ran."""
    detail = w.verdict_detail
    if detail is None:
        return w.verdict
    text = " + ".join(detail.labels)
    if detail.label == "partial":
        text += f" ({detail.ran_text} ran)"
    return text


def reasons_cell(w: WindowLike) -> str:
    """The client's reasons, and in a fleet which workers they were found on."""
    detail = w.verdict_detail
    if detail is None or not detail.reasons:
        return "-"
    workers = f" (worker {', '.join(map(str, detail.workers))})" if detail.workers else ""
    return ", ".join(detail.reasons) + workers


def wait_cell(sat: Saturation) -> str:
    """The seconds the process waited for a CPU over the window and their share of it (`1.2 s (8%)`); `n/a` where
    the kernel does not say (not Linux), `-` for a window too brief to measure."""
    if sat.cpu_wait is None:
        return "n/a" if sat.measured_cpu is not None else "-"
    share = sat.wait_fraction
    return f"{sat.cpu_wait:.2f} s" + ("" if share is None else f" ({share:.0%})")


def evidence_cells(saturation: Saturation | None) -> tuple[str, str, str, str, str, str]:
    """sent of due, CPU (of a core; "-" for a window too brief to measure it), CPU wait (`wait_cell`), late sends
    (and the bound), dropped sends, pool waits."""
    sat = saturation
    if sat is None:
        return ("-", "-", "-", "-", "-", "-")
    late = f"{sat.late:,} over {sat.late_bound * 1000:.0f} ms" if sat.late_bound else f"p99 {_ms(sat.lag_p99)}"
    sent = f"{sat.sent:,}/{sat.due:,}" if sat.due else "-"
    cpu = "-" if sat.measured_cpu is None else f"{sat.measured_cpu:.2f}"
    return (sent, cpu, wait_cell(sat), late, f"{sat.dropped:,}", f"{sat.pool_waits:,}")


def figure_cells(w: WindowLike) -> tuple[str, ...]:
    """A window's cells from its number to the client's evidence: every column but the verdict and the reasons,
    which the HTML report shows as badges and wrapped text."""
    s = w.summary
    first = s.get("first_throttle_s")
    throttled = s["throttled"] + s.get("unprocessed_requests", 0)
    return (
        str(window_number(w.index)),
        f"{s['target_rate']:,.0f}",
        f"{s['offered']:,}",
        f"{s['accepted_per_s'] or 0:,.1f}",
        f"{throttled:,}",
        "-" if first is None else f"{first:.1f} s",
        _ms(s["latency"]["p50"]),
        _ms(s["latency"]["p99"]),
        *evidence_cells(w.saturation),
    )


def _row(w: WindowLike) -> tuple[str, ...]:
    return (*figure_cells(w), verdict_cell(w), reasons_cell(w))


def why_line(why: Explanation) -> str:
    """`reads throttled: writes over ... (1,204 requests in windows 3-4)`: one line of a report's "why throttled"."""
    return f"{why.text} ({why.count} in {window_list(why.windows)})"


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
        f"window {window_number(window.index)}/{total_windows} ({window.phase}): target {s['target_rate']:,.0f}/s, "
        f"offered {s['offered']:,}, sent {s['sent']:,}, accepted {s['accepted_per_s']:,.1f}/s, "
        f"throttled {throttled:,}, dropped {s['dropped']:,}, p99 {_ms(s['latency']['p99'])} -> {verdict_cell(window)}"
        f"{'' if reasons_cell(window) == '-' else f' [{reasons_cell(window)}]'}"
        f"{left}"
    )
