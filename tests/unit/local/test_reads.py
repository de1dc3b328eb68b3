"""Query's rules on key conditions and filters over HTTP (issue 34), table-driven from the service's messages."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import create_table, wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
EQ_A = {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}
GSI = {
    "IndexName": "by_g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "h", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"},
}


@pytest.fixture
def table(endpoint: Any, client: Any) -> str:
    create_table(client, gsis=[GSI], extra_attrs={"g": "S", "h": "N"})
    item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"N": "5"}, "g": {"S": "a"}, "h": {"N": "2"}}
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": item}) == (200, {})
    return "tab1"


def kce(expr: str, **values: Any) -> dict[str, Any]:
    return {"KeyConditionExpression": expr, "ExpressionAttributeValues": {f":{k}": v for k, v in values.items()}}


FILTER_ON_KEY = "Filter Expression can only contain non-primary key attributes: Primary key attribute: "
QUERY_FILTER_ON_KEY = "QueryFilter can only contain non-primary key attributes: Primary key attribute: "
TYPE_MISMATCH = "One or more parameter values were invalid: Condition parameter type does not match schema type"


@pytest.mark.parametrize(
    ("req", "message"),
    [
        (
            {
                "KeyConditionExpression": "pk = :a",
                "FilterExpression": "sk > :b",
                "ExpressionAttributeValues": {":a": {"S": "a"}, ":b": {"N": "0"}},
            },
            FILTER_ON_KEY + "sk",
        ),
        (
            {
                "KeyConditionExpression": "pk = :a",
                "FilterExpression": "size(pk) > :b AND sk > :b",
                "ExpressionAttributeValues": {":a": {"S": "a"}, ":b": {"N": "0"}},
            },
            FILTER_ON_KEY + "pk",
        ),
        (
            {
                "KeyConditionExpression": "pk = :a",
                "FilterExpression": "#s.x = :b",
                "ExpressionAttributeNames": {"#s": "sk"},
                "ExpressionAttributeValues": {":a": {"S": "a"}, ":b": {"N": "0"}},
            },
            FILTER_ON_KEY + "sk",
        ),
        (
            {"KeyConditions": EQ_A, "QueryFilter": {"sk": {"ComparisonOperator": "NOT_NULL"}}},
            QUERY_FILTER_ON_KEY + "sk",
        ),
        (
            {
                "KeyConditions": EQ_A,
                "QueryFilter": {"x": {"ComparisonOperator": "NOT_NULL"}, "pk": {"ComparisonOperator": "NOT_NULL"}},
            },
            QUERY_FILTER_ON_KEY + "pk",
        ),
        # an index's own key attributes are its keys; the table's are not
        (
            {
                "IndexName": "by_g",
                "KeyConditionExpression": "g = :a",
                "FilterExpression": "h > :b",
                "ExpressionAttributeValues": {":a": {"S": "a"}, ":b": {"N": "0"}},
            },
            FILTER_ON_KEY + "h",
        ),
        # the mirror case is refused: QueryFilter with a KeyConditionExpression
        (
            {**kce("pk = :a", a={"S": "a"}), "QueryFilter": {"x": {"ComparisonOperator": "NOT_NULL"}}},
            "Can not use both expression and non-expression parameters in the same request: Non-expression "
            "parameters: {QueryFilter} Expression parameters: {KeyConditionExpression}",
        ),
        # key-condition operands of another type than the schema's
        (  # a type without an order, before the schema is looked at (issue 45)
            kce("pk = :a AND sk < :b", a={"S": "a"}, b={"BOOL": True}),
            "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: "
            "<, operand type: BOOL",
        ),
        (kce("pk = :a AND sk BETWEEN :b AND :c", a={"S": "a"}, b={"S": "0"}, c={"S": "9"}), TYPE_MISMATCH),
        (kce("pk = :a AND sk = :b", a={"S": "a"}, b={"S": "1"}), TYPE_MISMATCH),
    ],
)
def test_query_refusals(endpoint: Any, table: str, req: dict[str, Any], message: str) -> None:
    assert wire(endpoint, "Query", {"TableName": table, **req}) == (400, {"__type": VALIDATION, "message": message})


@pytest.mark.parametrize(
    ("req", "items"),
    [
        # legacy KeyConditions with a FilterExpression or a ProjectionExpression: accepted
        ({"KeyConditions": EQ_A, "FilterExpression": "x > :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}, 1),
        ({"KeyConditions": EQ_A, "FilterExpression": "x > :v", "ExpressionAttributeValues": {":v": {"N": "9"}}}, 0),
        ({"KeyConditions": EQ_A, "ProjectionExpression": "#x", "ExpressionAttributeNames": {"#x": "x"}}, 1),
        (
            {
                "IndexName": "by_g",
                "KeyConditionExpression": "g = :a",
                "FilterExpression": "pk = :a",
                "ExpressionAttributeValues": {":a": {"S": "a"}},
            },
            1,
        ),
        (
            {
                "IndexName": "by_g",
                "KeyConditions": {"g": EQ_A["pk"]},
                "QueryFilter": {"sk": {"ComparisonOperator": "NOT_NULL"}},
            },
            1,
        ),
    ],
)
def test_query_accepted(endpoint: Any, table: str, req: dict[str, Any], items: int) -> None:
    status, body = wire(endpoint, "Query", {"TableName": table, **req})
    assert (status, body.get("Count")) == (200, items), body
    if "ProjectionExpression" in req:
        assert body["Items"] == [{"x": {"N": "5"}}]


ONE_PER_KEY = "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key"


@pytest.mark.parametrize(
    "expr",
    [
        "pk = :a AND pk = :a",
        "pk = :a AND sk > :b AND sk < :c",  # three parts, but what is wrong is the two on sk
        "sk > :b AND pk = :a AND sk < :c",
    ],
)
def test_two_conditions_on_one_key(endpoint: Any, table: str, expr: str) -> None:
    values = {":a": {"S": "a"}, ":b": {"N": "0"}, ":c": {"N": "9"}}
    used = {k: v for k, v in values.items() if k in expr}
    req = {"TableName": table, "KeyConditionExpression": expr, "ExpressionAttributeValues": used}
    assert wire(endpoint, "Query", req) == (400, {"__type": VALIDATION, "message": ONE_PER_KEY})


MULTIPLE_NAMES = "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("#p = some_value", {"#p": "pk"}),  # moto's test_query_with_missing_expression_attribute
        ("pk = sk", None),
        ("pk = :a AND sk > x.y", None),
        ("pk = :a AND begins_with(sk, x)", None),  # dynalite's tests record these against the service
    ],
)
def test_a_key_condition_comparing_two_attributes(
    endpoint: Any, table: str, expr: str, names: dict[str, str] | None
) -> None:
    req: dict[str, Any] = {"TableName": table, "KeyConditionExpression": expr}
    if ":a" in expr:
        req["ExpressionAttributeValues"] = {":a": {"S": "a"}}
    if names:
        req["ExpressionAttributeNames"] = names
    assert wire(endpoint, "Query", req) == (400, {"__type": VALIDATION, "message": MULTIPLE_NAMES})
