"""The CloudWatch witness: DynamoDB's own per-minute metrics set beside the client's counts of one run.

The client's counts (the window bins of results.jsonl) are one witness of what happened; CloudWatch's
`AWS/DynamoDB` metrics of the run's tables and GSIs, read with GetMetricData through boto3's CloudWatch client, are
another, kept by the service. `witness` puts them side by side minute by minute (CloudWatch's period) and names
every disagreement beyond the tolerance: accepted read and write units against `ConsumedRead/WriteCapacityUnits`,
throttles against `Read/WriteThrottleEvents`, and throttles by reason against the per-reason metrics
(`dynlocust.local.cloudwatch.reason_metric`). Against the embedded endpoint, which answers the same calls from its
own counters, the two are independent counts that must agree.

How a minute's client figure is made: each bin (`bin_seconds`, 5 s in the shipped scenarios) counts in the minute
that holds it; a bin that straddles a minute's edge may belong to either, so the figure is a range (low: the bins
wholly inside, high: also those that straddle). Minutes before the first window's minute are *seeding* (and table
set-up): shown, not compared, since the client counts only its windows. The first window's minute may hold the end
of seeding too: its write range is widened by the seeding's units (the seed items times their units each,
`dynlocust.run.seeding.item_units`) and its throttle events have no upper bound (seeding writes at the table's
capacity and resends what is refused; the client counts none of it), so the witness tells seeding's minutes from
the windows'. A last row adds up the windows' minutes, where every bin counts once and the client's figures are
exact (but for seeding's share of the first minute).

Tolerance: a figure disagrees when CloudWatch is outside the client's range by more than `TOLERANCE_UNITS` or
`TOLERANCE_SHARE` of the larger figure, whichever is larger: a request answered in the last milliseconds of a
minute is the client's in one minute and the service's in the next.

One CloudWatch call per run (up to 500 queries: 12 metrics per table or GSI), with the credentials and region of
the run's settings (`--region`, the standard AWS variables or profile); a refusal (no `cloudwatch:GetMetricData`)
is one line. CloudWatch publishes a minute a few minutes after it ends: run the witness once the run's last minute
has settled.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.local.cloudwatch import NAMESPACE, PERIOD, reason_metric
from dynlocust.run.results import read_results
from dynlocust.run.seeding import item_units

TOLERANCE_UNITS = 2.0
TOLERANCE_SHARE = 0.02
SEEDING_LOOKBACK = 30 * 60.0
"""Seconds before the first window searched for seeding's minutes (a seed longer than this shows in part)."""
LIMITS = ("KeyRangeThroughput", "ProvisionedThroughput", "MaxOnDemandThroughput", "AccountLimit")
METRICS: tuple[str, ...] = (
    "ConsumedWriteCapacityUnits",
    "ConsumedReadCapacityUnits",
    "WriteThrottleEvents",
    "ReadThrottleEvents",
    *(f"{kind}{limit}ThrottleEvents" for kind in ("Write", "Read") for limit in LIMITS),
)
"""What is read for each table and GSI; the first four are compared every minute, the by-reason ones where either
side has a count."""
CLIENT_FIGURE = {
    "ConsumedWriteCapacityUnits": "write units",
    "ConsumedReadCapacityUnits": "read units",
    "WriteThrottleEvents": "write throttles",
    "ReadThrottleEvents": "read throttles",
}


class WitnessError(DynlocustError):
    """CloudWatch could not be read (no permission, no endpoint): one line, exit 1."""

    exit_code = ExitCode.FAILED


@dataclass
class Range:
    """What the client's counts allow for one figure of one minute (`high` is infinite: no upper bound)."""

    low: float = 0.0
    high: float = 0.0

    @property
    def counted(self) -> float:
        """The most the client itself counted (seeding's unbounded share left out)."""
        return self.low if math.isinf(self.high) else self.high


@dataclass
class Minute:
    """One minute of the run: the client's ranges and CloudWatch's sums, by CloudWatch metric name."""

    start: int
    phase: str
    client: dict[str, Range] = field(default_factory=dict)
    cloudwatch: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Disagreement:
    minute: int
    metric: str
    client: Range
    cloudwatch: float

    def line(self) -> str:
        nearest = self.client.high if self.cloudwatch > self.client.high else self.client.low
        return (
            f"{_clock(self.minute)} {self.metric}: client {_range_text(self.client)}, CloudWatch "
            f"{_num(self.cloudwatch)} ({_num(self.cloudwatch - nearest, sign=True)})"
        )


