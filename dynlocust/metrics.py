"""Prometheus metrics: real counters and a latency histogram, counted from every DynamoDB request event.

Values live in plain dicts (`MetricValues`) rather than in `prometheus_client` metric objects, for two reasons:
the request path costs a few dict updates, and a worker's values can be shipped to the master as *deltas*
(`snapshot_deltas` / `apply_deltas`, msgpack-safe) and summed there exactly, so one `/metrics` on the master
shows the whole fleet. A `Collector` turns the dicts into metric families at scrape time.

Everything is hooked through Locust's events and the request context (`dynlocust.client` puts the `Outcome`,
operation, table and index there), so the runner needs no calls of its own; run-level gauges (target and offered
rate, dropped sends, in-flight requests, client-bound) are sampled once a second from the process's
`ScenarioRun` (`sample_run`). Label values are bounded: API operation names, the scenario's *logical* table names
(the physical names carry the run id), outcome kinds, and codes and reasons that match a closed pattern.
"""

from __future__ import annotations

import bisect
import logging
import re
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from locust import events

import gevent
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)

from dynlocust import plugin
from dynlocust.client import REQUEST_TYPE
from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.outcomes import THROTTLED, Outcome
from dynlocust.saturation import REASONS, Saturation

log = logging.getLogger(__name__)

DURATION_BUCKETS: tuple[float, ...] = (
    0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
    0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
"""Upper bounds in seconds: 1 ms steps where DynamoDB answers (1-5 ms), then 2.5-10 ms steps up to 50 ms."""

WRITE_OPERATIONS = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "ExecuteTransaction"}
)
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
        "DynamoDB requests refused for capacity, by error code and first throttling reason.",
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

Labels = tuple[str, ...]


