"""Issue 16, findings 1-3: no expression, attribute value or JSON type can stall the server or answer HTTP 500.

Each case goes over HTTP to a real in-thread endpoint; the answer must be the service's 400 and the server must
log no traceback.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from typing import Any

import pytest

from tests.unit.local.conftest import create_table
from tests.unit.local.test_errors_and_control import raw

# a JSON list where the model wants a map of attribute values (dynalite's recorded tests)
AV_MAP_LIST = (
    "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"
)

TARGET = "DynamoDB_20120810."
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
SERIALIZATION = "com.amazon.coral.service#SerializationException"
VALIDATION = "com.amazon.coral.validate#ValidationException"
NESTING_MESSAGE = (
    "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
)


def nested(levels: int, kind: str = "M") -> dict[str, Any]:
    """An attribute value `levels` levels deep: the top-level value is level 1."""
    av: dict[str, Any] = {"S": "leaf"}
    for _ in range(levels - 1):
        av = {"M": {"x": av}} if kind == "M" else {"L": [av]}
    return av


def call(endpoint: Any, op: str, req: dict[str, Any]) -> tuple[int, Any]:
    status, _, body = raw(endpoint.port, TARGET + op, json.dumps(req).encode())
    return status, body


@pytest.fixture
def table(endpoint: Any, client: Any) -> str:
    create_table(client)
    return "tab1"


@pytest.fixture
def no_traceback(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.ERROR, logger="dynlocust.local.server")
    yield
    assert [r for r in caplog.records if r.name == "dynlocust.local.server"] == []


def put(endpoint: Any, attrs: dict[str, Any], **extra: Any) -> tuple[int, Any]:
    return call(endpoint, "PutItem", {"TableName": "tab1", "Item": {**KEY, **attrs}, **extra})


# -- finding 1: expression size is checked before parsing --------------------------------------------------------
def test_projection_over_4kb_is_refused_before_parsing(endpoint: Any, table: str, no_traceback: None) -> None:
    paths = ", ".join(f"a{i}" for i in range(8000))  # 8,000 paths, 47 KB: held the loop for 10 s
    status, body = call(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY, "ProjectionExpression": paths})
    assert status == 400
    assert body["__type"] == VALIDATION
    assert body["message"] == (
        "Invalid ProjectionExpression: Expression size has exceeded the maximum allowed size; "
        f"expression size: {len(paths)}"
    )


def test_projection_of_4kb_is_parsed(endpoint: Any, table: str, client: Any) -> None:
    paths = ",".join(f"a{i}" for i in range(800))  # 800 paths, under 4 KB
    assert len(paths) <= 4096
    client.put_item(TableName="tab1", Item={**KEY, "a5": {"S": "x"}})
    got = client.get_item(TableName="tab1", Key=KEY, ProjectionExpression=paths)
    assert got["Item"] == {"a5": {"S": "x"}}


# -- finding 2: nesting depth is refused at write time -----------------------------------------------------------
@pytest.mark.parametrize("kind", ["M", "L"])
def test_item_nested_33_levels_is_refused(endpoint: Any, table: str, kind: str, no_traceback: None) -> None:
    status, body = put(endpoint, {"deep": nested(33, kind)})
    assert (status, body) == (400, {"__type": VALIDATION, "message": NESTING_MESSAGE})


def test_item_nested_126_levels_does_not_poison_the_table(endpoint: Any, table: str, no_traceback: None) -> None:
    status, _ = put(endpoint, {"deep": nested(126)})
    assert status == 400
    assert call(endpoint, "Scan", {"TableName": "tab1"}) == (200, {"Items": [], "Count": 0, "ScannedCount": 0})


def test_item_nested_32_levels_is_stored_and_read_back(endpoint: Any, table: str, no_traceback: None) -> None:
    assert put(endpoint, {"deep": nested(32)})[0] == 200
    status, body = call(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY})
    assert status == 200
    assert body["Item"]["deep"] == nested(32)
    assert call(endpoint, "Scan", {"TableName": "tab1"})[1]["Count"] == 1


# -- finding 3: wrong JSON types and deep recursion answer 400 ---------------------------------------------------
@pytest.mark.parametrize(
    ("req_extra", "item_attrs", "code", "message"),
    [
        ({}, {"v": {"S": 5}}, SERIALIZATION, "NUMBER_VALUE cannot be converted to String"),
        ({}, {"v": {"SS": [1, 2]}}, SERIALIZATION, "NUMBER_VALUE cannot be converted to String"),
        ({}, {"v": {"M": []}}, SERIALIZATION, AV_MAP_LIST),
        ({}, {"v": {"BOOL": "maybe"}}, SERIALIZATION, "Unexpected token received from parser"),
        ({}, {"v": {"L": {"a": 1}}}, SERIALIZATION, "Start of structure or map found where not expected"),
        ({"ConditionExpression": 5}, {}, SERIALIZATION, "NUMBER_VALUE cannot be converted to String"),
        ({"ExpressionAttributeValues": [1]}, {}, SERIALIZATION, AV_MAP_LIST),
        ({"ReturnValues": {"a": 1}}, {}, SERIALIZATION, "Start of structure or map found where not expected"),
        (
            {},
            {"v": {"NULL": False}},
            VALIDATION,
            "1 validation error detected: One or more parameter values were invalid: Null attribute value types must "
            "have the value of true",
        ),
        (
            {},
            {"v": {"SS": ["x", "y", "x"]}},
            VALIDATION,
            "1 validation error detected: One or more parameter values were invalid: Input collection [x, y, x] "
            "contains duplicates.",
        ),
        (
            {},
            {"v": {"BS": []}},
            VALIDATION,
            "1 validation error detected: One or more parameter values were invalid: Binary sets should not be empty",
        ),
        ({}, {"v": {"N": " 1.23"}}, VALIDATION, "The parameter cannot be converted to a numeric value:  1.23"),
        ({}, {"v": {"N": "NaN"}}, VALIDATION, "The parameter cannot be converted to a numeric value: NaN"),
    ],
)
def test_wrong_types_answer_400(
    endpoint: Any,
    table: str,
    no_traceback: None,
    req_extra: dict[str, Any],
    item_attrs: dict[str, Any],
    code: str,
    message: str,
) -> None:
    key = "Message" if code == SERIALIZATION else "message"  # the service's SerializationException says Message
    assert put(endpoint, item_attrs, **req_extra) == (400, {"__type": code, key: message})


def test_item_nested_500_levels_answers_400(endpoint: Any, table: str, no_traceback: None) -> None:
    deep = '{"L":[' * 499 + '{"S":"x"}' + "]}" * 499  # too deep for json.dumps to build
    body = '{"TableName":"tab1","Item":{"pk":{"S":"a"},"sk":{"N":"1"},"v":' + deep + "}}"
    status, _, answer = raw(endpoint.port, TARGET + "PutItem", body.encode())
    assert (status, answer) == (400, {"__type": VALIDATION, "message": NESTING_MESSAGE})


def test_wrong_type_of_table_name_and_key(endpoint: Any, table: str, no_traceback: None) -> None:
    assert call(endpoint, "GetItem", {"TableName": True, "Key": KEY}) == (
        400,
        {"__type": SERIALIZATION, "Message": "TRUE_VALUE cannot be converted to String"},
    )
    assert call(endpoint, "GetItem", {"TableName": "tab1", "Key": "pk"}) == (
        400,
        {"__type": SERIALIZATION, "Message": "Unexpected field type"},
    )


def test_null_members_are_absent(endpoint: Any, table: str, no_traceback: None) -> None:
    status, body = call(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY, "ProjectionExpression": None})
    assert (status, body) == (200, {})


NESTED_99 = "attribute_not_exists(a)"
for _ in range(99):
    NESTED_99 = f"(attribute_not_exists(a) AND {NESTED_99})"


@pytest.mark.parametrize(
    ("condition", "status"),
    [
        ("NOT " * 1000 + "attribute_not_exists(a)", 200),  # under 4 KB: parsed in a loop, not recursed
        ("NOT " * 5000 + "attribute_not_exists(a)", 400),  # over 4 KB: refused by size
        (" OR ".join(["attribute_not_exists(a)"] * 140), 200),
        (" OR ".join(["attribute_not_exists(a)"] * 5000), 400),
        (" AND ".join(["attribute_not_exists(a)"] * 130), 200),
        (NESTED_99, 200),  # 99 groups, none redundant (the service refuses "((x))")
        ("(" * 2000 + "attribute_not_exists(a)" + ")" * 2000, 400),  # under 4 KB, too deeply nested
        ("(" * 10000 + "attribute_not_exists(a)" + ")" * 10000, 400),
        ("size(" * 700 + "a" + ")" * 700 + " > :v", 400),
    ],
    ids=["1000-NOT", "5000-NOT", "140-OR", "5000-OR", "130-AND", "99-parens", "2000-parens", "10000-parens", "size"],
)
def test_long_chains_answer_without_500(
    endpoint: Any, table: str, condition: str, status: int, no_traceback: None
) -> None:
    extra: dict[str, Any] = {"ConditionExpression": condition}
    if ":v" in condition:
        extra["ExpressionAttributeValues"] = {":v": {"N": "1"}}
    got, body = put(endpoint, {}, **extra)
    assert got == status, body
    if status == 400:
        assert body["__type"] == VALIDATION


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("9" * 1_000_000, "Attempting to store more than 38 significant digits in a Number"),
        ("1" + "0" * 50 + "1", "Attempting to store more than 38 significant digits in a Number"),
        ("--" + "1" * 100, "The parameter cannot be converted to a numeric value: --" + "1" * 100),
        (
            "1" * 30 + ".." + "0" * 60,
            "The parameter cannot be converted to a numeric value: " + "1" * 30 + ".." + "0" * 60,
        ),
        ("1" * 80 + "e", "The parameter cannot be converted to a numeric value: " + "1" * 80 + "e"),
    ],
    ids=["million-digits", "spread-digits", "two-signs", "two-points", "empty-exponent"],
)
def test_long_number_texts(endpoint: Any, table: str, no_traceback: None, number: str, message: str) -> None:
    assert put(endpoint, {"v": {"N": number}}) == (400, {"__type": VALIDATION, "message": message})


def test_long_number_with_few_significant_digits_is_stored(endpoint: Any, table: str) -> None:
    assert put(endpoint, {"v": {"N": "0" * 100 + "12.50" + "0" * 100}}) == (200, {})
    stored = call(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY})[1]["Item"]["v"]["N"]
    assert Decimal(stored) == Decimal("12.5")


def test_several_problems_in_one_request_are_one_message_listing_each(endpoint: Any, no_traceback: None) -> None:
    status, body = call(endpoint, "Scan", {"TableName": "nosuch", "Limit": 0, "Select": "ALL", "TotalSegments": 0})
    assert status == 400
    assert body == {
        "__type": VALIDATION,
        "message": "3 validation errors detected: "
        "Value 'ALL' at 'select' failed to satisfy constraint: Member must satisfy enum value set: "
        "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]; "
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1; "
        "Value '0' at 'totalSegments' failed to satisfy constraint: Member must have value greater than or equal to 1",
    }


def test_an_invalid_value_outside_the_single_item_writes_is_the_bare_sentence(endpoint: Any, table: str) -> None:
    # as captured against the service: PutItem, UpdateItem and DeleteItem add "1 validation error detected: "
    assert call(endpoint, "GetItem", {"TableName": table, "Key": {"pk": {"NULL": False}}}) == (
        400,
        {
            "__type": VALIDATION,
            "message": "One or more parameter values were invalid: Null attribute value types must have the value "
            "of true",
        },
    )


@pytest.mark.parametrize(
    ("op", "req", "path"),
    [
        ("PutItem", {"TableName": "tab1"}, "item"),
        (
            "BatchWriteItem",
            {"RequestItems": {"tab1": [{"PutRequest": {}}]}},
            "requestItems.tab1.member.putRequest.item",
        ),
        ("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "tab1"}}]}, "transactItems.member.put.item"),
    ],
)
def test_a_put_without_its_item_is_refused(
    endpoint: Any, table: str, no_traceback: None, op: str, req: dict[str, Any], path: str
) -> None:
    message = (
        f"1 validation error detected: Value null at '{path}' failed to satisfy constraint: Member must not be null"
    )
    assert call(endpoint, op, req) == (400, {"__type": VALIDATION, "message": message})
