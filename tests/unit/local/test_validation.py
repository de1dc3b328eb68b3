"""Request rules checked before any table lookup (dynlocust/local/validation.py), as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.validation import check_constraints, check_create_table, constraint_problems

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
    req = {"TableName": "a;", "ReturnConsumedCapacity": "ALL"}
    with pytest.raises(ServiceError) as exc:
        check_constraints("CreateTable", req)
    assert exc.value.message == (
        "3 validation errors detected: "
        "Value 'a;' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; "
        "Value 'a;' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: "
        "[a-zA-Z0-9_.-]+; "
        "Value 'ALL' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: "
        "[INDEXES, TOTAL, NONE]"
    )


def test_one_broken_constraint_is_one_validation_error_and_none_passes() -> None:
    assert constraint_problems("Scan", {"TableName": "t", "Limit": 0, "TotalSegments": 2, "Segment": 1}) == [
        "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1"
    ]
    assert constraint_problems("ListTables", {"Limit": 101}) == [
        "Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100"
    ]
    assert constraint_problems("CreateTable", {}) == [
        "Value null at 'tableName' failed to satisfy constraint: Member must not be null"
    ]
    assert constraint_problems("Query", {"TableName": "t", "Limit": 1, "Select": "COUNT"}) == []
