"""The reference operation set through PynamoDB models, for `dynlocust compare --adapter pynamodb`.

Why: a team that ships PynamoDB wants the mapper-vs-raw table for PynamoDB, on the same tables, seed data and raw
side as dynlocust's own mapper. Each operation is written as a PynamoDB user would write it (model instances,
condition expressions, `TransactWrite`, `batch_get`, index queries). Models are built per run because PynamoDB
binds a model to one table name; they are configured like `MapperUser.pynamodb` (one attempt per call).
PynamoDB is an optional dependency (`pip install dynlocust[pynamodb]`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import gevent

from dynlocust.errors import ConfigurationError
from dynlocust.user_classes.mapper_user import configure_pynamodb

if TYPE_CHECKING:
    from dynlocust.compare.reference import Bench, Order


@dataclass
class Models:
    orders: Any
    scanned: Any
    events: Any


def build_models(bench: Bench, endpoint: str, region: str) -> Models:
    """PynamoDB models of the reference tables (`Order` on two tables, `Event`), connected and retry-free."""
    try:
        from pynamodb.attributes import NumberAttribute, UnicodeAttribute
        from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
        from pynamodb.models import Model
    except ImportError:
        raise ConfigurationError(
            "compare --adapter pynamodb: expected PynamoDB to be installed (pip install 'dynlocust[pynamodb]'), "
            "found it missing"
        ) from None

    class ByStatus(GlobalSecondaryIndex):
        class Meta:
            index_name = "by_status"
            projection = AllProjection()

        status = UnicodeAttribute(hash_key=True)
        created = NumberAttribute(range_key=True)

    def order_model(name: str, table: str) -> Any:
        meta = type("Meta", (), {"table_name": table})
        attributes = {
            "Meta": meta,
            "pk": UnicodeAttribute(hash_key=True),
            "sk": UnicodeAttribute(range_key=True),
            "status": UnicodeAttribute(),
            "created": NumberAttribute(),
            "total": NumberAttribute(),
            "note": UnicodeAttribute(),
            "by_status": ByStatus(),
        }
        return type(name, (Model,), attributes)

    class PynamoEvent(Model):
        class Meta:
            table_name = bench.events_table

        pk = UnicodeAttribute(hash_key=True)
        ts = NumberAttribute(range_key=True)
        body = UnicodeAttribute()

    models = Models(
        order_model("PynamoOrder", bench.orders_table), order_model("PynamoScanned", bench.scan_table), PynamoEvent
    )
    for model in (models.orders, models.scanned, models.events):
        configure_pynamodb(model, endpoint, region=region, connect_timeout=5, read_timeout=30)
    return models


class PynamoDBMapper:
    """The reference operations written with PynamoDB (implements `compare.ReferenceMapper`)."""

    def __init__(self, bench: Bench, endpoint: str, region: str) -> None:
        from pynamodb.transactions import TransactWrite

        self.models = build_models(bench, endpoint, region)
        self.Order = self.models.orders
        self._connection = self.Order._get_connection().connection
        self._transact_write = TransactWrite

    def _model(self, order: Order) -> Any:
        return self.Order(
            order.pk,
            order.sk,
            status=order.status,
            created=order.created,
            total=float(order.total),  # PynamoDB numbers are int/float
            note=order.note,
        )

    def _transaction(self) -> Any:
        return self._transact_write(connection=self._connection)

    def create(self, order: Order) -> Any:
        return self._model(order).save(condition=self.Order.pk.does_not_exist())

    def create_many(self, orders: list[Order]) -> Any:
        with self._transaction() as transaction:
            for order in orders:
                transaction.save(self._model(order), condition=self.Order.pk.does_not_exist())

    def update_many(self, orders: list[Order]) -> Any:
        Order = self.Order
        with self._transaction() as transaction:
            for order in orders:
                actions = [Order.status.set(order.status), Order.total.set(float(order.total))]
                transaction.update(self._model(order), actions=actions, condition=Order.pk.exists())

    def update_through_index(self, status: str) -> Any:
        Order = self.Order
        found = list(Order.by_status.query(status, limit=25, attributes_to_get=["pk", "sk"]))
        with self._transaction() as transaction:
            for item in found:
                transaction.update(item, actions=[Order.status.set("DONE")], condition=Order.pk.exists())

    def delete(self, order: Order) -> Any:
        return self._model(order).delete()

    def delete_many(self, orders: list[Order]) -> Any:
        with self._transaction() as transaction:
            for order in orders:
                transaction.delete(self._model(order))

    def get(self, pk: str, sk: str) -> Any:
        return self.Order.get(pk, sk)

    def query(self, partition: str) -> Any:
        return list(self.Order.query(partition))

    def query_index(self, status: str) -> Any:
        return list(self.Order.by_status.query(status))

    def scan(self, status: str) -> Any:
        scanned = self.models.scanned
        return list(scanned.scan(scanned.status == status))

    def read_sharded(self, base: str) -> Any:
        events = self.models.events
        jobs = [gevent.spawn(lambda p: list(events.query(p)), f"{base}#{shard}") for shard in range(4)]
        try:
            gevent.joinall(jobs, raise_error=True)
        finally:
            gevent.killall(jobs)
        return list(heapq.merge(*(job.value for job in jobs), key=attrgetter("ts")))

    def get_many(self, keys: list[tuple[str, str]]) -> Any:
        return list(self.Order.batch_get(keys))

    def move(self, order: Order, new_sk: str) -> Any:
        Order = self.Order
        current = Order.get(order.pk, order.sk, consistent_read=True)
        moved = Order(
            current.pk, new_sk, **{k: v for k, v in current.attribute_values.items() if k not in ("pk", "sk")}
        )
        with self._transaction() as transaction:
            transaction.delete(current, condition=Order.pk.exists())
            transaction.save(moved, condition=Order.pk.does_not_exist())
        return moved


__all__ = ["Models", "PynamoDBMapper", "build_models"]
