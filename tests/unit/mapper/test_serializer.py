"""The serializer against boto3's TypeSerializer: differential properties on random values, then the edge cases."""

from __future__ import annotations

import decimal
import enum
from collections import OrderedDict
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from boto3.dynamodb.types import Binary, TypeSerializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynlocust.errors import DynlocustError
from dynlocust.mapper import EmptySetError, MapperError, NumberError, NumberNotFiniteError, Serializer
from dynlocust.mapper.serializer import LARGEST, SMALLEST

BOTO = TypeSerializer()
CHECKED = Serializer()
UNCHECKED = Serializer(validate_numbers=False)
# Numbers are cheap to generate: thousands. Nested values hold up to 25 leaves each: hundreds of them.
NUMBERS = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NESTED = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_identical(ours: Any, theirs: Any, path: str = "$") -> None:
    """Equal, and also the same types and the same key order everywhere (== alone says bytes == bytearray)."""
    assert type(ours) is type(theirs), f"{path}: {type(ours)} != {type(theirs)}"
    if isinstance(theirs, Mapping):
        assert list(ours) == list(theirs), f"{path}: key order"
        for key in theirs:
            assert_identical(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), f"{path}: length"
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_identical(a, b, f"{path}[{i}]")
    else:
        assert ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def assert_deep_equal(ours: Any, expected: Any) -> None:
    """`==` without recursion (the built-in comparison itself hits the recursion limit on deep values)."""
    stack = [(ours, expected)]
    while stack:
        a, b = stack.pop()
        assert type(a) is type(b)
        if isinstance(b, dict):
            assert list(a) == list(b)
            stack.extend((a[k], b[k]) for k in b)
        elif isinstance(b, list):
            assert len(a) == len(b)
            stack.extend(zip(a, b, strict=True))
        else:
            assert a == b


def within_dynamodb_rules(number: Decimal) -> bool:
    """An independent statement of the range rule boto3's context does not enforce."""
    return number.is_finite() and (number == 0 or SMALLEST <= abs(number) <= LARGEST)


class Text(str):
    pass


class Count(int):
    pass


class Exact(Decimal):
    pass


class Colour(enum.IntEnum):
    RED = 1


class Mood(enum.StrEnum):
    CALM = "calm"


# --- strategies -------------------------------------------------------------------------------------------------

