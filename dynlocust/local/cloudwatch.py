"""CloudWatch's `AWS/DynamoDB` metrics of the endpoint's own tables: per-minute counters, and the GetMetricData and
ListMetrics answers that boto3's CloudWatch client reads them with.

Why: the CloudWatch witness (`dynlocust.observe.witness`) sets the service's per-minute figures beside the client's
counts. Against this endpoint the two are independent counters, the client's and the endpoint's, so the witness can
be tested here end to end.

What is counted, per wall-clock minute (CloudWatch's one-minute periods), by `MinuteCounters` (names and dimensions
from the Developer Guide's "DynamoDB metrics and dimensions", as in ../shared/reference/dynamodb-facts.md,
"Observability names"):
- `ConsumedReadCapacityUnits` / `ConsumedWriteCapacityUnits`: units the capacity model accepted (`TableName`, and
  `GlobalSecondaryIndexName` for a GSI's own);
- `ReadThrottleEvents` / `WriteThrottleEvents` and the per-reason `Read/Write<Limit>ThrottleEvents` (`KeyRange
  Throughput`, `ProvisionedThroughput`, `MaxOnDemandThroughput`, `AccountLimit`): one per refusal of the
  resource that refused;
- `ThrottledRequests` (`TableName`, `Operation`): one per throttled request.
Counters are kept by name, so a table's metrics outlive the table, as CloudWatch's do; they live as long as the
endpoint process. Only capacity emulation counts (with `--no-capacity` nothing is consumed or refused).

The protocol: botocore's `cloudwatch` service model lists `smithy-rpc-v2-cbor`, `json` and `query`, and botocore
takes the first it supports in its own order (`botocore.utils.PRIORITY_ORDERED_SUPPORTED_PROTOCOLS`: `json` first;
checked with botocore 1.44), so boto3 sends AWS JSON 1.0: `POST /` with `X-Amz-Target:
GraniteServiceVersion20100801.<Operation>`, timestamps as epoch seconds. `Stat` `Sum` and `SampleCount` are
answered (a counter's per-minute datum here is one sum, so `Average`, `Minimum` and `Maximum` of the service's
per-request samples cannot be); metric math is refused. Results come whole, newest first, without `NextToken`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from dynlocust.local.errors import ServiceError

TARGET_PREFIX = "GraniteServiceVersion20100801."
SERVICE = "monitoring"
"""CloudWatch's signing name (a SigV4 credential scope's service)."""
NAMESPACE = "AWS/DynamoDB"
PERIOD = 60
_ERROR_PREFIX = "com.amazonaws.cloudwatch#"
_REASON = re.compile(
    r"(?:Table|Index)(Read|Write)(KeyRangeThroughput|ProvisionedThroughput|MaxOnDemandThroughput|AccountLimit)Exceeded"
)

Dimensions = tuple[tuple[str, str], ...]
"""(name, value) pairs, sorted by name: a metric's identity beside its name."""


def dimensions(table: str, index: str | None = None) -> Dimensions:
    return (("GlobalSecondaryIndexName", index), ("TableName", table)) if index else (("TableName", table),)


def reason_metric(reason: str) -> str | None:
    """`TableWriteKeyRangeThroughputExceeded` -> `WriteKeyRangeThroughputThrottleEvents` (None: no such metric)."""
    match = _REASON.fullmatch(reason)
    return f"{match[1]}{match[2]}ThrottleEvents" if match else None


class MinuteCounters:
    """Per-minute sums of each (metric, dimensions), with the number of samples (`SampleCount`).

    On the endpoint's hot path (every capacity charge): the minute is recomputed once a minute and each series'
    points found through one dict lookup by (metric, table, index), which keeps a charge's cost within ~1 us."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.series: dict[tuple[str, Dimensions], dict[int, list[float]]] = {}
        self._points: dict[tuple[str, str, str | None], dict[int, list[float]]] = {}
        self._minute = 0
        self._next = 0.0
        self._reasons: dict[str, tuple[str, ...]] = {}

    def _at(self, metric: str, table: str, index: str | None, dims: Dimensions | None = None) -> list[float] | None:
        """This minute's [sum, samples] of a series, created on first use (None: `dims` needed to create it)."""
        now = self._clock()
        if now >= self._next:
            self._minute = int(now // PERIOD) * PERIOD
            self._next = self._minute + PERIOD
        key = (metric, table, index)
        points = self._points.get(key)
        if points is None:
            points = self._points[key] = self.series.setdefault(
                (metric, dims if dims is not None else dimensions(table, index)), {}
            )
        point = points.get(self._minute)
        if point is None:
            point = points[self._minute] = [0.0, 0.0]
        return point

    def add(self, metric: str, table: str, index: str | None, amount: float, dims: Dimensions | None = None) -> None:
        point = self._at(metric, table, index, dims)
        assert point is not None
        point[0] += amount
        point[1] += 1.0

    def consumed(self, table: str, index: str | None, kind: str, units: float) -> None:
        """Units of `kind` ("read" | "write") accepted (negative: an accepted charge undone, not a new sample)."""
        metric = "ConsumedWriteCapacityUnits" if kind == "write" else "ConsumedReadCapacityUnits"
        point = self._at(metric, table, index)
        assert point is not None
        point[0] += units
        point[1] += 1.0 if units >= 0 else -1.0

    def throttled(self, table: str, index: str | None, reason: str) -> None:
        """One refusal by a table or index, with DynamoDB's throttling reason."""
        metrics = self._reasons.get(reason)
        if metrics is None:
            kind = "WriteThrottleEvents" if "Write" in reason else "ReadThrottleEvents"
            by_reason = reason_metric(reason)
            metrics = self._reasons[reason] = (kind,) if by_reason is None else (kind, by_reason)
        for metric in metrics:
            self.add(metric, table, index, 1.0)

    def throttled_request(self, table: str, operation: str) -> None:
        dims = (("Operation", operation), ("TableName", table))
        self.add("ThrottledRequests", table, f"operation:{operation}", 1.0, dims)


def _error(code: str, message: str) -> ServiceError:
    return ServiceError(code, message, prefix=_ERROR_PREFIX)


def _dims(raw: Any, where: str) -> Dimensions:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(d, dict) and isinstance(d.get("Name"), str) for d in raw):
        raise _error("InvalidParameterValue", f"{where}: a list of {{Name, Value}} expected")
    return tuple(sorted((str(d["Name"]), str(d.get("Value", ""))) for d in raw))


