"""observe.otel: the spans' attributes, and instruments that equal the Prometheus values, merged on a master.

Real OpenTelemetry SDK providers with in-memory readers and exporters (the wire format is the integration tests').
None outlives its test: a provider alive in this process runs its after-fork hook in every child the suite forks
later, and that hook's threads let gevent run this process's greenlets in the copy (on CI, a run started twice).
"""

from __future__ import annotations

import gc
import json
import random
import weakref
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
from botocore.exceptions import ClientError
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import CollectorRegistry

from dynlocust.observe import otel
from dynlocust.observe.metrics import DURATION_BUCKETS, Metrics
from dynlocust.request.outcomes import Outcome, classify
from dynlocust.request.record import Consumed, RequestRecord
from dynlocust.run.pacing import Ticket

PHYSICAL = "items-20260101T000000-abcd"
MADE: list[weakref.ref[Any]] = []
"""Every provider a test made (`shutdown_on_exit=False`: the SDK's exit hook would hold each one for good)."""


@pytest.fixture(autouse=True)
def no_provider_outlives_its_test() -> Iterator[None]:
    yield
    gc.collect()
    assert [ref() for ref in MADE if ref() is not None] == []


def throttle(reason: str = "TableWriteKeyRangeThroughputExceeded", resource: str = "table/items") -> Outcome:
    error = {
        "Error": {"Code": "ThrottlingException", "Message": "slow down"},
        "ResponseMetadata": {"HTTPStatusCode": 400},
        "throttlingReasons": [{"reason": reason, "resource": f"arn:aws:dynamodb:us-east-1:1:{resource}"}],
    }
    return classify(exception=ClientError(error, "PutItem"))


def record(
    outcome: Outcome, latency: float, *, delay: float = 0.001, index: str | None = None, window: int = 1
) -> RequestRecord:
    consumed = (Consumed("items", "", 0.0, 1.0), Consumed("items", "by-owner", 0.0, 1.0)) if outcome.ok else ()
    return RequestRecord(
        operation="PutItem", table="items", physical_table=PHYSICAL, index=index, write=True, outcome=outcome,
        latency=latency, latency_from_intended=latency + delay, consumed=consumed,
        ticket=Ticket(seq=7, window=window, intended=1e9), label="put",
    )  # fmt: skip


