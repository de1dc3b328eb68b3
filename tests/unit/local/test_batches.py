"""TransactWriteItems: a per-action validation failure cancels the transaction with a ValidationError reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import create_table, wire

MISMATCH = "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"
NO_MATCH = "The provided key element does not match the schema"


def put(pk: dict[str, Any], sk: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"Put": {"TableName": "tab1", "Item": {"pk": pk, "sk": sk or {"N": "1"}}}}


@pytest.mark.parametrize(
    ("actions", "reasons"),
    [
        ([put({"S": "a"}), put({"N": "1"})], [{"Code": "None"}, {"Code": "ValidationError", "Message": MISMATCH}]),
        (
            [{"Delete": {"TableName": "tab1", "Key": {"pk": {"S": "a"}}}}, put({"S": "b"})],
            [{"Code": "ValidationError", "Message": NO_MATCH}, {"Code": "None"}],
        ),
        (
            [
                {
                    "Update": {
                        "TableName": "tab1",
                        "Key": {"pk": {"N": "2"}, "sk": {"N": "1"}},
                        "UpdateExpression": "SET a = :v",
                        "ExpressionAttributeValues": {":v": {"S": "x"}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": "tab1",
                        "Key": {"pk": {"S": "c"}, "sk": {"N": "1"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ],
            [
                {"Code": "ValidationError", "Message": NO_MATCH},
                {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
            ],
        ),
    ],
)
def test_a_key_that_does_not_fit_cancels_with_a_validation_error(
    endpoint: Any, client: Any, actions: list[dict[str, Any]], reasons: list[dict[str, Any]]
) -> None:
    create_table(client)
    status, body = wire(endpoint, "TransactWriteItems", {"TransactItems": actions})
    codes = ", ".join(r["Code"] for r in reasons)
    assert (status, body) == (
        400,
        {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
            "CancellationReasons": reasons,
        },
    )
    assert wire(endpoint, "Scan", {"TableName": "tab1"})[1]["Count"] == 0  # nothing of it was written


def test_an_empty_key_value_stays_a_request_error(endpoint: Any, client: Any) -> None:
    create_table(client)
    action = {
        "Update": {
            "TableName": "tab1",
            "Key": {"pk": {"S": ""}, "sk": {"N": "1"}},
            "UpdateExpression": "SET a = :v",
            "ExpressionAttributeValues": {":v": {"N": "0"}},
        }
    }
    status, body = wire(endpoint, "TransactWriteItems", {"TransactItems": [action]})
    assert (status, body["__type"]) == (400, "com.amazon.coral.validate#ValidationException")
    assert body["message"] == (
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "
        "string value. Key: pk"
    )


@pytest.mark.parametrize(
    "item",
    [
        {"sk": {"N": "1"}},  # no partition key
        {"pk": {"S": "a"}},  # no sort key
        {"pk": {"N": "1"}, "sk": {"N": "1"}},  # a key of another type
        {"pk": {"S": "a"}, "sk": {"S": "1"}},
    ],
)
def test_a_batch_put_of_the_wrong_key_is_a_wrong_key(endpoint: Any, client: Any, item: dict[str, Any]) -> None:
    """BatchWriteItem words a PutRequest's missing or mistyped key attribute as a wrong key, unlike PutItem (as
    dynalite's tests record the service)."""
    create_table(client)
    req = {"RequestItems": {"tab1": [{"PutRequest": {"Item": item}}]}}
    assert wire(endpoint, "BatchWriteItem", req) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": NO_MATCH},
    )
