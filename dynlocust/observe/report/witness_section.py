"""The report's CloudWatch witness: a section and a chart from `witness.json` beside the results, when a witness ran
(`dynlocust witness`, or a run's `--witness`; `dynlocust.observe.witness` writes it).

The chart sets, per minute, the client's accepted write and read units (a bar to the top of its range) beside
CloudWatch's consumed units, and the client's throttles beside CloudWatch's throttle events; a disagreeing minute is
marked. Plain SVG, as the report's other charts, so the HTML stays one self-contained file.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from dynlocust.observe.witness import CLIENT_FIGURE, TOTAL, WITNESS_FILE

CLIENT_COLOUR, CLOUDWATCH_COLOUR = "#4e79a7", "#f28e2b"


def load(results_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((results_dir / WITNESS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("minutes"), list) else None


def _clock(start: float) -> str:
    return "total" if start == TOTAL else datetime.fromtimestamp(start, UTC).strftime("%H:%M")


def _num(value: float) -> str:
    text = f"{value:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def _client_text(pair: Any) -> str:
    if not pair:
        return "-"
    low, high = pair
    if high is None:
        return f"{_num(low)} or more"
    return _num(low) if low == high else f"{_num(low)}-{_num(high)}"


def chart(data: dict[str, Any]) -> str:
    """Per minute and figure: the client's bar (solid to its range's bottom, pale to its top) beside CloudWatch's."""
    minutes = [m for m in data["minutes"] if str(m.get("phase", "")).startswith("windows") and m["start"] != TOTAL]
    if not minutes:
        return ""
    width, height = 160 * len(minutes) + 80, 70 * len(CLIENT_FIGURE) + 40
    parts = [f'<svg id="witness-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for row, (metric, label) in enumerate(CLIENT_FIGURE.items()):
        top = 20 + row * 70
        figures = []
        for m in minutes:
            low, high = (m["client"].get(metric) or [0.0, 0.0])[:2]
            figures.append((float(low), float(low if high is None else high), float(m["cloudwatch"].get(metric, 0.0))))
        largest = max([max(f) for f in figures] + [1.0])
        parts.append(f'<text x="0" y="{top + 12}" font-size="11">{escape(label)}</text>')
        for col, (low, high, cloudwatch) in enumerate(figures):
            x, when = 80 + col * 160, _clock(minutes[col]["start"])
            bars = ((0, high, CLIENT_COLOUR, 0.35, "client at most"), (0, low, CLIENT_COLOUR, 1.0, "client at least"))
            for offset, value, colour, opacity, who in (*bars, (60, cloudwatch, CLOUDWATCH_COLOUR, 1.0, "CloudWatch")):
                h = 50 * value / largest
                parts.append(
                    f'<rect x="{x + offset}" y="{top + 50 - h:.1f}" width="50" height="{h:.1f}" fill="{colour}" '
                    f'fill-opacity="{opacity}"><title>{escape(label)} {when}, {who}: {_num(value)}</title></rect>'
                )
    for col, m in enumerate(minutes):
        parts.append(f'<text x="{88 + col * 160}" y="{height - 5}" font-size="11">{_clock(m["start"])}</text>')
    parts.append(
        f'<text x="{max(width - 330, 80)}" y="12" font-size="11"><tspan fill="{CLIENT_COLOUR}">client (pale: its '
        f'range)</tspan> / <tspan fill="{CLOUDWATCH_COLOUR}">CloudWatch</tspan></text></svg>'
    )
    return "".join(parts)


def html(results_dir: Path) -> str:
    """The section, or "" when no witness ran for this run."""
    data = load(results_dir)
    if data is None:
        return ""
    tolerance = data.get("tolerance") or {}
    head = "".join(
        f"<th>{escape(c)}</th>"
        for c in ["minute (UTC)", "phase", *(f"{v}: client | CW" for v in CLIENT_FIGURE.values())]
    )
    rows = "".join(
        f'<tr><td class="text">{_clock(m["start"])}</td><td class="text">{escape(str(m["phase"]))}</td>'
        + "".join(
            f"<td>{escape(_client_text(m['client'].get(k)))} | {_num(float(m['cloudwatch'].get(k, 0.0)))}</td>"
            for k in CLIENT_FIGURE
        )
        + "</tr>"
        for m in data["minutes"]
    )
    found = data.get("disagreements") or []
    verdict = (
        '<ul id="witness-disagreements">' + "".join(f"<li>{escape(str(line))}</li>" for line in found) + "</ul>"
        if found
        else '<p id="witness-agree">The client and CloudWatch agree within the tolerance in every minute of the '
        "windows and in their total.</p>"
    )
    return (
        "<h2>CloudWatch witness</h2>"
        f"<p>CloudWatch's AWS/DynamoDB metrics per minute beside the client's counts; tolerance "
        f"{tolerance.get('units', 0):g} units or {float(tolerance.get('share', 0)):.0%}, whichever is larger.</p>"
        f"<figure>{chart(data)}</figure>"
        f'<table id="witness"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{verdict}'
    )
