"""The measured client against the real local endpoint over HTTP: each call fires one request event carrying its one
record, failures follow Locust's convention (or re-raise), and the total deadline cuts a call that runs long."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.event import EventHook

import gevent
import pytest
from botocore.exceptions import ClientError

from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.client import MAX_TARGETS, DynamoDBClient, RequestFailed, Target, measured_call
from dynlocust.request.outcomes import NOT_FOUND, OK, TIMEOUT
from dynlocust.request.record import RequestRecord
from dynlocust.request.transport.boto3 import make_client

TABLE = "orders-run1"


@pytest.fixture(scope="module")
def raw() -> Iterator[Any]:
    server = serve_in_thread()
    try:
        client = make_client(server.url, region="us-east-1", connect_timeout=1, read_timeout=1, pool_size=4)
        client.create_table(
            TableName=TABLE,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client
    finally:
        server.stop()


def listen() -> tuple[EventHook, list[dict[str, Any]]]:
    event, fired = EventHook(), []
    event.add_listener(lambda **kw: fired.append(kw))
    return event, fired


def test_a_call_fires_one_event_with_its_record_under_the_logical_name(raw: Any) -> None:
    event, fired = listen()
    client = DynamoDBClient(raw, event, deadline=5.0, context={"user": 7})
    client.logical_names = {TABLE: "orders"}
    response = client.put_item(TableName=TABLE, Item={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL")
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    (kw,) = fired
    record = kw["context"]["record"]
    assert isinstance(record, RequestRecord) and record is client.last_record
    assert (record.operation, record.table, record.physical_table, record.write) == ("PutItem", "orders", TABLE, True)
    assert record.outcome.kind == OK and client.last_outcome is record.outcome and kw["exception"] is None
    assert kw["name"] == record.name and kw["request_type"] == "DynamoDB" and kw["context"]["user"] == 7
    assert kw["response_time"] == pytest.approx(record.latency * 1000.0) and kw["response_length"] > 0


@pytest.mark.parametrize("raise_errors", [False, True])
def test_a_failed_call_is_reported_once_and_returns_none_or_raises(raw: Any, raise_errors: bool) -> None:
    event, fired = listen()
    client = DynamoDBClient(raw, event, deadline=5.0, raise_errors=raise_errors)
    if raise_errors:
        with pytest.raises(ClientError, match="ResourceNotFoundException"):
            client.get_item(TableName="missing", Key={"pk": {"S": "a"}})
    else:
        assert client.get_item(TableName="missing", Key={"pk": {"S": "a"}}) is None
    (kw,) = fired
    assert isinstance(kw["exception"], RequestFailed) and repr(kw["exception"]) == "ResourceNotFoundException"
    assert client.last_outcome is not None and client.last_outcome.kind == NOT_FOUND


def test_send_returns_the_record_and_never_raises(raw: Any) -> None:
    event, fired = listen()
    client = DynamoDBClient(raw, event, deadline=5.0, raise_errors=True)
    record = client.send("get_item", {"TableName": "missing", "Key": {"pk": {"S": "a"}}}, label="probe")
    assert record.outcome.kind == NOT_FOUND and record.label == "probe" and len(fired) == 1


def test_names_that_are_not_operations_reach_the_raw_client(raw: Any) -> None:
    client = DynamoDBClient(raw, EventHook(), deadline=5.0)
    assert client.meta is raw.meta and client.raw is raw


def test_the_targets_it_remembers_are_bounded(raw: Any) -> None:
    client = DynamoDBClient(raw, EventHook(), deadline=5.0)
    for i in range(MAX_TARGETS + 10):
        client.send("get_item", {"TableName": f"t{i}", "Key": {"pk": {"S": "a"}}})
    assert len(client._targets) <= MAX_TARGETS


def test_the_deadline_cuts_a_long_call_and_the_next_call_gets_a_whole_one() -> None:
    event, fired = listen()
    target = Target("GetItem", "t", "t")
    _, error, cut = measured_call(event, target, lambda: gevent.sleep(2.0), deadline=0.05)
    assert cut.outcome.kind == TIMEOUT and error is not None and cut.latency < 1.0
    result, error, whole = measured_call(event, target, lambda: gevent.sleep(0.1) or {"ok": 1}, deadline=0.5)
    assert (result, error, whole.outcome.kind) == ({"ok": 1}, None, OK)
    assert len(fired) == 2


def test_an_outer_timeout_is_not_taken_for_the_call_s_deadline() -> None:
    event, fired = listen()
    with pytest.raises(gevent.Timeout), gevent.Timeout(0.05):
        measured_call(event, Target("GetItem", "t", "t"), lambda: gevent.sleep(2.0), deadline=5.0)
    assert fired == []
