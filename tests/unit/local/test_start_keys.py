"""Issue 34, "Legacy parameters": an ExclusiveStartKey's shape is checked against the table or the index read.

Raw requests over HTTP to a real in-thread endpoint; the order of the checks and their wording are those dynalite's
tests record against the service (dynlocust/local/reads.py, _start).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}

INVALID = "The provided starting key is invalid"
NOT_SCHEMA = "The provided key element does not match the schema"
OUTSIDE = "The provided starting key is outside query boundaries based on provided conditions"
QUERY = {"KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}}
ON_INDEX = {
    "IndexName": "gsi1",
    "KeyConditionExpression": "g = :v",
    "ExpressionAttributeValues": {":v": {"S": "x"}},
}
FULL = {**KEY, "g": {"S": "x"}}


@pytest.mark.parametrize(
    ("op", "extra", "esk", "message"),
    [
        # a Query's starting key holds exactly the table's key attributes, each of its type
        ("Query", QUERY, {**KEY, "x": {"S": "1"}}, INVALID),
        ("Query", QUERY, {"pk": {"S": "a"}}, INVALID),
        ("Query", QUERY, {"pk": {"S": "a"}, "x": {"N": "1"}}, INVALID),
        ("Query", QUERY, {"pk": {"S": "a"}, "sk": {"S": "1"}}, NOT_SCHEMA),
        ("Query", QUERY, {"pk": {"S": "b"}, "sk": {"N": "1"}}, OUTSIDE),
        (
            "Query",
            {
                "KeyConditionExpression": "pk = :v AND sk < :n",
                "ExpressionAttributeValues": {":v": {"S": "a"}, ":n": {"N": "5"}},
            },
            {"pk": {"S": "a"}, "sk": {"N": "9"}},
            "The provided starting key does not match the range key predicate",
        ),
        # on an index: the table's key attributes and the index's
        ("Query", ON_INDEX, KEY, INVALID),
        ("Query", ON_INDEX, {"g": {"S": "x"}}, INVALID),
        ("Query", ON_INDEX, {**FULL, "z": {"S": "1"}}, INVALID),
        ("Query", ON_INDEX, {**KEY, "g": {"N": "1"}}, NOT_SCHEMA),
        # a Scan of an index words a wrong count as an invalid starting key (of the table: as a wrong key)
        ("Scan", {"IndexName": "gsi1"}, KEY, INVALID),
        ("Scan", {"IndexName": "gsi1"}, {**KEY, "g": {"N": "1"}}, NOT_SCHEMA),
    ],
)
def test_exclusive_start_key_shape(
    endpoint: Any, tab1: str, op: str, extra: dict[str, Any], esk: dict[str, Any], message: str
) -> None:
    req = {"TableName": "tab1", **extra, "ExclusiveStartKey": esk}
    assert wire(endpoint, op, req) == (400, {"__type": VALIDATION, "message": message})
