"""Entity declarations: a dataclass plus its table, key schema, indexes and write sharding.

Why a decorator over plain dataclasses: the entity stays an ordinary typed class (constructed, compared and
replaced as usual, no metaclass), and everything the repository needs per call (which fields exist, how to turn
a stored number back into an `int`, which attributes form the key) is worked out once, here, so that operations
under load do only dictionary work.

```python
@entity(table="orders", partition_key="pk", sort_key="sk", indexes=[Index("by_status", "status", "created")])
@dataclass
class Order:
    pk: str
    sk: str
    status: str
    created: int
    total: Decimal = Decimal(0)
```
"""

from __future__ import annotations

import dataclasses
import types
import typing
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, NamedTuple, TypeVar

from boto3.dynamodb.types import Binary

from dynlocust.mapper.serializer import MapperError

T = TypeVar("T")

MODEL_ATTRIBUTE = "__dynlocust_model__"


class ModelError(MapperError):
    """An entity declaration or a key that does not fit its model."""


@dataclass(frozen=True, slots=True)
class Index:
    """A global secondary index: its name, key attributes and projection (`ALL`, `KEYS_ONLY`)."""

    name: str
    partition_key: str
    sort_key: str | None = None
    projection: str = "ALL"


def _to_int(value: Any) -> Any:
    return int(value) if isinstance(value, Decimal) else value


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


def _to_bytes(value: Any) -> Any:
    return bytes(value.value) if isinstance(value, Binary) else value


