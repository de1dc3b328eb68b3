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
    """Per-minute sums of each (metric, dimensions), with the number of samples (`SampleCount`)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.series: dict[tuple[str, Dimensions], dict[int, list[float]]] = {}

    def add(self, metric: str, dims: Dimensions, amount: float) -> None:
        minute = int(self._clock() // PERIOD) * PERIOD
        points = self.series.get((metric, dims))
        if points is None:
            points = self.series[(metric, dims)] = {}
        point = points.get(minute)
        if point is None:
            points[minute] = [amount, 1.0]
        else:
            point[0] += amount
            point[1] += 1.0

    def consumed(self, table: str, index: str | None, kind: str, units: float) -> None:
        """Units of `kind` ("read" | "write") accepted (negative: an accepted charge undone, not a new sample)."""
        metric = "ConsumedWriteCapacityUnits" if kind == "write" else "ConsumedReadCapacityUnits"
        if units < 0:
            point = self.series.get((metric, dimensions(table, index)), {}).get(int(self._clock() // PERIOD) * PERIOD)
            if point is not None:
                point[0] += units
                point[1] -= 1.0
            return
        self.add(metric, dimensions(table, index), units)

    def throttled(self, table: str, index: str | None, reason: str) -> None:
        """One refusal by a table or index, with DynamoDB's throttling reason."""
        dims = dimensions(table, index)
        self.add("WriteThrottleEvents" if "Write" in reason else "ReadThrottleEvents", dims, 1.0)
        by_reason = reason_metric(reason)
        if by_reason is not None:
            self.add(by_reason, dims, 1.0)

    def throttled_request(self, table: str, operation: str) -> None:
        self.add("ThrottledRequests", (("Operation", operation), ("TableName", table)), 1.0)


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
