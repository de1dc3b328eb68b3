"""The endpoint's CloudWatch: boto3's own CloudWatch client reads per-minute AWS/DynamoDB metrics that equal what
the DynamoDB client counted (accepted units from ConsumedCapacity, throttles by reason), and they outlive the table."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from dynlocust.local import cloudwatch
from dynlocust.local.capacity import CapacityModel
from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from dynlocust.request.outcomes import classify
from tests.unit.local.conftest import CONFIG, CREDS, create_table


@pytest.fixture
def throttling_endpoint() -> Iterator[ThreadedEndpoint]:
    ep = serve_in_thread(capacity=CapacityModel(capacity_scale=0.005))  # a new table takes ~20 writes/s
    try:
        yield ep
    finally:
        ep.stop()


def metric(table: str, name: str, index: str | None = None) -> dict[str, Any]:
    dims = [{"Name": "TableName", "Value": table}]
    if index:
        dims.append({"Name": "GlobalSecondaryIndexName", "Value": index})
    return {"Namespace": "AWS/DynamoDB", "MetricName": name, "Dimensions": dims}


def read(cw: Any, queries: dict[str, dict[str, Any]], start: float, end: float, stat: str = "Sum") -> dict[str, float]:
    answer = cw.get_metric_data(
        MetricDataQueries=[
            {"Id": key, "MetricStat": {"Metric": m, "Period": 60, "Stat": stat}} for key, m in queries.items()
        ],
        StartTime=datetime.fromtimestamp(start, UTC),
        EndTime=datetime.fromtimestamp(end, UTC),
    )
    return {r["Id"]: sum(r["Values"]) for r in answer["MetricDataResults"]}


def test_cloudwatch_reads_what_the_client_counted_and_outlives_the_table(throttling_endpoint: ThreadedEndpoint) -> None:
    ddb = boto3.client("dynamodb", endpoint_url=throttling_endpoint.url, config=CONFIG, **CREDS)
    cw = boto3.client("cloudwatch", endpoint_url=throttling_endpoint.url, config=CONFIG, **CREDS)
    create_table(ddb, name="cwt", range_type=None)
    started = time.time()
    units, reasons, throttled_puts = 0.0, Counter[str](), 0
    for i in range(200):
        try:
            answer = ddb.put_item(
                TableName="cwt", Item={"pk": {"S": f"k{i % 3}"}, "v": {"S": "x" * 1500}}, ReturnConsumedCapacity="TOTAL"
            )
            units += answer["ConsumedCapacity"]["CapacityUnits"]
        except ClientError as exc:
            reasons.update(r.reason for r in classify(exception=exc).reasons)  # as the client reads them
            throttled_puts += 1
    read_units, read_throttles = 0.0, 0
    for i in range(30):
        try:
            got = ddb.get_item(TableName="cwt", Key={"pk": {"S": f"k{i % 3}"}}, ReturnConsumedCapacity="TOTAL")
            read_units += got["ConsumedCapacity"]["CapacityUnits"]
        except ClientError:
            read_throttles += 1
    assert throttled_puts and units, "nothing to compare: the table neither accepted nor throttled"
    ddb.delete_table(TableName="cwt")

    start, end = started - 120, time.time() + 60
    figures = read(
        cw,
        {
            "w": metric("cwt", "ConsumedWriteCapacityUnits"),
            "r": metric("cwt", "ConsumedReadCapacityUnits"),
            "t": metric("cwt", "WriteThrottleEvents"),
            "rt": metric("cwt", "ReadThrottleEvents"),
            "k": metric("cwt", "WriteKeyRangeThroughputThrottleEvents"),
            "p": metric("cwt", "WriteProvisionedThroughputThrottleEvents"),
            "none": metric("another", "ConsumedWriteCapacityUnits"),
        },
        start,
        end,
    )
    assert figures["w"] == units
    assert figures["r"] == read_units and figures["rt"] == read_throttles
    assert figures["t"] == throttled_puts == sum(reasons.values())
    assert figures["k"] == reasons["TableWriteKeyRangeThroughputExceeded"]
    assert figures["p"] == 0 and figures["none"] == 0
    assert read(cw, {"n": metric("cwt", "ConsumedReadCapacityUnits")}, start, end, "SampleCount") == {
        "n": 30 - read_throttles
    }

    throttled = cw.get_metric_data(
        MetricDataQueries=[
            {
                "Id": "q",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/DynamoDB",
                        "MetricName": "ThrottledRequests",
                        "Dimensions": [
                            {"Name": "TableName", "Value": "cwt"},
                            {"Name": "Operation", "Value": "PutItem"},
                        ],
                    },
                    "Period": 60,
                    "Stat": "Sum",
                },
            }
        ],
        StartTime=datetime.fromtimestamp(start, UTC),
        EndTime=datetime.fromtimestamp(end, UTC),
    )["MetricDataResults"][0]
    assert sum(throttled["Values"]) == throttled_puts
    stamps = throttled["Timestamps"]
    assert stamps == sorted(stamps, reverse=True) and all(t.timestamp() % 60 == 0 for t in stamps)

    listed = cw.list_metrics(Namespace="AWS/DynamoDB", Dimensions=[{"Name": "TableName", "Value": "cwt"}])["Metrics"]
    names = {m["MetricName"] for m in listed}
    assert {"ConsumedWriteCapacityUnits", "WriteThrottleEvents", "ThrottledRequests"} <= names
    assert cw.list_metrics(Namespace="AWS/EC2")["Metrics"] == []


def test_a_bad_query_is_the_services_error_not_a_traceback(throttling_endpoint: ThreadedEndpoint) -> None:
    cw = boto3.client("cloudwatch", endpoint_url=throttling_endpoint.url, config=CONFIG, **CREDS)
    now = datetime.now(UTC)
    with pytest.raises(ClientError) as exc:
        cw.get_metric_data(
            MetricDataQueries=[
                {"Id": "a", "MetricStat": {"Metric": metric("t", "ReadThrottleEvents"), "Period": 60, "Stat": "p99"}}
            ],
            StartTime=now.replace(year=now.year - 1),
            EndTime=now,
        )
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "Sum and SampleCount" in exc.value.response["Error"]["Message"]


@pytest.mark.parametrize(
    ("reason", "name"),
    [
        ("TableWriteKeyRangeThroughputExceeded", "WriteKeyRangeThroughputThrottleEvents"),
        ("IndexReadProvisionedThroughputExceeded", "ReadProvisionedThroughputThrottleEvents"),
        ("TableReadMaxOnDemandThroughputExceeded", "ReadMaxOnDemandThroughputThrottleEvents"),
        ("IndexWriteAccountLimitExceeded", "WriteAccountLimitThrottleEvents"),
        ("SomethingElse", None),
    ],
)
def test_each_throttling_reason_has_its_metric(reason: str, name: str | None) -> None:
    assert cloudwatch.reason_metric(reason) == name


def test_with_signatures_verified_cloudwatch_takes_its_own_signing_name_and_refuses_an_unknown_key() -> None:
    ep = serve_in_thread(capacity=None, verify_signatures=True, credentials={"AKIDLOCAL": "s3cret"})
    try:
        signed = {"aws_access_key_id": "AKIDLOCAL", "aws_secret_access_key": "s3cret", "region_name": "us-east-1"}
        cw = boto3.client("cloudwatch", endpoint_url=ep.url, config=CONFIG, **signed)
        assert cw.list_metrics(Namespace="AWS/DynamoDB")["Metrics"] == []  # signed for "monitoring": accepted
        stranger = boto3.client("cloudwatch", endpoint_url=ep.url, config=CONFIG, **CREDS)
        with pytest.raises(ClientError) as exc:
            stranger.list_metrics(Namespace="AWS/DynamoDB")
        assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert "security token included in the request is invalid" in str(exc.value)
    finally:
        ep.stop()