def spans_of(*records: RequestRecord) -> list[Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    MADE.append(weakref.ref(provider))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spans = otel.RequestSpans(provider.get_tracer(otel.INSTRUMENTATION), lambda: "run-1")
    for r in records:
        spans.on_record(r)
    return list(exporter.get_finished_spans())


def test_a_throttled_request_span_carries_the_conventions_and_dynlocusts_attributes() -> None:
    (span,) = spans_of(record(throttle(resource="table/items/index/by-owner"), 0.004, delay=0.25, window=3))
    assert span.name == "PutItem items" and span.kind == SpanKind.CLIENT
    assert span.status.status_code == StatusCode.ERROR
    assert span.end_time - span.start_time == pytest.approx(4_000_000, abs=2)
    assert dict(span.attributes) == {
        "db.system.name": "aws.dynamodb",
        "db.operation.name": "PutItem",
        "aws.dynamodb.table_names": (PHYSICAL,),
        "dynlocust.table": "items",
        "dynlocust.outcome": "throttled",
        "error.type": "ThrottlingException",
        "http.response.status_code": 400,
        "dynlocust.throttle.reason": "TableWriteKeyRangeThroughputExceeded",
        "dynlocust.throttle.index": "by-owner",
        "dynlocust.send.delay": pytest.approx(0.25),
        "dynlocust.window": 3,
        "dynlocust.operation.label": "put",
        "dynlocust.run.id": "run-1",
    }


def test_an_accepted_request_span_carries_its_consumed_capacity_and_index() -> None:
    (span,) = spans_of(record(classify({}), 0.002, index="by-owner"))
    attrs = dict(span.attributes)
    assert span.status.status_code == StatusCode.UNSET
    assert "error.type" not in attrs and "dynlocust.throttle.reason" not in attrs
    assert attrs["aws.dynamodb.index_name"] == "by-owner"
    (consumed,) = attrs["aws.dynamodb.consumed_capacity"]
    assert json.loads(consumed) == {
        "TableName": "items", "CapacityUnits": 2.0, "ReadCapacityUnits": 0.0, "WriteCapacityUnits": 2.0,
    }  # fmt: skip


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    out: dict[str, list[Any]] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


def instrumented(metrics: Metrics, windows: list[tuple[int, str, str, str]] | None = None) -> Any:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    MADE.append(weakref.ref(provider))
    meter = provider.get_meter(otel.INSTRUMENTATION)
    return otel.RunInstruments(meter, metrics, lambda: windows or []), reader


def latencies(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)  # across every bucket, +Inf included, and on bucket bounds
    return [rng.choice([rng.lognormvariate(-5, 1.5), rng.choice(DURATION_BUCKETS), 12.5]) for _ in range(n)]


def test_a_master_exports_what_one_process_would_from_its_workers_deltas() -> None:
    """Counters exactly; histograms with the same count, bucket counts and (to float rounding) sum."""
    alone, alone_reader = instrumented(single := Metrics(CollectorRegistry()))
    master_values = Metrics(CollectorRegistry())
    master, master_reader = instrumented(master_values)
    workers = [Metrics(CollectorRegistry(), worker=str(i)) for i in range(2)]
    for round_ in range(3):
        for i, seconds in enumerate(latencies(400, round_)):
            outcome = throttle("TableWriteProvisionedThroughputExceeded") if i % 3 == 0 else classify({})
            r = record(outcome, seconds, delay=seconds / 2)
            single.count(r)
            alone.record(r)
            workers[i % 2].count(r)
        for w in workers:
            payload = msgpack.unpackb(msgpack.packb(w.take_deltas()), raw=False)  # as Locust ships it
            master_values.merge_report(payload)
            master.record_deltas(payload)
    mine, theirs = points(alone_reader), points(master_reader)
    for name in ("dynlocust.requests", "dynlocust.throttled_requests", "dynlocust.consumed_capacity_units"):
        assert {frozenset(p.attributes.items()): p.value for p in theirs[name]} == {
            frozenset(p.attributes.items()): p.value for p in mine[name]
        }, name
    throttles = {p.attributes["dynlocust.throttle.reason"]: p.value for p in theirs["dynlocust.throttled_requests"]}
    assert throttles == {"TableWriteProvisionedThroughputExceeded": 3 * 134}  # i % 3 == 0 of 400, three rounds
    for name in ("dynlocust.request.duration", "dynlocust.request.latency_from_intended"):
        a = {frozenset(p.attributes.items()): p for p in mine[name]}
        b = {frozenset(p.attributes.items()): p for p in theirs[name]}
        assert a.keys() == b.keys() and len(a) == 2, name
        for key, p in a.items():
            q = b[key]
            assert isinstance(p, HistogramDataPoint) and isinstance(q, HistogramDataPoint)
            assert list(q.explicit_bounds) == list(DURATION_BUCKETS)
            assert (q.count, list(q.bucket_counts)) == (p.count, list(p.bucket_counts)), name
            assert q.sum == pytest.approx(p.sum, rel=1e-9), name


def test_each_closed_window_is_exported_with_its_verdict() -> None:
    windows = [(0, "ramp", "ok", "run-1"), (1, "ramp", "throttled", "run-1")]
    _instruments, reader = instrumented(Metrics(CollectorRegistry()), windows)
    verdicts = points(reader)["dynlocust.window.verdict"]
    assert all(isinstance(p, NumberDataPoint) and p.value == 1 for p in verdicts)
    assert sorted((p.attributes["dynlocust.window"], p.attributes["dynlocust.verdict"]) for p in verdicts) == [
        (0, "ok"),
        (1, "throttled"),
    ]


@pytest.mark.parametrize("seed", range(20))
def test_bucket_values_keep_each_count_in_its_bucket_and_the_sum(seed: int) -> None:
    values = latencies(random.Random(seed).randint(1, 50), seed)
    counts = [0.0] * (len(DURATION_BUCKETS) + 1)
    import bisect

    for v in values:
        counts[bisect.bisect_left(DURATION_BUCKETS, v)] += 1
    chosen = list(otel.bucket_values(counts, sum(values)))
    assert sum(v * n for v, n in chosen) == pytest.approx(sum(values), rel=1e-9)
    again = [0] * len(counts)
    for v, n in chosen:
        again[bisect.bisect_left(DURATION_BUCKETS, v)] += n
    assert again == counts
