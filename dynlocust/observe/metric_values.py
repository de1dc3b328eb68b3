"""The metrics' values: counters and histograms as plain data, counted on the request path and merged as deltas.

Why plain dicts and not `prometheus_client` metric objects: the request path costs a few dict updates, and a
worker's values can be shipped to the master as *deltas* (`snapshot_deltas` / `apply_deltas`, msgpack-safe) and
summed there exactly, so one `/metrics` on the master shows the whole fleet. Label values are bounded here
(`LabelBounds`): API operation names, the scenario's *logical* table names (the physical names carry the run id),
outcome kinds, and codes and reasons that match a closed pattern. `WorkerGauges` is one process's gauges, as the
master keeps them per worker. `dynlocust.observe.metric_families` renders these values; `dynlocust.observe.metrics`
is the API that counts into them.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DURATION_BUCKETS: tuple[float, ...] = (
    0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
    0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
"""Upper bounds in seconds: 1 ms steps where DynamoDB answers (1-5 ms), then 2.5-10 ms steps up to 50 ms."""

MAX_TABLES = 64
"""Distinct table/index label values kept per process; more (a user generating names) become `other`."""
OTHER = "other"
OFFERED_RATE_SPAN = 5.0
"""Seconds over which the offered rate (sends started per second) is measured."""
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")

# name -> (help, label names); exposed as <name>_total
COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "dynlocust_requests": (
        "DynamoDB requests that ended, by outcome kind (ok, throttled, unprocessed, timeout, ...).",
        ("operation", "table", "index", "outcome"),
    ),
    "dynlocust_throttled_requests": (
        "DynamoDB requests refused for capacity, by error code and first throttling reason; index is the index "
        "that refused (a GSI refuses the base-table writes it would index) or else the one the request addressed.",
        ("operation", "table", "index", "code", "reason", "http_status"),
    ),
    "dynlocust_unprocessed_items": (
        "Items a batch call returned unprocessed (UnprocessedItems / UnprocessedKeys).",
        ("operation", "table"),
    ),
    "dynlocust_consumed_capacity_units": (
        "Capacity units DynamoDB reported consumed (ReturnConsumedCapacity), by kind read or write.",
        ("table", "index", "kind"),
    ),
    "dynlocust_estimated_cost_dollars": (
        "Estimated on-demand cost in US dollars of the consumed capacity units.",
        (),
    ),
    "dynlocust_dropped_sends": (
        "Scheduled sends dropped because no user was free in time (the client, not DynamoDB, was the limit).",
        (),
    ),
}
ALWAYS_PRESENT = ("dynlocust_estimated_cost_dollars", "dynlocust_dropped_sends")
HISTOGRAM_LABELS = ("operation", "table", "outcome")
"""Labels of dynlocust_request_duration_seconds (the table is the scenario's logical name, as on the counters)."""
HISTOGRAMS = ("histograms", "intended")
"""`MetricValues`' histogram fields, by their key in a worker's deltas: the latency from send, and from the
intended send (the pacer's schedule; requests without a ticket have none). Same labels and buckets."""

Labels = tuple[str, ...]


@dataclass
class MetricValues:
    """Counters and histograms as plain data: `counters[name][labels]`, `histograms[(operation, table, outcome)]`.

    A histogram entry is `len(DURATION_BUCKETS) + 2` floats: per-bucket (not cumulative) counts, the `+Inf`
    bucket, then the sum of observed seconds. `intended` is the same for the latency from the intended send.
    """

    counters: dict[str, dict[Labels, float]] = field(default_factory=lambda: {name: {} for name in COUNTERS})
    histograms: dict[Labels, list[float]] = field(default_factory=dict)
    intended: dict[Labels, list[float]] = field(default_factory=dict)

    def copy(self) -> MetricValues:
        return MetricValues(
            {name: dict(series) for name, series in self.counters.items()},
            {labels: list(values) for labels, values in self.histograms.items()},
            {labels: list(values) for labels, values in self.intended.items()},
        )


def snapshot_deltas(current: MetricValues, previous: MetricValues) -> dict[str, Any]:
    """What changed since `previous` (the values last shipped), as msgpack-safe lists; only non-zero changes."""
    counters = []
    for name, series in current.counters.items():
        before = previous.counters.get(name, {})
        for labels, value in series.items():
            delta = value - before.get(labels, 0.0)
            if delta:
                counters.append([name, list(labels), delta])
    out: dict[str, Any] = {"counters": counters}
    for key in HISTOGRAMS:
        histograms = out[key] = []
        before = getattr(previous, key)
        for labels, values in getattr(current, key).items():
            before_h = before.get(labels)
            deltas = values if before_h is None else [v - b for v, b in zip(values, before_h, strict=True)]
            if any(deltas):
                histograms.append([list(labels), list(deltas)])
    return out


def apply_deltas(target: MetricValues, deltas: Mapping[str, Any]) -> None:
    """Add a worker's `snapshot_deltas` into `target` (the master's merged values); unknown names are ignored."""
    size = len(DURATION_BUCKETS) + 2
    for name, labels, delta in deltas.get("counters", ()):
        series = target.counters.get(name)
        if series is None or len(labels) != len(COUNTERS[name][1]):
            continue
        key = tuple(str(v) for v in labels)
        series[key] = series.get(key, 0.0) + float(delta)
    for name in HISTOGRAMS:
        histograms = getattr(target, name)
        for labels, values in deltas.get(name, ()):
            if len(labels) != len(HISTOGRAM_LABELS) or len(values) != size:
                continue
            key = tuple(str(v) for v in labels)
            mine = histograms.get(key)
            if mine is None:
                histograms[key] = [float(v) for v in values]
            else:
                for i, v in enumerate(values):
                    mine[i] += v


@dataclass
class WorkerGauges:
    """The gauges one process reports; the master keeps the latest per worker and sums or lists them."""

    target_rate: float = 0.0
    offered_rate: float = 0.0
    inflight: float = 0.0
    client_bound: float = 0.0
    client_cpu: float = 0.0
    client_cpu_wait: float = math.nan
    client_late: float = 0.0
    client_dropped: float = 0.0
    client_pool_waits: float = 0.0
    client_short: float = 0.0
    client_reasons: list[str] = field(default_factory=list)
    window: float = -1.0
    phase: str = ""
    run_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WorkerGauges:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


def observe(histograms: dict[Labels, list[float]], key: Labels, seconds: float) -> None:
    histogram = histograms.get(key)
    if histogram is None:
        histogram = histograms[key] = [0.0] * (len(DURATION_BUCKETS) + 2)
    histogram[bisect.bisect_left(DURATION_BUCKETS, seconds)] += 1.0
    histogram[-1] += seconds


class LabelBounds:
    """The label values a process gives out, bounded in number: a label never grows a series per user-made name.

    A table or index name is kept as is for the first `MAX_TABLES`, and an error code or a throttling reason for
    the first 256 that match a closed pattern; any other becomes `OTHER`.
    """

    def __init__(self) -> None:
        self._tables: dict[str, str] = {}
        self._indexes: dict[str, str] = {}
        self._tokens: dict[str, str] = {}

    def table(self, name: str) -> str:
        bounded = self._tables.get(name)
        if bounded is None:
            bounded = self._tables[name] = name if len(self._tables) < MAX_TABLES else OTHER
        return bounded

    def index(self, name: str) -> str:
        return self._indexes.get(name) or self._bounded_index(name)

    def _bounded_index(self, name: str) -> str:
        value = name if len(self._indexes) < MAX_TABLES and _TOKEN.fullmatch(name) else OTHER
        self._indexes[name] = value
        return value

    def token(self, value: str) -> str:
        bounded = self._tokens.get(value)
        if bounded is None:
            bounded = value if (not value or _TOKEN.fullmatch(value)) and len(self._tokens) < 256 else OTHER
            self._tokens[value] = bounded
        return bounded
