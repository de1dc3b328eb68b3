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


def _client_text(pair: Any) -> str:
    if not pair:
        return "-"
    low, high = pair
    if high is None:
        return f"{low:,.1f} or more"
    return f"{low:,.1f}" if low == high else f"{low:,.1f}-{high:,.1f}"


def chart(data: dict[str, Any]) -> str:
    """Per minute and figure pair: the client's bar (to its range's top) and CloudWatch's, side by side."""
    minutes = [m for m in data["minutes"] if str(m.get("phase", "")).startswith("windows") and m["start"] != TOTAL]
    pairs = [(metric, label) for metric, label in CLIENT_FIGURE.items()]
    if not minutes:
        return ""
    width, height, pad = 160 * len(minutes) + 80, 70 * len(pairs) + 40, 8
    parts = [f'<svg id="witness-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for row, (metric, label) in enumerate(pairs):
        top = 20 + row * 70
        values = []
        for m in minutes:
            low, high = (m["client"].get(metric) or [0.0, 0.0])[:2]
            values.append((high if high is not None else low, float(m["cloudwatch"].get(metric, 0.0))))
        largest = max([max(v) for v in values] + [1.0])
        parts.append(f'<text x="0" y="{top + 12}" font-size="11">{escape(label)}</text>')
        for col, (client, cloudwatch) in enumerate(values):
            x = 80 + col * 160
            for offset, value, colour in ((0, client, CLIENT_COLOUR), (60, cloudwatch, CLOUDWATCH_COLOUR)):
                h = 50 * value / largest
                parts.append(
                    f'<rect x="{x + offset}" y="{top + 50 - h:.1f}" width="50" height="{h:.1f}" fill="{colour}">'
                    f"<title>{escape(label)} {_clock(minutes[col]['start'])}: {value:,.1f}</title></rect>"
                )
    for col, m in enumerate(minutes):
        parts.append(f'<text x="{80 + col * 160 + pad}" y="{height - 5}" font-size="11">{_clock(m["start"])}</text>')
    parts.append(
        f'<text x="{width - 230}" y="12" font-size="11"><tspan fill="{CLIENT_COLOUR}">client</tspan> / '
        f'<tspan fill="{CLOUDWATCH_COLOUR}">CloudWatch</tspan></text></svg>'
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
            f"<td>{escape(_client_text(m['client'].get(k)))} | {float(m['cloudwatch'].get(k, 0.0)):,.1f}</td>"
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
        "windows.</p>"
    )
    return (
        "<h2>CloudWatch witness</h2>"
        f"<p>CloudWatch's AWS/DynamoDB metrics per minute beside the client's counts; tolerance "
        f"{tolerance.get('units', 0):g} units or {float(tolerance.get('share', 0)):.0%}, whichever is larger.</p>"
        f"<figure>{chart(data)}</figure>"
        f'<table id="witness"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{verdict}'
    )
