"""Issue 41, integrity of the endpoint: a request is validated whole, on the item as it would be stored, before it
changes anything; nothing it stores can make a later read answer 500; no parser recurses past the service's limits.

Each case goes over HTTP to a real in-thread endpoint; `no_traceback` fails a test whose server logged an HTTP 500.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from tests.unit.local.conftest import create_table
from tests.unit.local.test_input_limits import NESTING_MESSAGE, VALIDATION, call, nested

KEY = {"pk": {"S": "a"}}
HUGE_EXPONENT = "1e9223372036854775808"  # an exponent beyond 64 bits: Decimal refuses it (InvalidOperation)
NOT_NUMERIC = f"The parameter cannot be converted to a numeric value: {HUGE_EXPONENT}"


@pytest.fixture
def table(client: Any) -> str:
    create_table(client, "integ", range_type=None)
    return "integ"


def deep_list(levels: int) -> str:
    """A PartiQL list literal `levels` levels deep (as an attribute's value: the outer list is level 1)."""
    return "[" * levels + "]" * levels


def refused(status: int, body: Any, message: str) -> None:
    assert (status, body.get("__type"), body.get("message")) == (400, VALIDATION, message), body


def stored(endpoint: Any, table: str, key: dict[str, Any] = KEY) -> Any:
    status, body = call(endpoint, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    assert status == 200, body
    return body.get("Item")


# ---- nesting: checked on the item as it would be stored -------------------------------------------------------
def test_partiql_insert_of_a_126_level_item_is_refused_as_putitem_refuses_it(
    endpoint: Any, table: str, no_traceback: None
) -> None:
    statement = f"INSERT INTO {table} VALUE {{'pk':'a','a':{deep_list(126)}}}"
    refused(*call(endpoint, "ExecuteStatement", {"Statement": statement}), NESTING_MESSAGE)
    refused(*call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "a": nested(126, "L")}}), NESTING_MESSAGE)
    assert stored(endpoint, table) is None


def test_partiql_literal_of_1000_levels_is_refused_before_the_parser_recurses(
    endpoint: Any, table: str, no_traceback: None
) -> None:
    for statement in (
        f"INSERT INTO {table} VALUE {{'pk':'a','a':{deep_list(1000)}}}",
        f"SELECT * FROM {table} WHERE pk = 'a' AND a = " + "{'k':" * 1000 + "1" + "}" * 1000,
    ):
        refused(*call(endpoint, "ExecuteStatement", {"Statement": statement}), NESTING_MESSAGE)


def test_partiql_insert_of_a_32_level_item_is_stored(endpoint: Any, table: str, no_traceback: None) -> None:
    statement = f"INSERT INTO {table} VALUE {{'pk':'a','a':[{deep_list(31)}]}}"
    assert call(endpoint, "ExecuteStatement", {"Statement": statement})[0] == 200
    expected: dict[str, Any] = {"L": []}  # level 32: an empty list
    for _ in range(31):
        expected = {"L": [expected]}
    assert stored(endpoint, table)["a"] == expected


def _grow(path_levels: int) -> dict[str, Any]:
    """An UpdateItem that sets, at a path `path_levels` deep, a value 20 levels deep (and ADDs 1 to n)."""
    path = ".".join(["a"] + ["x"] * (path_levels - 1))
    return {
        "TableName": "integ",
        "Key": KEY,
        "UpdateExpression": f"SET {path} = :deep ADD n :one",
        "ExpressionAttributeValues": {":deep": nested(20), ":one": {"N": "1"}},
    }


def test_updateitem_cannot_grow_an_item_past_32_levels(endpoint: Any, table: str, no_traceback: None) -> None:
    """`SET a.x.x... = :deep` on an item 20 levels deep builds 39 levels: refused, and nothing applied (the
    old code stored it, then answered 500 to reads of it, and the ADD was applied before each retried 500)."""
    assert call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "a": nested(20), "n": {"N": "0"}}})[0] == 200
    before = stored(endpoint, table)
    for rv in ("NONE", "ALL_NEW", "ALL_OLD", "UPDATED_NEW"):
        refused(*call(endpoint, "UpdateItem", {**_grow(19), "ReturnValues": rv}), NESTING_MESSAGE)
    assert stored(endpoint, table) == before
    # up to the limit it is applied: a value 20 levels deep under a path of 13 is 32 levels
    status, body = call(endpoint, "UpdateItem", {**_grow(13), "ReturnValues": "ALL_NEW"})
    assert status == 200, body
    assert body["Attributes"]["n"] == {"N": "1"}


