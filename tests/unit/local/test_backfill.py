"""Issue 41: a GSI added by UpdateTable is backfilled in the background, CREATING with `Backfilling: true` until
done, refused to Query and Scan meanwhile as the service refuses it, while other requests are served and writes
land in it correctly. Over HTTP against a real in-thread endpoint."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.unit.local.conftest import create_table, error_of

ITEMS = 6000  # far more than one 2 ms slice reads
GROUPS = 7
INDEX = "by-g"


def _fill(client: Any, start: int, stop: int) -> None:
    for first in range(start, stop, 25):
        batch = [
            {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % GROUPS}"}, "n": {"N": str(i)}}}}
            for i in range(first, min(first + 25, stop))
        ]
        assert client.batch_write_item(RequestItems={"bfill": batch})["UnprocessedItems"] == {}


def _create_index(client: Any) -> dict[str, Any]:
    return client.update_table(
        TableName="bfill",
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[
            {
                "Create": {
                    "IndexName": INDEX,
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            }
        ],
    )["TableDescription"]


def _index_of(table: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in table["GlobalSecondaryIndexes"] if g["IndexName"] == INDEX)


def _query_all(client: Any, group: str) -> dict[str, dict[str, Any]]:
    items: dict[str, dict[str, Any]] = {}
    kwargs: dict[str, Any] = {
        "TableName": "bfill",
        "IndexName": INDEX,
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": {"S": group}},
    }
    while True:
        page = client.query(**kwargs)
        items.update({it["pk"]["S"]: it for it in page["Items"]})
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _scan_all(client: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": "bfill"}
    while True:
        page = client.scan(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_an_added_index_backfills_in_the_background(client: Any, no_traceback: None) -> None:
    create_table(client, "bfill", range_type=None)
    _fill(client, 0, ITEMS)
    described = _create_index(client)
    # the old code filled the index inside UpdateTable and answered it ACTIVE
    assert (described["TableStatus"], _index_of(described)["IndexStatus"]) == ("UPDATING", "CREATING")
    assert _index_of(described)["Backfilling"] is True
    for read in (
        lambda: client.query(
            TableName="bfill",
            IndexName=INDEX,
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": "g1"}},
        ),
        lambda: client.scan(TableName="bfill", IndexName=INDEX),
    ):
        with pytest.raises(client.exceptions.ClientError) as exc:
            read()
        assert error_of(exc) == (
            400,
            "ValidationException",
            f"Cannot read from backfilling global secondary index: {INDEX}",
        )
    # served meanwhile, and writes while it fills: new items, items moved between groups (on both sides of where
    # the backfill is), items that leave the index and items deleted
    writes_during_backfill = 0
    statuses = []
    for i in range(0, ITEMS, 97):
        client.update_item(
            TableName="bfill",
            Key={"pk": {"S": f"k{i}"}},
            UpdateExpression="SET g = :g",
            ExpressionAttributeValues={":g": {"S": f"g{(i + 1) % GROUPS}"}},
        )
        client.put_item(TableName="bfill", Item={"pk": {"S": f"new{i}"}, "g": {"S": "g0"}})
        client.delete_item(TableName="bfill", Key={"pk": {"S": f"k{i + 1}"}})
        client.update_item(TableName="bfill", Key={"pk": {"S": f"k{i + 2}"}}, UpdateExpression="REMOVE g")
        status = _index_of(client.describe_table(TableName="bfill")["Table"])
        statuses.append(status["IndexStatus"])
        writes_during_backfill += status["IndexStatus"] == "CREATING"
    assert writes_during_backfill > 0, statuses  # some of these writes went in while the index was backfilling
    deadline = time.monotonic() + 60
    while True:
        table = client.describe_table(TableName="bfill")["Table"]
        if _index_of(table)["IndexStatus"] == "ACTIVE":
            break
        assert time.monotonic() < deadline, "the backfill did not end within 60 s"
        time.sleep(0.05)
    assert table["TableStatus"] == "ACTIVE"
    assert _index_of(table)["Backfilling"] is False
    expected: dict[str, dict[str, dict[str, Any]]] = {f"g{n}": {} for n in range(GROUPS)}
    for it in _scan_all(client):
        if "g" in it:
            expected[it["g"]["S"]][it["pk"]["S"]] = it
    for group, items in expected.items():
        assert _query_all(client, group) == items, group
    assert _index_of(table)["ItemCount"] == sum(len(v) for v in expected.values())


def test_a_small_table_gets_its_index_at_once(client: Any, no_traceback: None) -> None:
    create_table(client, "bfill", range_type=None)
    _fill(client, 0, 50)
    described = _create_index(client)
    assert (described["TableStatus"], _index_of(described)["IndexStatus"]) == ("ACTIVE", "ACTIVE")
    assert _index_of(described)["Backfilling"] is False
    assert len(_query_all(client, "g1")) == len([i for i in range(50) if i % GROUPS == 1])


def test_an_index_deleted_while_it_backfills_stops_filling(client: Any, no_traceback: None) -> None:
    create_table(client, "bfill", range_type=None)
    _fill(client, 0, ITEMS)
    assert _index_of(_create_index(client))["Backfilling"] is True
    client.update_table(TableName="bfill", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": INDEX}}])
    assert "GlobalSecondaryIndexes" not in client.describe_table(TableName="bfill")["Table"]
    described = _create_index(client)  # the same name again: a new, empty index, filled from the start
    deadline = time.monotonic() + 60
    while _index_of(described)["IndexStatus"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.05)
        described = client.describe_table(TableName="bfill")["Table"]
    assert _index_of(described)["ItemCount"] == ITEMS
