"""Entity declarations: conversions both ways, keys, sharding, table requests and declaration errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary

from dynlocust.errors import DynlocustError
from dynlocust.mapper.model import Index, ModelError, entity, model_of


@entity(table="things", partition_key="id", sort_key="n", indexes=[Index("by_kind", "kind")], shards=0)
@dataclass
class Thing:
    id: str
    n: int
    kind: str = "k"
    ratio: float | None = None
    blob: bytes | None = None
    counts: set[int] = field(default_factory=set)
    names: frozenset[str] = frozenset()
    amount: Decimal = Decimal(0)
    extra: dict[str, Any] = field(default_factory=dict)


MODEL = model_of(Thing)


def test_to_item_leaves_out_none_and_empty_sets_and_makes_floats_decimal() -> None:
    item = MODEL.to_item(Thing("a", 1, ratio=0.1, counts=set(), extra={"x": 1}))
    assert item == {"id": "a", "n": 1, "kind": "k", "ratio": Decimal("0.1"), "amount": Decimal(0), "extra": {"x": 1}}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({"id": "a", "n": Decimal(1)}, Thing("a", 1)),
        (
            {"id": "a", "n": Decimal(2), "ratio": Decimal("0.5"), "blob": Binary(b"z")},
            Thing("a", 2, ratio=0.5, blob=b"z"),
        ),
        ({"id": "a", "n": Decimal(3), "counts": {Decimal(1), Decimal(2)}}, Thing("a", 3, counts={1, 2})),
        ({"id": "a", "n": Decimal(4), "unknown": "ignored"}, Thing("a", 4)),
    ],
)
def test_from_item_restores_declared_types(stored: dict[str, Any], expected: Thing) -> None:
    thing = MODEL.from_item(stored)
    assert thing == expected
    assert type(thing.n) is int
    assert all(type(c) is int for c in thing.counts)


def test_from_item_missing_required_field_says_what() -> None:
    with pytest.raises(ModelError, match=r"expected an item with the fields") as raised:
        MODEL.from_item({"id": "a"})
    assert isinstance(raised.value, DynlocustError)


def test_keys_and_indexes() -> None:
    assert MODEL.key("a", 1) == {"id": "a", "n": 1}
    assert MODEL.key_values(Thing("a", 2)) == {"id": "a", "n": 2}
    with pytest.raises(ModelError, match="a partition and a sort value"):
        MODEL.key("a")
    with pytest.raises(ModelError, match="by_kind"):
        MODEL.index("nope")


def test_create_table_request() -> None:
    request = MODEL.create_table_request("t1")
    assert request["TableName"] == "t1"
    assert request["KeySchema"] == [
        {"AttributeName": "id", "KeyType": "HASH"},
        {"AttributeName": "n", "KeyType": "RANGE"},
    ]
    assert {"AttributeName": "n", "AttributeType": "N"} in request["AttributeDefinitions"]
    assert request["GlobalSecondaryIndexes"][0]["KeySchema"] == [{"AttributeName": "kind", "KeyType": "HASH"}]


def test_shards_are_stable_and_spread() -> None:
    @entity(table="e", partition_key="pk", sort_key="ts", shards=4)
    @dataclass
    class Event:
        pk: str
        ts: int

    model = model_of(Event)
    assert model.shard_partitions("d") == ["d#0", "d#1", "d#2", "d#3"]
    chosen = [model.shard_partition("d", ts) for ts in range(100)]
    assert chosen == [model.shard_partition("d", ts) for ts in range(100)]
    assert set(chosen) == set(model.shard_partitions("d"))
    with pytest.raises(ModelError, match="shards > 0"):
        MODEL.shard_partitions("x")


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (lambda: entity(table="t", partition_key="id")(type("Plain", (), {})), "expected a dataclass"),
        (
            lambda: entity(table="t", partition_key="missing")(
                dataclass(type("D", (), {"__annotations__": {"id": str}}))
            ),
            "'missing'",
        ),
        (
            lambda: entity(table="t", partition_key="id")(dataclass(type("F", (), {"__annotations__": {"id": list}}))),
            "key attribute",
        ),
        (lambda: model_of(object()), "declared with @dynlocust.mapper.entity"),
    ],
)
def test_declaration_errors(declare: Any, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        declare()


@pytest.mark.parametrize(
    "thing",
    [
        Thing("a", 1),
        Thing("a", 2, kind="z", ratio=0.25, blob=b"\x00", counts={1, 2}, names=frozenset({"x"}), extra={"k": [1]}),
        Thing("a", 3, counts=set(), names=frozenset(), amount=Decimal("-1.50")),
    ],
    ids=repr,
)
def test_generated_codec_matches_the_generic_path(thing: Thing) -> None:
    from dynlocust.mapper import Deserializer, Serializer

    serializer, deserializer = Serializer(), Deserializer()
    to_wire, from_wire, _, _ = MODEL.codec(serializer.serialize, deserializer.deserialize)
    wire = to_wire(thing)
    assert wire == serializer.serialize_item(MODEL.to_item(thing))
    assert list(wire) == list(serializer.serialize_item(MODEL.to_item(thing)))
    assert from_wire(wire) == MODEL.from_item(deserializer.deserialize_item(wire)) == thing
    assert from_wire({**wire, "unknown": {"S": "ignored"}}) == thing
    with pytest.raises(ModelError, match="expected an item with the fields"):
        from_wire({"id": {"S": "a"}})


def test_generated_codec_refuses_a_string_field_with_several_type_keys() -> None:
    from dynlocust.mapper import DeserializationError, Deserializer, Serializer

    _, from_wire, _, _ = MODEL.codec(Serializer().serialize, Deserializer().deserialize)
    with pytest.raises(DeserializationError, match="exactly one type key"):
        from_wire({"id": {"S": "a", "N": "1"}, "n": {"N": "1"}})


def test_generated_keys() -> None:
    from dynlocust.mapper import Deserializer, Serializer

    codec = MODEL.codec(Serializer().serialize, Deserializer().deserialize)
    assert codec.key_of(Thing("a", 7)) == {"id": {"S": "a"}, "n": {"N": "7"}}
    assert codec.key_from("a", 7) == {"id": {"S": "a"}, "n": {"N": "7"}}
    with pytest.raises(TypeError):
        codec.key_from("a")