def test_partiql_update_cannot_grow_an_item_past_32_levels(endpoint: Any, table: str, no_traceback: None) -> None:
    assert call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "a": nested(20)}})[0] == 200
    path = ".".join(["a"] + ["x"] * 18)
    statement = f"UPDATE {table} SET {path} = {deep_list(20)} SET n = 1 WHERE pk = 'a'"
    refused(*call(endpoint, "ExecuteStatement", {"Statement": statement}), NESTING_MESSAGE)
    assert "n" not in stored(endpoint, table)


def test_transactions_refuse_an_over_deep_item_whole(endpoint: Any, table: str, no_traceback: None) -> None:
    """A transaction whose update would nest an item too deep changes nothing, its other actions included."""
    assert call(endpoint, "PutItem", {"TableName": table, "Item": {**KEY, "a": nested(20)}})[0] == 200
    grow = _grow(19)
    other = {"TableName": table, "Item": {"pk": {"S": "other"}}}
    status, body = call(endpoint, "TransactWriteItems", {"TransactItems": [{"Put": other}, {"Update": grow}]})
    assert status == 400 and NESTING_MESSAGE in json.dumps(body), body  # a ValidationError reason of the cancel
    assert stored(endpoint, table, {"pk": {"S": "other"}}) is None
    statements = [
        {"Statement": f"INSERT INTO {table} VALUE {{'pk':'other'}}"},
        {"Statement": f"INSERT INTO {table} VALUE {{'pk':'deep','a':{deep_list(40)}}}"},
    ]
    status, body = call(endpoint, "ExecuteTransaction", {"TransactStatements": statements})
    assert status == 400 and NESTING_MESSAGE in json.dumps(body), body
    assert stored(endpoint, table, {"pk": {"S": "other"}}) is None
    status, body = call(endpoint, "BatchExecuteStatement", {"Statements": statements})
    assert status == 200, body
    assert [r.get("Error", {}).get("Message") for r in body["Responses"]] == [None, NESTING_MESSAGE]
    assert stored(endpoint, table, {"pk": {"S": "deep"}}) is None


def test_every_read_of_the_deepest_storable_item_answers(endpoint: Any, table: str, no_traceback: None) -> None:
    """The reads that answered 500 on an over-deep item, on the deepest item that can be stored (32 levels)."""
    deepest = {**KEY, "a": nested(32, "L"), "n": {"N": "1"}}
    assert call(endpoint, "PutItem", {"TableName": table, "Item": deepest})[0] == 200
    reads: list[tuple[str, dict[str, Any]]] = [
        ("GetItem", {"TableName": table, "Key": KEY, "ProjectionExpression": "a"}),
        ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": table, "Key": KEY}}]}),
        ("ExecuteStatement", {"Statement": f"SELECT a FROM {table} WHERE pk = 'a'"}),
        ("ExecuteTransaction", {"TransactStatements": [{"Statement": f"SELECT a FROM {table} WHERE pk = 'a'"}]}),
        ("Scan", {"TableName": table}),
    ]
    for rv in ("ALL_NEW", "ALL_OLD", "UPDATED_OLD"):
        reads.append(
            ("UpdateItem", {"TableName": table, "Key": KEY, "UpdateExpression": "SET b = a", "ReturnValues": rv})
        )
    for op, req in reads:
        status, body = call(endpoint, op, req)
        assert status == 200, (op, body)
    failing = {
        "TableName": table,
        "Key": KEY,
        "UpdateExpression": "SET c = :one",
        "ConditionExpression": "attribute_not_exists(pk)",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    status, body = call(endpoint, "UpdateItem", failing)
    assert (status, body["__type"].split("#")[-1]) == (400, "ConditionalCheckFailedException"), body
    assert body["Item"]["a"] == deepest["a"]


# ---- parsers: bounded depth ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "where",
    [
        "(" * 1000 + "pk = 'a'" + ")" * 1000,
        "NOT " * 1000 + "pk = 'a'",
        "a = " + "size(" * 1000 + "b" + ")" * 1000,
    ],
    ids=["parentheses", "not", "functions"],
)
def test_partiql_nesting_is_refused_before_the_parser_recurses(
    endpoint: Any, table: str, no_traceback: None, where: str
) -> None:
    status, body = call(endpoint, "ExecuteStatement", {"Statement": f"SELECT * FROM {table} WHERE {where}"})
    assert (status, body.get("__type")) == (400, VALIDATION), body
    assert "nested more than 100 deep" in body["message"]


