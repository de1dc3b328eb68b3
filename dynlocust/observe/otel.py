"""OpenTelemetry: DynamoDB's meaning on the spans and metrics of Locust's own `--otel`.

Locust's `--otel` sets the global tracer and meter providers (and their OTLP exporters, configured by the standard
`OTEL_*` variables); this module adds to them, never a pipeline of its own:
- `RequestSpans`: one CLIENT span per DynamoDB request, from the request's `RequestRecord`, with OpenTelemetry's
  semantic-convention attributes (v1.44: `db.*`, `aws.dynamodb.*`, `error.type`) and dynlocust's (`dynlocust.*`);
- `RunInstruments`: the Prometheus families of `dynlocust.observe.metrics` as OpenTelemetry instruments, read from
  the same `MetricValues` (so on a fleet's master they are the workers' merged deltas, and a worker exports none),
  plus each closed window's verdict.

Counters are observable: each collection reads the cumulative values. The two latency histograms are recorded: a
process that sends records each request's own seconds; a master records each worker report's per-bucket deltas
(`record_deltas`), a value inside its bucket for each count, chosen so that the sum matches too. Bucket bounds are
the Prometheus buckets (`DURATION_BUCKETS`), so counts per bucket equal the Prometheus histogram's.

The attribute names, standard and dynlocust's, are listed in docs/metrics.md; `ATTRIBUTES` maps each Prometheus
label to its attribute.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dynlocust.observe.metrics import COUNTERS, DURATION_BUCKETS, HISTOGRAM_LABELS, HISTOGRAMS, Labels, Metrics
from dynlocust.request.outcomes import OK
from dynlocust.request.record import RequestRecord

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Histogram, Meter, Observation
    from opentelemetry.trace import Tracer

INSTRUMENTATION = "dynlocust"
"""The instrumentation scope of dynlocust's spans and instruments."""
DB_SYSTEM = "aws.dynamodb"

ATTRIBUTES: dict[str, str] = {
    "operation": "db.operation.name",
    "table": "dynlocust.table",
    "index": "aws.dynamodb.index_name",
    "outcome": "dynlocust.outcome",
    "code": "error.type",
    "reason": "dynlocust.throttle.reason",
    "http_status": "http.response.status_code",
    "kind": "dynlocust.capacity.kind",
}
"""Prometheus label -> OpenTelemetry attribute, for the metrics and the spans alike (an empty value is left out)."""

UNITS: dict[str, str] = {
    "dynlocust_requests": "{request}",
    "dynlocust_throttled_requests": "{request}",
    "dynlocust_unprocessed_items": "{item}",
    "dynlocust_consumed_capacity_units": "{capacity_unit}",
    "dynlocust_estimated_cost_dollars": "USD",
    "dynlocust_dropped_sends": "{send}",
}
HISTOGRAM_NAMES = {
    "histograms": ("dynlocust.request.duration", "Time from sending a DynamoDB request to its answer."),
    "intended": (
        "dynlocust.request.latency_from_intended",
        "Time from a request's intended send (the schedule's) to its answer, send delays included.",
    ),
}
"""`MetricValues`' histogram field -> the OpenTelemetry histogram's name and description."""


def metric_name(prometheus: str) -> str:
    """`dynlocust_throttled_requests` -> `dynlocust.throttled_requests` (OpenTelemetry's dotted namespace)."""
    return prometheus.replace("dynlocust_", "dynlocust.", 1)


def attributes(labels: Iterable[str], values: Iterable[str]) -> dict[str, str | int]:
    """Prometheus label values as attributes; empty ones are left out, an HTTP status is an int as the convention
    says."""
    out: dict[str, str | int] = {}
    for label, value in zip(labels, values, strict=True):
        if value:
            out[ATTRIBUTES[label]] = int(value) if label == "http_status" and value.isdigit() else value
    return out


# -- spans ----------------------------------------------------------------------------------------------------------


def span_attributes(record: RequestRecord, *, run_id: str | None) -> dict[str, Any]:
    """What one request's span carries (see docs/metrics.md)."""
    outcome = record.outcome
    out: dict[str, Any] = {
        "db.system.name": DB_SYSTEM,
        "db.operation.name": record.operation,
        "aws.dynamodb.table_names": [record.physical_table],
        "dynlocust.table": record.table,
        "dynlocust.outcome": outcome.kind,
    }
    if record.index:
        out["aws.dynamodb.index_name"] = record.index
    if record.consumed:
        out["aws.dynamodb.consumed_capacity"] = consumed_capacity_json(record)
    if outcome.kind != OK:
        out["error.type"] = outcome.code or outcome.kind
    if outcome.http_status is not None:
        out["http.response.status_code"] = outcome.http_status
    if outcome.reasons:
        out["dynlocust.throttle.reason"] = outcome.reasons[0].reason
    if outcome.throttled_index:
        out["dynlocust.throttle.index"] = outcome.throttled_index
    if outcome.unprocessed:
        out["dynlocust.unprocessed_items"] = outcome.unprocessed
    if record.latency_from_intended is not None:
        out["dynlocust.send.delay"] = max(0.0, record.latency_from_intended - record.latency)
    if record.ticket is not None:
        out["dynlocust.window"] = record.ticket.window
    if record.label:
        out["dynlocust.operation.label"] = record.label
    if run_id:
        out["dynlocust.run.id"] = run_id
    return out


