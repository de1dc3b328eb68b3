"""Named operations built from a scenario: each turns "one more request" into a client method and its arguments.

Requests are built in wire format (attribute values) so the same arguments suit every transport, and each asks
for `ReturnConsumedCapacity=TOTAL` so windows and the cost ceiling count capacity units the service reports.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from dynlocust.request.keys import KeyGenerator, keyspace_key, make_key_generator, padding, worker_rng
from dynlocust.scenario.model import GSI_VALUES, Operation, Scenario, Table

Request = tuple[str, dict[str, Any]]


def key_value(key: str, key_type: str) -> dict[str, Any]:
    """A generated key string as an attribute value of the schema's type (numbers from a stable hash)."""
    if key_type == "N":
        return {"N": str(zlib.crc32(key.encode()))}
    if key_type == "B":
        return {"B": key.encode()}
    return {"S": key}


def sort_value(i: int, key_type: str) -> dict[str, Any]:
    if key_type == "N":
        return {"N": str(i)}
    if key_type == "B":
        return {"B": f"s{i:06d}".encode()}
    return {"S": f"s{i:06d}"}


def gsi_value(key: str, key_type: str) -> dict[str, Any]:
    """The value of a GSI key attribute without `values`: a stable hash of the item key into `GSI_VALUES`."""
    return key_value(f"g{zlib.crc32(key.encode()) % GSI_VALUES:03d}", key_type)


def index_values(
    table: Table, *, seed: int, salt: str, worker_index: int = 0, worker_count: int = 1
) -> dict[str, KeyGenerator]:
    """A generator per GSI key attribute that has `values` (its own distribution, so a hot index key can be
    rehearsed); attributes without one keep `gsi_value`. The loader allows one distribution per attribute."""
    out: dict[str, KeyGenerator] = {}
    for gsi in table.gsis:
        for attribute in (gsi.partition_key, gsi.sort_key):
            if attribute is not None and attribute.values is not None and attribute.name not in out:
                out[attribute.name] = make_key_generator(
                    attribute.values,
                    seed=seed + zlib.crc32(f"{salt}|{attribute.name}".encode()),
                    worker_index=worker_index,
                    worker_count=worker_count,
                )
    return out


def primary_key(table: Table, key: str, sort_index: int = 0) -> dict[str, Any]:
    out = {table.partition_key.name: key_value(key, table.partition_key.type)}
    if table.sort_key is not None:
        out[table.sort_key.name] = sort_value(sort_index, table.sort_key.type)
    return out


def build_item(
    table: Table, key: str, size: int, sort_index: int = 0, values: Mapping[str, KeyGenerator] | None = None
) -> dict[str, Any]:
    """A wire-format item of about `size` bytes with its primary key and every GSI key attribute; `values` (from
    `index_values`) draws the attributes that have a distribution."""
    attributes = primary_key(table, key, sort_index)
    for gsi in table.gsis:
        for attribute in (gsi.partition_key, gsi.sort_key):
            if attribute is not None and attribute.name not in attributes:
                drawn = values.get(attribute.name) if values else None
                attributes[attribute.name] = (
                    gsi_value(key + attribute.name, attribute.type)
                    if drawn is None
                    else key_value(drawn.next_key(), attribute.type)
                )
    # make_item({"_k": key}, size - _wire_size(attributes), wire=True) minus "_k", without its generic sizing
    room = size - _wire_size(attributes) - (2 + len(key.encode())) - 3
    item: dict[str, Any] = {"pad": {"S": padding(key, room)}} if room > 0 else {}
    item.update(attributes)
    return item


def _wire_size(item: Mapping[str, Any]) -> int:
    size = 0
    for name, value in item.items():
        ((kind, raw),) = value.items()
        size += len(name.encode()) + (len(raw) if kind == "B" else len(str(raw).encode()))
    return size


