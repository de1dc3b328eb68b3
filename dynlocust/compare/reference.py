"""The reference operation set of `dynlocust compare`: its tables, its data and both sides of every row.

The noun here is the *reference*: `Bench` creates and seeds the reference tables and builds each reference row as
a `Case` (the raw calls a careful engineer writes by hand, and the mapper operation that does the same), the
mapper side through a `ReferenceMapper` adapter (`DynlocustMapper` here, PynamoDB's in `pynamodb_reference`).
"""

from __future__ import annotations

import heapq
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import locust  # noqa: F401 - first: gevent patching before botocore

import gevent

from dynlocust.compare.measure import Case
from dynlocust.errors import DynlocustError
from dynlocust.mapper.model import Index, entity, model_of
from dynlocust.mapper.repository import Repository


@entity(table="compare-orders", partition_key="pk", sort_key="sk", indexes=[Index("by_status", "status", "created")])
@dataclass
class Order:
    pk: str
    sk: str
    status: str = "NEW"
    created: int = 0
    total: Decimal = Decimal(0)
    note: str = ""


@entity(table="compare-events", partition_key="pk", sort_key="ts", shards=4)
@dataclass
class Event:
    pk: str
    ts: int
    body: str = ""


NOTE = "x" * 120  # items of ~200 bytes


def make_order(pk: str, i: int, status: str = "NEW") -> Order:
    return Order(pk=pk, sk=f"{i:06d}", status=status, created=i, total=Decimal(f"{i}.99"), note=NOTE)


# --- the raw side: hand-written attribute values ------------------------------------------------------------------


def raw_item(o: Order) -> dict[str, Any]:
    return {
        "pk": {"S": o.pk},
        "sk": {"S": o.sk},
        "status": {"S": o.status},
        "created": {"N": str(o.created)},
        "total": {"N": str(o.total)},
        "note": {"S": o.note},
    }


def raw_order(item: dict[str, Any]) -> Order:
    return Order(
        pk=item["pk"]["S"],
        sk=item["sk"]["S"],
        status=item["status"]["S"],
        created=int(item["created"]["N"]),
        total=Decimal(item["total"]["N"]),
        note=item["note"]["S"],
    )


def raw_event(item: dict[str, Any]) -> Event:
    return Event(pk=item["pk"]["S"], ts=int(item["ts"]["N"]), body=item["body"]["S"])


NOT_EXISTS = {"ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": "pk"}}


