"""Every throttle path of the local endpoint, reached through DynamoDBUser and classified by the outcome model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment

import pytest

from dynlocust import DynamoDBUser
from dynlocust.local.embedded import LocalEndpoint

# capacity_scale 0.01: a new on-demand table takes 41.3 WRU/s (burst 34), a partition 10 WU/s.
SCALE = 0.01


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity_scale=SCALE).start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture
def user(endpoint: LocalEndpoint) -> Any:
    user_class = type("U", (DynamoDBUser,), {"host": endpoint.url, "abstract": False})
    return user_class(Environment(user_classes=[user_class]))


def create(user: Any, name: str, **extra: Any) -> str:
    attributes = [{"AttributeName": "pk", "AttributeType": "S"}]
    if "GlobalSecondaryIndexes" in extra:
        attributes.append({"AttributeName": "g", "AttributeType": "S"})
    request = {
        "TableName": name,
        "AttributeDefinitions": attributes,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
        **extra,
    }
    user.client.raw.create_table(**request)
    return name


def item(key: str, **more: Any) -> dict[str, Any]:
    return {"pk": {"S": key}, **{k: {"S": v} for k, v in more.items()}}


def until_outcome(
    user: Any, call: Callable[[int], Any], kind: str, limit: int = 400, allowed: tuple[str, ...] = ("ok",)
) -> Any:
    """Send until the first outcome of `kind` (bounded), allowing only `allowed` outcomes before it."""
    for i in range(limit):
        call(i)
        outcome = user.client.last_outcome
        if outcome.kind == kind:
            return outcome
        assert outcome.kind in allowed, outcome
    raise AssertionError(f"no {kind} outcome in {limit} calls")


def test_single_item_write_over_the_table_ceiling(user: Any) -> None:
    table = create(user, "single")
    outcome = until_outcome(user, lambda i: user.client.put_item(TableName=table, Item=item(f"k{i}")), "throttled")
    assert outcome.code == "ThrottlingException" and outcome.http_status == 400
    (reason,) = outcome.reasons
    assert reason.reason.startswith("TableWrite") and reason.resource.endswith(":table/single")
    assert outcome.message.startswith("Throughput exceeds the current capacity of your table or index.")


def test_hot_key_throttles_while_the_table_is_under_its_ceiling(user: Any) -> None:
    table = create(user, "hot")
    outcome = until_outcome(user, lambda i: user.client.put_item(TableName=table, Item=item("same")), "throttled")
    assert [r.reason for r in outcome.reasons] == ["TableWriteKeyRangeThroughputExceeded"]
    # other keys are still accepted: the table as a whole is not at its ceiling
    assert user.client.put_item(TableName=table, Item=item("other")) is not None


def test_transaction_cancelled_for_capacity(user: Any) -> None:
    table = create(user, "txn")

    def transact(i: int) -> Any:
        actions = [{"Put": {"TableName": table, "Item": item(f"t{i}-{j}")}} for j in range(5)]
        return user.client.transact_write_items(TransactItems=actions)

    outcome = until_outcome(user, transact, "throttled")
    assert outcome.code == "TransactionCanceledException"
    assert "ThrottlingError" in outcome.cancellation_codes


def test_batch_partial_returns_unprocessed_items_with_http_200(user: Any) -> None:
    table = create(user, "batchpartial")

    def batch(i: int) -> Any:
        requests = [{"PutRequest": {"Item": item(f"b{i}-{j}")}} for j in range(25)]
        return user.client.batch_write_item(RequestItems={table: requests})

    outcome = until_outcome(user, batch, "unprocessed")
    assert outcome.http_status == 200 and 0 < outcome.unprocessed < 25


def test_batch_with_nothing_processed_fails_with_the_throttle(user: Any) -> None:
    table = create(user, "batchtotal")

    def batch(i: int) -> Any:
        requests = [{"PutRequest": {"Item": item(f"z{i}-{j}")}} for j in range(25)]
        return user.client.batch_write_item(RequestItems={table: requests})

    # the bucket drains: partial batches first, then one where nothing at all could be written
    total = until_outcome(user, batch, "throttled", allowed=("ok", "unprocessed"))
    assert (total.code, total.http_status, total.unprocessed) == ("ThrottlingException", 400, 0)


def test_gsi_over_its_max_on_demand_throughput(user: Any) -> None:
    table = create(
        user,
        "withgsi",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byg",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "OnDemandThroughput": {"MaxReadRequestUnits": 5, "MaxWriteRequestUnits": 5},
            }
        ],
    )
    outcome = until_outcome(
        user, lambda i: user.client.put_item(TableName=table, Item=item(f"k{i}", g=f"g{i % 7}")), "throttled"
    )
    (reason,) = outcome.reasons
    assert reason.reason == "IndexWriteMaxOnDemandThroughputExceeded" and reason.scope == "index"
    assert reason.resource.endswith(":table/withgsi/index/byg")


def test_table_max_on_demand_cap(user: Any) -> None:
    table = create(user, "capped", OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 3})
    outcome = until_outcome(user, lambda i: user.client.put_item(TableName=table, Item=item(f"k{i}")), "throttled")
    assert [r.reason for r in outcome.reasons] == ["TableWriteMaxOnDemandThroughputExceeded"]


def test_provisioned_table(user: Any) -> None:
    user.client.raw.create_table(
        TableName="provisioned",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    )
    outcome = until_outcome(
        user, lambda i: user.client.put_item(TableName="provisioned", Item=item(f"k{i}")), "throttled"
    )
    assert outcome.code == "ProvisionedThroughputExceededException"
    assert [r.reason for r in outcome.reasons] == ["TableWriteProvisionedThroughputExceeded"]


def test_reads_below_their_baseline_are_never_throttled(user: Any) -> None:
    table = create(user, "reads")
    # 120 RRU/s at this scale; 200 eventually consistent reads of distinct keys cost 100 RRU
    for i in range(200):
        user.client.get_item(TableName=table, Key={"pk": {"S": f"r{i}"}})
        assert user.client.last_outcome.ok