def seed_items(table: Table) -> list[dict[str, Any]]:
    """The items seeding writes: keys `keyspace_key(0..)`, `items_per_partition` sort keys each."""
    seed = table.seed
    if seed is None:
        return []
    per = seed.items_per_partition if table.sort_key is not None else 1
    values = index_values(table, seed=0, salt="seed")
    return [build_item(table, keyspace_key(i // per), seed.item_size, i % per, values) for i in range(seed.items)]


class OperationBuilder:
    """Builds the requests of one scenario operation for one worker."""

    def __init__(
        self,
        operation: Operation,
        table: Table,
        physical_name: str,
        *,
        item_size: int,
        seed: int,
        worker_index: int = 0,
        worker_count: int = 1,
    ) -> None:
        self.operation = operation
        self.label = operation.label
        self.table = table
        self.table_name = physical_name
        self.item_size = operation.item_size or item_size
        # the loader resolved each operation's keys: a keyspace for reads of seeded items, none for fresh writes
        spec = operation.keys
        self._keys = (
            make_key_generator(
                spec,
                seed=seed + zlib.crc32(operation.label.encode()),
                worker_index=worker_index,
                worker_count=worker_count,
            )
            if spec is not None
            else None
        )
        self._rng = worker_rng(seed, worker_index, operation.label)
        stream = seed + zlib.crc32(operation.label.encode())
        worker = {"worker_index": worker_index, "worker_count": worker_count}
        self._values = index_values(table, seed=stream, salt="index", **worker)
        gsi = table.gsi(operation.index or "") if operation.op == "gsi_query" else None
        queried = gsi.partition_key.values if gsi is not None else None
        # a query of an index whose key has a distribution asks for the values the writes give it
        self._queried = None if queried is None else make_key_generator(queried, seed=stream, **worker)
        self._per_partition = table.seed.items_per_partition if table.seed and table.sort_key else 1
        self.build: Callable[[], Request] = getattr(self, "_" + operation.op)

    def _key(self) -> str:
        assert self._keys is not None
        return self._keys.next_key()

    def _sort_index(self) -> int:
        return self._rng.randrange(self._per_partition) if self._per_partition > 1 else 0

    def _common(self) -> dict[str, Any]:
        return {"TableName": self.table_name, "ReturnConsumedCapacity": "TOTAL"}

    def _put(self) -> Request:
        return "put_item", {
            **self._common(),
            "Item": build_item(self.table, self._key(), self.item_size, 0, self._values),
        }

    def _conditional_put(self) -> Request:
        name, kwargs = self._put()
        kwargs["ConditionExpression"] = "attribute_not_exists(#pk)"
        kwargs["ExpressionAttributeNames"] = {"#pk": self.table.partition_key.name}
        return name, kwargs

    def _get(self) -> Request:
        key = primary_key(self.table, self._key(), self._sort_index())
        return "get_item", {**self._common(), "Key": key, "ConsistentRead": self.operation.consistent}

    def _query(self) -> Request:
        pk = self.table.partition_key
        kwargs = {
            **self._common(),
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": pk.name},
            "ExpressionAttributeValues": {":pk": key_value(self._key(), pk.type)},
            "ConsistentRead": self.operation.consistent,
        }
        if self.operation.limit:
            kwargs["Limit"] = self.operation.limit
        return "query", kwargs

    def _gsi_query(self) -> Request:
        gsi = self.table.gsi(self.operation.index or "")
        assert gsi is not None, "the loader checks that the index exists"
        pk = gsi.partition_key
        if self._queried is None:
            value = gsi_value(self._key() + pk.name, pk.type)
        else:
            value = key_value(self._queried.next_key(), pk.type)
        kwargs = {
            **self._common(),
            "IndexName": gsi.name,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": gsi.partition_key.name},
            "ExpressionAttributeValues": {":pk": value},
        }
        if self.operation.limit:
            kwargs["Limit"] = self.operation.limit
        return "query", kwargs

    def _scan(self) -> Request:
        kwargs: dict[str, Any] = {**self._common(), "Limit": self.operation.limit or 100}
        if self.operation.filter:
            kwargs["FilterExpression"] = self.operation.filter
        if self.operation.consistent:
            kwargs["ConsistentRead"] = True
        return "scan", kwargs

    def _update(self) -> Request:
        return "update_item", {
            **self._common(),
            "Key": primary_key(self.table, self._key(), self._sort_index()),
            "UpdateExpression": "SET #n = if_not_exists(#n, :zero) + :one",
            "ExpressionAttributeNames": {"#n": "updates"},
            "ExpressionAttributeValues": {":zero": {"N": "0"}, ":one": {"N": "1"}},
        }

    def _delete(self) -> Request:
        return "delete_item", {**self._common(), "Key": primary_key(self.table, self._key(), self._sort_index())}

    def _transact_write(self) -> Request:
        actions = [
            {"Put": {"TableName": self.table_name, "Item": build_item(self.table, k, self.item_size, 0, self._values)}}
            for k in self._distinct_keys(self.operation.items)
        ]
        return "transact_write_items", {"TransactItems": actions, "ReturnConsumedCapacity": "TOTAL"}

    def _batch_write(self) -> Request:
        requests = [
            {"PutRequest": {"Item": build_item(self.table, k, self.item_size, 0, self._values)}}
            for k in self._distinct_keys(self.operation.items)
        ]
        return "batch_write_item", {"RequestItems": {self.table_name: requests}, "ReturnConsumedCapacity": "TOTAL"}

    def _batch_get(self) -> Request:
        keys = [primary_key(self.table, k, self._sort_index()) for k in self._distinct_keys(self.operation.items)]
        request = {"Keys": keys, "ConsistentRead": self.operation.consistent}
        return "batch_get_item", {"RequestItems": {self.table_name: request}, "ReturnConsumedCapacity": "TOTAL"}

    def _distinct_keys(self, n: int) -> list[str]:
        """Batches and transactions refuse two requests for one item, so draw until `n` distinct keys (bounded)."""
        keys: dict[str, None] = {}
        for _ in range(n * 20):
            keys[self._key()] = None
            if len(keys) == n:
                break
        return list(keys)


@dataclass(frozen=True)
class Mix:
    """The weighted operation mix of one worker: `pick()` draws the next operation."""

    builders: Sequence[OperationBuilder]
    cumulative: Sequence[float]
    rng: random.Random

    @classmethod
    def for_scenario(
        cls,
        scenario: Scenario,
        physical_names: Mapping[str, str],
        *,
        worker_index: int = 0,
        worker_count: int = 1,
    ) -> Mix:
        builders = [
            OperationBuilder(
                op,
                scenario.table(op.table),
                physical_names[op.table],
                item_size=scenario.workload.item_size,
                seed=scenario.random_seed,
                worker_index=worker_index,
                worker_count=worker_count,
            )
            for op in scenario.workload.operations
        ]
        weights = list(accumulate(op.weight for op in scenario.workload.operations))
        return cls(builders, weights, worker_rng(scenario.random_seed, worker_index, "mix"))

    def pick(self) -> OperationBuilder:
        if len(self.builders) == 1:
            return self.builders[0]
        point = self.rng.random() * self.cumulative[-1]
        for builder, bound in zip(self.builders, self.cumulative, strict=True):
            if point < bound:
                return builder
        return self.builders[-1]
