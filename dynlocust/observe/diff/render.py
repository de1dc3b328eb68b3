"""A diff as a console table, as Markdown (a pull-request comment or a CI job summary) and as one HTML file with
both runs' charts overlaid (the report's own SVG helpers: offline, no script)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from dynlocust.observe.diff.cells import Cell, change_text, significance_text, value_text
from dynlocust.observe.diff.gate import GateResult
from dynlocust.observe.neutralise import markdown_text
from dynlocust.observe.report.html import CSS
from dynlocust.observe.report.plots import Series, bar_chart_svg, latency_series, line_chart_svg, timeline_series

HEADER = ("window", "metric", "baseline", "new", "change", "significant")
BASE_COLOUR = "#9e9e9e"


@dataclass
class Rendered:
    """What every format shows: titles of both sides, the cells, what was left out, and the gate's outcome."""

    title: str
    base: str
    new: str
    cells: list[Cell]
    gate: GateResult
    gate_text: str
    left_out: list[str]
    row_title: str = "window"


def _rows(r: Rendered) -> list[tuple[str, ...]]:
    return [
        (
            c.row,
            c.metric.title,
            value_text(c.metric, c.base),
            value_text(c.metric, c.new),
            change_text(c),
            significance_text(c) + (f" {c.detail}" if c.detail and c.test in ("welch-t", "mann-whitney") else ""),
        )
        for c in r.cells
    ]


def _header(r: Rendered) -> tuple[str, ...]:
    return (r.row_title, *HEADER[1:])


def verdict_line(r: Rendered) -> str:
    if r.gate.failures:
        return f"REGRESSION: {len(r.gate.failures)} significant change(s) past the gate ({r.gate_text})"
    if r.gate.warnings:
        return f"WARNING: {len(r.gate.warnings)} change(s) past the gate but not significant ({r.gate_text})"
    return f"no significant regression past the gate ({r.gate_text})"


def console(r: Rendered) -> str:
    rows = [_header(r), *_rows(r)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [r.title, f"baseline: {r.base}", f"new:      {r.new}", ""]
    lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows[:1]]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows[1:]]
    lines += ["", *(f"not compared: {x}" for x in r.left_out)]
    lines += [f"REGRESSION: {f}" for f in r.gate.failures]
    lines += [f"WARNING: {w}" for w in r.gate.warnings]
    lines.append(verdict_line(r))
    return "\n".join(lines) + "\n"


def markdown(r: Rendered) -> str:
    """The diff for a pull request or a CI job summary; every text from the results files (titles, paths, window
    labels, verdicts, the gate's lines) through `markdown_text`."""
    mark = ":x:" if r.gate.failures else ":warning:" if r.gate.warnings else ":white_check_mark:"
    out = [f"## {markdown_text(r.title)}", "", f"{mark} **{markdown_text(verdict_line(r))}**", ""]
    out += [f"- baseline: {markdown_text(r.base)}", f"- new: {markdown_text(r.new)}"]
    out += [f"- not compared: {markdown_text(x)}" for x in r.left_out]
    if r.gate.failures or r.gate.warnings:
        out.append("")
        out += [f"- **regression**: {markdown_text(f)}" for f in r.gate.failures]
        out += [f"- warning: {markdown_text(w)}" for w in r.gate.warnings]
    out += ["", "| " + " | ".join(_header(r)) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    for row, cell in zip(_rows(r), r.cells, strict=True):
        cells = [markdown_text(x) for x in row]
        if cell.significant and cell.worse:
            cells[4] = f"**{cells[4]}**"
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _lighter(colour: str) -> str:
    """The same hue mixed 60% with white: the baseline under the new run."""
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * 0.6):02x}" for c in rgb)


def _relabel(series: list[Series], prefix: str, baseline: bool) -> list[Series]:
    return [
        Series(f"{prefix} {s.name}", s.points, _lighter(s.colour) if baseline else s.colour, s.step) for s in series
    ]


def html(r: Rendered, charts: list[str]) -> str:
    status = "partial" if r.gate.failures or r.gate.warnings else "complete"
    rows = "".join(
        f'<tr data-metric="{escape(c.metric.name)}" data-significant="{str(c.significant).lower()}">'
        + "".join(f'<td class="text">{escape(x)}</td>' for x in row)
        + "</tr>"
        for row, c in zip(_rows(r), r.cells, strict=True)
    )
    head = "".join(f"<th>{escape(h)}</th>" for h in _header(r))
    notes = "".join(f"<li>{escape(x)}</li>" for x in [*r.gate.failures, *r.gate.warnings, *r.left_out])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(r.title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(r.title)}</h1>",
        f'<div class="{status}" id="status">{escape(verdict_line(r))}<ul>{notes}</ul></div>',
        f'<table class="meta"><tr><th>baseline</th><td>{escape(r.base)}</td></tr>'
        f"<tr><th>new</th><td>{escape(r.new)}</td></tr></table>",
        f'<h2>Comparison</h2><table id="diff"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>',
        *(f"<figure>{chart}</figure>" for chart in charts),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def run_charts(base: object, new: object) -> list[str]:
    """Both runs' request rates over time and latency per window, the baseline in lighter colours."""
    from dynlocust.observe.report.build import RunReport

    assert isinstance(base, RunReport) and isinstance(new, RunReport)
    timeline = _relabel(timeline_series(base), "baseline", True) + _relabel(timeline_series(new), "new", False)
    latency = _relabel(latency_series(base), "baseline", True) + _relabel(latency_series(new), "new", False)
    windows = sorted({float(w.index) for w in (*base.windows, *new.windows)})
    return [
        line_chart_svg(
            timeline,
            chart_id="timeline",
            title="Requests per second per bin, both runs",
            x_label="seconds since T0",
            y_label="requests/s",
        ),
        line_chart_svg(
            latency,
            chart_id="latency",
            title="Latency percentiles per window, both runs",
            x_label="window",
            y_label="ms",
            x_ticks=windows,
        ),
    ]


def mapper_charts(cells: list[Cell]) -> list[str]:
    bars: list[tuple[str, float, str]] = []
    for c in cells:
        bars.append((f"{c.row} (baseline)", float(c.base or 0), BASE_COLOUR))
        bars.append((f"{c.row} (new)", float(c.new or 0), "#d62728" if c.significant and c.worse else "#1f77b4"))
    return [bar_chart_svg(bars, chart_id="ratios", title="mapper/raw ratio per operation, both runs")]