def test_partiql_nesting_within_the_bound_is_parsed(endpoint: Any, table: str, no_traceback: None) -> None:
    for where in ("(" * 50 + "pk = 'a'" + ")" * 50, "NOT " * 50 + "pk = 'b'"):
        status, body = call(endpoint, "ExecuteStatement", {"Statement": f"SELECT * FROM {table} WHERE {where}"})
        assert status == 200, body


def test_condition_expression_nesting_is_refused(endpoint: Any, table: str, no_traceback: None) -> None:
    for condition in ("(" * 1000 + "a = :v" + ")" * 1000, "NOT " * 1000 + "a = :v"):
        req = {
            "TableName": table,
            "Key": KEY,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": {":v": {"N": "1"}},
        }
        status, body = call(endpoint, "DeleteItem", req)
        assert status == 400, body


# ---- numbers: an exponent beyond 64 bits ----------------------------------------------------------------------
def test_an_exponent_beyond_64_bits_is_refused_on_every_number_path(
    endpoint: Any, table: str, no_traceback: None
) -> None:
    for negative in ("", "-"):
        n = negative + HUGE_EXPONENT
        message = f"The parameter cannot be converted to a numeric value: {n}"
        values = {":n": {"N": n}}
        requests: list[tuple[str, dict[str, Any]]] = [
            ("PutItem", {"TableName": table, "Item": {**KEY, "a": {"N": n}}}),
            ("PutItem", {"TableName": table, "Item": {**KEY, "a": {"NS": ["1", n]}}}),
            ("PutItem", {"TableName": table, "Item": {**KEY, "a": {"L": [{"M": {"x": {"N": n}}}]}}}),
            (
                "UpdateItem",
                {"TableName": table, "Key": KEY, "UpdateExpression": "SET a = :n", "ExpressionAttributeValues": values},
            ),
            (
                "UpdateItem",
                {"TableName": table, "Key": KEY, "UpdateExpression": "ADD a :n", "ExpressionAttributeValues": values},
            ),
            ("Scan", {"TableName": table, "FilterExpression": "a < :n", "ExpressionAttributeValues": values}),
            (
                "ExecuteStatement",
                {"Statement": f"INSERT INTO {table} VALUE {{'pk':'a','a':?}}", "Parameters": [{"N": n}]},
            ),
            ("ExecuteStatement", {"Statement": f"SELECT * FROM {table} WHERE a = ?", "Parameters": [{"N": n}]}),
            ("BatchWriteItem", {"RequestItems": {table: [{"PutRequest": {"Item": {**KEY, "a": {"N": n}}}}]}}),
        ]
        for op, req in requests:
            status, body = call(endpoint, op, req)
            assert status == 400 and message in body.get("message", ""), (op, body)
        status, body = call(
            endpoint, "ExecuteStatement", {"Statement": f"INSERT INTO {table} VALUE {{'pk':'a','a':{n}}}"}
        )
        assert status == 400, body
    assert stored(endpoint, table) is None


def test_an_error_whose_body_cannot_be_encoded_is_a_500_not_a_dropped_connection(endpoint: Any) -> None:
    """The old code dropped the connection when ReturnValuesOnConditionCheckFailure's item could not be encoded.
    No stored item can cause that now, so the failure is caused with a stand-in operation (a mock: the one way)."""

    def refuse(req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise ServiceError("ConditionalCheckFailedException", "The conditional request failed", extra={"Item": {1}})

    endpoint.server.backend.ops["GetItem"] = refuse
    status, body = call(endpoint, "GetItem", {"TableName": "integ", "Key": KEY})
    assert (status, body["__type"].split("#")[-1]) == (500, "InternalServerError")