digits = st.lists(st.integers(0, 9), min_size=1, max_size=40).map(tuple)
any_decimal = st.one_of(
    st.builds(lambda sign, ds, exp: Decimal((sign, ds, exp)), st.integers(0, 1), digits, st.integers(-170, 130)),
    st.sampled_from([Decimal(s) for s in ("NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "-0", "0E+200")]),
)
valid_decimal = st.builds(
    lambda sign, ds, exp: Decimal((sign, ds, exp)),
    st.integers(0, 1),
    st.lists(st.integers(0, 9), min_size=1, max_size=38).map(tuple),
    st.integers(-120, 80),
).filter(lambda d: d.is_finite() and (d == 0 or SMALLEST <= abs(d) <= LARGEST))
valid_int = st.integers(-(10**38) + 1, 10**38 - 1)
texts = st.text(max_size=12)
binaries = st.one_of(st.binary(max_size=8), st.binary(max_size=8).map(bytearray), st.binary(max_size=8).map(Binary))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    valid_int,
    valid_decimal,
    texts,
    texts.map(Text),
    valid_int.map(Count),
    st.sampled_from([Colour.RED, Mood.CALM]),
    binaries,
    st.frozensets(valid_int | valid_decimal, min_size=1, max_size=5),
    st.sets(texts, min_size=1, max_size=5),
    st.sets(st.binary(max_size=6), min_size=1, max_size=5),
    st.frozensets(st.binary(max_size=4).map(Binary), min_size=1, max_size=3),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(texts, inner, max_size=6),
        st.dictionaries(texts, inner, max_size=4).map(OrderedDict),
    ),
    max_leaves=25,
)


# --- differential properties ------------------------------------------------------------------------------------


@NESTED
@given(values)
def test_valid_values_serialize_exactly_as_boto3(value: Any) -> None:
    assert_identical(CHECKED.serialize(value), BOTO.serialize(value))
    assert_identical(UNCHECKED.serialize(value), BOTO.serialize(value))


@NESTED
@given(st.dictionaries(texts, values, max_size=5))
def test_items_serialize_exactly_as_boto3(item: dict[str, Any]) -> None:
    assert_identical(CHECKED.serialize_item(item), BOTO.serialize(item)["M"])


@NUMBERS
@given(st.one_of(any_decimal, st.integers(), st.integers().map(Count), any_decimal.map(Exact)))
def test_any_number_is_accepted_or_refused_as_boto3_then_dynamodb_would(number: Any) -> None:
    try:
        expected = BOTO.serialize(number)
    except (TypeError, decimal.DecimalException) as exc:
        with pytest.raises(type(exc)) as raised:
            CHECKED.serialize(number)
        assert isinstance(raised.value, MapperError)
        return
    parsed = Decimal(expected["N"])
    if within_dynamodb_rules(parsed):
        assert_identical(CHECKED.serialize(number), expected)
        assert_identical(CHECKED.serialize([number]), BOTO.serialize([number]))
        assert_identical(CHECKED.serialize({number}), BOTO.serialize({number}))
    else:
        with pytest.raises((NumberError, NumberNotFiniteError)):
            CHECKED.serialize(number)
        with pytest.raises((NumberError, NumberNotFiniteError)):
            CHECKED.serialize({"in": [number]})


@NUMBERS
@given(st.one_of(st.integers(), any_decimal.filter(lambda d: d.is_finite())))
def test_unchecked_numbers_are_their_plain_decimal_text(number: Any) -> None:
    assert UNCHECKED.serialize(number) == {"N": str(Decimal(number))}


# --- edge cases ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        Decimal("-0"),
        Decimal("0.000"),
        Decimal("1E-7"),
        Decimal("1.0E+10"),
        Decimal("123.4500"),
        Decimal("9" * 38),
        Decimal("0." + "9" * 38),
        Decimal("-" + "9" * 38),
        int("9" * 38),
        -int("9" * 38),
        LARGEST,
        LARGEST.copy_negate(),
        SMALLEST,
        SMALLEST.copy_negate(),
        Decimal("1E-128"),
        Decimal("1.5E+125"),
        0,
        -1,
        True,
        False,
        None,
        "",
        "ünïcödé ✓",
        b"",
        b"\x00\xff",
        bytearray(b"ab"),
        Binary(b"cd"),
        Binary(bytearray(b"ef")),
        Text("sub"),
        Count(7),
        Exact("1.25"),
        Colour.RED,
        Mood.CALM,
        {True, 2},
        {b"x", Binary(b"y")},
        frozenset({Text("a"), "b"}),
        {"b": 1, "a": [2, (3, "x")], "c": {"d": None}},
        OrderedDict([("z", 1), ("a", 2)]),
        [],
        {},
        (),
    ],
    ids=repr,
)
def test_edge_values_serialize_exactly_as_boto3(value: Any) -> None:
    assert_identical(CHECKED.serialize(value), BOTO.serialize(value))
    assert_identical(UNCHECKED.serialize(value), BOTO.serialize(value))


@pytest.mark.parametrize(
    ("value", "boto3_raises", "ours"),
    [
        (int("1" + "0" * 38), decimal.Rounded, NumberError),  # 39 digits, exact after rounding: still refused
        (int("1" * 39), decimal.Inexact, NumberError),
        (Decimal("1" * 39), decimal.Inexact, NumberError),
        (Decimal("1." + "0" * 38), decimal.Rounded, NumberError),
        (Decimal("0E+200"), decimal.Clamped, NumberError),
        (Decimal("1E-166"), decimal.Underflow, NumberError),
        (Decimal("1E+127"), decimal.Overflow, NumberError),
        (Decimal("NaN"), TypeError, NumberNotFiniteError),
        (Decimal("Infinity"), TypeError, NumberNotFiniteError),
        (1.5, TypeError, MapperError),
        ({1.5}, TypeError, MapperError),
        ({1, "a"}, TypeError, MapperError),
        (object(), TypeError, MapperError),
        (memoryview(b"x"), TypeError, MapperError),
        (iter([1]), TypeError, MapperError),
    ],
    ids=repr,
)
def test_refused_like_boto3(value: Any, boto3_raises: type[Exception], ours: type[Exception]) -> None:
    with pytest.raises(boto3_raises):
        BOTO.serialize(value)
    for serializer in (CHECKED, UNCHECKED) if ours is MapperError else (CHECKED,):
        with pytest.raises(boto3_raises) as raised:
            serializer.serialize(value)
        assert isinstance(raised.value, ours)
        assert isinstance(raised.value, DynlocustError)


