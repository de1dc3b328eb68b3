"""DynamoDBUser against the fault server: one HTTP request per call, the right outcome, one request event."""

from __future__ import annotations

import time
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment

import pytest
from botocore.config import Config

from dynlocust import DynamoDBUser
from dynlocust.errors import ConfigurationError
from dynlocust.request.client import RequestFailed
from tests.conftest import FaultServer


def make_user(url: str, **attrs: Any) -> tuple[Any, list[dict[str, Any]]]:
    user_class = type("FaultUser", (DynamoDBUser,), {"host": url, "abstract": False, **attrs})
    environment = Environment(user_classes=[user_class])
    fired: list[dict[str, Any]] = []
    environment.events.request.add_listener(lambda **kw: fired.append(kw))
    return user_class(environment), fired


def put(table: str) -> tuple[str, dict[str, Any]]:
    return "put_item", {"TableName": table, "Item": {"pk": {"S": "a"}}}


def batch_write(table: str) -> tuple[str, dict[str, Any]]:
    return "batch_write_item", {"RequestItems": {table: [{"PutRequest": {"Item": {"pk": {"S": "a"}}}}]}}


def batch_get(table: str) -> tuple[str, dict[str, Any]]:
    return "batch_get_item", {"RequestItems": {table: {"Keys": [{"pk": {"S": "a"}}]}}}


def transact(table: str) -> tuple[str, dict[str, Any]]:
    return "transact_write_items", {"TransactItems": [{"Put": {"TableName": table, "Item": {"pk": {"S": "a"}}}}]}


TXN = "TransactionCanceledException"
ROWS = [
    # (table = fault, call builder, kind, code, request name)
    ("ok", put, "ok", None, "PutItem ok"),
    ("throttle", put, "throttled", "ThrottlingException", "PutItem throttle"),
    ("throttle-index", put, "throttled", "ThrottlingException", "PutItem throttle-index"),
    ("provisioned", put, "throttled", "ProvisionedThroughputExceededException", "PutItem provisioned"),
    ("request-limit", put, "throttled", "RequestLimitExceeded", "PutItem request-limit"),
    ("txn-throttle", transact, "throttled", TXN, "TransactWriteItems txn-throttle"),
    ("txn-provisioned", transact, "throttled", TXN, "TransactWriteItems txn-provisioned"),
    ("txn-condition", transact, "condition_failed", TXN, "TransactWriteItems txn-condition"),
    (
        "txn-conflict",
        transact,
        "transaction_conflict",
        "TransactionCanceledException",
        "TransactWriteItems txn-conflict",
    ),
    ("condition", put, "condition_failed", "ConditionalCheckFailedException", "PutItem condition"),
    ("conflict", put, "transaction_conflict", "TransactionConflictException", "PutItem conflict"),
    ("validation", put, "validation", "ValidationException", "PutItem validation"),
    ("not-found", put, "not_found", "ResourceNotFoundException", "PutItem not-found"),
    ("unrecognized", put, "auth", "UnrecognizedClientException", "PutItem unrecognized"),
    ("signature", put, "auth", "InvalidSignatureException", "PutItem signature"),
    ("access-denied", put, "auth", "AccessDeniedException", "PutItem access-denied"),
    ("internal", put, "server_error", "InternalServerError", "PutItem internal"),
    ("unavailable", put, "server_error", "ServiceUnavailable", "PutItem unavailable"),
    ("unprocessed", batch_write, "unprocessed", "UnprocessedItems", "BatchWriteItem unprocessed"),
    ("unprocessed-keys", batch_get, "unprocessed", "UnprocessedItems", "BatchGetItem unprocessed-keys"),
    ("drop", put, "connection", "ConnectionClosed", "PutItem drop"),
    ("reset", put, "connection", None, "PutItem reset"),
]


@pytest.mark.parametrize(("table", "builder", "kind", "code", "name"), ROWS, ids=[r[0] for r in ROWS])
def test_one_request_one_event_right_outcome(
    fault_server: FaultServer, table: str, builder: Any, kind: str, code: str | None, name: str
) -> None:
    user, fired = make_user(fault_server.url)
    method, kwargs = builder(table)
    getattr(user.client, method)(**kwargs)
    outcome = user.client.last_outcome
    assert outcome is not None and outcome.kind == kind
    if code is not None:
        assert outcome.code == code
    if kind == "connection":
        assert outcome.code in ("ConnectionClosed", "ConnectionReset")
    seen = fault_server.requests()
    assert len(seen) == 1, seen
    assert seen[0]["table"] == table
    assert seen[0]["attempt"].split(";")[0] == "attempt=1"
    assert len(fired) == 1
    event = fired[0]
    assert event["request_type"] == "DynamoDB" and event["name"] == name
    assert event["context"]["outcome"] is outcome
    if kind == "ok":
        assert event["exception"] is None
    else:
        assert isinstance(event["exception"], RequestFailed)
        assert str(event["exception"]).startswith(outcome.code or kind)


