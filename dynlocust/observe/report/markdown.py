"""The Markdown summary: what a pull request or a CI log shows of a run, partial runs marked as such up front."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dynlocust.observe.conclusion import window_number
from dynlocust.observe.neutralise import markdown_text
from dynlocust.observe.report import table_states
from dynlocust.observe.report.table import format_window_table, why_line

if TYPE_CHECKING:
    from dynlocust.observe.report.build import RunReport


def _pipe_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(markdown_text, r)) + " |" for r in rows]
    return "\n".join(lines)


def _rate(v: object) -> str:
    return f"{float(v):,.1f}" if isinstance(v, int | float) else "-"


def _search_section(report: RunReport) -> list[str]:
    """A ceiling search's `ceiling` record, its probes and the capacity plan at the ceiling it found."""
    ceiling = report.ceiling
    if not ceiling:
        return []
    record = tuple(str(ceiling.get(k)) for k in ("operation", "limited_by", "resource", "windows", "stopped")) + tuple(
        _rate(ceiling.get(k)) for k in ("low", "high", "rate")
    )
    out = ["", "### Ceiling search", ""]
    out.append(
        _pipe_table(
            ("operation", "limited by", "resource", "windows", "stopped", "low/s", "high/s", "rate/s", "reasons"),
            [(*record, "; ".join(map(str, ceiling.get("reasons") or ())) or "-")],
        )
    )
    probes = [
        (str(window_number(int(p["index"]))), _rate(p["rate"]), str(p["outcome"]), _rate(p.get("low")),
         _rate(p.get("high")), "; ".join(map(str, p.get("reasons") or ())) or "-")
        for p in ceiling.get("probes") or ()
    ]  # fmt: skip
    if probes:
        out += ["", _pipe_table(("probe window", "rate/s", "outcome", "low/s", "high/s", "reasons"), probes)]
    plan = report.capacity_plan()
    if plan is not None:
        first, *rest = plan.lines()
        out += ["", "### Capacity plan", "", markdown_text(first[:1].upper() + first[1:]) + ".", ""]
        out += [f"- {markdown_text(line, item=True)}" for line in rest]
    return out


def render(report: RunReport) -> str:
    """Title, partial warning, the window table, throttles by reason and why, SLO failures and the end of the run.

    Every text copied from the results (names, reasons, verdicts) goes through `markdown_text`."""
    title = f"## dynlocust run {markdown_text(report.run_id)}: scenario {markdown_text(report.scenario)}"
    out = [f"{title} ({report.status()})", ""]
    if report.partial:
        out.append("> **PARTIAL RESULTS**: " + markdown_text("; ".join(report.notes)) + ".")
        out.append("")
    for warning in report.warnings:
        out += [f"> Warning: {markdown_text(warning)}.", ""]
    closed = len(report.windows)
    planned = len(report.planned) or closed
    sent = sum(w.summary["sent"] for w in report.windows)
    throttled = sum(w.summary["throttled"] + w.summary["unprocessed_requests"] for w in report.windows)
    cost = sum(w.summary["cost_dollars"] for w in report.windows)
    out.append(
        f"{closed} of {planned} windows, {sent:,} requests sent, {throttled:,} throttled, estimated cost ${cost:.4f}."
    )
    out.append("")
    if report.conclusion is not None:
        out += [f"**Conclusion:** {markdown_text(report.conclusion.text)}", ""]
    if report.windows:
        out.append(format_window_table(report.windows))
    else:
        out.append("No window closed.")
    out += _search_section(report)
    throttles = report.throttles()
    if throttles:
        out += ["", "### Throttles by code and reason", ""]
        rows = []
        for key, n in throttles.items():
            code, _, reason = key.partition("|")
            rows.append((code, reason or "-", f"{n:,}"))
        out.append(_pipe_table(("code", "reason", "requests"), rows))
    explained = report.explanations()
    if explained:
        out += ["", "### Why throttled", ""]
        out += [f"- {markdown_text(why_line(e), item=True)}" for e in explained]
    states = table_states.rows(report.run.get("table_state"), report.windows, report.run.get("capacity_scale"))
    if states:
        out += ["", "### Table state per window (DescribeTable at each window's end)", ""]
        out.append(_pipe_table(table_states.HEADER, states))
    failures = [f for w in report.windows for f in w.slo_failures]
    if failures:
        out += ["", "### SLO failures", ""]
        out += [f"- {markdown_text(f, item=True)}" for f in failures]
    if report.end is not None:
        out += ["", f"Exit code {markdown_text(report.end.get('exit_code'))}."]
    return "\n".join(out) + "\n"
