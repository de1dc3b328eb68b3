"""Issue 34, "Values": attribute values are checked and stored as the service checks and stores them.

Over HTTP to a real in-thread endpoint (raw JSON, so the exact number text reaches the server). The normalisation
cases are those ScyllaDB Alternator's test_number.py records against DynamoDB; the base64 messages are the ones
dynalite's tests record against the service.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import create_table
from tests.unit.local.test_input_limits import call

TARGET = "DynamoDB_20120810."
VALIDATION = "com.amazon.coral.validate#ValidationException"
SERIALIZATION = "com.amazon.coral.service#SerializationException"
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
DUPLICATES = "1 validation error detected: One or more parameter values were invalid: Input collection "


@pytest.fixture
def table(endpoint: Any, client: Any) -> str:
    create_table(client)
    return "tab1"


NORMALISED = [
    ("1", "1"),
    ("-5", "-5"),
    ("0", "0"),
    ("1000", "1000"),
    ("007", "7"),
    ("001.23", "1.23"),
    ("00", "0"),
    ("+3", "3"),
    ("+0", "0"),
    ("1.0", "1"),
    ("1.10", "1.1"),
    ("100.000", "100"),
    ("0.0", "0"),
    ("1e3", "1000"),
    ("1E+3", "1000"),
    ("-3e2", "-300"),
    ("1.23e4", "12300"),
    ("1e-3", "0.001"),
    ("123e-2", "1.23"),
    ("1.0e-1", "0.1"),
    ("-0", "0"),
    ("-0.0", "0"),
    ("0e5", "0"),
    (".5", "0.5"),
    ("-.5", "-0.5"),
    ("1e20", "100000000000000000000"),
    ("1e125", "1" + "0" * 125),
    ("1e-20", "0.00000000000000000001"),
    ("-273.15", "-273.15"),
]


def test_numbers_are_returned_normalised(endpoint: Any, table: str, no_traceback: None) -> None:
    item: dict[str, Any] = {**KEY, **{f"n{i}": {"N": given} for i, (given, _) in enumerate(NORMALISED)}}
    item["set"] = {"NS": ["007", "1e3", ".5"]}
    assert call(endpoint, "PutItem", {"TableName": table, "Item": item})[0] == 200
    status, body = call(endpoint, "GetItem", {"TableName": table, "Key": KEY})
    assert status == 200, body
    got = {given: body["Item"][f"n{i}"]["N"] for i, (given, _) in enumerate(NORMALISED)}
    assert got == dict(NORMALISED)
    assert sorted(body["Item"]["set"]["NS"]) == ["0.5", "1000", "7"]


def test_number_keys_are_one_key_whatever_their_text(endpoint: Any, table: str) -> None:
    for text in ("1000", "1e3", "1000.0", "001000", "+1000"):
        key = {"pk": {"S": "k"}, "sk": {"N": text}}
        assert call(endpoint, "PutItem", {"TableName": table, "Item": {**key, "v": {"S": text}}})[0] == 200
    body = call(endpoint, "Scan", {"TableName": table})[1]
    assert [(it["sk"]["N"], it["v"]["S"]) for it in body["Items"]] == [("1000", "+1000")]


@pytest.mark.parametrize(
    ("value", "type_", "message"),
    [
        pytest.param(
            {"NS": ["1", "1.0"]},
            VALIDATION,
            DUPLICATES + "[1, 1.0] contains duplicates.",
            id="NS-equal-by-value",
        ),
        pytest.param(
            {"NS": ["1e3", "1000"]},
            VALIDATION,
            DUPLICATES + "[1e3, 1000] contains duplicates.",
            id="NS-exponent",
        ),
        pytest.param(
            {"SS": ["a", "a"]},
            VALIDATION,
            DUPLICATES + "[a, a] contains duplicates.",
            id="SS",
        ),
        pytest.param(
            {"B": "23456"},
            SERIALIZATION,
            "'23456' can not be converted to a Blob: Base64 encoded length is expected a multiple of 4 bytes but "
            "found: 5",
            id="B-length",
        ),
        pytest.param(
            {"B": "=+/="},
            SERIALIZATION,
            "'=+/=' can not be converted to a Blob: Invalid Base64 character: '='",
            id="B-padding-first",
        ),
        pytest.param(
            {"B": "+/+="},
            SERIALIZATION,
            "'+/+=' can not be converted to a Blob: Invalid last non-pad Base64 character dectected",
            id="B-last-character",
        ),
        pytest.param(
            {"B": "YWJj??!!"},
            SERIALIZATION,
            "'YWJj??!!' can not be converted to a Blob: Invalid Base64 character: '?'",
            id="B-not-base64",
        ),
        pytest.param(
            {"BS": ["YWJj", "YWJjZGVmZ2g"]},
            SERIALIZATION,
            "'YWJjZGVmZ2g' can not be converted to a Blob: Base64 encoded length is expected a multiple of 4 "
            "bytes but found: 11",
            id="BS-missing-padding",
        ),
        pytest.param(
            {"M": {"x": {"L": [{"B": "é==="}]}}},
            SERIALIZATION,
            "'é===' can not be converted to a Blob: Invalid Base64 character: 'é'",
            id="B-nested-non-ascii",
        ),
    ],
)
def test_values_the_service_refuses(
    endpoint: Any, table: str, no_traceback: None, value: dict[str, Any], type_: str, message: str
) -> None:
    status, body = call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "v": value}})
    key = "Message" if type_.endswith("SerializationException") else "message"  # the service's two spellings
    assert (status, body["__type"], body[key]) == (400, type_, message)
    assert call(endpoint, "GetItem", {"TableName": table, "Key": KEY})[1] == {}  # nothing was stored


def test_malformed_base64_never_reaches_a_comparison(endpoint: Any, table: str, no_traceback: None) -> None:
    """A B value compared in a condition or a key condition: refused as input, never a 500 in the comparison."""
    assert call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "b": {"B": "YWJj"}}})[0] == 200
    for op, req in [
        (
            "DeleteItem",
            {
                "TableName": table,
                "Key": KEY,
                "ConditionExpression": "b < :b",
                "ExpressionAttributeValues": {":b": {"B": "YW=j"}},
            },
        ),
        (
            "Scan",
            {"TableName": table, "FilterExpression": "b = :b", "ExpressionAttributeValues": {":b": {"B": "Y"}}},
        ),
        (
            "Query",
            {
                "TableName": table,
                "KeyConditionExpression": "pk = :p",
                "FilterExpression": "b BETWEEN :lo AND :hi",
                "ExpressionAttributeValues": {":p": {"S": "a"}, ":lo": {"B": "AA=="}, ":hi": {"B": "_-8="}},
            },
        ),
    ]:
        status, body = call(endpoint, op, req)
        assert (status, body["__type"]) == (400, SERIALIZATION), (op, body)
    # valid base64 in the same places still works
    status, body = call(
        endpoint,
        "Scan",
        {"TableName": table, "FilterExpression": "b = :b", "ExpressionAttributeValues": {":b": {"B": "YWJj"}}},
    )
    assert (status, body["Count"]) == (200, 1)


EMPTY = "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"


@pytest.mark.parametrize(
    ("op", "req"),
    [
        ("PutItem", {"TableName": "tab1", "Item": {**KEY, "x": {"dog": "cat"}}}),
        ("PutItem", {"TableName": "tab1", "Item": {**KEY, "x": {"M": {"y": {"dog": "cat"}}}}}),
        ("GetItem", {"TableName": "tab1", "Key": {"pk": {"dog": "cat"}, "sk": {"N": "1"}}}),
        (
            "Query",
            {"TableName": "tab1", "KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"dog": 1}}},
        ),
    ],
)
def test_an_unknown_attribute_value_member_is_ignored_as_the_service_ignores_it(
    endpoint: Any, table: str, op: str, req: dict[str, Any]
) -> None:
    """`{"dog": "cat"}` holds no member the model defines: an empty value (dynalite's tests record `{"a": ""}`)."""
    assert call(endpoint, op, req) == (400, {"__type": VALIDATION, "message": EMPTY})


def test_an_unknown_member_beside_a_known_one_is_dropped(endpoint: Any, table: str) -> None:
    item = {**KEY, "x": {"S": "v", "dog": "cat"}, "y": {"L": [{"N": "01", "cat": 1}]}}
    assert call(endpoint, "PutItem", {"TableName": "tab1", "Item": item}) == (200, {})
    got = call(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY})
    assert got == (200, {"Item": {**KEY, "x": {"S": "v"}, "y": {"L": [{"N": "1"}]}}})