def _set_of(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def convert_set(value: Any) -> Any:
        return {convert(v) for v in value} if isinstance(value, set) else value

    return convert_set


def _from_float(value: Any) -> Any:
    return Decimal(repr(value)) if type(value) is float else value  # repr: the shortest exact round trip


_SCALAR_READERS: dict[Any, Callable[[Any], Any]] = {int: _to_int, float: _to_float, bytes: _to_bytes}
_KEY_TYPES: dict[Any, str] = {str: "S", int: "N", float: "N", Decimal: "N", bytes: "B"}


def _reader_for(hint: Any) -> Callable[[Any], Any] | None:
    """How a deserialized value becomes the field's declared type; None when it already is."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _reader_for(inner[0]) if len(inner) == 1 else None
    if origin in (set, frozenset, typing.AbstractSet) or hint in (set, frozenset):
        args = typing.get_args(hint)
        inner_reader = _SCALAR_READERS.get(args[0]) if args else None
        return _set_of(inner_reader) if inner_reader else None
    return _SCALAR_READERS.get(hint)


def _is_set_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_is_set_hint(arg) for arg in typing.get_args(hint))
    return hint in (set, frozenset) or origin in (set, frozenset, typing.AbstractSet)


def _key_type(hint: Any, where: str) -> str:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        raise ModelError(f"{where}: expected a key attribute of type str, int, Decimal or bytes, found {hint!r}")
    kind = _KEY_TYPES.get(hint)
    if kind is None:
        raise ModelError(f"{where}: expected a key attribute of type str, int, Decimal or bytes, found {hint!r}")
    return kind


class Codec(NamedTuple, Generic[T]):
    """A model's generated converters for one serializer/deserializer pair (see `Model.codec`)."""

    to_wire: Callable[[T], dict[str, Any]]
    from_wire: Callable[[Mapping[str, Any]], T]
    key_of: Callable[[T], dict[str, Any]]
    key_from: Callable[..., dict[str, Any]]


class Model(Generic[T]):
    """What the repository knows about one entity class; built once by `@entity`."""

    def __init__(
        self,
        cls: type[T],
        *,
        table: str,
        partition_key: str,
        sort_key: str | None = None,
        indexes: Iterable[Index] = (),
        shards: int = 0,
    ) -> None:
        if not dataclasses.is_dataclass(cls):
            raise ModelError(f"@entity on {cls.__qualname__}: expected a dataclass, found a plain class")
        self.cls = cls
        self.name = cls.__name__
        self.table = table
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.indexes: dict[str, Index] = {index.name: index for index in indexes}
        self.shards = shards
        hints = typing.get_type_hints(cls)
        self.fields: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(cls) if f.init)
        self.key_names: tuple[str, ...] = (partition_key, sort_key) if sort_key else (partition_key,)
        where = f"@entity on {cls.__qualname__}"
        self.attribute_types: dict[str, str] = {}
        for name in (*self.key_names, *(k for i in self.indexes.values() for k in (i.partition_key, i.sort_key))):
            if name is None:
                continue
            if name not in hints:
                raise ModelError(f"{where}: expected a field named {name!r} for a key, found fields {self.fields}")
            self.attribute_types[name] = _key_type(hints[name], f"{where}, field {name!r}")
        if shards < 0 or (shards and self.attribute_types[partition_key] != "S"):
            raise ModelError(f"{where}: expected shards >= 0 on a string partition key, found shards={shards}")
        readers = {name: _reader_for(hints.get(name)) for name in self.fields}
        self._readers: tuple[tuple[str, Callable[[Any], Any]], ...] = tuple(
            (name, reader) for name, reader in readers.items() if reader is not None
        )
        self._float_fields = tuple(name for name in self.fields if hints.get(name) in (float, float | None))
        self._set_fields = tuple(name for name in self.fields if _is_set_hint(hints.get(name)))
        self._str_fields = tuple(name for name in self.fields if hints.get(name) in (str, str | None))

    # --- entities <-> plain items ---------------------------------------------------------------------------

    def to_item(self, entity: T) -> dict[str, Any]:
        """The entity as a plain dict of attribute values.

        `None` fields and empty sets are left out (DynamoDB stores neither in a key or a set); an absent attribute
        reads back as the field's default.
        """
        data = entity.__dict__ if hasattr(entity, "__dict__") else {n: getattr(entity, n) for n in self.fields}
        item = {name: data[name] for name in self.fields if data[name] is not None}
        for name in self._float_fields:
            if name in item:
                item[name] = _from_float(item[name])
        for name in self._set_fields:
            if name in item and not item[name]:
                del item[name]
        return item

    def from_item(self, item: Mapping[str, Any]) -> T:
        """An entity from a deserialized item; unknown attributes are ignored, numbers become the declared type."""
        fields = self.fields
        values = {name: item[name] for name in fields if name in item}
        for name, reader in self._readers:
            if name in values:
                values[name] = reader(values[name])
        try:
            return self.cls(**values)
        except TypeError as exc:
            raise self._missing(item, exc) from None

    def codec(self, serialize: Callable[[Any], Any], deserialize: Callable[[Any], Any]) -> Codec[T]:
        """`to_item` + serialization, deserialization + `from_item`, and keys, fused into generated functions.

        Why generated code: a loop over fields costs a Python iteration and a call per attribute, which is most of
        a mapper's overhead over hand-written attribute values. Like `dataclasses` itself, this compiles one
        straight-line function per model (field names are identifiers, emitted through `repr`), with string
        fields read and written inline. Results are identical to the generic `to_item`/`from_item` path.
        """
        readers = dict(self._readers)
        env: dict[str, Any] = {
            "serialize": serialize,
            "deserialize": deserialize,
            "from_float": _from_float,
            "cls": self.cls,
            "missing": self._missing,
        }
        write = ["def to_wire(entity):", "    item = {}"]
        read = ["def from_wire(item):", "    kw = {}", "    get = item.get"]
        keys = [self._key_source("key_of", "entity", ("entity." + k for k in self.key_names))]
        parameters = ("partition", "sort")[: len(self.key_names)]
        keys.append(self._key_source("key_from", ", ".join(parameters), parameters))
        for i, name in enumerate(self.fields):
            key = repr(name)
            write.append(f"    v = entity.{name}")
            if name in self._set_fields:
                write.append("    if v:")  # None or an empty set: left out
            else:
                write.append("    if v is not None:")
            if name in self._str_fields:
                write.append(f"        item[{key}] = {{'S': v}} if type(v) is str else serialize(v)")
            elif name in self._float_fields:
                write.append(f"        item[{key}] = serialize(from_float(v))")
            else:
                write.append(f"        item[{key}] = serialize(v)")
            read.append(f"    v = get({key})")
            read.append("    if v is not None:")
            if name in self._str_fields:
                read.append(f"        kw[{key}] = v['S'] if 'S' in v and len(v) == 1 else deserialize(v)")
            elif name in readers:
                env[f"read_{i}"] = readers[name]
                read.append(f"        kw[{key}] = read_{i}(deserialize(v))")
            else:
                read.append(f"        kw[{key}] = deserialize(v)")
        write.append("    return item")
        read += [
            "    try:",
            "        return cls(**kw)",
            "    except TypeError as exc:",
            "        raise missing(item, exc) from None",
        ]
        source = "\n\n".join(["\n".join(write), "\n".join(read), *keys])
        exec(compile(source, f"<dynlocust codec {self.name}>", "exec"), env)
        return Codec(env["to_wire"], env["from_wire"], env["key_of"], env["key_from"])

    def _key_source(self, function: str, parameters: str, values: Iterable[str]) -> str:
        parts = []
        for name, value in zip(self.key_names, values, strict=True):
            kind = self.attribute_types[name]
            inline = f"{{'S': {value}}} if type({value}) is str else " if kind == "S" else ""
            parts.append(f"{name!r}: {inline}serialize({value})")
        return f"def {function}({parameters}):\n    return {{{', '.join(parts)}}}"

    def _missing(self, item: Mapping[str, Any], exc: Exception) -> ModelError:
        return ModelError(
            f"{self.name}: expected an item with the fields {self.fields}, found attributes {sorted(item)} ({exc})"
        )

    def key_values(self, entity: T) -> dict[str, Any]:
        return {name: getattr(entity, name) for name in self.key_names}

    def key(self, partition: Any, sort: Any = None) -> dict[str, Any]:
        """A plain key dict from its values; the sort value is required exactly when the table has a sort key."""
        if (sort is None) != (self.sort_key is None):
            raise ModelError(
                f"{self.name}.key: expected {'a partition and a sort value' if self.sort_key else 'a partition value'}"
                f", found partition={partition!r}, sort={sort!r}"
            )
        return (
            {self.partition_key: partition}
            if self.sort_key is None
            else {self.partition_key: partition, self.sort_key: sort}
        )

    def index(self, name: str) -> Index:
        try:
            return self.indexes[name]
        except KeyError:
            raise ModelError(
                f"{self.name}: expected one of the indexes {sorted(self.indexes)}, found {name!r}"
            ) from None

    # --- write sharding ------------------------------------------------------------------------------------

    def shard_partitions(self, base: str) -> list[str]:
        """Every partition value a sharded logical partition is spread over."""
        if not self.shards:
            raise ModelError(f"{self.name}: expected a model declared with shards > 0, found shards=0")
        return [f"{base}#{shard}" for shard in range(self.shards)]

    def shard_partition(self, base: str, sort_value: Any) -> str:
        """The partition value an item with this sort value is written to (a stable hash, not Python's)."""
        partitions = self.shard_partitions(base)
        return partitions[zlib.crc32(str(sort_value).encode()) % self.shards]

    # --- table --------------------------------------------------------------------------------------------

    def create_table_request(self, table: str | None = None) -> dict[str, Any]:
        """`CreateTable` arguments for this model (on-demand): for tests, rehearsals and `compare`."""
        schema = [{"AttributeName": self.partition_key, "KeyType": "HASH"}]
        if self.sort_key:
            schema.append({"AttributeName": self.sort_key, "KeyType": "RANGE"})
        request: dict[str, Any] = {
            "TableName": table or self.table,
            "KeySchema": schema,
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": kind} for name, kind in self.attribute_types.items()
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": [{"AttributeName": index.partition_key, "KeyType": "HASH"}]
                    + ([{"AttributeName": index.sort_key, "KeyType": "RANGE"}] if index.sort_key else []),
                    "Projection": {"ProjectionType": index.projection},
                }
                for index in self.indexes.values()
            ]
        return request

    def __repr__(self) -> str:
        return f"Model({self.name}, table={self.table!r}, key={self.key_names}, indexes={sorted(self.indexes)})"


def entity(
    *,
    table: str,
    partition_key: str,
    sort_key: str | None = None,
    indexes: Sequence[Index] = (),
    shards: int = 0,
) -> Callable[[type[T]], type[T]]:
    """Declare a dataclass as a DynamoDB entity (apply it above `@dataclass`)."""

    def declare(cls: type[T]) -> type[T]:
        model = Model(cls, table=table, partition_key=partition_key, sort_key=sort_key, indexes=indexes, shards=shards)
        setattr(cls, MODEL_ATTRIBUTE, model)
        return cls

    return declare


def model_of(cls_or_entity: Any) -> Model[Any]:
    """The model of an entity class or instance declared with `@entity`."""
    model = getattr(cls_or_entity, MODEL_ATTRIBUTE, None)
    if not isinstance(model, Model):
        name = getattr(cls_or_entity, "__qualname__", type(cls_or_entity).__qualname__)
        raise ModelError(f"expected a class declared with @dynlocust.mapper.entity(...), found {name}")
    return model


__all__ = ["Codec", "Index", "Model", "ModelError", "entity", "model_of"]
