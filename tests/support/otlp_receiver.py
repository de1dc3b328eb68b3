"""An OTLP/HTTP receiver for tests: decodes what exporters send with opentelemetry-proto, as a collector would.

It answers `POST /v1/traces` and `POST /v1/metrics` (protobuf bodies, gzip or not) on 127.0.0.1, keeps every span
and every metric data point with its resource's attributes, and answers the empty `Export*ServiceResponse` the
exporters expect. `/v1/logs` is accepted and ignored. Metrics are cumulative (the SDK's default), so a series'
last point is its total.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    return None if kind is None else getattr(value, kind)


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {kv.key: value_of(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


@dataclass(frozen=True)
class Span:
    name: str
    kind: int
    scope: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int
    status_code: int


@dataclass(frozen=True)
class Point:
    """One data point of one export: a sum's or gauge's `value`, or a histogram's count, sum and bucket counts."""

    metric: str
    scope: str
    kind: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    time_ns: int
    value: float = 0.0
    count: int = 0
    sum: float = 0.0
    bucket_counts: tuple[int, ...] = ()
    bounds: tuple[float, ...] = ()


@dataclass
class Received:
    spans: list[Span] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    posts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def latest(self, metric: str) -> dict[tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]], Point]:
        """Each series' last point (cumulative: its total), keyed by (resource, attributes) as sorted tuples."""
        out: dict[Any, Point] = {}
        with self.lock:
            points = [p for p in self.points if p.metric == metric]
        for point in sorted(points, key=lambda p: p.time_ns):
            out[(_key(point.resource), _key(point.attributes))] = point
        return out


def _key(attributes: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attributes.items()))


def _decode_traces(body: bytes, into: Received) -> bytes:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for rs in request.resource_spans:
        resource = attributes_of(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(
                    Span(
                        s.name, s.kind, ss.scope.name, attributes_of(s.attributes), resource,
                        s.start_time_unix_nano, s.end_time_unix_nano, s.status.code,
                    )
                )  # fmt: skip
    with into.lock:
        into.spans.extend(spans)
    return ExportTraceServiceResponse().SerializeToString()


def _decode_metrics(body: bytes, into: Received) -> bytes:
    request = ExportMetricsServiceRequest()
    request.ParseFromString(body)
    points = []
    for rm in request.resource_metrics:
        resource = attributes_of(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for dp in data.data_points:
                    common = dict(
                        metric=m.name, scope=sm.scope.name, kind=kind, attributes=attributes_of(dp.attributes),
                        resource=resource, time_ns=dp.time_unix_nano,
                    )  # fmt: skip
                    if kind == "histogram":
                        points.append(
                            Point(
                                **common, count=dp.count, sum=dp.sum, bucket_counts=tuple(dp.bucket_counts),
                                bounds=tuple(dp.explicit_bounds),
                            )
                        )  # fmt: skip
                    elif kind in ("sum", "gauge"):
                        value = dp.as_double if dp.WhichOneof("value") == "as_double" else dp.as_int
                        points.append(Point(**common, value=float(value)))
    with into.lock:
        into.points.extend(points)
    return ExportMetricsServiceResponse().SerializeToString()


class _Handler(BaseHTTPRequestHandler):
    received: Received

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        with self.received.lock:
            self.received.posts[self.path] = self.received.posts.get(self.path, 0) + 1
        if self.path == "/v1/traces":
            answer = _decode_traces(body, self.received)
        elif self.path == "/v1/metrics":
            answer = _decode_metrics(body, self.received)
        elif self.path == "/v1/logs":
            answer = b""
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """A receiver on a free port of 127.0.0.1: yields its base URL (OTEL_EXPORTER_OTLP_ENDPOINT) and what it got."""
    received = Received()
    handler = type("Handler", (_Handler,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