@dataclass
class MetricValues:
    """Counters and histograms as plain data: `counters[name][labels]`, `histograms[(operation, outcome)]`.

    A histogram entry is `len(DURATION_BUCKETS) + 2` floats: per-bucket (not cumulative) counts, the `+Inf`
    bucket, then the sum of observed seconds.
    """

    counters: dict[str, dict[Labels, float]] = field(default_factory=lambda: {name: {} for name in COUNTERS})
    histograms: dict[Labels, list[float]] = field(default_factory=dict)

    def copy(self) -> MetricValues:
        return MetricValues(
            {name: dict(series) for name, series in self.counters.items()},
            {labels: list(values) for labels, values in self.histograms.items()},
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
    histograms = []
    for labels, values in current.histograms.items():
        before_h = previous.histograms.get(labels)
        deltas = values if before_h is None else [v - b for v, b in zip(values, before_h, strict=True)]
        if any(deltas):
            histograms.append([list(labels), list(deltas)])
    return {"counters": counters, "histograms": histograms}


def apply_deltas(target: MetricValues, deltas: Mapping[str, Any]) -> None:
    """Add a worker's `snapshot_deltas` into `target` (the master's merged values); unknown names are ignored."""
    size = len(DURATION_BUCKETS) + 2
    for name, labels, delta in deltas.get("counters", ()):
        series = target.counters.get(name)
        if series is None or len(labels) != len(COUNTERS[name][1]):
            continue
        key = tuple(str(v) for v in labels)
        series[key] = series.get(key, 0.0) + float(delta)
    for labels, values in deltas.get("histograms", ()):
        if len(labels) != 2 or len(values) != size:
            continue
        key = (str(labels[0]), str(labels[1]))
        mine = target.histograms.get(key)
        if mine is None:
            target.histograms[key] = [float(v) for v in values]
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


def sample_run(run: Any, now: float) -> RunSample:
    """Read a `dynlocust.runner.ScenarioRun` (duck-typed: the only place that knows its attributes)."""
    window, phase, target = -1, "", 0.0
    for segment, planned in zip(run.segments, run.plan.windows, strict=True):
        if segment.start <= now < segment.end:
            window, phase, target = segment.index, planned.phase, segment.rate
            break
        if now >= segment.end:
            window, phase = segment.index, planned.phase
    dropped = sum(run.pacer.window_counts(w.index).dropped for w in run.plan.windows)
    client = run.closed[-1].saturation if run.closed else None
    client_bound = bool(client is not None and client.client_bound)
    return RunSample(
        run_id=str(run.run_id),
        sent=int(run.sent),
        dropped=int(dropped),
        inflight=int(sum(run.inflight.values())),
        target_rate=float(target),
        window=window,
        phase=str(phase),
        client_bound=client_bound,
        tables={physical: logical for logical, physical in run.physical_names.items()},
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
        "1 when the reason made the worker's last closed window client-bound (see dynlocust.saturation).",
        labels=["worker", "reason"],
    )
    for worker, g in workers.items():
        for reason in REASONS:
            flags.add_metric([worker, reason], 1.0 if reason in g.client_reasons else 0.0)
    yield flags


class Metrics:
    """dynlocust's metrics of one process: counts requests (`on_request`), samples the run, exposes a registry.

    `registry` defaults to prometheus_client's global one; tests and multi-environment processes pass a fresh
    `CollectorRegistry()`. `run_source` returns the process's `ScenarioRun` (or None): it is how physical table
    names are mapped back to the scenario's logical names and how run-level gauges are read.
    """

    def __init__(
        self,
        registry: CollectorRegistry = REGISTRY,
        *,
        run_source: Callable[[], Any] = lambda: None,
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
        """Locust `request` event listener: counts DynamoDB requests that carry an `Outcome` in their context."""
        if request_type != REQUEST_TYPE or not context:
            return
        outcome: Outcome | None = context.get("outcome")
        if outcome is None:
            return
        operation = context.get("operation") or "-"
        table = self._tables.get(physical := context.get("table") or "-") or self._resolve_table(physical)
        raw_index = context.get("index")
        index = "" if raw_index is None else self._indexes.get(raw_index) or self._bounded_index(raw_index)
        kind = outcome.kind
        key = (operation, table, index, kind)
        requests = self._requests
        requests[key] = requests.get(key, 0.0) + 1.0
        if kind == THROTTLED:
            reason = self._token(outcome.reasons[0].reason) if outcome.reasons else ""
            status = "" if outcome.http_status is None else str(outcome.http_status)
            tkey = (operation, table, index, self._token(outcome.code or ""), reason, status)
            self._throttled[tkey] = self._throttled.get(tkey, 0.0) + 1.0
        if outcome.unprocessed:
            ukey = (operation, table)
            self._unprocessed[ukey] = self._unprocessed.get(ukey, 0.0) + outcome.unprocessed
        hkey = (operation, kind)
        histogram = self._histograms.get(hkey)
        if histogram is None:
            histogram = self._histograms[hkey] = [0.0] * (len(DURATION_BUCKETS) + 2)
        seconds = response_time / 1000.0
        histogram[bisect.bisect_left(DURATION_BUCKETS, seconds)] += 1.0
        histogram[-1] += seconds
        if response:
            consumed = response.get("ConsumedCapacity")
            if consumed:
                self._count_capacity(consumed, operation)

    def _count_capacity(self, consumed: Any, operation: str) -> None:
        default_kind = "write" if operation in WRITE_OPERATIONS else "read"
        read = write = 0.0
        for entry in [consumed] if isinstance(consumed, Mapping) else consumed:
            table = self._tables.get(physical := str(entry.get("TableName", "-"))) or self._resolve_table(physical)
            parts: list[tuple[str, Mapping[str, Any]]] = [("", entry)]
            if "Table" in entry:  # ReturnConsumedCapacity=INDEXES: table and indexes apart
                parts = [("", entry["Table"])]
                for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                    for name, units in (entry.get(group) or {}).items():
                        parts.append((self._indexes.get(name) or self._bounded_index(name), units))
            for index, units in parts:
                r = float(units.get("ReadCapacityUnits") or 0.0)
                w = float(units.get("WriteCapacityUnits") or 0.0)
                if not r and not w:
                    total = float(units.get("CapacityUnits") or 0.0)
                    r, w = (0.0, total) if default_kind == "write" else (total, 0.0)
                for kind, value in (("read", r), ("write", w)):
                    if value:
                        key = (table, index, kind)
                        self._capacity[key] = self._capacity.get(key, 0.0) + value
                read += r
                write += w
        self._cost[()] += dollars(read, write, self.prices)

    def _resolve_table(self, physical: str) -> str:
        run = self.run_source()
        if run is not None:
            for logical, name in run.physical_names.items():
                self._tables[name] = logical
        logical = self._tables.get(physical)
        if logical is None:
            logical = physical if len(self._tables) < MAX_TABLES else OTHER
            self._tables[physical] = logical
        return logical

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
        for physical, logical in run.tables.items():
            self._tables[physical] = logical
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
        histogram = HistogramMetricFamily(
            "dynlocust_request_duration_seconds",
            "Time from sending a DynamoDB request to its answer (or failure), by operation and outcome kind.",
            labels=["operation", "outcome"],
        )
        bounds = [_le(b) for b in DURATION_BUCKETS] + ["+Inf"]
        for key, values in sorted(self.values.histograms.items()):
            cumulative, running = [], 0.0
            for bound, count in zip(bounds, values, strict=False):
                running += count
                cumulative.append((bound, running))
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
        bound = GaugeMetricFamily(
            "dynlocust_client_bound",
            "1 when the worker's last closed window was limited by the client itself (CPU, schedule lag, drops).",
            labels=["worker"],
        )
        for worker, g in workers.items():
            bound.add_metric([worker], g.client_bound)
        yield bound
        yield from _client_evidence(workers)
        yield GaugeMetricFamily("dynlocust_workers", "Processes generating load.", value=len(workers))
        current = max(gauges, key=lambda g: g.window, default=None)
        yield GaugeMetricFamily(
            "dynlocust_window_index",
            "Index of the current (or last) window of the schedule; -1 before the first.",
            value=current.window if current is not None else -1.0,
        )
        info = InfoMetricFamily("dynlocust_window", "The run and window being played.")
        if current is not None and current.run_id:
            info.add_metric(
                [],
                {
                    "run_id": current.run_id,
                    "window": str(int(current.window)),
                    "phase": current.phase,
                    "target_rate": f"{sum(g.target_rate for g in gauges):g}",
                },
            )
        yield info


class _Collector:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self._metrics.families()

    def describe(self) -> list[Metric]:
        return []  # no fixed description: the registry does not check duplicate names for us


def _le(bound: float) -> str:
    return repr(float(bound))


# -- Locust wiring --------------------------------------------------------------------------------------------------


@dataclass
class _Installed:
    metrics: Metrics
    server: Any = None
    sampler: gevent.Greenlet | None = None


_INSTALLED: weakref.WeakKeyDictionary[Any, _Installed] = weakref.WeakKeyDictionary()


def metrics_for(environment: Any) -> Metrics | None:
    """The `Metrics` installed on a Locust environment by the `init` listener, if any."""
    installed = _INSTALLED.get(environment)
    return installed.metrics if installed is not None else None


def scenario_run(environment: Any) -> Any:
    """The environment's `ScenarioRun` once it has started, when scenario runs are loaded (None otherwise).

    Looked up through `sys.modules`: importing `dynlocust.hooks` here would register the scenario listeners in
    processes that run plain locustfiles.
    """
    hooks = sys.modules.get("dynlocust.hooks")
    return hooks.current_run(environment) if hooks is not None else None


def install(environment: Any, registry: CollectorRegistry | None = None) -> Metrics:
    """Attach metrics to a Locust environment: listeners by role, /metrics server, web UI route, sampler.

    Standalone processes count their own requests and serve them; workers count and ship deltas to the master
    with every report; the master merges and serves. Failing to bind the port is logged, not fatal: metrics are
    an observer and must not stop a load test.
    """
    from locust.runners import MasterRunner, WorkerRunner

    settings = plugin.settings_for(environment)
    runner = environment.runner
    worker = str(getattr(runner, "worker_index", 0)) if isinstance(runner, WorkerRunner) else "0"
    metrics = Metrics(
        registry if registry is not None else CollectorRegistry(),
        run_source=lambda: scenario_run(environment),
        worker=worker,
    )
    installed = _Installed(metrics)
    _INSTALLED[environment] = installed
    if isinstance(runner, MasterRunner):

        def on_worker_report(client_id: str, data: Mapping[str, Any], **_kw: Any) -> None:
            payload = data.get(REPORT_KEY)
            if payload:
                metrics.merge_report(payload)

        environment.events.worker_report.add_listener(on_worker_report)
    else:
        environment.events.request.add_listener(metrics.on_request)
        installed.sampler = gevent.spawn(_sample_forever, metrics)
    if isinstance(runner, WorkerRunner):

        def on_report(client_id: str, data: dict[str, Any], **_kw: Any) -> None:
            metrics.worker = str(getattr(runner, "worker_index", metrics.worker))
            metrics.sample_now()
            data[REPORT_KEY] = metrics.take_deltas()

        environment.events.report_to_master.add_listener(on_report)
        return metrics
    if settings.metrics_port:
        installed.server = _serve(metrics, settings.metrics_host, settings.metrics_port)
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is not None:
        _add_web_route(web_ui, metrics)
    return metrics


def uninstall(environment: Any, *, final_scrape: bool = True) -> None:
    """Stop the sampler and the server (after one last scrape, when something is scraping)."""
    installed = _INSTALLED.pop(environment, None)
    if installed is None:
        return
    if installed.sampler is not None:
        installed.sampler.kill(block=False)
        installed.metrics.sample_now()  # the last dropped sends and gauges
    if installed.server is not None:
        if final_scrape and installed.metrics.wait_for_final_scrape():
            log.debug("final metrics scrape served")
        installed.server.stop(timeout=1)


def _sample_forever(metrics: Metrics) -> None:
    while True:
        try:
            metrics.sample_now()
        except Exception:  # an observer: never let a sampling bug end the run
            log.exception("sampling run metrics failed")
        gevent.sleep(SAMPLE_INTERVAL)


def _serve(metrics: Metrics, host: str, port: int) -> Any:
    from gevent.pywsgi import WSGIServer

    server = WSGIServer((host, port), metrics.wsgi_app, log=None, error_log=None)
    try:
        server.start()
    except OSError as exc:
        log.warning("Prometheus /metrics not served: cannot listen on %s:%d (%s)", host, port, exc)
        return None
    log.info("Prometheus metrics at http://%s:%d/metrics", host, server.server_port)
    return server


def _add_web_route(web_ui: Any, metrics: Metrics) -> None:
    from flask import Response

    def metrics_view() -> Any:
        return Response(metrics.exposition(), mimetype=None, content_type=CONTENT_TYPE_LATEST)

    view = web_ui.auth_required_if_enabled(metrics_view)  # --web-login protects it like Locust's own pages
    try:
        web_ui.app.add_url_rule("/metrics", "dynlocust_metrics", view)
    except (AssertionError, ValueError) as exc:  # Flask refuses routes once it has served a request
        log.warning("Prometheus /metrics not added to the web UI: %s", exc)


@events.init.add_listener
def _on_init(environment: Any, **_kwargs: Any) -> None:
    install(environment)


@events.quitting.add_listener
def _on_quitting(environment: Any, **_kwargs: Any) -> None:
    uninstall(environment)
