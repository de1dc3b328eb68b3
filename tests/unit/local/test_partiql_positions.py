"""Issue 34, "PartiQL": the refusals of condition and set functions worded as the service words them, with the
position suffix ` at <line>:<column>:<length>` where it gives one.

Raw requests over HTTP to a real in-thread endpoint. Each expected message is as a public conformance suite pinned
it against the service (eu-west-2, 2026; dynlocust/local/partiql/messages.py); the column is worked out from the
statement sent, as that suite does: `statement.index(token) + 1`. The COUNT projection's is as a public emulator
records it captured from the service (eu-west-2, 2026): the position of COUNT, length 5.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import create_table, wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
T = "tab-positions"
ITEM = "pq-fn-msg"
MALFORMED = "Statement wasn't well formed, can't be processed: "
NEEDS_PATH = "Operator or function requires a document path; operator or function: attribute_exists"
OPERANDS = "Incorrect number of operands for operator or function; operator or function: attribute_exists, "
WRONG_TYPE = "An operand in the update expression has an incorrect data type"


def where(condition: str) -> str:
    return f"SELECT * FROM \"{T}\" WHERE pk = '{ITEM}' AND {condition}"


def update(assignment: str) -> str:
    return f"UPDATE \"{T}\" SET {assignment} WHERE pk = '{ITEM}'"


def at(statement: str, token: str, length: int | None = None, after: str = "") -> str:
    """` at 1:<column>:<length>` of the first `token` in the statement at or after the text `after`."""
    column = statement.index(token, statement.index(after) if after else 0) + 1
    return f" at 1:{column}:{len(token) if length is None else length}"


INSERT = f"INSERT INTO \"{T}\" VALUE {{'pk': 'pq-fn-msg-insert', 'ss': set_add(<<'a'>>, <<'b'>>)}}"
SET_ADD_WHERE = "set_add(ss, <<'x'>>) = ss"
PROJECTION = f"SELECT attribute_exists(ss) FROM \"{T}\" WHERE pk = '{ITEM}'"
COUNT_PROJECTION = f"SELECT pk, COUNT(*) FROM \"{T}\" WHERE pk = '{ITEM}'"  # captured by an emulator, eu-west-2
CASES: list[tuple[str, list[Any] | None, str]] = [
    (where("attribute_exists('ss')"), None, NEEDS_PATH),
    (where("attribute_exists(?)"), [{"S": "ss"}], NEEDS_PATH),
    (where("attribute_exists()"), None, OPERANDS + "number of operands: 0"),
    (where("attribute_exists(ss, ns)"), None, OPERANDS + "number of operands: 2"),
    (PROJECTION, None, "Unexpected path component" + at(PROJECTION, "attribute_exists")),
    (COUNT_PROJECTION, None, "Unexpected path component" + at(COUNT_PROJECTION, "COUNT")),
    (where("EXISTS(ss)"), None, "Unrecognized function: exists" + at(where("EXISTS(ss)"), "EXISTS")),
    (where("attribute_exists(m.inner)"), None, MALFORMED + "Invalid path dot component"),
    (update("m.inner = set_add(m.inner, <<'y'>>)"), None, MALFORMED + "Invalid path dot component"),
    (where(SET_ADD_WHERE), None, "Unrecognized function: set_add" + at(where(SET_ADD_WHERE), "set_add")),
    (INSERT, None, "Unsupported data type: set_add under key root" + at(INSERT, "set_add")),
    (update("ss = set_add(ss, <<1>>)"), None, WRONG_TYPE),
    (update("s = set_add(s, <<'x'>>)"), None, WRONG_TYPE),
    (update("ss = set_delete(ss, <<1>>)"), None, WRONG_TYPE),
    (
        update("ss = set_add(ss, <<'x', 'x'>>)"),
        None,
        "One or more parameter values were invalid: Input collection [x, x] contains duplicates.",
    ),
    (update("ss = set_add(ss, <<>>)"), None, "Empty bags are not supported"),
]
FIRST = "The first argument to {} must equal the assignment value"
SECOND = "The second argument to {} must be a value with type SET"
COUNT = "{} must have exactly two arguments"
# (assignment, message, function): the set functions' refusals, pointing at the function's name, or for the second
# argument's type at the first argument
SET_FUNCTIONS = [
    ("t = set_add(ss, <<'x'>>)", FIRST, "set_add"),
    ("ss = set_add(<<'a'>>, <<'b'>>)", FIRST, "set_add"),
    ("ss = set_add(ss, 'x')", SECOND, "set_add"),
    ("ss = set_add(ss, ['x'])", SECOND, "set_add"),
    ("ss = set_add(ss)", COUNT, "set_add"),
    ("ss = set_add(ss, <<'x'>>, <<'y'>>)", COUNT, "set_add"),
    ("t = set_delete(ss, <<'a'>>)", FIRST, "set_delete"),
    ("ss = set_delete(ss, 'a')", SECOND, "set_delete"),
    ("ss = set_delete(ss)", COUNT, "set_delete"),
]
CASES += [
    (
        update(s),
        None,
        message.format(function.upper())
        + (at(update(s), "ss", after=function + "(") if message == SECOND else at(update(s), function)),
    )
    for s, message, function in SET_FUNCTIONS
]


@pytest.fixture
def table(endpoint: Any, client: Any) -> None:
    create_table(client, name=T, range_type=None)
    item = {
        "pk": {"S": ITEM},
        "ss": {"SS": ["a", "b", "c"]},
        "ns": {"NS": ["1", "2", "3"]},
        "s": {"S": "str"},
        "m": {"M": {"inner": {"SS": ["x"]}}},
    }
    client.put_item(TableName=T, Item=item)


def refusal(endpoint: Any, op: str, req: dict[str, Any]) -> str:
    status, body = wire(endpoint, op, req)
    assert (status, body["__type"]) == (400, VALIDATION), body
    return str(body["message"])


@pytest.mark.parametrize(("statement", "params", "message"), CASES)
def test_refusals_are_worded_as_the_service_words_them(
    endpoint: Any, table: None, statement: str, params: list[Any] | None, message: str
) -> None:
    req: dict[str, Any] = {"Statement": statement}
    if params is not None:
        req["Parameters"] = params
    assert refusal(endpoint, "ExecuteStatement", req) == message


def test_a_position_counts_lines_and_columns_within_its_line(endpoint: Any, table: None) -> None:
    statement = f"SELECT * FROM \"{T}\"\nWHERE pk = '{ITEM}'\n  AND EXISTS(ss)"
    assert refusal(endpoint, "ExecuteStatement", {"Statement": statement}) == "Unrecognized function: exists at 3:7:6"


def test_a_read_by_key_in_a_transaction_or_batch_names_only_the_key(endpoint: Any, table: None) -> None:
    statement = {"Statement": where("attribute_exists(ss)")}
    assert refusal(endpoint, "ExecuteTransaction", {"TransactStatements": [statement]}) == (
        "Validation failed in TransactStatements[0]: "
        "Select statements within ExecuteTransaction must specify the primary key in the where clause."
    )
    status, body = wire(endpoint, "BatchExecuteStatement", {"Statements": [statement]})
    assert (status, [r["Error"] for r in body["Responses"]]) == (
        200,
        [
            {
                "Code": "ValidationError",
                "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where "
                "clause.",
            }
        ],
    )


def test_an_exists_check_in_a_transaction_needs_a_further_condition(endpoint: Any, table: None) -> None:
    statements = [
        {"Statement": f"EXISTS(SELECT * FROM \"{T}\" WHERE pk = '{ITEM}')"},
        {"Statement": f"UPDATE \"{T}\" SET z = 1 WHERE pk = 'pq-fn-msg-never-written'"},
    ]
    assert refusal(endpoint, "ExecuteTransaction", {"TransactStatements": statements}) == (
        "Validation failed in TransactStatements[0]: EXISTS() must contain a single item read with additional condition"
    )


def test_a_keyword_that_is_a_common_attribute_name_reads_as_a_path_after_a_dot(endpoint: Any, table: None) -> None:
    """Only `inner` is pinned as refused after a '.': `m.value` and `m.end` are paths, not statements refused."""
    for name in ("value", "end"):
        status, body = wire(endpoint, "ExecuteStatement", {"Statement": where(f"attribute_exists(m.{name})")})
        assert (status, body["Items"]) == (200, []), body
