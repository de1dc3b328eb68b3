"""The request seams against a real local endpoint that throttles: both transports answer a throttle as a `Reply`
(status and parsed body, the body a `ClientError` would carry), and a scenario's `send` classifies it without an
exception being built, with the outcome the raising route gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.event import EventHook

import pytest
from botocore.exceptions import ClientError

from dynlocust.local.config import LocalConfig
from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from dynlocust.local.server import build_capacity
from dynlocust.request.client import DynamoDBClient, RequestFailed
from dynlocust.request.outcomes import THROTTLED, classify, classify_error
from dynlocust.request.transport.base import BotocoreClient, Reply, RequestEvent, Transport
from dynlocust.request.transport.boto3 import BotocoreTransport, make_client
from dynlocust.request.transport.fast import FastDynamoDB, make_fast_client

TABLE = "capped"
ITEM = {"pk": {"S": "k"}, "pad": {"S": "x" * 900}}
OPTIONS: dict[str, Any] = {"region": "us-east-1", "connect_timeout": 2, "read_timeout": 5, "pool_size": 2}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[ThreadedEndpoint]:
    """An on-demand table capped at 1 WRU/s (`OnDemandThroughput`, 1 s of burst): a few 1 KB puts in a row throttle."""
    server = serve_in_thread(capacity=build_capacity(LocalConfig()))
    try:
        make_client(server.url, **OPTIONS).create_table(
            TableName=TABLE,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
            OnDemandThroughput={"MaxWriteRequestUnits": 1},
        )
        yield server
    finally:
        server.stop()


def transport_client(kind: str, url: str) -> BotocoreClient:
    return make_fast_client(url, **OPTIONS) if kind == "fast" else make_client(url, **OPTIONS)


def throttled_reply(transport: Transport) -> Reply:
    for _ in range(20):
        reply = transport.handle_request("PutItem", {"TableName": TABLE, "Item": ITEM})
        if not reply.ok:
            return reply
    raise AssertionError("20 puts in a row at 1 WRU/s were never throttled")


def raised(client: Any) -> ClientError:
    for _ in range(20):
        try:
            client.put_item(TableName=TABLE, Item=ITEM)
        except ClientError as exc:
            return exc
    raise AssertionError("20 puts in a row at 1 WRU/s were never throttled")


@pytest.mark.parametrize("kind", ["fast", "boto3"])
def test_a_throttle_is_a_reply_with_the_body_the_raising_route_raises(endpoint: ThreadedEndpoint, kind: str) -> None:
    client = transport_client(kind, endpoint.url)
    transport: Transport = client if isinstance(client, FastDynamoDB) else BotocoreTransport(client)
    reply = throttled_reply(transport)
    exc = raised(client)
    assert reply.status == 400 and not reply.ok and reply.body["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert reply.body["Error"]["Code"] == exc.response["Error"]["Code"] == "ThrottlingException"
    assert reply.body.keys() == exc.response.keys()
    outcome = classify_error(reply.body)
    assert outcome == classify(None, exc) and outcome.kind == THROTTLED
    assert [r.reason for r in outcome.reasons] == ["TableWriteMaxOnDemandThroughputExceeded"]


@pytest.mark.parametrize("kind", ["fast", "boto3"])
def test_send_classifies_a_throttle_as_the_raising_route_does(endpoint: ThreadedEndpoint, kind: str) -> None:
    event, fired = EventHook(), []
    event.add_listener(lambda **kw: fired.append(kw))
    seam: RequestEvent = event
    client = DynamoDBClient(transport_client(kind, endpoint.url), seam, deadline=5.0, raise_errors=True)
    records = [client.send("put_item", {"TableName": TABLE, "Item": ITEM}) for _ in range(6)]
    throttles = [r for r in records if r.outcome.kind == THROTTLED]
    assert throttles, [r.outcome for r in records]
    expected = classify(None, raised(client.raw))
    assert {(t.outcome.code, t.outcome.http_status, t.outcome.reasons) for t in throttles} == {
        (expected.code, expected.http_status, expected.reasons)
    }
    assert all(t.consumed == () for t in throttles)
    events = [kw for kw in fired if kw["context"]["record"].outcome.kind == THROTTLED]
    assert len(fired) == 6 and len(events) == len(throttles)
    assert all(kw["response"] is None and isinstance(kw["exception"], RequestFailed) for kw in events)
    assert all(kw["response_length"] > 0 for kw in events)  # the error body's content-length


def test_the_fast_transports_scenario_path_builds_no_exception(
    endpoint: ThreadedEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = make_fast_client(endpoint.url, **OPTIONS)

    def no_exception(*_args: Any) -> Exception:
        raise AssertionError("the non-raising route built a botocore exception")

    monkeypatch.setattr(fast, "_error", no_exception)  # a spy: the route must not reach it
    client = DynamoDBClient(fast, EventHook(), deadline=5.0)
    assert client.transport is fast
    outcomes = [client.send("put_item", {"TableName": TABLE, "Item": ITEM}).outcome for _ in range(6)]
    assert THROTTLED in {o.kind for o in outcomes}


def test_a_botocore_client_is_adapted_and_its_successes_are_replies(endpoint: ThreadedEndpoint) -> None:
    raw = make_client(endpoint.url, **OPTIONS)
    client = DynamoDBClient(raw, EventHook(), deadline=5.0)
    assert isinstance(client.transport, BotocoreTransport) and client.raw is raw
    reply = client.transport.handle_request("DescribeTable", {"TableName": TABLE})
    assert reply.ok and reply.status == 200 and reply.body["Table"]["TableName"] == TABLE


def test_the_fast_transport_sends_the_control_plane_to_botocore(endpoint: ThreadedEndpoint) -> None:
    reply = make_fast_client(endpoint.url, **OPTIONS).handle_request("DescribeTable", {"TableName": "missing"})
    assert reply.status == 400 and reply.body["Error"]["Code"] == "ResourceNotFoundException"
