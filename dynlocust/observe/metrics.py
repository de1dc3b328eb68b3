"""Prometheus metrics: real counters and a latency histogram, counted from every DynamoDB request event.

Values live in plain dicts (`MetricValues`) rather than in `prometheus_client` metric objects, for two reasons:
the request path costs a few dict updates, and a worker's values can be shipped to the master as *deltas*
(`snapshot_deltas` / `apply_deltas`, msgpack-safe) and summed there exactly, so one `/metrics` on the master
shows the whole fleet. A `Collector` turns the dicts into metric families at scrape time.

Requests are counted from the `RequestRecord` each request event carries in its context (`dynlocust.request.client`
builds it), so the runner needs no calls of its own; run-level gauges (target and offered rate, dropped sends,
in-flight requests, client-bound) are sampled once a second from the process's `LocalRun`'s `Progress` (`sample_run`).
Label values are bounded: API operation names, the scenario's *logical* table names
(the physical names carry the run id), outcome kinds, and codes and reasons that match a closed pattern.
This module holds values and the collector only; `dynlocust.plugin.metrics_wiring` attaches them to Locust.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gevent
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.request.client import REQUEST_TYPE
from dynlocust.request.outcomes import THROTTLED
from dynlocust.request.record import RequestRecord
from dynlocust.run.saturation import REASONS, Saturation
from dynlocust.run.search import CeilingSearch

if TYPE_CHECKING:
    from dynlocust.run.local_run import LocalRun

log = logging.getLogger(__name__)

DURATION_BUCKETS: tuple[float, ...] = (
    0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
    0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
"""Upper bounds in seconds: 1 ms steps where DynamoDB answers (1-5 ms), then 2.5-10 ms steps up to 50 ms."""

MAX_TABLES = 64
"""Distinct table/index label values kept per process; more (a user generating names) become `other`."""
OTHER = "other"
SAMPLE_INTERVAL = 1.0
OFFERED_RATE_SPAN = 5.0
"""Seconds over which the offered rate (sends started per second) is measured."""
FINAL_SCRAPE_WAIT_MAX = 15.0
REPORT_KEY = "dynlocust_metrics"
"""Key of the metrics deltas in a Locust worker report."""

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


@dataclass(frozen=True)
class RunSample:
    """Run-level state of one process's scenario run at one moment (see `sample_run`)."""

    run_id: str
    sent: int
    dropped: int
    inflight: int
    target_rate: float
    window: int
    phase: str
    client_bound: bool
    tables: Mapping[str, str]
    """physical table name -> logical (scenario) name"""
    client: Saturation | None = None
    """The client's evidence on the last closed window (None before one closed)."""


def sample_run(run: LocalRun, now: float) -> RunSample:
    """Sample a share's `Progress` (`dynlocust.run.progress`, its one read model) at `now`."""
    progress = run.progress(now)
    client = progress.saturation
    return RunSample(
        run_id=progress.run_id,
        sent=progress.sent,
        dropped=progress.dropped,
        inflight=progress.in_flight_total,
        target_rate=progress.rate,
        window=progress.window,
        phase=progress.phase,
        client_bound=bool(client is not None and client.client_bound),
        tables=progress.tables,
        client=client,
    )


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


CLIENT_EVIDENCE = (
    ("cpu", "dynlocust_client_cpu_ratio", "client_cpu", "CPU of one core the worker used over its last closed window."),
    ("machine-busy", "dynlocust_client_cpu_wait_seconds", "client_cpu_wait", "Seconds the worker was runnable but "
     "waiting for a CPU over its last closed window (NaN where the kernel does not say)."),
    ("lag", "dynlocust_client_late_sends", "client_late", "Sends of the last closed window later than the late bound."),
    ("dropped", "dynlocust_client_dropped_sends", "client_dropped", "Sends of the last closed window dropped."),
    ("pool", "dynlocust_client_pool_waits", "client_pool_waits", "Requests of the last closed window that found "
     "every pooled connection busy."),
    ("offered-short", "dynlocust_client_offered_short_sends", "client_short", "Due sends of the last closed window "
     "that did not go out."),
)  # fmt: skip
"""One metric per client-bound reason: (reason, metric, `WorkerGauges` field, help), the figure behind it."""