def consumed_capacity_json(record: RequestRecord) -> list[str]:
    """`aws.dynamodb.consumed_capacity`: one JSON `ConsumedCapacity` per table (its indexes' units included), as
    the convention asks; the table is the scenario's name, as on the metrics."""
    tables: dict[str, list[float]] = {}
    for consumed in record.consumed:
        units = tables.setdefault(consumed.table, [0.0, 0.0])
        units[0] += consumed.read_units
        units[1] += consumed.write_units
    return [
        json.dumps(
            {"TableName": table, "CapacityUnits": read + write, "ReadCapacityUnits": read, "WriteCapacityUnits": write},
            separators=(",", ":"),
        )
        for table, (read, write) in tables.items()
    ]


class RequestSpans:
    """A `request` event listener: one span per DynamoDB request, ended when the event fires (the call's end)."""

    def __init__(self, tracer: Tracer, run_id: Callable[[], str | None]) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self.tracer = tracer
        self.run_id = run_id
        self._client, self._status, self._error = SpanKind.CLIENT, Status, StatusCode.ERROR

    def on_record(self, record: RequestRecord) -> None:
        end = time.time_ns()
        span = self.tracer.start_span(
            record.name,
            kind=self._client,
            start_time=end - int(record.latency * 1e9),
            attributes=span_attributes(record, run_id=self.run_id()),
        )
        if not record.outcome.ok:
            span.set_status(self._status(self._error, record.outcome.label))
        span.end(end_time=end)


# -- metrics --------------------------------------------------------------------------------------------------------


def bucket_values(counts: Sequence[float], total: float) -> Iterator[tuple[float, int]]:
    """(value, count) per non-empty bucket: each value inside its bucket, `sum(value * count) == total`.

    `counts` are per-bucket counts over `DURATION_BUCKETS` and `+Inf`. The true values lie in their buckets and sum
    to `total`, so one fraction `t` of each bucket's width (the last one's taken as its lower bound's) does too.
    """
    bounds = [0.0, *DURATION_BUCKETS]
    spans = [(bounds[i], DURATION_BUCKETS[i] if i < len(DURATION_BUCKETS) else bounds[i]) for i in range(len(bounds))]
    used = [(i, int(n)) for i, n in enumerate(counts) if n]
    low = sum(spans[i][0] * n for i, n in used)
    high = sum(spans[i][1] * n for i, n in used)
    t = 1.0 if high <= low else min(1.0, max(1e-9, (total - low) / (high - low)))  # 0 is the bucket below
    for i, n in used:
        lo, hi = spans[i]
        yield (lo + t * (hi - lo) if i < len(DURATION_BUCKETS) else max(lo, lo + (total - high) / n)), n


class RunInstruments:
    """dynlocust's Prometheus families as OpenTelemetry instruments on `meter`, read from `metrics`' values."""

    def __init__(self, meter: Meter, metrics: Metrics, windows: Callable[[], Iterable[tuple[int, str, str, str]]]):
        """`windows` lists the closed windows as (index, phase, verdict, run id)."""
        self.metrics = metrics
        self.windows = windows
        for name, (doc, labels) in COUNTERS.items():
            meter.create_observable_counter(
                metric_name(name), callbacks=[self._counter(name, labels)], unit=UNITS[name], description=doc
            )
        self.histograms: dict[str, Histogram] = {
            key: meter.create_histogram(
                name, unit="s", description=doc, explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS)
            )
            for key, (name, doc) in HISTOGRAM_NAMES.items()
        }
        meter.create_observable_gauge(
            "dynlocust.window.verdict",
            callbacks=[self._verdicts],
            unit="1",
            description="1 for each closed window, with its verdict (what limited it) and phase as attributes.",
        )

    def _counter(self, name: str, labels: Sequence[str]) -> Callable[[CallbackOptions], Iterator[Observation]]:
        from opentelemetry.metrics import Observation

        def observe(_options: CallbackOptions) -> Iterator[Observation]:
            for key, value in list(self.metrics.values.counters[name].items()):
                yield Observation(value, attributes(labels, key))

        return observe

    def _verdicts(self, _options: CallbackOptions) -> Iterator[Observation]:
        from opentelemetry.metrics import Observation

        for index, phase, verdict, run_id in self.windows():
            attrs: dict[str, str | int] = {
                "dynlocust.window": index,
                "dynlocust.phase": phase,
                "dynlocust.verdict": verdict,
            }
            if run_id:
                attrs["dynlocust.run.id"] = run_id
            yield Observation(1, attrs)

    def record(self, record: RequestRecord) -> None:
        """A sending process's: this request's latencies, with the labels the Prometheus histograms give it."""
        key = (record.operation, self.metrics.table_label(record.table), record.outcome.kind)
        attrs = attributes(HISTOGRAM_LABELS, key)
        self.histograms["histograms"].record(record.latency, attrs)
        if record.latency_from_intended is not None:
            self.histograms["intended"].record(record.latency_from_intended, attrs)

    def record_deltas(self, payload: Mapping[str, Any]) -> None:
        """A master's: one worker report's histogram deltas (`dynlocust.observe.metrics.snapshot_deltas`)."""
        for key in HISTOGRAMS:
            histogram = self.histograms[key]
            for labels, values in payload.get(key, ()):
                label_values: Labels = tuple(str(v) for v in labels)
                if len(label_values) != len(HISTOGRAM_LABELS) or len(values) != len(DURATION_BUCKETS) + 2:
                    continue
                attrs = attributes(HISTOGRAM_LABELS, label_values)
                for value, count in bucket_values(values[:-1], float(values[-1])):
                    for _ in range(count):
                        histogram.record(value, attrs)
