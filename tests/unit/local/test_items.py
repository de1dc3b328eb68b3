"""UpdateItem's semantics over HTTP (issue 34): list appends in index order, and updates that create nothing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.unit.local.conftest import create_table, wire

KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}


@pytest.fixture
def table(endpoint: Any, client: Any) -> str:
    create_table(client)
    return "tab1"


@pytest.mark.parametrize(
    ("before", "update", "values", "after"),
    [
        # elements set past a short list's end are appended in index order, not in the order written
        (
            {"a": {"L": [{"S": "x"}]}},
            "SET a[84] = :p, a[37] = :q",
            {":p": {"S": "84"}, ":q": {"S": "37"}},
            {"a": {"L": [{"S": "x"}, {"S": "37"}, {"S": "84"}]}},
        ),
        (
            {"a": {"L": [{"S": "x"}, {"S": "y"}]}},
            "SET a[9] = :p, a[0] = :q, a[5] = :r",
            {":p": {"S": "9"}, ":q": {"S": "0"}, ":r": {"S": "5"}},
            {"a": {"L": [{"S": "0"}, {"S": "y"}, {"S": "5"}, {"S": "9"}]}},
        ),
        # on a missing item: REMOVE and DELETE alone create nothing, whatever the path
        (None, "REMOVE x.y", None, None),
        (None, "REMOVE x, y[3]", None, None),
        (None, "DELETE s :s", {":s": {"SS": ["a"]}}, None),
        (None, "REMOVE x.y DELETE s :s", {":s": {"SS": ["a"]}}, None),
        # with a SET or an ADD the item is created, and the REMOVE on the missing item is a no-op
        (None, "SET b = :v REMOVE x.y", {":v": {"N": "1"}}, {"b": {"N": "1"}}),
        (None, "ADD n :v DELETE s :s", {":v": {"N": "2"}, ":s": {"SS": ["a"]}}, {"n": {"N": "2"}}),
    ],
)
def test_update_semantics(
    endpoint: Any, table: str, before: dict | None, update: str, values: dict | None, after: dict | None
) -> None:
    if before is not None:
        assert wire(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, **before}}) == (200, {})
    req: dict[str, Any] = {"TableName": table, "Key": KEY, "UpdateExpression": update, "ReturnValues": "ALL_NEW"}
    if values:
        req["ExpressionAttributeValues"] = values
    want = {} if after is None else {"Attributes": {**KEY, **after}}
    assert wire(endpoint, "UpdateItem", req) == (200, want)
    got = wire(endpoint, "GetItem", {"TableName": table, "Key": KEY})
    assert got == (200, {} if after is None else {"Item": {**KEY, **after}})


@pytest.mark.parametrize(
    "updates",
    [
        {"x": {"Action": "DELETE"}},
        {"x": {"Action": "DELETE"}, "s": {"Action": "DELETE", "Value": {"SS": ["a"]}}},
    ],
)
def test_legacy_deletes_on_a_missing_item_create_nothing(endpoint: Any, table: str, updates: dict) -> None:
    assert wire(endpoint, "UpdateItem", {"TableName": table, "Key": KEY, "AttributeUpdates": updates}) == (200, {})
    assert wire(endpoint, "GetItem", {"TableName": table, "Key": KEY}) == (200, {})


def test_the_4kb_limit_is_not_on_the_expression_built_from_legacy_attribute_updates(endpoint: Any, table: str) -> None:
    updates = {f"attribute_{i:03}": {"Action": "PUT", "Value": {"N": str(i)}} for i in range(200)}
    assert wire(endpoint, "UpdateItem", {"TableName": table, "Key": KEY, "AttributeUpdates": updates}) == (200, {})
    status, body = wire(endpoint, "GetItem", {"TableName": table, "Key": KEY})
    assert status == 200 and len(body["Item"]) == 202 and body["Item"]["attribute_199"] == {"N": "199"}
    # the limit stays on the user's own expressions
    text = "SET " + ", ".join(f"attribute_{i:03}_x = :v" for i in range(200))  # 4.4 KB
    req = {"TableName": table, "Key": KEY, "UpdateExpression": text, "ExpressionAttributeValues": {":v": {"N": "1"}}}
    status, body = wire(endpoint, "UpdateItem", req)
    too_big = "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; expression size: "
    assert (status, body["message"]) == (400, too_big + str(len(text)))


PRECISION = "Attempting to store more than 38 significant digits in a Number"


@pytest.mark.parametrize(
    ("stored", "update", "value", "result"),
    [
        ("1E+38", "SET n = n + :v", "1", None),  # 100...001: 39 digits, refused rather than rounded
        ("1E+38", "ADD n :v", "1", None),
        ("1", "SET n = :v + n", "1E+38", None),
        ("1", "SET n = :v - n", "1E+38", "99999999999999999999999999999999999999"),  # 38 nines: exact
        ("0.1", "SET n = n + :v", "1E+37", None),
        ("99999999999999999999999999999999999999", "ADD n :v", "1", "100000000000000000000000000000000000000"),
        ("1E+38", "SET n = n - :v", "1E+38", "0"),
        ("2.5", "ADD n :v", "0.25", "2.75"),
    ],
)
def test_arithmetic_that_loses_precision_is_refused(
    endpoint: Any, table: str, stored: str, update: str, value: str, result: str | None
) -> None:
    assert wire(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "n": {"N": stored}}}) == (200, {})
    req = {
        "TableName": table,
        "Key": KEY,
        "UpdateExpression": update,
        "ExpressionAttributeValues": {":v": {"N": value}},
        "ReturnValues": "UPDATED_NEW",
    }
    if result is None:
        assert wire(endpoint, "UpdateItem", req) == (
            400,
            {"__type": "com.amazon.coral.validate#ValidationException", "message": PRECISION},
        )
        assert wire(endpoint, "GetItem", {"TableName": table, "Key": KEY})[1]["Item"]["n"] == {
            "N": format(Decimal(stored), "f")
        }  # stored normalised
    else:
        assert wire(endpoint, "UpdateItem", req) == (200, {"Attributes": {"n": {"N": result}}})
