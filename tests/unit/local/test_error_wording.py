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