class Bench:
    """The tables, seeded data and both implementations of every reference operation."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.orders_table = f"{prefix}-orders"
        self.scan_table = f"{prefix}-scan"
        self.events_table = f"{prefix}-events"
        self.orders = Repository(Order, client, table=self.orders_table)
        self.scanned = Repository(Order, client, table=self.scan_table)
        self.events = Repository(Event, client, table=self.events_table)
        self._tags = itertools.count()

    # --- tables and seed data (unmeasured) ---

    def create_tables(self) -> None:
        for model, name in ((Order, self.orders_table), (Order, self.scan_table), (Event, self.events_table)):
            self.client.create_table(**model_of(model).create_table_request(name))
        for name in (self.orders_table, self.scan_table, self.events_table):
            self.client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})

    def delete_tables(self) -> None:
        for name in (self.orders_table, self.scan_table, self.events_table):
            try:
                self.client.delete_table(TableName=name)
            except Exception as exc:  # teardown goes on: report, never mask the run's own error
                print(f"warning: could not delete table {name}: {exc}", file=sys.stderr)

    def _batch_put(self, table: str, items: Sequence[dict[str, Any]]) -> None:
        for start in range(0, len(items), 25):
            requests = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
            pending: dict[str, Any] = {table: requests}
            for _ in range(20):  # seeding may retry leftovers: it is not measured
                response = self.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
                if not pending:
                    break
                time.sleep(0.2)
            else:
                raise DynlocustError(f"compare: expected to seed table {table}, found items still unprocessed")

    def seed(self) -> None:
        self._batch_put(self.orders_table, [raw_item(make_order("q100", i)) for i in range(100)])
        self._batch_put(self.orders_table, [raw_item(make_order("q1000", i)) for i in range(1000)])
        self._batch_put(self.orders_table, [raw_item(make_order("gsi", i, status="G200")) for i in range(200)])
        self._batch_put(
            self.scan_table,
            [raw_item(make_order(f"s{i % 50}", i, "HIT" if i % 4 == 0 else "MISS")) for i in range(1000)],
        )
        model = model_of(Event)
        for base, count in (("dev100", 100), ("dev1000", 1000)):
            events = [Event(pk=model.shard_partition(base, ts), ts=ts, body=NOTE) for ts in range(count)]
            self._batch_put(self.events_table, [self.events._item(e) for e in events])

    def _existing(self, tag: str, count: int, status: str = "NEW") -> list[Order]:
        orders = [make_order(tag, i, status) for i in range(count)]
        for start in range(0, count, 100):
            self.orders.create_many(orders[start : start + 100])
        return orders

    # --- raw implementations ---

    def raw_transact_puts(self, orders: list[Order]) -> None:
        table = self.orders_table
        actions = [{"Put": {"TableName": table, "Item": raw_item(o), **NOT_EXISTS}} for o in orders]
        self.client.transact_write_items(TransactItems=actions)

    def raw_update_action(self, key: dict[str, Any], status: str, total: Decimal | None) -> dict[str, Any]:
        names = {"#pk": "pk", "#f0": "status"}
        values = {":v0": {"S": status}}
        expression = "SET #f0 = :v0"
        if total is not None:
            names["#f1"] = "total"
            values[":v1"] = {"N": str(total)}
            expression += ", #f1 = :v1"
        return {
            "TableName": self.orders_table,
            "Key": key,
            "UpdateExpression": expression,
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }

    def raw_update_many(self, orders: list[Order]) -> None:
        actions = [
            {"Update": self.raw_update_action({"pk": {"S": o.pk}, "sk": {"S": o.sk}}, o.status, o.total)}
            for o in orders
        ]
        self.client.transact_write_items(TransactItems=actions)

    def raw_query(self, partition: str, index: str | None = None, table: str | None = None) -> list[dict[str, Any]]:
        key = "status" if index else "pk"
        request: dict[str, Any] = {
            "TableName": table or self.orders_table,
            "KeyConditionExpression": "#k = :v",
            "ExpressionAttributeNames": {"#k": key},
            "ExpressionAttributeValues": {":v": {"S": partition}},
        }
        if index:
            request["IndexName"] = index
        items: list[dict[str, Any]] = []
        while True:
            response = self.client.query(**request)
            items.extend(response["Items"])
            if "LastEvaluatedKey" not in response:
                return items
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def raw_partition(self, partition: str) -> list[Order]:
        return [raw_order(item) for item in self.raw_query(partition)]

    def raw_update_through_index(self, status: str) -> None:
        request: dict[str, Any] = {
            "TableName": self.orders_table,
            "IndexName": "by_status",
            "KeyConditionExpression": "#k = :v",
            "ExpressionAttributeNames": {"#k": "status", "#p": "pk", "#s": "sk"},
            "ExpressionAttributeValues": {":v": {"S": status}},
            "ProjectionExpression": "#p, #s",
            "Limit": 25,
        }
        found = self.client.query(**request)["Items"]
        actions = [{"Update": self.raw_update_action({"pk": i["pk"], "sk": i["sk"]}, "DONE", None)} for i in found]
        self.client.transact_write_items(TransactItems=actions)

    def raw_delete(self, orders: list[Order]) -> None:
        if len(orders) == 1:
            o = orders[0]
            self.client.delete_item(TableName=self.orders_table, Key={"pk": {"S": o.pk}, "sk": {"S": o.sk}})
            return
        actions = [
            {"Delete": {"TableName": self.orders_table, "Key": {"pk": {"S": o.pk}, "sk": {"S": o.sk}}}} for o in orders
        ]
        self.client.transact_write_items(TransactItems=actions)

    def raw_get(self, pk: str, sk: str) -> Order | None:
        response = self.client.get_item(TableName=self.orders_table, Key={"pk": {"S": pk}, "sk": {"S": sk}})
        return raw_order(response["Item"]) if "Item" in response else None

    def raw_get_many(self, keys: list[tuple[str, str]]) -> list[Order]:
        wire = [{"pk": {"S": pk}, "sk": {"S": sk}} for pk, sk in keys]
        response = self.client.batch_get_item(RequestItems={self.orders_table: {"Keys": wire}})
        return [raw_order(item) for item in response["Responses"][self.orders_table]]

    def raw_scan(self, status: str) -> list[Order]:
        request: dict[str, Any] = {
            "TableName": self.scan_table,
            "FilterExpression": "#w0 = :w0",
            "ExpressionAttributeNames": {"#w0": "status"},
            "ExpressionAttributeValues": {":w0": {"S": status}},
        }
        items: list[Order] = []
        while True:
            response = self.client.scan(**request)
            items.extend(raw_order(item) for item in response["Items"])
            if "LastEvaluatedKey" not in response:
                return items
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def raw_sharded(self, base: str) -> list[Event]:
        jobs = [gevent.spawn(self.raw_query, f"{base}#{shard}", None, self.events_table) for shard in range(4)]
        gevent.joinall(jobs, raise_error=True)
        merged = heapq.merge(*(job.value for job in jobs), key=lambda item: int(item["ts"]["N"]))
        return [raw_event(item) for item in merged]

    def raw_move(self, order: Order, new_sk: str) -> Order:
        key = {"pk": {"S": order.pk}, "sk": {"S": order.sk}}
        current = raw_order(self.client.get_item(TableName=self.orders_table, Key=key, ConsistentRead=True)["Item"])
        current.sk = new_sk
        exists = {**NOT_EXISTS, "ConditionExpression": "attribute_exists(#pk)"}
        self.client.transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": self.orders_table, "Key": key, **exists}},
                {"Put": {"TableName": self.orders_table, "Item": raw_item(current), **NOT_EXISTS}},
            ]
        )
        return current

    # --- the rows ---

    def tag(self) -> str:
        return f"t{next(self._tags)}"

    def cases(self, mapper: ReferenceMapper | None = None) -> list[Case]:
        """Every reference row: the raw side here, the mapper side from `mapper` (default: dynlocust's)."""
        m = mapper or DynlocustMapper(self)
        cases = []

        def fresh(count: int) -> Callable[[str], list[Order]]:
            return lambda tag: [make_order(tag, i) for i in range(count)]

        def existing(count: int, status: str = "NEW") -> Callable[[str], list[Order]]:
            return lambda tag: self._existing(tag, count, status)

        def changed(count: int) -> Callable[[str], list[Order]]:
            def prepare(tag: str) -> list[Order]:
                return [Order(x.pk, x.sk, "PAID", x.created, x.total + 1, x.note) for x in self._existing(tag, count)]

            return prepare

        cases.append(
            Case(
                "create one item (conditional put)",
                lambda s: self.client.put_item(TableName=self.orders_table, Item=raw_item(s[0]), **NOT_EXISTS),
                lambda s: m.create(s[0]),
                fresh(1),
            )
        )
        for n in (25, 100):
            cases.append(Case(f"create {n} items (one transaction)", self.raw_transact_puts, m.create_many, fresh(n)))
        for n in (1, 25, 100):
            cases.append(
                Case(f"conditional update of {n} (one transaction)", self.raw_update_many, m.update_many, changed(n))
            )
        cases.append(
            Case(
                "update 25 through an index",
                lambda s: self.raw_update_through_index(s[0].status),
                lambda s: m.update_through_index(s[0].status),
                lambda tag: self._existing(tag, 25, status=f"U-{tag}"),
            )
        )
        cases.append(Case("delete 1", self.raw_delete, lambda s: m.delete(s[0]), existing(1)))
        for n in (25, 100):
            cases.append(Case(f"delete {n} (one transaction)", self.raw_delete, m.delete_many, existing(n)))
        cases.append(
            Case(
                "retrieve by key",
                lambda s: self.raw_get("q1000", "000500"),
                lambda s: m.get("q1000", "000500"),
            )
        )
        for n in (100, 1000):
            cases.append(
                Case(
                    f"retrieve {n} items of one partition",
                    bind(self.raw_partition, f"q{n}"),
                    bind(m.query, f"q{n}"),
                )
            )
        cases.append(
            Case(
                "retrieve 200 items through a GSI",
                lambda s: [raw_order(i) for i in self.raw_query("G200", index="by_status")],
                lambda s: m.query_index("G200"),
            )
        )
        cases.append(
            Case(
                "scan 1,000 items with a filter",
                lambda s: self.raw_scan("HIT"),
                lambda s: m.scan("HIT"),
            )
        )
        for n in (100, 1000):
            cases.append(
                Case(
                    f"write-sharded partition, {n} items over 4 shards",
                    bind(self.raw_sharded, f"dev{n}"),
                    bind(m.read_sharded, f"dev{n}"),
                )
            )
        for n in (25, 100):
            keys = [("q1000", f"{i * 7:06d}") for i in range(n)]
            cases.append(
                Case(
                    f"retrieve by {n} keys (BatchGetItem)",
                    bind(self.raw_get_many, keys),
                    bind(m.get_many, keys),
                )
            )
        cases.append(
            Case(
                "move (read, then delete + put in one transaction)",
                lambda s: self.raw_move(s[0], "moved"),
                lambda s: m.move(s[0], "moved"),
                existing(1),
            )
        )
        return cases


class ReferenceMapper(Protocol):
    """The mapper side of every reference row; an adapter (dynlocust's, PynamoDB's) implements each operation.

    Orders arrive as the reference `Order` dataclass: converting them is part of the mapper's cost, as building
    attribute values is part of the raw side's.
    """

    def create(self, order: Order) -> Any: ...
    def create_many(self, orders: list[Order]) -> Any: ...
    def update_many(self, orders: list[Order]) -> Any: ...
    def update_through_index(self, status: str) -> Any: ...
    def delete(self, order: Order) -> Any: ...
    def delete_many(self, orders: list[Order]) -> Any: ...
    def get(self, pk: str, sk: str) -> Any: ...
    def query(self, partition: str) -> Any: ...
    def query_index(self, status: str) -> Any: ...
    def scan(self, status: str) -> Any: ...
    def read_sharded(self, base: str) -> Any: ...
    def get_many(self, keys: list[tuple[str, str]]) -> Any: ...
    def move(self, order: Order, new_sk: str) -> Any: ...


class DynlocustMapper:
    """dynlocust's `Repository` on the reference tables."""

    def __init__(self, bench: Bench) -> None:
        self.orders, self.scanned, self.events = bench.orders, bench.scanned, bench.events

    def create(self, order: Order) -> Any:
        return self.orders.create(order)

    def create_many(self, orders: list[Order]) -> Any:
        return self.orders.create_many(orders)

    def update_many(self, orders: list[Order]) -> Any:
        return self.orders.update_many(orders, ["status", "total"])

    def update_through_index(self, status: str) -> Any:
        return self.orders.update_through_index("by_status", status, {"status": "DONE"}, limit=25)

    def delete(self, order: Order) -> Any:
        return self.orders.delete(order)

    def delete_many(self, orders: list[Order]) -> Any:
        return self.orders.delete_many(orders)

    def get(self, pk: str, sk: str) -> Any:
        return self.orders.get(pk, sk)

    def query(self, partition: str) -> Any:
        return self.orders.query(partition)

    def query_index(self, status: str) -> Any:
        return self.orders.query_index("by_status", status)

    def scan(self, status: str) -> Any:
        return self.scanned.scan({"status": status})

    def read_sharded(self, base: str) -> Any:
        return self.events.read_sharded(base)

    def get_many(self, keys: list[tuple[str, str]]) -> Any:
        return self.orders.get_many(keys)

    def move(self, order: Order, new_sk: str) -> Any:
        return self.orders.move(order, sk=new_sk)


def bind(function: Callable[..., Any], *args: Any) -> Callable[[Any], Any]:
    """A side that ignores the prepared state (read rows need none)."""
    return lambda _state: function(*args)
