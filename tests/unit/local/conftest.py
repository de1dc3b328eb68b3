"""Fixtures for the local endpoint's unit tests: an in-thread server per test and boto3 clients on it."""

from __future__ import annotations

import http.client
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import botocore.config
import pytest

from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread

CONFIG = botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=10)
CREDS = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}


@pytest.fixture
def endpoint() -> Iterator[ThreadedEndpoint]:
    ep = serve_in_thread(capacity=None)
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture
def no_traceback(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """The test fails if the server logged an internal error (a traceback: what answers HTTP 500)."""
    caplog.set_level(logging.ERROR, logger="dynlocust.local.server")
    yield
    assert [r for r in caplog.records if r.name == "dynlocust.local.server"] == []


@pytest.fixture
def make_client() -> Callable[..., Any]:
    def make(ep: Any) -> Any:
        return boto3.client("dynamodb", endpoint_url=ep.url, config=CONFIG, **CREDS)

    return make


@pytest.fixture
def client(endpoint: ThreadedEndpoint, make_client: Callable[..., Any]) -> Any:
    return make_client(endpoint)


@pytest.fixture
def resource(endpoint: ThreadedEndpoint) -> Any:
    return boto3.resource("dynamodb", endpoint_url=endpoint.url, config=CONFIG, **CREDS)


@pytest.fixture
def tab1(endpoint: Any, client: Any) -> str:
    """tab1: pk (S) + sk (N), a KEYS_ONLY GSI gsi1 on g (S); the table's ARN."""
    described = create_table(
        client,
        extra_attrs={"g": "S"},
        gsis=[
            {
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    return str(described["TableDescription"]["TableArn"])


def create_table(
    client: Any,
    name: str = "tab1",
    range_type: str | None = "N",
    gsis: list[dict[str, Any]] | None = None,
    lsis: list[dict[str, Any]] | None = None,
    extra_attrs: dict[str, str] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """A PAY_PER_REQUEST table pk (S) [+ sk (range_type)] with optional indexes."""
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    attrs = {"pk": "S"}
    if range_type:
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        attrs["sk"] = range_type
    attrs.update(extra_attrs or {})
    args: dict[str, Any] = {
        "TableName": name,
        "KeySchema": schema,
        "AttributeDefinitions": [{"AttributeName": k, "AttributeType": v} for k, v in attrs.items()],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if gsis:
        args["GlobalSecondaryIndexes"] = gsis
    if lsis:
        args["LocalSecondaryIndexes"] = lsis
    args.update(kwargs)
    return client.create_table(**args)


def error_of(exc_info: Any) -> tuple[int, str, str]:
    """(HTTP status, error code, message) of a botocore ClientError."""
    r = exc_info.value.response
    return r["ResponseMetadata"]["HTTPStatusCode"], r["Error"]["Code"], r["Error"].get("Message", "")


def wire(endpoint: ThreadedEndpoint, op: str, req: dict[str, Any]) -> tuple[int, Any]:
    """(HTTP status, JSON body) of one request sent as a raw client sends it: no SDK between test and endpoint."""
    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=30)
    try:
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + op}
        conn.request("POST", "/", body=json.dumps(req).encode(), headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()
