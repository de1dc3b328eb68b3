"""The report's charts: inline SVG written by hand (no dependency, no network) and PNGs when matplotlib is there.

SVG keeps the HTML report a single file that opens offline; the PNGs are for places that show images but not
HTML (pull request comments, chat). Both draw the same figures from a `RunReport`:

- `timeline`: offered, accepted and throttled requests per second in each bin, with the target rate, over time;
- `latency`: p50, p90, p99 per window;
- `throttles`: throttled requests by `code|reason`;
- `verdicts`: one box per window, coloured by verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from dynlocust.errors import DynlocustError
from dynlocust.observe.conclusion import window_number
from dynlocust.observe.report.table import verdict_cell

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from dynlocust.observe.report.build import RunReport, WindowReport

COLOURS = {
    "target": "#7f7f7f",
    "offered": "#1f77b4",
    "sent": "#17becf",
    "accepted": "#2ca02c",
    "throttled": "#d62728",
    "p50": "#1f77b4",
    "p90": "#ff7f0e",
    "p99": "#d62728",
    "ceiling": "#9467bd",
}
VERDICT_COLOURS = {
    "ok": "#2ca02c",
    "throttled": "#d62728",
    "client-bound": "#ff7f0e",
    "errors": "#9467bd",
    "partial": "#7f7f7f",
    "not-run": "#c7c7c7",
}


class PngUnavailable(DynlocustError):
    """PNG plots need matplotlib (the `report` extra), which is not installed."""


@dataclass
class Series:
    name: str
    points: list[tuple[float, float]]
    colour: str
    step: bool = False
    """Drawn as a step (the value holds until the next point), as a rate that changes by window."""


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def _nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5, 5 x 10^n) covering [lo, hi]."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    count = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(count)]


CHAR_PX = 7.0
"""A generous width of one character of the charts' 11 px sans-serif (DejaVu Sans averages ~6.4 px): what labels are
laid out by, since SVG has no layout of its own. Overestimated, a label gets room to spare; never clipped."""


def text_px(text: str) -> float:
    return len(text) * CHAR_PX


def wrap(text: str, width_px: float) -> list[str]:
    """`text` in lines of at most `width_px` (at `CHAR_PX`), broken at spaces, or inside a word longer than a line."""
    per_line = max(1, int(width_px // CHAR_PX))
    lines: list[str] = []
    for word in text.split():
        while len(word) > per_line:
            if lines and not lines[-1]:
                lines.pop()
            lines.append(word[:per_line])
            word = word[per_line:]
        if lines and len(lines[-1]) + 1 + len(word) <= per_line:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:,.2g}"


def line_chart_svg(
    series: Sequence[Series],
    *,
    chart_id: str,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 800,
    height: int = 300,
    x_ticks: Sequence[float] | None = None,
) -> str:
    """A line chart with axes, ticks (`x_ticks`, or six evenly spaced) and a legend, as an `<svg>` element; the
    legend's margin is as wide as its longest name."""
    legend = max((text_px(s.name) for s in series), default=0.0)
    left, right, top, bottom = 64, max(150, math.ceil(legend) + 48), 30, 44
    pw, ph = width - left - right, height - top - bottom
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x1 <= x0:
        x1 = x0 + 1.0
    y1 = _nice_max(max(ys) if ys else 0.0)

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - y / y1 * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{escape(chart_id)}" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    for i in range(6):
        v = y1 * i / 5
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)}</text>')
    for v in x_ticks if x_ticks is not None else _nice_ticks(x0, x1):
        x = sx(v)
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 4}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{_fmt(v)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333" stroke-width="1"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(
        f'<text x="14" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 14 {top + ph / 2})">'
        f"{escape(y_label)}</text>"
    )
    for n, s in enumerate(series):
        pts: list[tuple[float, float]] = []
        for i, (x, y) in enumerate(s.points):
            if s.step and i > 0:
                pts.append((x, s.points[i - 1][1]))
            pts.append((x, y))
        if pts:
            path = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(pts))
            dash = ' stroke-dasharray="6 4"' if s.step else ""
            out.append(
                f'<path class="series" data-series="{escape(s.name)}" d="{path}" fill="none" '
                f'stroke="{s.colour}" stroke-width="2"{dash}/>'
            )
            if not s.step:
                out.extend(
                    f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{s.colour}"/>' for x, y in s.points
                )
        ly = top + 10 + n * 18
        lx = left + pw + 14
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 22}" y2="{ly}" stroke="{s.colour}" stroke-width="3"/>')
        out.append(f'<text x="{lx + 28}" y="{ly + 4}">{escape(s.name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def bar_chart_svg(
    bars: Sequence[tuple[str, float, str]], *, chart_id: str, title: str, width: int = 800, bar_height: int = 22
) -> str:
    """Horizontal bars `(label, value, colour)` in the input order, each under its label: a label takes the chart's
    whole width, wrapped over lines (throttle reasons run long), so none is cut."""
    top, line_h, gap, value_w = 30, 14, 8, 80
    vmax = max((v for _, v, _ in bars), default=0.0) or 1.0
    pw = width - 8 - value_w
    labels = [wrap(label, width - 8) for label, _, _ in bars]
    height = top + sum(len(lines) * line_h + bar_height + gap for lines in labels) + 10 if bars else top + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{escape(chart_id)}" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="4" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
    ]
    if not bars:
        out.append(f'<text x="4" y="{top + 16}" fill="#555">none</text>')
    y = top
    for lines, (_, value, colour) in zip(labels, bars, strict=True):
        for line in lines:
            y += line_h
            out.append(f'<text class="label" x="4" y="{y - 3}">{escape(line)}</text>')
        w = max(1.0, value / vmax * pw)
        out.append(f'<rect class="bar" x="4" y="{y}" width="{w:.1f}" height="{bar_height}" fill="{colour}"/>')
        out.append(f'<text x="{4 + w + 6:.1f}" y="{y + bar_height * 0.7:.1f}">{_fmt(value)}</text>')
        y += bar_height + gap
    out.append("</svg>")
    return "\n".join(out)