def _client_evidence(workers: Mapping[str, WorkerGauges]) -> Iterator[Metric]:
    """Per worker: each reason's figure on the last closed window, and whether it made the window client-bound."""
    for reason, name, attr, doc in CLIENT_EVIDENCE:
        family = GaugeMetricFamily(name, f"{doc} Reason `{reason}` of a client-bound window.", labels=["worker"])
        for worker, g in workers.items():
            family.add_metric([worker], float(getattr(g, attr)))
        yield family
    flags = GaugeMetricFamily(
        "dynlocust_client_bound_reason",
        "1 when the reason made the worker's last closed window client-bound (see dynlocust.run.saturation).",
        labels=["worker", "reason"],
    )
    for worker, g in workers.items():
        for reason in REASONS:
            flags.add_metric([worker, reason], 1.0 if reason in g.client_reasons else 0.0)
    yield flags


class Metrics:
    """dynlocust's metrics of one process: counts requests (`on_request`), samples the run, exposes a registry.

    `registry` defaults to prometheus_client's global one; tests and multi-environment processes pass a fresh
    `CollectorRegistry()`. `run_source` returns the process's `LocalRun` (or None): it is how physical table
    names are mapped back to the scenario's logical names and how run-level gauges are read.
    """

    def __init__(
        self,
        registry: CollectorRegistry = REGISTRY,
        *,
        run_source: Callable[[], Any] = lambda: None,
        search_source: Callable[[], CeilingSearch | None] = lambda: None,
        worker: str = "0",
        prices: Prices = US_EAST_1,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.values = MetricValues()
        for name in ALWAYS_PRESENT:
            self.values.counters[name][()] = 0.0
        self.workers: dict[str, WorkerGauges] = {}
        self.worker = worker
        self.run_source = run_source
        self.search_source = search_source
        """The current ceiling search (master or standalone), whose bracket is a gauge."""
        self.prices = prices
        self.clock = clock
        self.scrapes: list[float] = []
        self._tables: dict[str, str] = {}
        self._indexes: dict[str, str] = {}
        self._tokens: dict[str, str] = {}
        self._shipped = MetricValues()
        self._sent_history: deque[tuple[float, int]] = deque()
        self._last_dropped = 0
        self._last_run_id = ""
        self._requests = self.values.counters["dynlocust_requests"]
        self._throttled = self.values.counters["dynlocust_throttled_requests"]
        self._unprocessed = self.values.counters["dynlocust_unprocessed_items"]
        self._capacity = self.values.counters["dynlocust_consumed_capacity_units"]
        self._cost = self.values.counters["dynlocust_estimated_cost_dollars"]
        self._histograms = self.values.histograms
        self.registry = registry
        registry.register(_Collector(self))

    # -- the request path ------------------------------------------------------------------------------------------

    def on_request(
        self,
        request_type: str,
        name: str,
        response_time: float,
        response_length: int,
        response: Any = None,
        context: Mapping[str, Any] | None = None,
        exception: BaseException | None = None,
        **_kwargs: Any,
    ) -> None:
        """Locust `request` event listener: counts DynamoDB requests that carry a `RequestRecord` in their context."""
        if request_type != REQUEST_TYPE or not context:
            return
        record: RequestRecord | None = context.get("record")
        if record is not None:
            self.count(record)

    def count(self, record: RequestRecord) -> None:
        """Count one request from its record (the labels are the record's, bounded in number)."""
        outcome = record.outcome
        operation = record.operation
        table = self._table(record.table)
        index = "" if record.index is None else self._index(record.index)
        kind = outcome.kind
        key = (operation, table, index, kind)
        requests = self._requests
        requests[key] = requests.get(key, 0.0) + 1.0
        if kind == THROTTLED:
            reason = self._token(outcome.reasons[0].reason) if outcome.reasons else ""
            status = "" if outcome.http_status is None else str(outcome.http_status)
            refused_by = outcome.throttled_index
            tindex = index if refused_by is None else self._index(refused_by)
            tkey = (operation, table, tindex, self._token(outcome.code or ""), reason, status)
            self._throttled[tkey] = self._throttled.get(tkey, 0.0) + 1.0
        if outcome.unprocessed:
            ukey = (operation, table)
            self._unprocessed[ukey] = self._unprocessed.get(ukey, 0.0) + outcome.unprocessed
        hkey = (operation, table, kind)
        _observe(self._histograms, hkey, record.latency)
        if record.latency_from_intended is not None:
            _observe(self.values.intended, hkey, record.latency_from_intended)
        if record.consumed:
            for consumed in record.consumed:
                where = (self._table(consumed.table), self._index(consumed.index) if consumed.index else "")
                for unit_kind, units in (("read", consumed.read_units), ("write", consumed.write_units)):
                    if units:
                        ckey = (*where, unit_kind)
                        self._capacity[ckey] = self._capacity.get(ckey, 0.0) + units
            self._cost[()] += dollars(record.read_units, record.write_units, self.prices)

    def table_label(self, name: str) -> str:
        """The bounded label value a logical table name takes (the scenario's name, or `other` past `MAX_TABLES`)."""
        return self._table(name)

    def _table(self, name: str) -> str:
        bounded = self._tables.get(name)
        if bounded is None:
            bounded = self._tables[name] = name if len(self._tables) < MAX_TABLES else OTHER
        return bounded

    def _index(self, name: str) -> str:
        return self._indexes.get(name) or self._bounded_index(name)

    def _bounded_index(self, name: str) -> str:
        value = name if len(self._indexes) < MAX_TABLES and _TOKEN.fullmatch(name) else OTHER
        self._indexes[name] = value
        return value

    def _token(self, value: str) -> str:
        bounded = self._tokens.get(value)
        if bounded is None:
            bounded = value if (not value or _TOKEN.fullmatch(value)) and len(self._tokens) < 256 else OTHER
            self._tokens[value] = bounded
        return bounded

    # -- run-level gauges --------------------------------------------------------------------------------------------

    def sample(self, run: RunSample | None) -> None:
        """Update this process's gauges and dropped-sends counter from a `RunSample` (None: no run yet)."""
        gauges = self.workers.setdefault(self.worker, WorkerGauges())
        if run is None:
            return
        now = self.clock()
        if run.run_id != self._last_run_id:
            self._last_run_id = run.run_id
            self._last_dropped = 0
            self._sent_history.clear()
        history = self._sent_history
        history.append((now, run.sent))
        while len(history) > 2 and now - history[0][0] > OFFERED_RATE_SPAN:
            history.popleft()
        span = now - history[0][0]
        gauges.offered_rate = (run.sent - history[0][1]) / span if span > 0 else 0.0
        gauges.target_rate = run.target_rate
        gauges.inflight = float(run.inflight)
        gauges.client_bound = 1.0 if run.client_bound else 0.0
        if run.client is not None:
            c = run.client
            gauges.client_cpu, gauges.client_late, gauges.client_dropped = c.cpu, float(c.late), float(c.dropped)
            gauges.client_pool_waits, gauges.client_short = float(c.pool_waits), float(c.short)
            gauges.client_reasons = list(c.reasons)
            gauges.client_cpu_wait = math.nan if c.cpu_wait is None else c.cpu_wait
        gauges.window = float(run.window)
        gauges.phase = run.phase
        gauges.run_id = run.run_id
        if run.dropped > self._last_dropped:
            self._add("dynlocust_dropped_sends", run.dropped - self._last_dropped)
            self._last_dropped = run.dropped

    def _add(self, name: str, amount: float) -> None:
        series = self.values.counters[name]
        series[()] = series.get((), 0.0) + amount

    def sample_now(self) -> None:
        run = self.run_source()
        self.sample(None if run is None else sample_run(run, self.clock()))

    # -- distribution ---------------------------------------------------------------------------------------------

    def take_deltas(self) -> dict[str, Any]:
        """A worker's report: counter and histogram changes since the last report, and its current gauges."""
        payload = snapshot_deltas(self.values, self._shipped)
        self._shipped = self.values.copy()
        payload["worker"] = self.worker
        payload["gauges"] = self.workers.get(self.worker, WorkerGauges()).to_dict()
        return payload

    def merge_report(self, payload: Mapping[str, Any]) -> None:
        """The master's side of `take_deltas`: sum the deltas, keep the worker's latest gauges."""
        apply_deltas(self.values, payload)
        worker = str(payload.get("worker", "?"))
        self.workers[worker] = WorkerGauges.from_dict(payload.get("gauges") or {})

    # -- exposition ---------------------------------------------------------------------------------------------

    def exposition(self) -> bytes:
        """The text exposition of the registry (what `/metrics` answers); counts as a scrape."""
        self.scrapes.append(time.monotonic())
        del self.scrapes[:-3]
        return generate_latest(self.registry)

    def wsgi_app(self, environ: Mapping[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ.get("PATH_INFO") not in ("/metrics", "/"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found: try /metrics\n"]
        body = self.exposition()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
        return [body]

    def wait_for_final_scrape(self, max_wait: float = FINAL_SCRAPE_WAIT_MAX) -> bool:
        """Block (gevent-friendly) until the next scrape after now, if something has been scraping regularly.

        A run quits right after its last window; without this Prometheus would miss up to one scrape interval of
        the final counts. Waits at most 1.5 scrape intervals + 0.5 s (capped at `max_wait`).
        """
        if len(self.scrapes) < 2:
            return False
        interval = self.scrapes[-1] - self.scrapes[-2]
        start = time.monotonic()
        until = start + min(max_wait, 1.5 * interval + 0.5)
        log.info("waiting up to %.1f s for a final scrape of /metrics before exiting", until - start)
        while time.monotonic() < until:
            if self.scrapes[-1] > start:
                return True
            gevent.sleep(0.05)
        return False

    def families(self) -> Iterator[Metric]:
        for name, (doc, labels) in COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=list(labels))
            for key, value in sorted(self.values.counters[name].items()):
                family.add_metric(list(key), value)
            yield family
        bounds = [_le(b) for b in DURATION_BUCKETS] + ["+Inf"]
        for name, doc, series in (
            ("dynlocust_request_duration_seconds", "Time from sending a DynamoDB request to its answer (or failure), "
             "by operation, table and outcome kind.", self.values.histograms),
            ("dynlocust_request_latency_from_intended_seconds", "Time from a request's intended send (the schedule's) "
             "to its answer: the latency the open model's user saw, send delays included.", self.values.intended),
        ):  # fmt: skip
            histogram = HistogramMetricFamily(name, doc, labels=list(HISTOGRAM_LABELS))
            for key, values in sorted(series.items()):
                cumulative, running = [], 0.0
                for le, count in zip(bounds, values, strict=False):
                    running += count
                    cumulative.append((le, running))
                histogram.add_metric(list(key), cumulative, values[-1])
            yield histogram
        workers = dict(sorted(self.workers.items()))
        gauges = list(workers.values())
        for name, doc, attr in (
            ("dynlocust_target_rate", "Scheduled sends per second of the current window (all workers).", "target_rate"),
            ("dynlocust_offered_rate", f"Sends started per second, last {OFFERED_RATE_SPAN:g} s.", "offered_rate"),
            ("dynlocust_inflight_requests", "Requests sent and not yet answered.", "inflight"),
        ):  # fmt: skip
            yield GaugeMetricFamily(name, doc, value=sum(getattr(g, attr) for g in gauges))
        client_bound = GaugeMetricFamily(
            "dynlocust_client_bound",
            "1 when the worker's last closed window was limited by the client itself (CPU, schedule lag, drops).",
            labels=["worker"],
        )
        for worker, g in workers.items():
            client_bound.add_metric([worker], g.client_bound)
        yield client_bound
        yield from _client_evidence(workers)
        yield GaugeMetricFamily("dynlocust_workers", "Processes generating load.", value=len(workers))
        yield from _bracket(self.search_source())
        current = max(gauges, key=lambda g: g.window, default=None)
        yield GaugeMetricFamily(
            "dynlocust_window_index",
            "Index of the current (or last) window of the schedule; -1 before the first.",
            value=current.window if current is not None else -1.0,
        )
        # One series per run and phase: the window and its rate change every window and are gauges above, so
        # they stay out of the labels (a new series per window would grow the TSDB without bound).
        info = InfoMetricFamily("dynlocust_window", "The run and phase being played (run_id and phase labels).")
        if current is not None and current.run_id:
            info.add_metric([], {"run_id": current.run_id, "phase": current.phase})
        yield info


def _observe(histograms: dict[Labels, list[float]], key: Labels, seconds: float) -> None:
    histogram = histograms.get(key)
    if histogram is None:
        histogram = histograms[key] = [0.0] * (len(DURATION_BUCKETS) + 2)
    histogram[bisect.bisect_left(DURATION_BUCKETS, seconds)] += 1.0
    histogram[-1] += seconds


def _bracket(search: CeilingSearch | None) -> Iterator[Metric]:
    """The ceiling search's bracket so far: its low and high ends (once known) and the next probe's rate."""
    family = GaugeMetricFamily(
        "dynlocust_ceiling_bracket",
        "A ceiling search's bracket in requests/s: bound=low (proved sustained), high (lowest throttled), next "
        "(the probe being offered, until the search stops).",
        labels=["bound"],
    )
    if search is not None:
        if search.low is not None:
            family.add_metric(["low"], search.low)
        if search.high is not None:
            family.add_metric(["high"], search.high)
        if search.stopped is None:
            family.add_metric(["next"], search.next_rate())
    yield family


class _Collector:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self._metrics.families()

    def describe(self) -> list[Metric]:
        return []  # no fixed description: the registry does not check duplicate names for us


def _le(bound: float) -> str:
    return repr(float(bound))
