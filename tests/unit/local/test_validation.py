"""Request rules checked before any table lookup (dynlocust/local/validation.py), as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.validation import check_create_table, check_param_types

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


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        ({"TableName": True}, "TRUE_VALUE cannot be converted to String"),
        ({"TableName": 5}, "NUMBER_VALUE cannot be converted to String"),
        ({"Key": []}, "Start of list found where not expected"),
        ({"KeySchema": {}}, "Start of structure or map found where not expected"),
        ({"Expected": "x"}, "Unexpected value type in payload"),
        ({"ConsistentRead": "yes"}, "STRING_VALUE cannot be converted to Boolean"),
        ({"Limit": "3"}, "STRING_VALUE cannot be converted to Integer"),
    ],
)
def test_wrong_json_types_are_serialization_errors(req: dict[str, Any], expected: str) -> None:
    with pytest.raises(ServiceError) as exc:
        check_param_types(req)
    assert (exc.value.code, exc.value.message) == ("SerializationException", expected)


def test_right_json_types_and_nulls_pass() -> None:
    check_param_types({"TableName": "t", "Key": {}, "ConsistentRead": True, "Limit": 3, "IndexName": None})
