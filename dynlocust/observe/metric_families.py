"""The metrics' families: one process's values rendered as Prometheus metric families, and the collector.

What a scrape reads (`prometheus_client`'s model, where values, their families and the registry's API are apart):
`families` renders `dynlocust.observe.metric_values`' counters, histograms and per-worker gauges, and the ceiling
search's bracket; `Collector` is what a registry holds, and its `describe()` names every family without reading
the values, so a registry refuses a second collector exposing the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)

from dynlocust.observe.metric_values import (
    COUNTERS,
    DURATION_BUCKETS,
    HISTOGRAM_LABELS,
    OFFERED_RATE_SPAN,
    MetricValues,
    WorkerGauges,
)
from dynlocust.run.saturation import REASONS
from dynlocust.run.search import CeilingSearch

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


def families(
    values: MetricValues, workers: Mapping[str, WorkerGauges], search: CeilingSearch | None
) -> Iterator[Metric]:
    """Every family one process exposes, from its values, the gauges of each worker it knows and the ceiling search.

    With empty values, no worker and no search, they are what `Collector.describe` returns: every name, no value read.
    """
    for name, (doc, labels) in COUNTERS.items():
        family = CounterMetricFamily(name, doc, labels=list(labels))
        for key, value in sorted(values.counters[name].items()):
            family.add_metric(list(key), value)
        yield family
    bounds = [le_label(b) for b in DURATION_BUCKETS] + ["+Inf"]
    for name, doc, series in (
        ("dynlocust_request_duration_seconds", "Time from sending a DynamoDB request to its answer (or failure), "
         "by operation, table and outcome kind.", values.histograms),
        ("dynlocust_request_latency_from_intended_seconds", "Time from a request's intended send (the schedule's) "
         "to its answer: the latency the open model's user saw, send delays included.", values.intended),
    ):  # fmt: skip
        histogram = HistogramMetricFamily(name, doc, labels=list(HISTOGRAM_LABELS))
        for key, counts in sorted(series.items()):
            cumulative, running = [], 0.0
            for le, count in zip(bounds, counts, strict=False):
                running += count
                cumulative.append((le, running))
            histogram.add_metric(list(key), cumulative, counts[-1])
        yield histogram
    by_worker = dict(sorted(workers.items()))
    gauges = list(by_worker.values())
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
    for worker, g in by_worker.items():
        client_bound.add_metric([worker], g.client_bound)
    yield client_bound
    yield from _client_evidence(by_worker)
    yield GaugeMetricFamily("dynlocust_workers", "Processes generating load.", value=len(by_worker))
    yield from _bracket(search)
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


class Collector:
    """A registry's view of one process's metrics: `collect()` renders them at each scrape, `describe()` names them."""

    def __init__(self, collect: Callable[[], Iterable[Metric]]) -> None:
        self._collect = collect

    def collect(self) -> Iterable[Metric]:
        return self._collect()

    def describe(self) -> list[Metric]:
        return list(families(MetricValues(), {}, None))


def le_label(bound: float) -> str:
    """A histogram bucket's `le` label value, as prometheus_client writes it."""
    return repr(float(bound))
