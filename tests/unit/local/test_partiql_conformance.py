"""Issue 34, "PartiQL": literal values are checked as attribute values of the API are, a SELECT on a global
secondary index may name only the attributes it projects, and statements answer as the service was recorded to.

Raw ExecuteStatement requests over HTTP to a real in-thread endpoint. The number and set wordings are the API's,
as dynalite's tests record them against the service (dynlocust/local/attrvalues.py); the projection rule is the
Developer Guide's, in dynlocust's words (dynlocust/local/partiql/messages.py, NOT_PROJECTED); the statement
wording and the DELETE of a missing item are as a public conformance suite records the service (eu-west-2).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
DIGITS = "Attempting to store more than 38 significant digits in a Number"
OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
DUPLICATES = "One or more parameter values were invalid: Input collection [{}] contains duplicates."
FORTY_ONE = "1" * 41


def statement(endpoint: Any, text: str, params: list[Any] | None = None) -> tuple[int, Any]:
    req: dict[str, Any] = {"Statement": text}
    if params is not None:
        req["Parameters"] = params
    return wire(endpoint, "ExecuteStatement", req)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"INSERT INTO tab1 VALUE {{'pk': 'b', 'sk': {FORTY_ONE}}}", DIGITS),
        (f"INSERT INTO tab1 VALUE {{'pk': 'b', 'sk': 1, 'n': -{FORTY_ONE}}}", DIGITS),
        ("INSERT INTO tab1 VALUE {'pk': 'b', 'sk': 1e126}", OVERFLOW),
        ("INSERT INTO tab1 VALUE {'pk': 'b', 'sk': 1, 'n': -1e-131}", UNDERFLOW),
        (f"SELECT * FROM tab1 WHERE pk = 'a' AND sk = {FORTY_ONE}", DIGITS),
        (f"UPDATE tab1 SET n = n + {FORTY_ONE} WHERE pk = 'a' AND sk = 1", DIGITS),
        ("INSERT INTO tab1 VALUE {'pk': 'c', 'sk': 1, 's': <<'a', 'a'>>}", DUPLICATES.format("a, a")),
        ("INSERT INTO tab1 VALUE {'pk': 'c', 'sk': 1, 's': <<1, 1.0>>}", DUPLICATES.format("1, 1")),
        ("UPDATE tab1 SET s = set_add(s, <<'x', 'x'>>) WHERE pk = 'a' AND sk = 1", DUPLICATES.format("x, x")),
        (
            'SELECT zz, other, pk, zz FROM "tab1"."gsi1" WHERE g = \'x\'',
            "One or more parameter values were invalid: Global secondary index gsi1 does not project [zz, other]",
        ),
    ],
)
def test_literals_and_index_projections_refused(endpoint: Any, tab1: str, text: str, message: str) -> None:
    assert statement(endpoint, text) == (400, {"__type": VALIDATION, "message": message})


def test_literal_numbers_are_stored_normalised(endpoint: Any, tab1: str) -> None:
    assert statement(endpoint, "INSERT INTO tab1 VALUE {'pk': 'b', 'sk': 1e3, 'x': 007.50, 'y': -.5}") == (
        200,
        {"Items": []},
    )
    assert statement(endpoint, "UPDATE tab1 SET z = 2E1 WHERE pk = 'b' AND sk = 1000") == (200, {"Items": []})
    got = wire(endpoint, "GetItem", {"TableName": "tab1", "Key": {"pk": {"S": "b"}, "sk": {"N": "1000"}}})
    assert got == (
        200,
        {"Item": {"pk": {"S": "b"}, "sk": {"N": "1000"}, "x": {"N": "7.5"}, "y": {"N": "-0.5"}, "z": {"N": "20"}}},
    )


def test_a_select_on_an_index_reads_what_it_projects(endpoint: Any, tab1: str) -> None:
    item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "x"}, "other": {"S": "o"}}
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": item}) == (200, {})
    assert statement(endpoint, 'SELECT other FROM "tab1"."gsi1" WHERE g = \'x\'')[0] == 400
    keys = {"pk": {"S": "a"}, "sk": {"N": "1"}, "g": {"S": "x"}}
    assert statement(endpoint, 'SELECT pk, sk, g FROM "tab1"."gsi1" WHERE g = \'x\'') == (200, {"Items": [keys]})
    assert statement(endpoint, 'SELECT * FROM "tab1"."gsi1" WHERE g = \'x\'') == (200, {"Items": [keys]})


def test_a_statement_that_is_no_data_manipulation(endpoint: Any, tab1: str) -> None:
    assert statement(endpoint, "SLECT * FROM tab1 WHERE pk = 'a'") == (
        400,
        {
            "__type": VALIDATION,
            "message": "Statement wasn't well formed, can't be processed: Expected data manipulation",
        },
    )


@pytest.mark.parametrize(
    "where",
    ["pk = 'gone' AND sk = 1 AND \"name\" = 'x'", "pk = 'gone' AND sk = 1 AND \"name\" = 'x' AND n > 1"],
)
def test_a_delete_of_a_missing_item_never_evaluates_its_condition(endpoint: Any, tab1: str, where: str) -> None:
    """A missing item is a no-op; an existing one must satisfy the WHERE's other terms."""
    assert statement(endpoint, f"DELETE FROM tab1 WHERE {where}") == (200, {"Items": []})
    item = {"pk": {"S": "a"}, "sk": {"N": "1"}, "name": {"S": "alpha"}, "n": {"N": "5"}}
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": item}) == (200, {})
    refused = statement(endpoint, "DELETE FROM tab1 WHERE pk = 'a' AND sk = 1 AND \"name\" = 'beta'")
    assert refused[1]["__type"].endswith("#ConditionalCheckFailedException")
    kept = "DELETE FROM tab1 WHERE pk = 'a' AND sk = 1 AND \"name\" = 'alpha' AND n > 1 RETURNING ALL OLD *"
    assert statement(endpoint, kept) == (200, {"Items": [item]})