@dataclass(frozen=True)
class RunTables:
    """What the results file says about the run: its id, first window, end, tables and GSIs, seeding's units."""

    run_id: str
    t0: float
    end: float
    tables: tuple[str, ...]
    gsis: tuple[tuple[str, str], ...]
    seed_units: float


def run_tables(records: Sequence[Mapping[str, Any]]) -> RunTables:
    run = next((r for r in records if r.get("type") == "run"), None)
    if run is None:
        raise WitnessError("no run record: not a dynlocust results file")
    physical: Mapping[str, str] = run.get("tables") or {}
    gsis, seed_units = [], 0.0
    for table in (run.get("shape") or {}).get("tables", []):
        name = physical.get(table["name"], table["name"])
        indexes = [g["name"] if isinstance(g, Mapping) else str(g) for g in table.get("gsis") or []]
        gsis += [(name, index) for index in indexes]
        seed = table.get("seed")
        if seed:
            seed_units += float(seed["items"]) * item_units(int(seed.get("item_size") or 1), len(indexes))
    windows = run.get("windows") or []
    end = max((float(w["start"]) + float(w["duration"]) for w in windows), default=float(run["t0"]))
    return RunTables(str(run["run_id"]), float(run["t0"]), end, tuple(physical.values()), tuple(gsis), seed_units)


def client_minutes(records: Iterable[Mapping[str, Any]], run: RunTables) -> dict[int, Minute]:
    """The client's counts per minute, from every window's bins (ranges where a bin straddles a minute's edge)."""
    first = _minute(run.t0)
    minutes: dict[int, Minute] = {}
    for window in records:
        if window.get("type") != "window":
            continue
        width = float(window["bin_seconds"])
        window_end = float(window["start"]) + float(window["duration"])
        for i, b in enumerate(window["bins"]):
            start = float(window["start"]) + i * width
            end = min(start + width, window_end)
            figures = _bin_figures(b)
            spans = range(_minute(start), _minute(end - 1e-6) + 1, PERIOD)
            for at in spans:
                minute = minutes.setdefault(at, Minute(at, "windows + seeding" if at == first else "windows"))
                for metric, value in figures.items():
                    r = minute.client.setdefault(metric, Range())
                    r.high += value
                    if len(spans) == 1:
                        r.low += value
    if run.seed_units and first in minutes:
        _widen_for_seeding(minutes[first], run.seed_units)
    return minutes


def _bin_figures(b: Mapping[str, Any]) -> dict[str, float]:
    """One bin's counts under CloudWatch's metric names."""
    figures = {
        "ConsumedWriteCapacityUnits": float(b.get("write_units") or 0.0),
        "ConsumedReadCapacityUnits": float(b.get("read_units") or 0.0),
    }
    for key, count in (b.get("throttled_by") or {}).items():
        reason = key.partition("|")[2]
        kind = "Write" if "Write" in reason else "Read" if "Read" in reason else ""
        for metric in (f"{kind}ThrottleEvents" if kind else None, reason_metric(reason)):
            if metric:
                figures[metric] = figures.get(metric, 0.0) + float(count)
    return figures


def _widen_for_seeding(minute: Minute, seed_units: float) -> None:
    minute.client.setdefault("ConsumedWriteCapacityUnits", Range()).high += seed_units
    for metric in METRICS[2:]:  # seeding's own refusals (it resends what was refused), uncounted by the client
        minute.client.setdefault(metric, Range()).high = math.inf


TOTAL = -1
"""The `Minute.start` of the windows' minutes added up (`totals`)."""


def totals(records: Iterable[Mapping[str, Any]], run: RunTables, minutes: Sequence[Minute]) -> Minute:
    """The windows' minutes added up: the client's every bin once (exact, no straddling), CloudWatch's sums; seeding
    widens it as it widens the first window's minute."""
    total = Minute(TOTAL, "windows in all")
    for window in records:
        if window.get("type") == "window":
            for b in window["bins"]:
                for metric, value in _bin_figures(b).items():
                    r = total.client.setdefault(metric, Range())
                    r.low += value
                    r.high += value
    if run.seed_units:
        _widen_for_seeding(total, run.seed_units)
    for metric in METRICS:
        total.cloudwatch[metric] = sum(m.cloudwatch.get(metric, 0.0) for m in minutes if m.phase.startswith("windows"))
    return total


