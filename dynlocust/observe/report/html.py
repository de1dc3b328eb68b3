"""The HTML report: one self-contained file (inline CSS and SVG, no script, no fetch) that opens offline.

A reviewer opens it from a pull request artifact; nothing in it may depend on the network or on files beside it.
"""

from __future__ import annotations

import time
from html import escape
from typing import TYPE_CHECKING

from dynlocust.exit_codes import ExitCode, exit_line
from dynlocust.observe.conclusion import window_number
from dynlocust.observe.report import table_states, witness_section
from dynlocust.observe.report.plots import VERDICT_COLOURS, svg_charts, verdict_labels
from dynlocust.observe.report.table import COLUMNS, figure_cells, reasons_cell, why_line

if TYPE_CHECKING:
    from dynlocust.observe.report.build import RunReport, WindowReport

CSS = """
body { font-family: sans-serif; margin: 16px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
p, .partial, .complete { max-width: 1100px; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 4px 6px; text-align: right; }
th { background: #f3f3f3; } td { white-space: nowrap; } td.text { text-align: left; white-space: normal; }
td.reasons { min-width: 9em; overflow-wrap: anywhere; }
.partial { background: #fff3cd; border: 2px solid #e0a800; padding: 10px 14px; font-weight: bold; }
.complete { background: #e8f5e9; border: 1px solid #2ca02c; padding: 8px 14px; }
.failed { background: #fdecea; border: 2px solid #b00020; padding: 10px 14px; font-weight: bold; max-width: 1100px; }
.inconclusive { background: #fff3cd; border: 2px solid #e0a800; padding: 10px 14px; font-weight: bold;
  max-width: 1100px; }
.verdict { display: inline-block; color: #fff; border-radius: 3px; padding: 1px 6px; margin: 1px 0; }
figure { margin: 12px 0; }
.meta td { text-align: left; white-space: normal; overflow-wrap: anywhere; }
"""
"""Laid out for 1280 px and wider (a laptop): figures keep their words on one line, text cells (the reasons, a
diff's notes) take what is left and wrap; each verdict of a window is its own badge (badges wrap whole, one under
the other, when the cell is narrow), so none spills out of its cell."""


def _verdict(w: WindowReport) -> str:
    return " ".join(
        f'<span class="verdict" style="background:{VERDICT_COLOURS.get(label.split(" (")[0], "#999999")}">'
        f"{escape(label)}</span>"
        for label in verdict_labels(w)
    )


def _tone(code: object) -> str:
    """The status box's colour, by what the exit code means: green only for a pass; amber for a run that could not
    say (inconclusive, or no exit code recorded); red for every failure (an SLO, a regression, an abort...)."""
    if code == ExitCode.PASSED:
        return "complete"
    return "inconclusive" if code in (ExitCode.INCONCLUSIVE, None) else "failed"


def _window_row(w: WindowReport) -> str:
    cells = figure_cells(w)
    tds = "".join(f"<td>{escape(c)}</td>" for c in cells)
    return (
        f'<tr data-window="{w.index}">{tds}<td class="text verdicts">{_verdict(w)}</td>'
        f'<td class="text reasons">{escape(reasons_cell(w))}</td></tr>'
    )


def _search_section(report: RunReport) -> list[str]:
    """A ceiling search's probes (drawn as the target's steps and the bracket on the throughput chart) and the
    capacity plan at the ceiling it found (`dynlocust plan` gives it at other targets)."""
    ceiling = report.ceiling
    if not ceiling:
        return []

    def rate(v: object) -> str:
        return f"{float(v):,.1f}" if isinstance(v, int | float) else "-"

    rows = "".join(
        f'<tr><td>{window_number(int(p["index"]))}</td><td>{rate(p["rate"])}</td><td class="text">'
        f"{escape(str(p['outcome']))}</td><td>{rate(p.get('low'))}</td><td>{rate(p.get('high'))}</td></tr>"
        for p in ceiling.get("probes") or ()
    )
    parts = [
        "<h2>Ceiling search</h2>",
        f"<p>Stopped: {escape(str(ceiling.get('stopped')))}; limited by {escape(str(ceiling.get('limited_by')))}; "
        f"bracket {rate(ceiling.get('low'))} to {rate(ceiling.get('high'))}/s.</p>",
        '<table id="probes"><thead><tr><th>window</th><th>rate/s</th><th>outcome</th><th>low/s</th>'
        f"<th>high/s</th></tr></thead><tbody>{rows}</tbody></table>",
    ]
    plan = report.capacity_plan()
    if plan is None:
        return parts
    lines = "".join(f"<li>{escape(line.strip())}</li>" for line in plan.lines()[1:])
    return [*parts, f'<h2>Capacity plan</h2><ul id="capacity-plan">{lines}</ul>']


