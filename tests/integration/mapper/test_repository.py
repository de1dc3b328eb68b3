"""Repository operations against the local endpoint (a real process): results, wire items, and failures."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynlocust.mapper.model import ModelError
from dynlocust.mapper.repository import GetManyResult, Repository
from dynlocust.request.outcomes import CONDITION_FAILED, classify
from tests.integration.mapper.conftest import Event, Order


@pytest.fixture
def orders(client: Any, make_table: Any) -> Repository[Order]:
    return Repository(Order, client, table=make_table(Order))


def order(i: int, pk: str = "c1", **kw: Any) -> Order:
    return Order(pk=pk, sk=f"o{i:04d}", created=i, total=Decimal(f"{i}.50"), **kw)


def test_create_get_round_trip_with_declared_types(orders: Repository[Order], client: Any) -> None:
    original = order(1, ratio=0.1, tags={"a", "b"}, payload=b"\x00\x01", lines=[{"sku": "x", "qty": 2}])
    orders.create(original)
    assert orders.get("c1", "o0001") == original
    got = orders.get("c1", "o0001", consistent=True)
    assert got is not None and type(got.created) is int and type(got.ratio) is float and type(got.payload) is bytes
    raw = client.get_item(TableName=orders.table, Key={"pk": {"S": "c1"}, "sk": {"S": "o0001"}})["Item"]
    assert raw["total"] == {"N": "1.5"}  # the service stores and returns numbers normalised (1.50 -> 1.5)
    assert raw["ratio"] == {"N": "0.1"} and raw["created"] == {"N": "1"}
    assert orders.get("c1", "missing") is None


def test_create_is_conditional(orders: Repository[Order]) -> None:
    orders.create(order(1))
    with pytest.raises(ClientError) as raised:
        orders.create(replace(order(1), status="OTHER"))
    assert classify(exception=raised.value).kind == CONDITION_FAILED
    assert orders.get("c1", "o0001") == order(1)


def test_create_many_is_one_atomic_transaction(orders: Repository[Order]) -> None:
    orders.create_many([order(i) for i in range(100)])
    assert len(orders.query("c1")) == 100
    with pytest.raises(ClientError) as raised:  # one existing key cancels all
        orders.create_many([order(i, pk="c2") for i in range(10)] + [order(5)])
    assert classify(exception=raised.value).kind == CONDITION_FAILED
    assert orders.query("c2") == []
    with pytest.raises(ModelError, match="at most 100"):
        orders.create_many([order(i, pk="c3") for i in range(101)])


def test_update_and_update_many_are_conditional(orders: Repository[Order]) -> None:
    orders.create_many([order(i) for i in range(25)])
    orders.update(replace(order(0), status="PAID"), ["status"])
    assert orders.get("c1", "o0000").status == "PAID"  # type: ignore[union-attr]
    changed = [replace(order(i), status="SHIPPED", total=Decimal("9")) for i in range(25)]
    orders.update_many(changed, ["status", "total"])
    assert orders.query("c1") == changed
    with pytest.raises(ClientError) as raised:  # a missing item cancels the whole transaction
        orders.update_many([replace(order(1), status="X"), order(999)], ["status"])
    assert classify(exception=raised.value).kind == CONDITION_FAILED
    assert orders.get("c1", "o0001").status == "SHIPPED"  # type: ignore[union-attr]
    with pytest.raises(ModelError, match="key field"):
        orders.update(order(1), ["sk"])


def test_update_through_index(orders: Repository[Order]) -> None:
    orders.create_many([order(i, status="NEW" if i % 2 else "OLD") for i in range(50)])
    assert orders.update_through_index("by_status", "NEW", {"status": "DONE"}, limit=25) == 25
    assert len(orders.query_index("by_status", "DONE")) == 25
    assert orders.query_index("by_status", "NEW") == []


def test_delete_and_delete_many(orders: Repository[Order]) -> None:
    orders.create_many([order(i) for i in range(30)])
    orders.delete(order(0))
    orders.delete(("c1", "o0001"))
    orders.delete_many([order(i) for i in range(2, 27)])
    assert [o.sk for o in orders.query("c1")] == ["o0027", "o0028", "o0029"]


def test_get_many_is_one_batch_and_reports_no_leftovers(orders: Repository[Order], endpoint: Any) -> None:
    orders.create_many([order(i) for i in range(100)])
    endpoint.reset_stats()
    result = orders.get_many([("c1", f"o{i:04d}") for i in range(100)])
    stats = endpoint.stats()
    assert stats["requests_total"] == 1
    assert stats["tables"][orders.table]["BatchGetItem"]["ok"] == 1
    assert isinstance(result, GetManyResult) and result.complete and result.unprocessed == []
    assert sorted(o.sk for o in result.items) == [f"o{i:04d}" for i in range(100)]
    assert orders.get_many([("c1", "nope")]).items == []
    with pytest.raises(ModelError, match="at most 100"):
        orders.get_many([("c1", str(i)) for i in range(101)])


def test_query_paginates_in_sort_order_and_stops_at_limit(orders: Repository[Order]) -> None:
    orders.create_many([order(i) for i in reversed(range(100))])
    orders.create_many([order(i, pk="c2") for i in range(3)])
    assert [o.created for o in orders.query("c1", page_size=7)] == list(range(100))
    assert [o.created for o in orders.query("c1", page_size=7, limit=10)] == list(range(10))
    assert [o.created for o in orders.query("c1", forward=False, limit=3)] == [99, 98, 97]


def test_query_index_and_scan_with_filter(orders: Repository[Order]) -> None:
    orders.create_many([order(i, status="A" if i < 40 else "B") for i in range(60)])
    by_index = orders.query_index("by_status", "B", page_size=6)
    assert [o.created for o in by_index] == list(range(40, 60))  # index sort key: created
    scanned = orders.scan({"status": "A"}, page_size=9)
    assert sorted(o.created for o in scanned) == list(range(40))
    assert len(orders.scan()) == 60


def test_read_sharded_merges_shards_in_sort_order(client: Any, make_table: Any) -> None:
    events = Repository(Event, client, table=make_table(Event))
    model = events.model
    written = [Event(pk=model.shard_partition("device-1", ts), ts=ts, body=str(ts)) for ts in range(120)]
    events.create_many(written[:100])
    events.create_many(written[100:])
    assert len({e.pk for e in written}) == 4  # really spread
    merged = events.read_sharded("device-1", page_size=11)
    assert [e.ts for e in merged] == list(range(120))
    with pytest.raises(ModelError, match="shards"):
        Repository(Order, client).read_sharded("x")


def test_move_changes_the_key_atomically(orders: Repository[Order]) -> None:
    orders.create(order(1, tags={"t"}))
    moved = orders.move(order(1), sk="o9999")
    assert moved == replace(order(1, tags={"t"}), sk="o9999")
    assert orders.get("c1", "o0001") is None
    assert orders.get("c1", "o9999") == moved
    with pytest.raises(ModelError, match="found none"):
        orders.move(order(1), sk="o5")
    orders.create(order(2))
    with pytest.raises(ClientError) as raised:  # target exists: nothing moves
        orders.move(order(2), sk="o9999")
    assert classify(exception=raised.value).kind == CONDITION_FAILED
    assert orders.get("c1", "o0002") == order(2)
