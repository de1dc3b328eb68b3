"""The deserializer against boto3's TypeDeserializer, on random values serialized by boto3 and on the edge cases."""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynlocust.errors import DynlocustError
from dynlocust.mapper import DeserializationError, Deserializer, Serializer
from tests.unit.mapper.test_serializer import values

BOTO_IN, BOTO_OUT = TypeSerializer(), TypeDeserializer()
OURS = Deserializer()
NESTED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_identical(ours: Any, theirs: Any, path: str = "$") -> None:
    """Equal, with the same types (Decimal, set, Binary and what it wraps) and key order everywhere."""
    assert type(ours) is type(theirs), f"{path}: {type(ours)} != {type(theirs)}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), f"{path}: key order"
        for key in theirs:
            assert_identical(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_identical(a, b, f"{path}[{i}]")
    elif isinstance(theirs, set):
        assert ours == theirs, path
        assert {(type(x), type(getattr(x, "value", x))) for x in ours} == {
            (type(x), type(getattr(x, "value", x))) for x in theirs
        }
    elif isinstance(theirs, Binary):
        assert type(ours.value) is type(theirs.value) and ours.value == theirs.value, path
    elif isinstance(theirs, Decimal):
        assert ours.as_tuple() == theirs.as_tuple(), path  # same digits and exponent, not just equal
    else:
        assert ours == theirs, path


@NESTED
@given(values)
def test_values_deserialize_exactly_as_boto3(value: Any) -> None:
    wire = BOTO_IN.serialize(value)
    assert_identical(OURS.deserialize(wire), BOTO_OUT.deserialize(wire))


@NESTED
@given(st.dictionaries(st.text(max_size=8), values, max_size=5))
def test_items_deserialize_exactly_as_boto3(item: dict[str, Any]) -> None:
    wire = BOTO_IN.serialize(item)
    assert_identical(OURS.deserialize_item(wire["M"]), BOTO_OUT.deserialize(wire))


@pytest.mark.parametrize(
    "wire",
    [
        {"N": "-0"},
        {"N": "0E-165"},
        {"N": "1E-130"},
        {"N": "9.9999999999999999999999999999999999999E+125"},
        {"N": "123.4500"},
        {"N": "1e5"},
        {"NS": ["1", "1.0", "2"]},
        {"S": ""},
        {"B": b""},
        {"B": bytearray(b"x")},
        {"BS": [b"a", b"b"]},
        {"SS": ["a"]},
        {"BOOL": False},
        {"NULL": True},
        {"L": []},
        {"M": {}},
        {"M": {"b": {"N": "1"}, "a": {"L": [{"S": "x"}, {"N": "2"}, {"NULL": True}, {"M": {"c": {"BOOL": True}}}]}}},
    ],
    ids=repr,
)
def test_edge_values_deserialize_exactly_as_boto3(wire: dict[str, Any]) -> None:
    assert_identical(OURS.deserialize(wire), BOTO_OUT.deserialize(wire))
    assert_identical(OURS.deserialize_item({"a": wire}), {"a": BOTO_OUT.deserialize(wire)})


@pytest.mark.parametrize(
    ("wire", "error"),
    [
        ({}, TypeError),
        ({"X": 1}, TypeError),
        ({"N": "1" * 39}, decimal.Inexact),
        ({"N": "1E+200"}, decimal.Overflow),
        ({"B": "not bytes"}, TypeError),
    ],
    ids=repr,
)
def test_refused_like_boto3(wire: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        BOTO_OUT.deserialize(wire)
    with pytest.raises(error) as raised:
        OURS.deserialize(wire)
    if error is TypeError and "B" not in wire:
        assert isinstance(raised.value, DeserializationError)
        assert isinstance(raised.value, DynlocustError)
        assert "found" in str(raised.value).lower()


def test_raw_binary_returns_the_bytes_themselves() -> None:
    data = b"\x00\x01"
    out = Deserializer(raw_binary=True).deserialize_item({"b": {"B": data}, "s": {"BS": [data]}})
    assert out["b"] is data and out["s"] == {data}
    assert repr(Deserializer(raw_binary=True)) == "Deserializer(raw_binary=True)"


@pytest.mark.parametrize("depth", [999, 1001, 20_000])
def test_deep_nesting_has_no_recursion_limit(depth: int) -> None:
    value: Any = "leaf"
    for level in range(depth):
        value = {"k": value, "n": level} if level % 2 else [value, level]
    wire = Serializer().serialize(value)
    out = OURS.deserialize(wire)
    item = OURS.deserialize_item({"a": wire})["a"]
    for level in reversed(range(depth)):
        if level % 2:
            assert out["n"] == level and item["n"] == level
            out, item = out["k"], item["k"]
        else:
            assert out[1] == level and item[1] == level
            out, item = out[0], item[0]
    assert out == "leaf" and item == "leaf"


def test_round_trip_through_our_serializer() -> None:
    item = {"pk": "a", "n": Decimal("1.50"), "i": 3, "s": {"x", "y"}, "b": Binary(b"z"), "l": [None, True]}
    back = OURS.deserialize_item(Serializer().serialize_item(item))
    assert back == {**item, "i": Decimal(3)}
    assert str(back["n"]) == "1.50"


@pytest.mark.parametrize(
    "wire",
    [
        {"SS": ["a"], "N": "1"},
        {"N": "1", "S": "x"},
        {"S": "x", "N": "1"},
        {"M": {}, "L": []},
        {"BOOL": True, "S": "x"},
        {"NULL": True, "N": "1"},
    ],
    ids=repr,
)
def test_a_value_with_several_type_keys_is_refused(wire: dict[str, Any]) -> None:
    for value in (wire, {"M": {"a": wire}}, {"L": [wire]}, {"L": [{"L": [wire]}]}):
        with pytest.raises(DeserializationError) as raised:
            OURS.deserialize(value)
        assert "exactly one type key" in str(raised.value) and "found" in str(raised.value)
        with pytest.raises(DeserializationError):
            OURS.deserialize_item({"a": value})
    deep: dict[str, Any] = wire
    for _ in range(3000):  # the explicit-stack path too
        deep = {"L": [deep]}
    with pytest.raises(DeserializationError):
        OURS.deserialize(deep)