def _time(raw: Any, name: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise _error("InvalidParameterValue", f"{name}: epoch seconds expected")
    return float(raw)


def get_metric_data(counters: MinuteCounters, request: Mapping[str, Any]) -> dict[str, Any]:
    start, end = _time(request.get("StartTime"), "StartTime"), _time(request.get("EndTime"), "EndTime")
    if start >= end:
        raise _error("InvalidParameterValue", "The parameter StartTime must be less than the parameter EndTime.")
    queries = request.get("MetricDataQueries")
    if not isinstance(queries, list) or not queries:
        raise _error("MissingParameter", "The parameter MetricDataQueries is required.")
    start = start // PERIOD * PERIOD  # the service rounds a recent StartTime down to the whole minute
    newest_first = request.get("ScanBy", "TimestampDescending") != "TimestampAscending"
    results = []
    for query in queries:
        if not isinstance(query, dict) or not isinstance(query.get("Id"), str):
            raise _error("InvalidParameterValue", "MetricDataQueries: each query needs an Id")
        stat = query.get("MetricStat")
        if not isinstance(stat, dict):
            raise _error("InvalidParameterValue", f"{query['Id']}: only MetricStat queries are answered here")
        metric = stat.get("Metric") or {}
        period = stat.get("Period")
        if not isinstance(period, int) or period <= 0 or period % PERIOD:
            raise _error("InvalidParameterValue", f"{query['Id']}: Period must be a multiple of {PERIOD}")
        which = stat.get("Stat")
        if which not in ("Sum", "SampleCount"):
            raise _error(
                "InvalidParameterValue", f"{query['Id']}: Stat {which!r}: this endpoint answers Sum and SampleCount"
            )
        series: dict[int, list[float]] = {}
        if metric.get("Namespace") == NAMESPACE:
            series = counters.series.get(
                (str(metric.get("MetricName")), _dims(metric.get("Dimensions"), query["Id"])), {}
            )
        buckets: dict[int, float] = {}
        for minute, (total, samples) in list(series.items()):
            if start <= minute < end and samples > 0:
                at = int(start + (minute - start) // period * period)
                buckets[at] = buckets.get(at, 0.0) + (total if which == "Sum" else samples)
        stamps = sorted(buckets, reverse=newest_first)
        results.append(
            {
                "Id": query["Id"],
                "Label": query.get("Label") or str(metric.get("MetricName", "")),
                "Timestamps": stamps,
                "Values": [buckets[t] for t in stamps],
                "StatusCode": "Complete",
            }
        )
    return {"MetricDataResults": results, "Messages": []}


def list_metrics(counters: MinuteCounters, request: Mapping[str, Any]) -> dict[str, Any]:
    namespace, name = request.get("Namespace"), request.get("MetricName")
    wanted = _dims(request.get("Dimensions"), "Dimensions")
    metrics = []
    for metric, dims in sorted(counters.series):
        if (namespace not in (None, NAMESPACE)) or (name is not None and name != metric):
            continue
        have = dict(dims)
        if all(key in have and (not value or have[key] == value) for key, value in wanted):
            metrics.append(
                {"Namespace": NAMESPACE, "MetricName": metric, "Dimensions": [{"Name": k, "Value": v} for k, v in dims]}
            )
    return {"Metrics": metrics}


OPERATIONS: dict[str, Callable[[MinuteCounters, Mapping[str, Any]], dict[str, Any]]] = {
    "GetMetricData": get_metric_data,
    "ListMetrics": list_metrics,
}


def answer(counters: MinuteCounters, operation: str, body: bytes | bytearray) -> tuple[int, dict[str, Any]]:
    """One CloudWatch request: (HTTP status, JSON body), the service's error body on a bad one."""
    import orjson

    try:
        handler = OPERATIONS.get(operation)
        if handler is None:
            raise _error("InvalidAction", f"{operation or 'the operation'} is not answered by this endpoint")
        try:
            request = orjson.loads(body) if body else {}
        except orjson.JSONDecodeError as exc:
            raise _error("SerializationException", "the body is not JSON") from exc
        if not isinstance(request, dict):
            raise _error("SerializationException", "the body is not a JSON object")
        return 200, handler(counters, request)
    except ServiceError as exc:
        return exc.status, exc.body()
