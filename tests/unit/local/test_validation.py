"""Request rules checked before any table lookup (dynlocust/local/validation.py), as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.validation import check_constraints, check_create_table, constraint_problems
from tests.unit.local.conftest import create_table, wire

HASH = {"AttributeName": "pk", "KeyType": "HASH"}
DEFS = [{"AttributeName": "pk", "AttributeType": "S"}]


def table(**over: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TableName": "t1",
        "KeySchema": [HASH],
        "AttributeDefinitions": DEFS,
        "BillingMode": "PAY_PER_REQUEST",
    }
    req.update(over)
    return req


def gsi(name: str, attr: str = "g", **over: Any) -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": attr, "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
        **over,
    }


def message(req: dict[str, Any]) -> str:
    with pytest.raises(ServiceError) as exc:
        check_create_table(req)
    assert exc.value.code == "ValidationException"
    return exc.value.message


def test_a_valid_table_passes() -> None:
    check_create_table(table())
    g_defs = [*DEFS, {"AttributeName": "g", "AttributeType": "S"}]
    check_create_table(table(AttributeDefinitions=g_defs, GlobalSecondaryIndexes=[gsi("i1")]))


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({"GlobalSecondaryIndexes": []}, "List of GlobalSecondaryIndexes is empty"),
        ({"LocalSecondaryIndexes": []}, "List of LocalSecondaryIndexes is empty"),
        (
            {"KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}]},
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ),
        (
            {"KeySchema": [HASH, {"AttributeName": "s", "KeyType": "SORT"}]},
            "1 validation error detected: Value 'SORT' at 'keySchema.2.member.keyType' failed to satisfy constraint",
        ),
        (
            {"AttributeDefinitions": [*DEFS, {"AttributeName": "pk", "AttributeType": "N"}]},
            "Duplicate AttributeName in AttributeDefinitions: [pk]",
        ),
        (
            {"AttributeDefinitions": [*DEFS, {"AttributeName": "x", "AttributeType": "N"}]},
            "Number of attributes in KeySchema does not exactly match number of attributes defined",
        ),
        ({"WarmThroughput": {"ReadUnitsPerSecond": 1}}, "Requested ReadUnitsPerSecond for WarmThroughput for table"),
    ],
)
def test_create_table_rules(over: dict[str, Any], expected: str) -> None:
    assert expected in message(table(**over))


def test_index_rules() -> None:
    g_defs = [*DEFS, {"AttributeName": "g", "AttributeType": "S"}]
    dup = table(AttributeDefinitions=g_defs, GlobalSecondaryIndexes=[gsi("i1"), gsi("i1")])
    assert message(dup).endswith("Duplicate index name: i1")
    empty_projection = table(AttributeDefinitions=g_defs, GlobalSecondaryIndexes=[gsi("i1", Projection={})])
    assert "Unknown ProjectionType" in message(empty_projection)
    missing = table(GlobalSecondaryIndexes=[gsi("i1", attr="user")])
    assert message(missing).endswith("Keys: [user], AttributeDefinitions: [pk]")
    s_defs = [*DEFS, {"AttributeName": "s", "AttributeType": "S"}]
    lsis = [
        {
            "IndexName": f"l{i}",
            "KeySchema": [HASH, {"AttributeName": "s", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        for i in range(6)
    ]
    six = table(KeySchema=[HASH, {"AttributeName": "s", "KeyType": "RANGE"}], AttributeDefinitions=s_defs)
    six["LocalSecondaryIndexes"] = lsis
    assert "exceeds per-table limit of 5" in message(six)
    warm = table(
        AttributeDefinitions=g_defs, GlobalSecondaryIndexes=[gsi("i1", WarmThroughput={"ReadUnitsPerSecond": 5})]
    )
    assert "for index i1 is lower than initial throughput for OnDemand" in message(warm)


def test_every_broken_top_level_constraint_is_listed_in_one_message() -> None:
    req = {"TableName": "a;", "BillingMode": "ALL", "ReturnConsumedCapacity": "ALL"}  # CreateTable has no RCC
    with pytest.raises(ServiceError) as exc:
        check_constraints("CreateTable", req)
    assert exc.value.message == (
        "3 validation errors detected: "
        "Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; "
        "Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: "
        "[a-zA-Z0-9_.-]+; "
        "Value 'ALL' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: "
        "[PROVISIONED, PAY_PER_REQUEST]"
    )


def test_one_broken_constraint_is_one_validation_error_and_none_passes() -> None:
    assert constraint_problems("Scan", {"TableName": "tab", "Limit": 0, "TotalSegments": 2, "Segment": 1}) == [
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
    ]
    assert constraint_problems("ListTables", {"Limit": 101}) == [
        "Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100"
    ]
    assert constraint_problems("CreateTable", {}) == [
        "Value null at 'tableName' failed to satisfy constraint: Member must not be null"
    ]
    assert constraint_problems("Query", {"TableName": "tab", "Limit": 1, "Select": "COUNT"}) == []


# -- issue 34: the whole request is validated before the table is looked up, every violation in one envelope ----
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
RETURN_VALUES = "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"


@pytest.mark.parametrize(
    ("op", "req", "message"),
    [
        (
            "GetItem",
            {"TableName": "bad table!@#", "Key": KEY},
            f"1 validation error detected: Value 'bad table!@#' at 'tableName' failed to satisfy constraint: {PATTERN}",
        ),
        (
            "GetItem",
            {"TableName": "", "Key": KEY},
            "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        ),
        (
            "Query",
            {"TableName": "ab", "KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}},
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: "
            "Member must have length greater than or equal to 3",
        ),
        (
            "DescribeTable",
            {"TableName": "arn:" + "x" * 1021},
            f"1 validation error detected: Value 'arn:{'x' * 1021}' at 'tableName' failed to satisfy constraint: "
            "Member must have length less than or equal to 1024",
        ),
        (
            "PutItem",
            {"TableName": "no such!", "Item": KEY, "ReturnValues": "BOGUS"},
            f"2 validation errors detected: Value 'no such!' at 'tableName' failed to satisfy constraint: {PATTERN}; "
            f"Value 'BOGUS' at 'returnValues' failed to satisfy constraint: {RETURN_VALUES}",
        ),
        (
            "DeleteItem",
            {"TableName": "tab1", "Key": KEY, "ReturnItemCollectionMetrics": "ALL"},
            "1 validation error detected: Value 'ALL' at 'returnItemCollectionMetrics' failed to satisfy constraint: "
            "Member must satisfy enum value set: [SIZE, NONE]",
        ),
        (
            "Scan",
            {"TableName": "tab1", "ConditionalOperator": "XOR", "ScanFilter": {}},
            "1 validation error detected: Value 'XOR' at 'conditionalOperator' failed to satisfy constraint: "
            "Member must satisfy enum value set: [OR, AND]",
        ),
        # a value inside the enum but not this operation's is the operation's own sentence (issue 45)
        (
            "DeleteItem",
            {"TableName": "tab1", "Key": KEY, "ReturnValues": "ALL_NEW"},
            "1 validation error detected: ReturnValues can only be ALL_OLD or NONE",
        ),
    ],
)
def test_request_constraints_before_the_table(
    endpoint: Any, client: Any, op: str, req: dict[str, Any], message: str
) -> None:
    create_table(client)
    assert wire(endpoint, op, req) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": message},
    )


def test_an_arn_is_a_table_name(endpoint: Any, client: Any) -> None:
    arn = create_table(client)["TableDescription"]["TableArn"]
    assert wire(endpoint, "GetItem", {"TableName": arn, "Key": KEY}) == (200, {})


_PUT = {"Put": {"TableName": "tab1", "Item": KEY}}


@pytest.mark.parametrize(
    ("op", "req", "message"),
    [
        (
            "TransactWriteItems",
            {"TransactItems": [_PUT], "ClientRequestToken": "t" * 37},
            f"1 validation error detected: Value '{'t' * 37}' at 'clientRequestToken' failed to satisfy constraint: "
            "Member must have length less than or equal to 36",
        ),
        (
            "TransactWriteItems",
            {"TransactItems": [_PUT], "ClientRequestToken": ""},
            "1 validation error detected: Value '' at 'clientRequestToken' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
        ),
        (
            "ExecuteTransaction",
            {
                "TransactStatements": [{"Statement": "SELECT * FROM tab1 WHERE pk = 'a' AND sk = 1"}],
                "ClientRequestToken": "t" * 40,
            },
            f"1 validation error detected: Value '{'t' * 40}' at 'clientRequestToken' failed to satisfy constraint: "
            "Member must have length less than or equal to 36",
        ),
    ],
)
def test_client_request_token_length(endpoint: Any, client: Any, op: str, req: dict[str, Any], message: str) -> None:
    create_table(client)
    assert wire(endpoint, op, req) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": message},
    )
    ok = {**req, "ClientRequestToken": "t" * 36}
    assert wire(endpoint, op, ok)[0] == 200
