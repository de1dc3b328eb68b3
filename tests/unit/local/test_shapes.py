"""The one check of a request's JSON types against the service model (dynlocust/local/shapes.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.shapes import check_request, operation_shapes

# a JSON list where the model wants a map of attribute values (dynalite's recorded tests)
AV_MAP_LIST = (
    "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"
)


@pytest.mark.parametrize(
    ("op", "req", "expected"),
    [
        ("GetItem", {"TableName": True}, "TRUE_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": False}, "FALSE_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": 5}, "NUMBER_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": 5.5}, "DECIMAL_VALUE cannot be converted to String"),
        ("GetItem", {"Key": []}, AV_MAP_LIST),
        ("CreateTable", {"KeySchema": {}}, "Start of structure or map found where not expected"),
        ("GetItem", {"ConsistentRead": "23"}, "Unexpected token received from parser"),
        ("Query", {"Limit": "3"}, "STRING_VALUE cannot be converted to Integer"),
        ("PutItem", {"Item": {"pk": {"S": 123}}}, "NUMBER_VALUE cannot be converted to String"),
        ("PutItem", {"Item": {"pk": {"S": {"S": "a"}}}}, "Start of structure or map found where not expected"),
    ],
)
def test_wrong_json_types_are_serialization_errors(op: str, req: dict[str, Any], expected: str) -> None:
    with pytest.raises(ServiceError) as exc:
        check_request(operation_shapes()[op], req)
    assert (exc.value.code, exc.value.message) == ("SerializationException", expected)


def test_right_json_types_pass_and_nulls_count_as_absent() -> None:
    req = {"TableName": "t", "Key": {"pk": {"S": "a"}}, "ConsistentRead": True, "ProjectionExpression": None}
    check_request(operation_shapes()["GetItem"], req)
    assert req == {"TableName": "t", "Key": {"pk": {"S": "a"}}, "ConsistentRead": True}


# -- issue 29/34: integers are integers, and attribute names are not empty (over HTTP, to a real endpoint) ----------
def _call(endpoint: Any, op: str, body: bytes) -> tuple[int, Any]:
    from tests.unit.local.test_errors_and_control import raw

    status, _, answer = raw(endpoint.port, "DynamoDB_20120810." + op, body)
    return status, answer


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b'{"TableName": "tab1", "Limit": 1.5}', "DECIMAL_VALUE cannot be converted to Integer", id="1.5"),
        pytest.param(
            b'{"TableName": "tab1", "Limit": 1e30}', "DECIMAL_VALUE cannot be converted to Integer", id="1e30"
        ),
        pytest.param(b'{"TableName": "tab1", "Limit": 2.0}', "DECIMAL_VALUE cannot be converted to Integer", id="2.0"),
        pytest.param(
            b'{"TableName": "tab1", "Limit": 2147483648}', "NUMBER_VALUE cannot be converted to Integer", id="2^31"
        ),
    ],
)
def test_a_limit_that_is_not_an_integer_is_refused(endpoint: Any, body: bytes, message: str) -> None:
    assert _call(endpoint, "Scan", body) == (
        400,
        {"__type": "com.amazon.coral.service#SerializationException", "Message": message},
    )


def test_an_integer_limit_is_still_read(endpoint: Any, client: Any) -> None:
    from tests.unit.local.conftest import create_table

    create_table(client)
    assert _call(endpoint, "Scan", b'{"TableName": "tab1", "Limit": 2147483647}')[0] == 200


@pytest.mark.parametrize(
    ("op", "req", "message"),
    [
        pytest.param(
            "PutItem",
            {"TableName": "tab1", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "": {"S": "x"}}},
            "1 validation error detected: One or more parameter values were invalid: An attribute name must not be "
            "empty",
            id="item",
        ),
        pytest.param(
            "GetItem",
            {"TableName": "tab1", "Key": {"pk": {"S": "a"}, "": {"N": "1"}}},
            "One or more parameter values were invalid: An attribute name must not be empty",
            id="key",
        ),
        pytest.param(
            "GetItem",
            {
                "TableName": "tab1",
                "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
                "ProjectionExpression": "#a",
                "ExpressionAttributeNames": {"#a": ""},
            },
            "ExpressionAttributeNames contains invalid value: Empty attribute name for key #a",
            id="expression-attribute-names",
        ),
    ],
)
def test_empty_attribute_names_are_refused(
    endpoint: Any, client: Any, op: str, req: dict[str, Any], message: str
) -> None:
    import json

    from tests.unit.local.conftest import create_table

    create_table(client)
    assert _call(endpoint, op, json.dumps(req).encode()) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": message},
    )
    assert client.scan(TableName="tab1")["Count"] == 0
