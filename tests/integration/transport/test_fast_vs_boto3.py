"""The fast transport against boto3 on real servers: same parsed responses, same outcomes, signatures accepted.

The local endpoint runs in its own process; the fault server (tests/conftest.py) gives every modelled error and
socket fault. Each comparison calls both transports with the same arguments on the same state.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment

import pytest
from botocore.exceptions import ClientError

from dynlocust import DynamoDBUser
from dynlocust.errors import ConfigurationError
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.client import RequestFailed
from dynlocust.request.transport.boto3 import make_client
from dynlocust.request.transport.fast import FastDynamoDB, make_fast_client
from dynlocust.user_classes.fast_user import FastDynamoDBUser, user_base
from tests.conftest import FaultServer

TABLE = "fast-cmp"
B1, B2 = b"\x00\x01\xfe\xff", b"binary \xe2\x82\xac"
SEED = [
    {
        "pk": {"S": "p1"},
        "sk": {"S": f"s{i}"},
        "g": {"S": "g1"},
        "n": {"N": str(i)},
        "b": {"B": B1},
        "bs": {"BS": [B1, B2]},
    }
    for i in range(5)
] + [
    {
        "pk": {"S": "p2"},
        "sk": {"S": "s0"},
        "g": {"S": "g2"},
        "m": {"M": {"x": {"B": B2}, "l": {"L": [{"N": "1.5"}, {"B": B1}, {"NULL": True}, {"BOOL": False}]}}},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2.5"]},
    }
]
KEY = {"pk": {"S": "p1"}, "sk": {"S": "s1"}}
CAP = {"ReturnConsumedCapacity": "TOTAL"}

# (id, method, kwargs, expect an error code or None)
CASES: list[tuple[str, str, dict[str, Any], str | None]] = [
    (
        "put",
        "put_item",
        {"TableName": TABLE, "Item": {**SEED[1], "new": {"B": B2}}, "ReturnValues": "ALL_OLD", **CAP},
        None,
    ),
    ("get", "get_item", {"TableName": TABLE, "Key": KEY, "ConsistentRead": True, **CAP}, None),
    ("get-missing", "get_item", {"TableName": TABLE, "Key": {"pk": {"S": "none"}, "sk": {"S": "x"}}}, None),
    ("get-projection", "get_item", {"TableName": TABLE, "Key": KEY, "ProjectionExpression": "bs, n"}, None),
    (
        "update",
        "update_item",
        {
            "TableName": TABLE,
            "Key": KEY,
            "UpdateExpression": "SET n = n + :one, b2 = :b",
            "ExpressionAttributeValues": {":one": {"N": "1"}, ":b": {"B": B2}},
            "ReturnValues": "ALL_NEW",
            **CAP,
        },
        None,
    ),
    ("delete", "delete_item", {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_OLD", **CAP}, None),
    (
        "query",
        "query",
        {
            "TableName": TABLE,
            "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "p1"}},
            "Limit": 3,
            "ReturnConsumedCapacity": "INDEXES",
        },
        None,
    ),
    (
        "query-index",
        "query",
        {
            "TableName": TABLE,
            "IndexName": "by-g",
            "KeyConditionExpression": "g = :g",
            "ExpressionAttributeValues": {":g": {"S": "g2"}},
        },
        None,
    ),
    ("scan", "scan", {"TableName": TABLE, "FilterExpression": "attribute_exists(bs)", **CAP}, None),
    ("scan-count", "scan", {"TableName": TABLE, "Select": "COUNT"}, None),
    (
        "batch-write",
        "batch_write_item",
        {
            "RequestItems": {
                TABLE: [
                    {"PutRequest": {"Item": {"pk": {"S": "p3"}, "sk": {"S": "s0"}, "b": {"B": B1}}}},
                    {"DeleteRequest": {"Key": {"pk": {"S": "p1"}, "sk": {"S": "s4"}}}},
                ]
            },
            **CAP,
        },
        None,
    ),
    (
        "batch-get",
        "batch_get_item",
        {"RequestItems": {TABLE: {"Keys": [KEY, {"pk": {"S": "p2"}, "sk": {"S": "s0"}}]}}, **CAP},
        None,
    ),
    (
        "transact-write",
        "transact_write_items",
        {
            "TransactItems": [
                {"ConditionCheck": {"TableName": TABLE, "Key": KEY, "ConditionExpression": "attribute_exists(pk)"}},
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "p4"}, "sk": {"S": "s0"}, "b": {"B": B2}}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "p2"}, "sk": {"S": "s0"}},
                        "UpdateExpression": "SET c = :c",
                        "ExpressionAttributeValues": {":c": {"S": "x"}},
                    }
                },
            ],
            **CAP,
        },
        None,
    ),
    (
        "transact-get",
        "transact_get_items",
        {
            "TransactItems": [
                {"Get": {"TableName": TABLE, "Key": KEY}},
                {"Get": {"TableName": TABLE, "Key": {"pk": {"S": "p2"}, "sk": {"S": "s0"}}}},
            ]
        },
        None,
    ),
    (
        "condition-failed",
        "put_item",
        {
            "TableName": TABLE,
            "Item": SEED[1],
            "ConditionExpression": "attribute_not_exists(pk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        "ConditionalCheckFailedException",
    ),
    (
        "transaction-cancelled",
        "transact_write_items",
        {
            "TransactItems": [
                {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "p5"}, "sk": {"S": "s0"}}}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": KEY,
                        "ConditionExpression": "attribute_not_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ]
        },
        "TransactionCanceledException",
    ),
    ("not-found", "get_item", {"TableName": "no-such-table", "Key": KEY}, "ResourceNotFoundException"),
    (
        "validation",
        "query",
        {"TableName": TABLE, "KeyConditionExpression": "pk = :missing"},
        "ValidationException",
    ),
]


def create_table(raw: Any) -> None:
    raw.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    deadline = time.monotonic() + 10
    while raw.describe_table(TableName=TABLE)["Table"]["TableStatus"] != "ACTIVE":
        assert time.monotonic() < deadline, "table did not become ACTIVE"
        time.sleep(0.05)


def reseed(raw: Any) -> None:
    """Bring the table back to SEED exactly, so both transports see the same state."""
    for item in raw.scan(TableName=TABLE, ConsistentRead=True)["Items"]:
        raw.delete_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]})
    for item in SEED:
        raw.put_item(TableName=TABLE, Item=item)


def normalized(response: dict[str, Any]) -> dict[str, Any]:
    response = copy.deepcopy(response)
    meta = response.get("ResponseMetadata", {})
    meta.pop("RequestId", None)
    for volatile in ("x-amzn-requestid", "date"):
        meta.get("HTTPHeaders", {}).pop(volatile, None)
    return response


def outcome_of(call: Callable[[], Any]) -> tuple[str | None, str, dict[str, Any]]:
    """(error code or None, exception class name, normalized response)."""
    try:
        return None, "", normalized(call())
    except ClientError as exc:
        return exc.response["Error"]["Code"], type(exc).__name__, normalized(exc.response)


@pytest.fixture(scope="module")
def local() -> Iterator[tuple[Any, FastDynamoDB]]:
    endpoint = LocalEndpoint(capacity=False).start()
    try:
        raw = make_client(endpoint.url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=2)
        fast = make_fast_client(endpoint.url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=2)
        create_table(raw)
        yield raw, fast
        fast.close()
    finally:
        endpoint.stop()


@pytest.mark.parametrize(("method", "kwargs", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_operation_returns_what_botocore_returns(
    local: tuple[Any, FastDynamoDB], method: str, kwargs: dict[str, Any], error: str | None
) -> None:
    raw, fast = local
    reseed(raw)
    expected_code, expected_class, expected = outcome_of(lambda: getattr(raw, method)(**copy.deepcopy(kwargs)))
    reseed(raw)
    code, exception_class, got = outcome_of(lambda: getattr(fast, method)(**copy.deepcopy(kwargs)))
    assert expected_code == error  # the case means what it says
    assert (code, exception_class) == (expected_code, expected_class)
    assert got == expected


SIGNED_SECRET = "signing-secret"


@pytest.fixture(scope="module")
def verifying() -> Iterator[tuple[str, Any]]:
    endpoint = LocalEndpoint(capacity=False, verify_signatures=True, credentials={"AKIDFAST": SIGNED_SECRET}).start()
    try:
        raw = make_client(
            endpoint.url,
            region="us-east-1",
            connect_timeout=3,
            read_timeout=10,
            pool_size=2,
            credentials=("AKIDFAST", SIGNED_SECRET),
        )
        create_table(raw)
        yield endpoint.url, raw
    finally:
        endpoint.stop()


@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEXAMPLE//session+token="], ids=["keys", "session-token"])
def test_signature_verifying_endpoint_accepts_every_fast_request(verifying: tuple[str, Any], token: str | None) -> None:
    url, raw = verifying
    creds = ("AKIDFAST", SIGNED_SECRET) if token is None else ("AKIDFAST", SIGNED_SECRET, token)
    fast = make_fast_client(url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=2, credentials=creds)
    for _case_id, method, kwargs, error in CASES:
        reseed(raw)
        try:
            getattr(fast, method)(**copy.deepcopy(kwargs))
            code = None
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
        assert code == error, (method, code)
    fast.close()


def test_signature_verifying_endpoint_rejects_a_wrong_secret(verifying: tuple[str, Any]) -> None:
    fast = make_fast_client(
        verifying[0],
        region="us-east-1",
        connect_timeout=3,
        read_timeout=10,
        pool_size=2,
        credentials=("AKIDFAST", "wrong"),
    )
    with pytest.raises(ClientError) as info:
        fast.get_item(TableName=TABLE, Key=KEY)
    assert info.value.response["Error"]["Code"] == "InvalidSignatureException"
    fast.close()


# --- the same outcomes and events as the boto3 user, on every fault ---------------------------------------------

PUT = ("put_item", lambda t: {"TableName": t, "Item": {"pk": {"S": "a"}}})
TRANSACT = (
    "transact_write_items",
    lambda t: {"TransactItems": [{"Put": {"TableName": t, "Item": {"pk": {"S": "a"}}}}]},
)
BATCH_WRITE = ("batch_write_item", lambda t: {"RequestItems": {t: [{"PutRequest": {"Item": {"pk": {"S": "a"}}}}]}})
BATCH_GET = ("batch_get_item", lambda t: {"RequestItems": {t: {"Keys": [{"pk": {"S": "a"}}]}}})
FAULTS = {
    "ok": PUT,
    "ok-item": ("get_item", lambda t: {"TableName": t, "Key": {"pk": {"S": "a"}}}),
    "throttle": PUT,
    "throttle-index": PUT,
    "provisioned": PUT,
    "request-limit": PUT,
    "txn-throttle": TRANSACT,
    "txn-provisioned": TRANSACT,
    "txn-condition": TRANSACT,
    "txn-conflict": TRANSACT,
    "txn-validation": TRANSACT,
    "condition": PUT,
    "conflict": PUT,
    "validation": PUT,
    "not-found": PUT,
    "unrecognized": PUT,
    "signature": PUT,
    "access-denied": PUT,
    "internal": PUT,
    "unavailable": PUT,
    "unprocessed": BATCH_WRITE,
    "unprocessed-keys": BATCH_GET,
    "drop": PUT,
    "reset": PUT,
}


def make_user(base: type, url: str, **attrs: Any) -> tuple[Any, list[dict[str, Any]]]:
    user_class = type("U", (base,), {"host": url, "abstract": False, **attrs})
    environment = Environment(user_classes=[user_class])
    fired: list[dict[str, Any]] = []
    environment.events.request.add_listener(lambda **kw: fired.append(kw))
    return user_class(environment), fired


def run_fault(base: type, server: FaultServer, table: str) -> tuple[Any, dict[str, Any], Any, list[dict[str, Any]]]:
    server.clear()
    user, fired = make_user(base, server.url, raise_errors=True)
    method, build = FAULTS[table]
    try:
        result: Any = getattr(user.client, method)(**build(table))
    except Exception as exc:
        result = exc
    assert len(fired) == 1
    return user.client.last_outcome, fired[0], result, server.requests()


@pytest.mark.parametrize("table", list(FAULTS))
def test_fast_user_reports_what_the_boto3_user_reports(fault_server: FaultServer, table: str) -> None:
    want, want_event, want_result, _ = run_fault(DynamoDBUser, fault_server, table)
    got, event, result, seen = run_fault(FastDynamoDBUser, fault_server, table)
    assert [(r["table"], r["attempt"].split(";")[0]) for r in seen] == [(table, "attempt=1")]  # one request
    if want.kind == "connection":  # urllib3 words the same socket fault differently; the kind is the contract
        assert (got.kind, got.code in ("ConnectionClosed", "ConnectionReset")) == ("connection", True)
    else:
        assert got == want
    assert event["name"] == want_event["name"] and event["request_type"] == want_event["request_type"]
    assert type(event["exception"]) is type(want_event["exception"])
    assert event["response_length"] == want_event["response_length"]
    if isinstance(want_result, ClientError):
        assert type(result).__name__ == type(want_result).__name__
        assert normalized(result.response) == normalized(want_result.response)
    elif isinstance(want_result, dict):
        assert normalized(result) == normalized(want_result)


def test_deadline_cuts_a_trickling_server_and_the_client_stays_usable(fault_server: FaultServer) -> None:
    user, fired = make_user(FastDynamoDBUser, fault_server.url, deadline=1.0)
    started = time.monotonic()
    assert user.client.get_item(TableName="trickle", Key={"pk": {"S": "a"}}) is None
    assert 0.9 <= time.monotonic() - started < 2.0
    assert (user.client.last_outcome.kind, user.client.last_outcome.code) == ("timeout", "DeadlineExceeded")
    assert isinstance(fired[0]["exception"], RequestFailed)
    assert user.client.get_item(TableName="ok-item", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert user.client.last_outcome.ok
    assert [r["table"] for r in fault_server.requests()] == ["trickle", "ok-item"]


def test_read_timeout_on_a_stalled_server(fault_server: FaultServer) -> None:
    user, _ = make_user(FastDynamoDBUser, fault_server.url, deadline=5.0)
    user.client.raw.pool.read_timeout = 0.5
    started = time.monotonic()
    user.client.put_item(TableName="stall", Item={"pk": {"S": "a"}})
    assert time.monotonic() - started < 2.0
    assert (user.client.last_outcome.kind, user.client.last_outcome.code) == ("timeout", "ReadTimeout")
    assert len(fault_server.requests()) == 1


def test_transport_switch_picks_the_user_base() -> None:
    assert user_base("fast") is FastDynamoDBUser and user_base("boto3") is DynamoDBUser
    with pytest.raises(ConfigurationError, match="expected one of boto3, fast, found 'http'"):
        user_base("http")
