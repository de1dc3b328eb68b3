"""Repository operations for one entity class over a botocore DynamoDB client.

Why this shape: each operation is the request a careful engineer would write by hand (the raw side of `compare`
writes exactly the same requests), so a mapper-vs-raw ratio measures the mapper and nothing else. Every batch or
transaction is a single call (the reference mapper had no batch get; it fanned out single gets), leftovers are
reported, never retried, and errors are botocore's own exceptions, so `outcomes.classify` labels them as it labels
every other call. The client is expected to have retries off (`dynlocust.request.transport.boto3.make_client`).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from operator import attrgetter
from typing import Any, Generic, TypeVar

import gevent

from dynlocust.dynamodb import MAX_BATCH_GET, MAX_TRANSACT
from dynlocust.mapper.deserializer import Deserializer
from dynlocust.mapper.model import Model, ModelError, model_of
from dynlocust.mapper.serializer import Serializer

T = TypeVar("T")

_PLACEHOLDERS = tuple(f":v{i}" for i in range(1024))


@dataclass(slots=True)
class GetManyResult(Generic[T]):
    """Entities found by one BatchGetItem, and the keys the service left unprocessed (throttled or cut at 16 MB)."""

    items: list[T]
    unprocessed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.unprocessed


class Repository(Generic[T]):
    """Operations on the table of one `@entity` class; `table` overrides the declared table name."""

    def __init__(
        self,
        cls: type[T],
        client: Any,
        *,
        table: str | None = None,
        serializer: Serializer | None = None,
        deserializer: Deserializer | None = None,
    ) -> None:
        self.model: Model[T] = model_of(cls)
        self.client = client
        self.table = table or self.model.table
        serializer, deserializer = serializer or Serializer(), deserializer or Deserializer()
        self._serialize_item = serializer.serialize_item
        self._serialize = serializer.serialize
        self._deserialize_item = deserializer.deserialize_item
        codec = self.model.codec(serializer.serialize, deserializer.deserialize)
        self._item, self._entity, self._key_of, self._key_from = codec
        self._update_expressions: dict[tuple[str, ...], tuple[str, dict[str, str]]] = {}
        pk = self.model.partition_key
        self._not_exists = {"ConditionExpression": "attribute_not_exists(#pk)", "ExpressionAttributeNames": {"#pk": pk}}

    # --- helpers ------------------------------------------------------------------------------------------

    def _key(self, key: Any) -> dict[str, Any]:
        """A wire key from an entity, a `(partition, sort)` tuple, or a bare partition value."""
        if isinstance(key, self.model.cls):
            return self._key_of(key)
        try:
            return self._key_from(*key) if isinstance(key, tuple) else self._key_from(key)
        except TypeError:
            self.model.key(*key) if isinstance(key, tuple) else self.model.key(key)  # raises the precise error
            raise

    def _transact(self, actions: list[dict[str, Any]], operation: str) -> None:
        if not actions:
            return
        if len(actions) > MAX_TRANSACT:
            raise ModelError(
                f"{self.model.name}.{operation}: expected at most {MAX_TRANSACT} items in one transaction, "
                f"found {len(actions)}"
            )
        self.client.transact_write_items(TransactItems=actions)

    def _update_expression(self, fields: Sequence[str]) -> tuple[str, dict[str, str]]:
        key = tuple(fields)
        cached = self._update_expressions.get(key)
        if cached is None:
            names = {"#pk": self.model.partition_key}
            sets = []
            for i, name in enumerate(key):
                if name in self.model.key_names:
                    raise ModelError(
                        f"{self.model.name}.update: expected non-key fields, found key field {name!r} "
                        "(a key change is a move)"
                    )
                if name not in self.model.fields:
                    raise ModelError(f"{self.model.name}.update: expected one of {self.model.fields}, found {name!r}")
                names[f"#f{i}"] = name
                sets.append(f"#f{i} = :v{i}")
            cached = ("SET " + ", ".join(sets), names)
            self._update_expressions[key] = cached
        return cached

    def _update_request(
        self, key: dict[str, Any], changes: Mapping[str, Any], values: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        expression, names = self._update_expression(tuple(changes))
        if values is None:
            values = self._update_values(changes)
        return {
            "TableName": self.table,
            "Key": key,
            "UpdateExpression": expression,
            "ConditionExpression": "attribute_exists(#pk)",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }

    def _update_values(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        serialize = self._serialize
        values = changes.values()
        return {p: serialize(v) for p, v in zip(_PLACEHOLDERS[: len(values)], values, strict=True)}

    def _changes(self, entity: T, fields: Sequence[str]) -> dict[str, Any]:
        """The fields' current values, as `to_item` would write them (None and empty sets left out)."""
        changes = {}
        for name in fields:
            value = getattr(entity, name)
            if value is None or (isinstance(value, set | frozenset) and not value):
                continue
            changes[name] = Decimal(repr(value)) if type(value) is float else value
        return changes

    # --- writes -------------------------------------------------------------------------------------------

    def create(self, entity: T) -> T:
        """Conditional put: fails with ConditionalCheckFailedException if the key exists."""
        self.client.put_item(TableName=self.table, Item=self._item(entity), **self._not_exists)
        return entity

    def put(self, entity: T) -> T:
        """Unconditional put (create or replace)."""
        self.client.put_item(TableName=self.table, Item=self._item(entity))
        return entity

    def create_many(self, entities: Sequence[T]) -> list[T]:
        """Up to 100 conditional puts in one TransactWriteItems: all are created, or none."""
        put = self._not_exists
        actions = [{"Put": {"TableName": self.table, "Item": self._item(e), **put}} for e in entities]
        self._transact(actions, "create_many")
        return list(entities)

    def update(self, entity: T, fields: Sequence[str]) -> None:
        """Write `fields` of an existing item (conditional on it existing)."""
        changes = self._changes(entity, fields)
        self.client.update_item(**self._update_request(self._key_of(entity), changes))

    def update_many(self, entities: Sequence[T], fields: Sequence[str]) -> None:
        """Conditional updates of up to 100 existing items in one transaction."""
        actions = [{"Update": self._update_request(self._key_of(e), self._changes(e, fields))} for e in entities]
        self._transact(actions, "update_many")

    def update_through_index(
        self, index: str, partition: Any, changes: Mapping[str, Any], *, limit: int | None = None
    ) -> int:
        """Find items through an index, then update each by its table key in one transaction; returns the count."""
        found = self._query_raw(partition, index=index, limit=limit, keys_only=True)
        names = self.model.key_names
        keys = [{name: item[name] for name in names} for item in found]
        values = self._update_values(changes)  # the same for every item: serialized once
        actions = [{"Update": self._update_request(key, changes, values)} for key in keys]
        self._transact(actions, "update_through_index")
        return len(keys)

    def delete(self, key: Any) -> None:
        """Delete one item by entity, `(partition, sort)` tuple or partition value."""
        self.client.delete_item(TableName=self.table, Key=self._key(key))

    def delete_many(self, keys: Iterable[Any]) -> None:
        """Up to 100 deletes in one transaction."""
        actions = [{"Delete": {"TableName": self.table, "Key": self._key(key)}} for key in keys]
        self._transact(actions, "delete_many")

    def move(self, entity: T, **new_key: Any) -> T:
        """Change an item's key: a consistent read of the current item, then delete + put in one transaction."""
        unknown = set(new_key) - set(self.model.key_names)
        if unknown or not new_key:
            raise ModelError(
                f"{self.model.name}.move: expected new values for key fields {self.model.key_names}, "
                f"found {sorted(new_key) or 'none'}"
            )
        old_key = self._key_of(entity)
        response = self.client.get_item(TableName=self.table, Key=old_key, ConsistentRead=True)
        if "Item" not in response:
            raise ModelError(f"{self.model.name}.move: expected an item at {self.model.key_values(entity)}, found none")
        moved = dataclasses.replace(self._entity(response["Item"]), **new_key)  # type: ignore[type-var]  # T is a dataclass; no bound says so
        exists = {**self._not_exists, "ConditionExpression": "attribute_exists(#pk)"}
        self.client.transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": self.table, "Key": old_key, **exists}},
                {"Put": {"TableName": self.table, "Item": self._item(moved), **self._not_exists}},
            ]
        )
        return moved

    # --- reads --------------------------------------------------------------------------------------------

    def get(self, partition: Any, sort: Any = None, *, consistent: bool = False) -> T | None:
        key = self._key((partition, sort) if sort is not None else partition)
        response = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=consistent)
        item = response.get("Item")
        return None if item is None else self._entity(item)

    def get_many(self, keys: Sequence[Any], *, consistent: bool = False) -> GetManyResult[T]:
        """One BatchGetItem for up to 100 keys; unprocessed keys are returned (deserialized), not retried.

        Items come back in the service's order, not the keys' order, as with the raw call.
        """
        if len(keys) > MAX_BATCH_GET:
            raise ModelError(
                f"{self.model.name}.get_many: expected at most {MAX_BATCH_GET} keys in one BatchGetItem, "
                f"found {len(keys)}"
            )
        if not keys:
            return GetManyResult([])
        wire_keys = [self._key(key) for key in keys]
        response = self.client.batch_get_item(
            RequestItems={self.table: {"Keys": wire_keys, "ConsistentRead": consistent}}
        )
        entity = self._entity
        items = [entity(item) for item in response.get("Responses", {}).get(self.table, ())]
        leftover = response.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", ())
        return GetManyResult(items, [self._deserialize_item(key) for key in leftover])

    def _query_raw(
        self,
        partition: Any,
        *,
        index: str | None = None,
        limit: int | None = None,
        page_size: int | None = None,
        forward: bool = True,
        keys_only: bool = False,
    ) -> list[dict[str, Any]]:
        """Every page of one partition (of the table or an index), as wire items, up to `limit` items."""
        pk = self.model.index(index).partition_key if index else self.model.partition_key
        request: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": pk},
            "ExpressionAttributeValues": self._serialize_item({":pk": partition}),
            "ScanIndexForward": forward,
        }
        if index:
            request["IndexName"] = index
        if keys_only:
            names = request["ExpressionAttributeNames"]
            for i, name in enumerate(self.model.key_names):
                names[f"#k{i}"] = name
            request["ProjectionExpression"] = ", ".join(f"#k{i}" for i in range(len(self.model.key_names)))
        return self._pages(request, limit, page_size, "query")

    def _pages(
        self, request: dict[str, Any], limit: int | None, page_size: int | None, method: str
    ) -> list[dict[str, Any]]:
        call = getattr(self.client, method)
        items: list[dict[str, Any]] = []
        while True:
            if page_size or limit:
                request["Limit"] = min(x for x in (page_size, limit and limit - len(items)) if x)
            response = call(**request)
            items.extend(response.get("Items", ()))
            last = response.get("LastEvaluatedKey")
            if not last or (limit is not None and len(items) >= limit):
                return items
            request["ExclusiveStartKey"] = last

    def query(
        self, partition: Any, *, limit: int | None = None, page_size: int | None = None, forward: bool = True
    ) -> list[T]:
        """All items of one partition in sort order, following pages until done or `limit` items."""
        entity = self._entity
        return [entity(i) for i in self._query_raw(partition, limit=limit, page_size=page_size, forward=forward)]

    def query_index(
        self, index: str, partition: Any, *, limit: int | None = None, page_size: int | None = None
    ) -> list[T]:
        """All items under one partition value of a global secondary index."""
        entity = self._entity
        return [entity(i) for i in self._query_raw(partition, index=index, limit=limit, page_size=page_size)]

    def scan(
        self, where: Mapping[str, Any] | None = None, *, limit: int | None = None, page_size: int | None = None
    ) -> list[T]:
        """The whole table, filtered server-side by equality on each attribute of `where`."""
        request: dict[str, Any] = {"TableName": self.table}
        if where:
            request["FilterExpression"] = " AND ".join(f"#w{i} = :w{i}" for i in range(len(where)))
            request["ExpressionAttributeNames"] = {f"#w{i}": name for i, name in enumerate(where)}
            request["ExpressionAttributeValues"] = self._serialize_item(
                {f":w{i}": value for i, value in enumerate(where.values())}
            )
        entity = self._entity
        return [entity(i) for i in self._pages(request, limit, page_size, "scan")]

    def read_sharded(self, base: str, *, page_size: int | None = None) -> list[T]:
        """A write-sharded partition: its N shards queried in parallel greenlets, merged in sort-key order."""
        partitions = self.model.shard_partitions(base)
        jobs = [gevent.spawn(self._query_shard, p, page_size) for p in partitions]
        try:
            gevent.joinall(jobs, raise_error=True)
        finally:
            gevent.killall(jobs)  # a failed shard must not leave the others running
        sort_key = self.model.sort_key
        if sort_key is None:
            return [entity for job in jobs for entity in job.value]
        return list(heapq.merge(*(job.value for job in jobs), key=attrgetter(sort_key)))

    def _query_shard(self, partition: str, page_size: int | None) -> list[T]:
        entity = self._entity
        return [entity(item) for item in self._query_raw(partition, page_size=page_size)]


__all__ = ["GetManyResult", "Repository"]
