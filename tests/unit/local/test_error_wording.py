"""How the endpoint says no (issue 45): each case is a request sent over HTTP to a real endpoint, then the `__type`
and message the service answers, with the source of that wording beside it.

One endpoint serves the module: no case changes what another sees (every case is refused before it writes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from tests.unit.local.conftest import wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
SERIALIZATION = "com.amazon.coral.service#SerializationException"
NOT_FOUND = "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
TABLE = "tab1"  # pk (S) + sk (S)
KEY = {"pk": {"S": "a"}, "sk": {"S": "b"}}


@pytest.fixture(scope="module")
def ep() -> Iterator[ThreadedEndpoint]:
    endpoint = serve_in_thread(capacity=None)
    try:
        status, _ = wire(
            endpoint,
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                ],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        assert status == 200
        yield endpoint
    finally:
        endpoint.stop()


def refused(ep: ThreadedEndpoint, op: str, req: dict[str, Any]) -> tuple[str, str]:
    status, body = wire(ep, op, req)
    assert status == 400, body
    return body["__type"], body.get("message", body.get("Message", ""))


def case(op: str, req: dict[str, Any], code: str, message: str, id: str) -> Any:
    return pytest.param(op, req, code, message, id=id)


# -- class 13: a key attribute is never updated, whether or not the item exists ---------------------------------
# The service's wording is the one it gives for an existing item (moto's aws_verified tests); issue 45 records it
# for a missing item too.
KEY_UPDATE = "One or more parameter values were invalid: Cannot update attribute {}. This attribute is part of the key"

CLASS_13 = [
    case(
        "UpdateItem",
        {"TableName": TABLE, "Key": KEY, "UpdateExpression": "REMOVE sk"},
        VALIDATION,
        KEY_UPDATE.format("sk"),
        "remove-range-key-of-missing-item",
    ),
    case(
        "UpdateItem",
        {"TableName": TABLE, "Key": KEY, "UpdateExpression": "REMOVE pk"},
        VALIDATION,
        KEY_UPDATE.format("pk"),
        "remove-hash-key-of-missing-item",
    ),
    case(
        "UpdateItem",
        {
            "TableName": TABLE,
            "Key": KEY,
            "UpdateExpression": "DELETE sk :v",
            "ExpressionAttributeValues": {":v": {"SS": ["x"]}},
        },
        VALIDATION,
        KEY_UPDATE.format("sk"),
        "delete-from-range-key-of-missing-item",
    ),
]


@pytest.mark.parametrize(("op", "req", "code", "message"), CLASS_13)
def test_key_attributes_are_not_updated(
    ep: ThreadedEndpoint, op: str, req: dict[str, Any], code: str, message: str
) -> None:
    assert refused(ep, op, req) == (code, message)
    assert wire(ep, "GetItem", {"TableName": TABLE, "Key": KEY}) == (200, {})


# -- classes 1 and 3: the envelope, and constraints before the table lookup ------------------------------------
# Sources: issue 45's examples; a suite run against the service (us-east-1 and eu-west-2) for 'RequestItems' and
# the JSON echo of a bad table name; dynalite's recorded tests for the three rules of a name; the DAX client for
# the Java echo of an empty write list.
NAME_RULES = (
    "Map keys must satisfy constraint: [Member must have length less than or equal to 255, Member must have length "
    "greater than or equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"
)
LONG = "a" * 256
ENVELOPE = [
    case(
        "DeleteItem",
        {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_NEW"},
        VALIDATION,
        "1 validation error detected: ReturnValues can only be ALL_OLD or NONE",
        "delete-return-values",
    ),
    case(
        "PutItem",
        {"TableName": "missing", "Item": KEY, "ReturnValues": "UPDATED_OLD"},
        VALIDATION,
        "1 validation error detected: ReturnValues can only be ALL_OLD or NONE",
        "put-return-values-before-lookup",
    ),
    case(
        "BatchGetItem",
        {"RequestItems": {}},
        VALIDATION,
        "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must have length "
        "greater than or equal to 1",
        "batch-get-empty-request-items",
    ),
    case(
        "BatchWriteItem",
        {"RequestItems": {TABLE: []}},
        VALIDATION,
        f"1 validation error detected: Value '{{{TABLE}=[]}}' at 'requestItems' failed to satisfy constraint: "
        "Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have "
        "length greater than or equal to 1]",
        "batch-write-empty-list",
    ),
    case(
        "PutItem",
        {"TableName": LONG, "Item": KEY},
        VALIDATION,
        f"1 validation error detected: Value '{LONG}' at 'tableName' failed to satisfy constraint: Member must have "
        "length less than or equal to 255",
        "put-256-char-name",
    ),
    case(
        "DescribeTable",
        {"TableName": LONG},
        VALIDATION,
        f"1 validation error detected: Value '{LONG}' at 'tableName' failed to satisfy constraint: Member must have "
        "length less than or equal to 255",
        "describe-256-char-name",
    ),
    case(
        "BatchGetItem",
        {"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}},
        VALIDATION,
        """1 validation error detected: Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' failed to """
        "satisfy constraint: " + NAME_RULES,
        "batch-get-bad-name",
    ),
    case(
        "BatchWriteItem",
        {"RequestItems": {"ab": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}}}}]}, "ReturnConsumedCapacity": "ALL"},
        VALIDATION,
        "2 validation errors detected: Value 'ALL' at 'returnConsumedCapacity' failed to satisfy constraint: Member "
        "must satisfy enum value set: [INDEXES, TOTAL, NONE]; "
        """Value '{"ab":[{"DeleteRequest":{"Key":{"pk":{"S":"a"}}}}]}' at 'requestItems' failed to satisfy """
        "constraint: " + NAME_RULES,
        "batch-write-short-name-and-enum",
    ),
]


@pytest.mark.parametrize(("op", "req", "code", "message"), ENVELOPE)
def test_constraints_are_reported_in_the_envelope_before_the_table_lookup(
    ep: ThreadedEndpoint, op: str, req: dict[str, Any], code: str, message: str
) -> None:
    assert refused(ep, op, req) == (code, message)