@pytest.mark.parametrize(
    ("value", "error", "boto3_sends"),
    [
        (Decimal("-NaN"), NumberNotFiniteError, {"N": "-NaN"}),
        (Decimal("sNaN"), NumberNotFiniteError, {"N": "sNaN"}),
        (Decimal("-Infinity"), NumberNotFiniteError, {"N": "-Infinity"}),
        (Decimal("1E+126"), decimal.Overflow, {"N": "1E+126"}),
        (Decimal("1E-131"), decimal.Underflow, {"N": "1E-131"}),
        (set(), EmptySetError, {"NS": []}),
        (frozenset(), EmptySetError, {"NS": []}),
    ],
    ids=repr,
)
def test_refuses_what_boto3_sends_but_dynamodb_rejects(value: Any, error: type[Exception], boto3_sends: Any) -> None:
    assert BOTO.serialize(value) == boto3_sends
    with pytest.raises(error) as raised:
        CHECKED.serialize({"a": [value]})
    assert "found" in str(raised.value)


def test_unchecked_skips_number_rules_but_not_types() -> None:
    assert UNCHECKED.serialize(Decimal("1E+200")) == {"N": "1E+200"}
    assert UNCHECKED.serialize([10**40]) == {"L": [{"N": str(10**40)}]}
    with pytest.raises(TypeError):
        UNCHECKED.serialize(1.5)
    with pytest.raises(EmptySetError):
        UNCHECKED.serialize(set())


def test_item_error_names_the_attribute() -> None:
    with pytest.raises(MapperError) as raised:
        CHECKED.serialize_item({"ok": 1, "bad": {"deeper": [Decimal("1E+999")]}})
    assert raised.value.__notes__ == ["in attribute 'bad' of the item"]
    assert "expected a number DynamoDB can store" in str(raised.value)


def test_strings_and_bytes_are_passed_through_not_copied() -> None:
    text, data, array = Text("x"), b"y", bytearray(b"z")
    out = CHECKED.serialize([text, data, array])["L"]
    assert out[0]["S"] is text and out[1]["B"] is data and out[2]["B"] is array


@pytest.mark.parametrize("depth", [10, 999, 1001, 20_000])
@pytest.mark.parametrize("kind", ["map", "list", "mixed"])
def test_deep_nesting_has_no_recursion_limit(depth: int, kind: str) -> None:
    value: Any = "leaf"
    expected: Any = {"S": "leaf"}
    for level in range(depth):
        as_map = kind == "map" or (kind == "mixed" and level % 2 == 0)
        value = {"k": value, "n": level} if as_map else [value, level]
        expected = {"M": {"k": expected, "n": {"N": str(level)}}} if as_map else {"L": [expected, {"N": str(level)}]}
    assert_deep_equal(CHECKED.serialize(value), expected)
    assert_deep_equal(CHECKED.serialize_item({"a": value, "b": 1}), {"a": expected, "b": {"N": "1"}})


def test_deep_nesting_keeps_errors() -> None:
    value: Any = [1.5]
    for _ in range(3000):
        value = {"k": value}
    with pytest.raises(TypeError):
        CHECKED.serialize(value)


def test_repr_and_option() -> None:
    assert repr(Serializer(validate_numbers=False)) == "Serializer(validate_numbers=False)"
    assert Serializer().validate_numbers is True


@pytest.mark.parametrize("text", ["NaN123", "-NaN123", "sNaN", "sNaN12", "-sNaN1", "NaN0", "-NaN"])
@pytest.mark.parametrize(
    "wrap",
    [
        lambda d: d,
        lambda d: {"a": d},
        lambda d: [d],
        lambda d: {d},
        lambda d: OrderedDict(a=d),
        lambda d: (d,),
    ],
    ids=["value", "in a dict", "in a list", "in a set", "in a mapping", "in a tuple"],
)
def test_every_nan_form_is_refused_wherever_it_sits(text: str, wrap: Any) -> None:
    # A NaN with a payload is still a NaN (`NaN123` ends in a digit, like a finite number's text)
    if isinstance(wrap(Decimal(1)), set) and Decimal(text).is_snan():
        pytest.skip("a signaling NaN cannot be hashed into a set")
    with pytest.raises(NumberNotFiniteError):
        CHECKED.serialize(wrap(Decimal(text)))
    with pytest.raises(NumberNotFiniteError):
        CHECKED.serialize_item({"a": wrap(Decimal(text))})
