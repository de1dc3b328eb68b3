"""CSV files of a run (windows, bins, throttles) for spreadsheets and scripts. Named csvout: not stdlib's csv."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

from dynlocust.observe.conclusion import window_number
from dynlocust.observe.neutralise import spreadsheet_cell

if TYPE_CHECKING:
    from dynlocust.observe.report.build import RunReport, WindowReport

WINDOW_COLUMNS = (
    "window",
    "phase",
    "start_s",
    "duration_s",
    "target_per_s",
    "offered",
    "sent",
    "accepted",
    "accepted_per_s",
    "throttled",
    "unprocessed_requests",
    "unprocessed_items",
    "errors",
    "dropped",
    "first_throttle_s",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "max_ms",
    "read_units",
    "write_units",
    "cost_dollars",
    "verdict",
    "partial",
    "workers",
    "verdicts",
    "stronger",
    "ran_fraction",
    "reasons",
    "client_bound_workers",
    "due",
    "client_sent",
    "cpu",
    "cpu_seconds",
    "late",
    "late_bound_ms",
    "lag_p99_ms",
    "pool_waits",
    "cpu_wait_s",
    "cpu_pressure_s",
)
"""Columns up to `workers` as before; then the verdict's detail and the client's evidence (lists joined by `;`)."""
BIN_COLUMNS = (
    "window",
    "bin",
    "t_s",
    "seconds",
    "offered",
    "sent",
    "accepted",
    "throttled",
    "p50_ms",
    "p99_ms",
)
THROTTLE_COLUMNS = ("window", "code", "reason", "requests")
CEILING_COLUMNS = ("operation", "low", "high", "rate", "limited_by", "reasons", "resource", "windows", "stopped")
"""A ceiling search's `ceiling` record (`dynlocust.run.search`), one row; its probes go to `probes.csv`."""
PROBE_COLUMNS = ("window", "rate", "outcome", "reasons", "resources", "low", "high")
PLAN_COLUMNS = ("figure", "read", "write", "value")
"""The capacity plan at the ceiling (`dynlocust.observe.plan`), a figure a row: units in `read` and `write`,
rates, dollars and words in `value`."""


def _ms(v: float | None) -> str:
    return "" if v is None else f"{v * 1000:.3f}"


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.3f}"


def _verdict_columns(w: WindowReport) -> list[Any]:
    detail, sat = w.verdict_detail, w.saturation
    cells: list[Any] = (
        ["", "", "", "", ""]
        if detail is None
        else [";".join(detail.labels), detail.stronger or "", f"{detail.ran:.4f}", ";".join(detail.reasons),
              ";".join(map(str, detail.workers))]
    )  # fmt: skip
    if sat is None:
        return cells + [""] * 10
    return [
        *cells, sat.due, sat.sent, _num(sat.measured_cpu), f"{sat.cpu_seconds:.3f}", sat.late,
        _ms(sat.late_bound or None), _ms(sat.lag_p99), sat.pool_waits, _num(sat.cpu_wait), _num(sat.cpu_pressure),
    ]  # fmt: skip


def _csv(header: tuple[str, ...], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)  # quotes commas, quotes, newlines
    writer.writerow(header)
    writer.writerows([spreadsheet_cell(c) for c in row] for row in rows)  # names, reasons: from outside
    return buf.getvalue()


def _search_files(report: RunReport) -> dict[str, str]:
    """`ceiling.csv`, `probes.csv` and `plan.csv` of a ceiling search (none for a fixed plan)."""
    ceiling = report.ceiling
    if not ceiling:
        return {}
    row = [";".join(map(str, ceiling.get(k) or ())) if k == "reasons" else ceiling.get(k) for k in CEILING_COLUMNS]
    probes = [
        [window_number(int(p["index"])), _num(p["rate"]), p["outcome"], ";".join(p.get("reasons") or ()),
         ";".join(p.get("resources") or ()), _num(p.get("low")), _num(p.get("high"))]
        for p in ceiling.get("probes") or ()
    ]  # fmt: skip
    files = {"ceiling.csv": _csv(CEILING_COLUMNS, [row]), "probes.csv": _csv(PROBE_COLUMNS, probes)}
    plan = report.capacity_plan()
    if plan is not None:
        units = [
            ("units_per_request", plan.per_request),
            *([("units_per_s_at_ceiling", plan.at_ceiling)] if plan.at_ceiling is not None else []),
            ("units_per_s_at_target", plan.at_target),
            ("on_demand_max_units_per_s", plan.on_demand_max),
            ("warm_throughput_units_per_s", plan.warm),
            ("provisioned_units_per_s", plan.provisioned),
        ]
        rows: list[list[Any]] = [["resource", "", "", plan.resource], ["ceiling_per_s", "", "", _num(plan.ceiling)]]
        rows += [["target_per_s", "", "", _num(plan.target)]]
        rows += [[name, _num(u.read), _num(u.write), ""] for name, u in units]
        rows += [
            ["dollars_per_million_requests", "", "", f"{plan.cost_per_million:.6f}"],
            ["dollars_per_month_on_demand", "", "", f"{plan.on_demand_month:.2f}"],
            ["dollars_per_month_provisioned", "", "", f"{plan.provisioned_month:.2f}"],
            ["prices_as_of", "", "", plan.prices.as_of],
            ["prices_source", "", "", plan.prices.source],
        ]
        rows += [["caveat", "", "", caveat] for caveat in plan.caveats]
        files["plan.csv"] = _csv(PLAN_COLUMNS, rows)
    return files


def render(report: RunReport) -> dict[str, str]:
    """File name -> CSV text: `windows.csv`, `bins.csv`, `throttles.csv`; of a ceiling search also
    `ceiling.csv`, `probes.csv` and `plan.csv`."""
    t0 = report.t0
    windows = []
    bins = []
    throttles = []
    for w in report.windows:
        s = w.summary
        lat = s["latency"]
        windows.append(
            [
                window_number(w.index),
                w.phase,
                f"{w.start - t0:.3f}",
                w.duration,
                s["target_rate"],
                s["offered"],
                s["sent"],
                s["accepted"],
                _num(s["accepted_per_s"]),
                s["throttled"],
                s["unprocessed_requests"],
                s["unprocessed_items"],
                s["errors"],
                s["dropped"],
                _num(s["first_throttle_s"]),
                _ms(lat["p50"]),
                _ms(lat["p90"]),
                _ms(lat["p99"]),
                _ms(lat["max"]),
                s["read_units"],
                s["write_units"],
                f"{s['cost_dollars']:.6f}",
                w.verdict,
                int(bool(s["partial"])),
                w.workers,
                *_verdict_columns(w),
            ]
        )
        for b in w.bins:
            bins.append(
                [
                    window_number(w.index),
                    b.bin,
                    f"{b.t:.3f}",
                    b.seconds,
                    b.offered,
                    b.sent,
                    b.accepted,
                    b.throttled,
                    _ms(b.latency["p50"]),
                    _ms(b.latency["p99"]),
                ]
            )
        for key, n in s["throttled_by"].items():
            code, _, reason = key.partition("|")
            throttles.append([window_number(w.index), code, reason, n])
    return {
        "windows.csv": _csv(WINDOW_COLUMNS, windows),
        "bins.csv": _csv(BIN_COLUMNS, bins),
        "throttles.csv": _csv(THROTTLE_COLUMNS, throttles),
        **_search_files(report),
    }