def queries(run: RunTables) -> list[dict[str, Any]]:
    """One GetMetricData query per (table or GSI, metric); its Id says which."""
    out = []
    targets = [(t, None) for t in run.tables] + [(t, i) for t, i in run.gsis]
    for n, (table, index) in enumerate(targets):
        dims = [{"Name": "TableName", "Value": table}]
        if index:
            dims.append({"Name": "GlobalSecondaryIndexName", "Value": index})
        for m, metric in enumerate(METRICS):
            out.append(
                {
                    "Id": f"q{n}_{m}",
                    "Label": metric,
                    "MetricStat": {
                        "Metric": {"Namespace": NAMESPACE, "MetricName": metric, "Dimensions": dims},
                        "Period": PERIOD,
                        "Stat": "Sum",
                    },
                    "ReturnData": True,
                }
            )
    return out


def read_cloudwatch(client: Any, run: RunTables) -> dict[int, dict[str, float]]:
    """CloudWatch's sums per minute and metric, the run's tables and GSIs added up."""
    from botocore.exceptions import BotoCoreError, ClientError

    start = datetime.fromtimestamp(_minute(run.t0 - SEEDING_LOOKBACK), UTC)
    end = datetime.fromtimestamp(_minute(run.end) + 2 * PERIOD, UTC)
    qs = queries(run)
    sums: dict[int, dict[str, float]] = {}
    for chunk in range(0, len(qs), 500):
        kwargs: dict[str, Any] = {"MetricDataQueries": qs[chunk : chunk + 500], "StartTime": start, "EndTime": end}
        while True:
            try:
                answer = client.get_metric_data(**kwargs)
            except ClientError as exc:
                error = exc.response.get("Error", {})
                code = error.get("Code", "")
                if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation"):
                    raise WitnessError(
                        f"CloudWatch refused GetMetricData ({code}): these credentials need the "
                        "cloudwatch:GetMetricData permission"
                    ) from exc
                raise WitnessError(f"CloudWatch GetMetricData failed: {code}: {error.get('Message', '')}") from exc
            except BotoCoreError as exc:
                raise WitnessError(f"CloudWatch could not be reached: {exc}") from exc
            for result in answer.get("MetricDataResults", []):
                metric = str(result.get("Label"))
                for stamp, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
                    at = _minute(stamp.timestamp())
                    figures = sums.setdefault(at, {})
                    figures[metric] = figures.get(metric, 0.0) + float(value)
            token = answer.get("NextToken")
            if not token:
                break
            kwargs["NextToken"] = token
    return sums


def compare(
    client: Mapping[int, Minute], cloudwatch: Mapping[int, Mapping[str, float]], run: RunTables
) -> list[Minute]:
    """Every minute either witness saw, in order, with both sides' figures."""
    first = _minute(run.t0)
    out = []
    for at in sorted(set(client) | set(cloudwatch)):
        minute = client.get(at) or Minute(at, "seeding" if at < first else "after the run")
        minute.cloudwatch = dict(cloudwatch.get(at, {}))
        out.append(minute)
    return out


def disagreements(minutes: Iterable[Minute]) -> list[Disagreement]:
    """Each compared figure outside the client's range by more than the tolerance."""
    out = []
    for minute in minutes:
        if not minute.phase.startswith("windows"):
            continue
        for metric in METRICS:
            r = minute.client.get(metric, Range())
            seen = minute.cloudwatch.get(metric, 0.0)
            larger = max(abs(r.counted), abs(seen))
            tolerance = max(TOLERANCE_UNITS, TOLERANCE_SHARE * larger)
            if seen < r.low - tolerance or seen > r.high + tolerance:
                out.append(Disagreement(minute.start, metric, r, seen))
    return out