def verdict_strip_svg(
    windows: Sequence[tuple[int, Sequence[str]]], *, chart_id: str = "verdicts", width: int = 800
) -> str:
    """One box per window `(number, labels)`, coloured by its verdict (the first label), every label written under
    it, one a line: a reader sees where the run turned and what else limited each window. Boxes are as wide as
    their longest label and wrap onto further rows rather than shrink below it."""
    top, box_h, line_h, pad = 30, 40, 14, 4
    longest = max((text_px(label) for _, labels in windows for label in labels), default=0.0)
    box_w = min(float(width - 8), max(48.0, longest + 12))
    per_row = max(1, int((width - 8) // box_w))
    lines = max((len(labels) for _, labels in windows), default=1)
    row_h = box_h + lines * line_h + 12
    rows = max(1, -(-len(windows) // per_row))
    height = top + rows * row_h + 6
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{escape(chart_id)}" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        "<title>Verdict per window</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="4" y="18" font-size="13" font-weight="bold">Verdict per window</text>',
    ]
    for i, (index, labels) in enumerate(windows):
        x = 4 + (i % per_row) * box_w
        y = top + (i // per_row) * row_h
        verdict = labels[0] if labels else ""
        colour = VERDICT_COLOURS.get(verdict, "#bbbbbb")
        middle = x + (box_w - pad) / 2
        out.append(
            f'<rect class="bar" data-verdict="{escape(verdict)}" x="{x:.1f}" y="{y}" width="{box_w - pad:.1f}" '
            f'height="{box_h}" fill="{colour}"/>'
        )
        out.append(f'<text x="{middle:.1f}" y="{y + 25}" text-anchor="middle" fill="#fff">{index}</text>')
        for n, label in enumerate(labels):
            out.append(
                f'<text class="label" data-window="{index}" x="{middle:.1f}" y="{y + box_h + 14 + n * line_h}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


# -- the report's figures ---------------------------------------------------------------------------------------------


def timeline_series(report: RunReport) -> list[Series]:
    """Per-bin rates over seconds since T0: target (step), offered, sent, accepted, throttled. Offered is the
    schedule (what came due); sent is what went out, so a gap between them is the client's, not DynamoDB's."""
    target: list[tuple[float, float]] = []
    offered: list[tuple[float, float]] = []
    sent: list[tuple[float, float]] = []
    accepted: list[tuple[float, float]] = []
    throttled: list[tuple[float, float]] = []
    for w in report.windows:
        target.append((w.start - report.t0, w.summary["target_rate"]))
        for b in w.bins:
            mid = b.t + b.seconds / 2
            offered.append((mid, b.per_s(b.offered)))
            sent.append((mid, b.per_s(b.sent)))
            accepted.append((mid, b.per_s(b.accepted)))
            throttled.append((mid, b.per_s(b.throttled)))
    if report.windows:
        last = report.windows[-1]
        target.append((last.start - report.t0 + last.duration, last.summary["target_rate"]))
    return [
        Series("target/s", target, COLOURS["target"], step=True),
        Series("offered/s", offered, COLOURS["offered"]),
        Series("sent/s", sent, COLOURS["sent"]),
        Series("accepted/s", accepted, COLOURS["accepted"]),
        Series("throttled/s", throttled, COLOURS["throttled"]),
        *_bracket_series(report),
    ]


def _bracket_series(report: RunReport) -> list[Series]:
    """A ceiling search's bracket (low and high ends) from the end of each probe on: the probes themselves are the
    target's steps."""
    ceiling = report.ceiling
    if not ceiling or not report.windows:
        return []
    ends = {w.index: w.start - report.t0 + w.duration for w in report.windows}
    end = report.windows[-1].start - report.t0 + report.windows[-1].duration
    low: list[tuple[float, float]] = []
    high: list[tuple[float, float]] = []
    for probe in ceiling.get("probes") or ():
        at = ends.get(int(probe["index"]))
        for points, key in ((low, "low"), (high, "high")):
            if at is not None and probe.get(key) is not None:
                points.append((at, float(probe[key])))
    for points in (low, high):
        if points:
            points.append((end, points[-1][1]))
    return [
        Series(name, points, COLOURS["ceiling"], step=True)
        for name, points in (("ceiling low/s", low), ("ceiling high/s", high))
        if points
    ]


def latency_series(report: RunReport) -> list[Series]:
    """p50, p90, p99 per window, in milliseconds."""
    out = []
    for p in ("p50", "p90", "p99"):
        pts = [
            (float(window_number(w.index)), w.summary["latency"][p] * 1000)
            for w in report.windows
            if w.summary["latency"][p]
        ]
        out.append(Series(p, pts, COLOURS[p]))
    return out


def verdict_labels(w: WindowReport) -> list[str]:
    """Every verdict of a window, the stronger evidence first, as the window table's verdict cell gives them."""
    return verdict_cell(w).split(" + ")


def throttle_bars(report: RunReport) -> list[tuple[str, float, str]]:
    return [(key.replace("|", " / "), float(n), COLOURS["throttled"]) for key, n in report.throttles().items()]


def svg_charts(report: RunReport) -> dict[str, str]:
    """Every chart of the report as inline SVG, keyed by chart id."""
    bin_s = report.windows[0].bins[0].seconds if report.windows and report.windows[0].bins else 0
    return {
        "timeline": line_chart_svg(
            timeline_series(report),
            chart_id="timeline",
            title=f"Requests per second per {bin_s:g} s bin",
            x_label="seconds since T0",
            y_label="requests/s",
        ),
        "latency": line_chart_svg(
            latency_series(report),
            chart_id="latency",
            title="Latency percentiles per window",
            x_label="window",
            y_label="ms",
            x_ticks=[float(window_number(w.index)) for w in report.windows],
        ),
        "throttles": bar_chart_svg(throttle_bars(report), chart_id="throttles", title="Throttled requests by reason"),
        "verdicts": verdict_strip_svg([(window_number(w.index), verdict_labels(w)) for w in report.windows]),
    }


def write_pngs(report: RunReport, out_dir: Path) -> list[Path]:
    """Draw the same figures as PNG files with matplotlib; raises `PngUnavailable` without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        raise PngUnavailable(
            "PNG plots: expected matplotlib (pip install 'dynlocust[report]'), found it missing"
        ) from exc

    written: list[Path] = []

    def save(fig: Figure, name: str) -> None:
        path = out_dir / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    fig, ax = plt.subplots(figsize=(10, 4))
    for s in timeline_series(report):
        xs = [x for x, _ in s.points]
        ys = [y for _, y in s.points]
        if s.step:
            ax.step(xs, ys, where="post", color=s.colour, linestyle="--", label=s.name)
        else:
            ax.plot(xs, ys, color=s.colour, marker="o", markersize=3, label=s.name)
    ax.set(xlabel="seconds since T0", ylabel="requests/s", title="Requests per second per bin")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, "timeline.png")

    fig, ax = plt.subplots(figsize=(10, 4))
    for s in latency_series(report):
        ax.plot([x for x, _ in s.points], [y for _, y in s.points], color=s.colour, marker="o", label=s.name)
    ax.set(xlabel="window", ylabel="ms", title="Latency percentiles per window")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # windows are whole: no tick at window 1.5
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, "latency.png")

    bars = throttle_bars(report)
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.4 * max(1, len(bars))))
    if bars:
        ax.barh([b[0] for b in bars][::-1], [b[1] for b in bars][::-1], color=COLOURS["throttled"])
    else:
        ax.text(0.5, 0.5, "no throttled requests", ha="center", va="center", transform=ax.transAxes)
    ax.set(title="Throttled requests by reason", xlabel="requests")
    fig.tight_layout()
    save(fig, "throttles.png")

    fig, ax = plt.subplots(figsize=(10, 1.6))
    for i, w in enumerate(report.windows):
        ax.add_patch(matplotlib.patches.Rectangle((i, 0), 0.95, 1, color=VERDICT_COLOURS.get(w.verdict, "#bbbbbb")))
        ax.text(
            i + 0.475,
            0.5,
            "\n".join([str(window_number(w.index)), *verdict_labels(w)]),
            ha="center",
            va="center",
            color="white",
            fontsize=8,
        )
    ax.set_xlim(0, max(1, len(report.windows)))
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.set_title("Verdict per window")
    fig.tight_layout()
    save(fig, "verdicts.png")
    return written
