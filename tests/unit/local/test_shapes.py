"""The one check of a request's JSON types against the service model (dynlocust/local/shapes.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.shapes import check_request, operation_shapes


@pytest.mark.parametrize(
    ("op", "req", "expected"),
    [
        ("GetItem", {"TableName": True}, "TRUE_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": False}, "FALSE_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": 5}, "NUMBER_VALUE cannot be converted to String"),
        ("GetItem", {"TableName": 5.5}, "DECIMAL_VALUE cannot be converted to String"),
        ("GetItem", {"Key": []}, "Start of list found where not expected"),
        ("CreateTable", {"KeySchema": {}}, "Start of structure or map found where not expected"),
        ("GetItem", {"ConsistentRead": "yes"}, "STRING_VALUE cannot be converted to Boolean"),
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