def render(run: RunTables, minutes: Sequence[Minute], found: Sequence[Disagreement]) -> str:
    names = ", ".join([*run.tables, *(f"{t}/{i}" for t, i in run.gsis)])
    lines = [
        f"CloudWatch witness of run {run.run_id}: {NAMESPACE} per minute for {names}, beside the client's counts",
        f"tolerance: {_num(TOLERANCE_UNITS)} or {TOLERANCE_SHARE:.0%}, whichever is larger; a client figure a-b is a "
        "range (a bin straddles the minute's edge, or seeding may end in it)",
        "",
    ]
    header = ["minute (UTC)", "phase", *(f"{CLIENT_FIGURE[m]} client | CW" for m in CLIENT_FIGURE)]
    rows = [header]
    for minute in minutes:
        rows.append(
            [
                _clock(minute.start),
                minute.phase,
                *(
                    f"{_range_text(minute.client[m]) if m in minute.client else '-'} | "
                    f"{_num(minute.cloudwatch.get(m, 0.0))}"
                    for m in CLIENT_FIGURE
                ),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    by_reason = [
        f"  {_clock(m.start)} {metric}: client {_range_text(m.client.get(metric, Range()))}, "
        f"CloudWatch {_num(m.cloudwatch.get(metric, 0.0))}"
        for m in minutes
        for metric in METRICS[4:]
        if m.client.get(metric, Range()).counted or m.cloudwatch.get(metric)
    ]
    if by_reason:
        lines += ["", "throttle events by reason:", *by_reason]
    lines.append("")
    if found:
        lines.append(f"{len(found)} disagreement(s) beyond the tolerance:")
        lines += [f"  {d.line()}" for d in found]
    else:
        compared = sum(1 for m in minutes if m.phase.startswith("windows") and m.start != TOTAL)
        lines.append(
            f"the client and CloudWatch agree within the tolerance in all {compared} minutes of the windows and in "
            "their total"
        )
    return "\n".join(lines)


def to_dict(run: RunTables, minutes: Sequence[Minute], found: Sequence[Disagreement]) -> dict[str, Any]:
    """What `WITNESS_FILE` holds, for the report's section and chart (`dynlocust.observe.report.witness_section`)."""

    def finite(value: float) -> float | None:
        return None if math.isinf(value) else value

    return {
        "run_id": run.run_id,
        "tolerance": {"units": TOLERANCE_UNITS, "share": TOLERANCE_SHARE},
        "minutes": [
            {
                "start": m.start,
                "phase": m.phase,
                "client": {k: [r.low, finite(r.high)] for k, r in m.client.items()},
                "cloudwatch": m.cloudwatch,
            }
            for m in minutes
        ],
        "disagreements": [d.line() for d in found],
    }


WITNESS_FILE = "witness.json"
"""Written beside results.jsonl by each witness; the report shows it."""


def witness(results: str, client: Any) -> tuple[str, list[Disagreement]]:
    """Read a run's results and CloudWatch (through `client`, boto3's CloudWatch client): the text and what
    disagreed. `WITNESS_FILE` is written beside the results, for the report."""
    records = read_results(results)
    run = run_tables(records)
    minutes = compare(client_minutes(records, run), read_cloudwatch(client, run), run)
    minutes.append(totals(records, run, minutes))
    found = disagreements(minutes)
    (Path(results).parent / WITNESS_FILE).write_text(json.dumps(to_dict(run, minutes, found), indent=1) + "\n")
    return render(run, minutes, found), found


def settle_until(run_end: float, *, local: bool) -> float:
    """When a run's last minute is settled: the end of that minute (the embedded endpoint), or five minutes after
    it (CloudWatch publishes a minute a few minutes late)."""
    return _minute(run_end) + PERIOD + (1.0 if local else 5 * PERIOD)


def _minute(t: float) -> int:
    return int(math.floor(t / PERIOD) * PERIOD)


def _clock(minute: int) -> str:
    return "total" if minute == TOTAL else datetime.fromtimestamp(minute, UTC).strftime("%H:%M")


def _num(value: float, *, sign: bool = False) -> str:
    text = f"{value:+,.1f}" if sign else f"{value:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def _range_text(r: Range) -> str:
    if math.isinf(r.high):
        return f"{_num(r.low)} or more"
    return _num(r.low) if math.isclose(r.low, r.high) else f"{_num(r.low)}-{_num(r.high)}"