def test_throttle_reason_reaches_the_event(fault_server: FaultServer) -> None:
    user, fired = make_user(fault_server.url)
    user.client.put_item(TableName="throttle-index", Item={"pk": {"S": "a"}})
    reasons = user.client.last_outcome.reasons
    assert [(r.reason, r.scope, r.access) for r in reasons] == [
        ("IndexWriteMaxOnDemandThroughputExceeded", "index", "write")
    ]
    assert str(fired[0]["exception"]) == "ThrottlingException (IndexWriteMaxOnDemandThroughputExceeded)"


def test_unprocessed_counts_items(fault_server: FaultServer) -> None:
    user, _ = make_user(fault_server.url)
    response = user.client.batch_write_item(**batch_write("unprocessed")[1])
    assert response is not None  # HTTP 200: the caller still gets the response with its leftovers
    assert user.client.last_outcome.unprocessed == 2
    assert user.client.last_outcome.http_status == 200


def test_trickle_is_cut_at_the_deadline_and_the_client_stays_usable(fault_server: FaultServer) -> None:
    user, fired = make_user(fault_server.url, deadline=1.5)
    started = time.monotonic()
    assert user.client.get_item(TableName="trickle", Key={"pk": {"S": "a"}}) is None
    elapsed = time.monotonic() - started
    assert 1.4 <= elapsed < 2.5, elapsed
    assert user.client.last_outcome.kind == "timeout" and user.client.last_outcome.code == "DeadlineExceeded"
    assert str(fired[0]["exception"]) == "DeadlineExceeded"
    assert user.client.get_item(TableName="ok-item", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert user.client.last_outcome.ok
    assert [r["table"] for r in fault_server.requests()] == ["trickle", "ok-item"]


def test_the_deadline_is_each_calls_not_their_sum(fault_server: FaultServer) -> None:
    """Calls that take 0.3 s in all, each far inside a 0.1 s deadline, all succeed: every call starts its own
    deadline (a restarted gevent Timeout would keep only what was left of it)."""
    user, fired = make_user(fault_server.url, deadline=0.1)
    started = time.monotonic()
    while time.monotonic() - started < 0.3:
        assert user.client.get_item(TableName="ok-item", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert len(fired) >= 5 and not [f["exception"] for f in fired if f["exception"]], fired[-1]


def test_stall_is_cut_by_the_read_timeout_before_the_deadline(fault_server: FaultServer) -> None:
    user, _ = make_user(fault_server.url, deadline=5.0, botocore_config=Config(read_timeout=0.5))
    started = time.monotonic()
    user.client.put_item(TableName="stall", Item={"pk": {"S": "a"}})
    assert time.monotonic() - started < 2.0
    assert (user.client.last_outcome.kind, user.client.last_outcome.code) == ("timeout", "ReadTimeout")
    assert len(fault_server.requests()) == 1


def test_connection_refused_is_a_connection_outcome() -> None:
    import socket

    with socket.socket() as probe:  # a port that nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    user, fired = make_user(f"http://127.0.0.1:{port}")
    user.client.put_item(TableName="ok", Item={"pk": {"S": "a"}})
    assert (user.client.last_outcome.kind, user.client.last_outcome.code) == ("connection", "ConnectionRefused")
    assert len(fired) == 1


def test_raise_errors_reraises_botocore_exception(fault_server: FaultServer) -> None:
    user, fired = make_user(fault_server.url, raise_errors=True)
    with pytest.raises(user.client.raw.exceptions.ConditionalCheckFailedException):
        user.client.put_item(TableName="condition", Item={"pk": {"S": "a"}})
    assert len(fired) == 1


@pytest.mark.parametrize(
    "config",
    [
        Config(retries={"mode": "adaptive"}),
        Config(retries={"max_attempts": 3}),
        Config(retries={"mode": "standard", "total_max_attempts": 4}),
    ],
)
def test_retries_cannot_be_turned_on(fault_server: FaultServer, config: Config) -> None:
    with pytest.raises(ConfigurationError, match="retries"):
        make_user(fault_server.url, botocore_config=config)


def test_user_config_is_merged_and_retries_stay_off(fault_server: FaultServer) -> None:
    user, _ = make_user(fault_server.url, botocore_config=Config(read_timeout=2, user_agent_extra="mine"))
    config = user.client.raw.meta.config
    assert config.read_timeout == 2 and config.user_agent_extra == "mine"
    assert config.retries == {"mode": "standard", "total_max_attempts": 1}
    user.client.put_item(TableName="throttle", Item={"pk": {"S": "a"}})
    assert len(fault_server.requests()) == 1
