"""Prometheus metrics of one process: the API that counts, samples, merges and serves (`Metrics`).

`prometheus_client`'s model, split the same way: the values are `dynlocust.observe.metric_values`' (plain data,
merged across a fleet as deltas), their families and the collector `dynlocust.observe.metric_families`'; this
module is what the rest of dynlocust calls.

Requests are counted from the `RequestRecord` each request event carries in its context (`dynlocust.request.client`
builds it), so the runner needs no calls of its own; run-level gauges (target and offered rate, dropped sends,
in-flight requests, client-bound) are sampled once a second from the process's `LocalRun`'s `Progress` (`sample_run`).
Label values are bounded: API operation names, the scenario's *logical* table names
(the physical names carry the run id), outcome kinds, and codes and reasons that match a closed pattern
(`metric_values.LabelBounds`). `dynlocust.plugin.metrics_wiring` attaches all this to Locust.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gevent
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.observe.metric_families import CLIENT_EVIDENCE, Collector, families, le_label
from dynlocust.observe.metric_values import (
    ALWAYS_PRESENT,
    COUNTERS,
    DURATION_BUCKETS,
    HISTOGRAM_LABELS,
    HISTOGRAMS,
    MAX_TABLES,
    OFFERED_RATE_SPAN,
    OTHER,
    LabelBounds,
    Labels,
    MetricValues,
    WorkerGauges,
    apply_deltas,
    observe,
    snapshot_deltas,
)
from dynlocust.request.client import REQUEST_TYPE
from dynlocust.request.outcomes import THROTTLED
from dynlocust.request.record import RequestRecord
from dynlocust.run.saturation import Saturation
from dynlocust.run.search import CeilingSearch

if TYPE_CHECKING:
    from dynlocust.run.local_run import LocalRun

log = logging.getLogger(__name__)

__all__ = [
    "ALWAYS_PRESENT",
    "CLIENT_EVIDENCE",
    "COUNTERS",
    "DURATION_BUCKETS",
    "FINAL_SCRAPE_WAIT_MAX",
    "HISTOGRAMS",
    "HISTOGRAM_LABELS",
    "MAX_TABLES",
    "OFFERED_RATE_SPAN",
    "OTHER",
    "REPORT_KEY",
    "SAMPLE_INTERVAL",
    "Labels",
    "MetricValues",
    "Metrics",
    "RunSample",
    "WorkerGauges",
    "apply_deltas",
    "le_label",
    "sample_run",
    "snapshot_deltas",
]

SAMPLE_INTERVAL = 1.0
FINAL_SCRAPE_WAIT_MAX = 15.0
REPORT_KEY = "dynlocust_metrics"
"""Key of the metrics deltas in a Locust worker report."""


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


class Metrics:
    """dynlocust's metrics of one process: counts requests (`on_request`), samples the run, exposes a registry.

    `registry` is where its collector is registered, a required argument: each environment (a test, a process
    with several) has its own, and a second one in prometheus_client's global registry would clash with the first
    (its collector describes the same names). `run_source` returns the process's `LocalRun` (or None): it is how
    physical table names are mapped back to the scenario's logical names and how run-level gauges are read.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
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
        labels = LabelBounds()
        self._table, self._index, self._token = labels.table, labels.index, labels.token
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
        registry.register(Collector(lambda: families(self.values, self.workers, self.search_source())))

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
        observe(self._histograms, hkey, record.latency)
        if record.latency_from_intended is not None:
            observe(self.values.intended, hkey, record.latency_from_intended)
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