def render(report: RunReport, *, live: str | None = None, refresh_seconds: int = 2) -> str:
    """The whole report as one HTML document; `live` (a status line) makes it a page that reloads itself."""
    charts = svg_charts(report)
    title = f"dynlocust run {report.run_id}: {report.scenario}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        *([f'<meta http-equiv="refresh" content="{refresh_seconds}">'] if live is not None else []),
        f"<title>{escape(title)}{' (live)' if live is not None else ' (PARTIAL)' if report.partial else ''}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    if live is not None:
        parts.append(f'<div class="complete" id="status" data-status="live">Live: {escape(live)}</div>')
    elif report.partial:
        items = "".join(f"<li>{escape(n)}</li>" for n in report.notes)
        parts.append(
            f'<div class="partial" id="status" data-status="partial">PARTIAL RESULTS: this run did not complete; '
            f"the figures below cover only the windows that closed.<ul>{items}</ul></div>"
        )
    else:
        code = (report.end or {}).get("exit_code")
        said = exit_line(int(code)) if isinstance(code, int) else "no exit code recorded"
        parts.append(
            f'<div class="{_tone(code)}" id="status" data-status="complete" data-exit-code="{escape(str(code))}">'
            f"Complete: {len(report.windows)} windows. {escape(said)}."
            + (f" The run failed: {escape(report.failure)}." if report.failure else "")
            + "</div>"
        )
    failures = [f for w in report.windows for f in w.slo_failures]
    if failures:  # what failed the run, right under the status that says it did
        parts.append(
            '<h2>SLO failed</h2><ul id="slo-failures">' + "".join(f"<li>{escape(f)}</li>" for f in failures) + "</ul>"
        )
    parts.extend(f'<div class="partial warning">Warning: {escape(w)}</div>' for w in report.warnings)
    t0 = report.run.get("t0")
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(t0))) if t0 is not None else "?"
    meta = [
        ("run id", report.run_id),
        ("scenario", f"{report.scenario} ({report.run.get('source', '?')})"),
        ("T0", started),
        ("workers", str(report.run.get("worker_count", 1))),
        ("windows", f"{len(report.windows)} closed of {len(report.planned) or len(report.windows)} planned"),
        ("tables", ", ".join(f"{k} = {v}" for k, v in report.run.get("tables", {}).items()) or "-"),
        ("results", str(report.source)),
    ]
    parts.append('<table class="meta">' + "".join(f"<tr><th>{k}</th><td>{escape(v)}</td></tr>" for k, v in meta))
    parts.append("</table>")

    if report.conclusion is not None:
        parts.append(f'<h2>Conclusion</h2><p id="conclusion">{escape(report.conclusion.text)}</p>')
    parts.extend(_search_section(report))
    parts.append("<h2>Windows</h2>")
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    rows = "".join(_window_row(w) for w in report.windows)
    parts.append(f'<table id="windows"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>')

    parts.append("<h2>Requests over time</h2>")
    parts.append(f"<figure>{charts['timeline']}</figure>")
    parts.append("<h2>Verdicts</h2>")
    parts.append(f"<figure>{charts['verdicts']}</figure>")
    parts.append("<h2>Latency</h2>")
    parts.append(f"<figure>{charts['latency']}</figure>")
    parts.append("<h2>Throttles</h2>")
    parts.append(f"<figure>{charts['throttles']}</figure>")
    throttles = report.throttles()
    if throttles:
        trs = "".join(
            f'<tr><td class="text">{escape(k.partition("|")[0])}</td><td class="text">'
            f"{escape(k.partition('|')[2] or '-')}</td><td>{n:,}</td></tr>"
            for k, n in throttles.items()
        )
        parts.append(
            f'<table id="throttles"><thead><tr><th>code</th><th>reason</th><th>requests</th></tr></thead>'
            f"<tbody>{trs}</tbody></table>"
        )
    explained = report.explanations()
    if explained:
        items = "".join(f"<li>{escape(why_line(e))}</li>" for e in explained)
        parts.append(f'<h2>Why throttled</h2><ul id="throttle-why">{items}</ul>')
    states = table_states.rows(report.run.get("table_state"), report.windows, report.run.get("capacity_scale"))
    if states:
        head = "".join(f"<th>{escape(c)}</th>" for c in table_states.HEADER)
        trs = "".join(
            f'<tr data-window="{escape(row[0])}">'
            + "".join(f'<td class="text">{escape(c)}</td>' for c in row)
            + "</tr>"
            for row in states
        )
        parts.append("<h2>Table state per window</h2><p>What DescribeTable said at each window's end.</p>")
        parts.append(f'<table id="table-state"><thead><tr>{head}</tr></thead><tbody>{trs}</tbody></table>')
    parts.append(witness_section.html(report.source.parent))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
