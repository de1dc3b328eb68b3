"""Tests of the local endpoint's expression language: conditions, updates, projections, key conditions, sizes."""

from __future__ import annotations

import base64
import copy
import random
import types
from decimal import Decimal
from typing import Any

import pytest

from dynlocust.errors import DynlocustError
from dynlocust.local.attrvalues import compare_values, item_size
from dynlocust.local.expressions import (
    ExpressionError,
    keys,
    parse_condition,
    parse_key_condition,
    parse_projection,
    parse_update,
)
from tests.support.peers import require_peer
from tests.unit.local.conftest import create_table, wire

MOTO_WHY = "moto's private DynamoDB modules are the oracle here (moto[server], dev extra)"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


ITEM: dict[str, Any] = {
    "pk": {"S": "user#1"},
    "n": {"N": "5"},
    "f": {"N": "1.5"},
    "s": {"S": "hello world"},
    "u": {"S": "żółw"},
    "b": {"B": b64(b"\x01\x02\x03")},
    "t": {"BOOL": True},
    "z": {"NULL": True},
    "ss": {"SS": ["red", "green"]},
    "ns": {"NS": ["1", "2.50"]},
    "bs": {"BS": [b64(b"\x01"), b64(b"\x02")]},
    "l": {"L": [{"S": "x"}, {"N": "7"}, {"M": {"deep": {"S": "d"}}}]},
    "m": {"M": {"a": {"M": {"b": {"N": "3"}}}, "name": {"S": "m"}}},
    "status": {"S": "active"},
}

V: dict[str, Any] = {
    ":5": {"N": "5"},
    ":5p0": {"N": "5.0"},
    ":1": {"N": "1"},
    ":3": {"N": "3"},
    ":9": {"N": "9"},
    ":hello": {"S": "hello"},
    ":world": {"S": "world"},
    ":hw": {"S": "hello world"},
    ":red": {"S": "red"},
    ":blue": {"S": "blue"},
    ":x": {"S": "x"},
    ":7": {"N": "7"},
    ":2p5": {"N": "2.5"},
    ":b1": {"B": b64(b"\x01")},
    ":b12": {"B": b64(b"\x01\x02")},
    ":true": {"BOOL": True},
    ":null": {"NULL": True},
    ":tS": {"S": "S"},
    ":tN": {"S": "N"},
    ":tL": {"S": "L"},
    ":tM": {"S": "M"},
    ":tSS": {"S": "SS"},
    ":tNULL": {"S": "NULL"},
    ":active": {"S": "active"},
    ":l": {"L": [{"S": "x"}, {"N": "7"}, {"M": {"deep": {"S": "d"}}}]},
    ":ss": {"SS": ["green", "red"]},
    ":map": {"M": {"k": {"S": "v"}}},
}
NAMES = {"#st": "status", "#m": "m", "#dot": "a.b", "#pk": "pk"}


CONDITION_CASES = [
    # comparisons
    ("n = :5", True),
    ("n = :5p0", True),
    ("n <> :5", False),
    ("n <> :3", True),
    ("absent <> :3", True),
    ("absent = :3", False),
    ("n < :9", True),
    ("n <= :5", True),
    ("n > :5", False),
    ("n >= :5", True),
    ("f < :2p5", True),
    ("s > :hello", True),
    ("s < :hello", False),
    ("b > :b1", True),
    ("b < :b12", False),
    ("n = :hello", False),
    ("n < :hello", False),
    ("s > :5", False),
    ("t = :true", True),
    ("z = :null", True),
    ("l = :l", True),
    ("ss = :ss", True),
    (":5 = n", True),
    (":3 < n", True),
    ("f < n", True),
    ("m.a.b = :3", True),
    ("#m.a.b = :3", True),
    ("l[1] = :7", True),
    ("l[2].deep = :x", False),
    ("l[9] = :7", False),
    ("m.a[0] = :3", False),
    ("#st = :active", True),
    # BETWEEN / IN
    ("n BETWEEN :3 AND :9", True),
    ("n BETWEEN :5 AND :5", True),
    ("n BETWEEN :1 AND :3", False),
    ("s BETWEEN :hello AND :world", True),
    ("s BETWEEN :1 AND :9", False),
    ("n IN (:1, :3, :5)", True),
    ("n IN (:1, :3)", False),
    ("s IN (:hello, :hw)", True),
    ("absent IN (:1)", False),
    ("l IN (:l, :1)", True),
    # logic
    ("n = :5 AND s = :hw", True),
    ("n = :5 AND s = :hello", False),
    ("n = :1 OR s = :hw", True),
    ("NOT n = :1", True),
    ("NOT (n = :5)", False),
    ("not n = :5 or n = :5", True),
    ("n = :1 OR n = :5 AND s = :hello", False),
    ("(n = :1 OR n = :5) AND s = :hw", True),
    ("n = :1 and (s = :hw or t = :true)", False),
    # functions
    ("attribute_exists(n)", True),
    ("attribute_exists(nope)", False),
    ("attribute_not_exists(nope)", True),
    ("attribute_exists(m.a.b)", True),
    ("attribute_exists(m.a.c)", False),
    ("attribute_exists(l[2].deep)", True),
    ("attribute_exists(#dot)", False),
    ("attribute_type(n, :tN)", True),
    ("attribute_type(n, :tS)", False),
    ("attribute_type(l, :tL)", True),
    ("attribute_type(m, :tM)", True),
    ("attribute_type(ss, :tSS)", True),
    ("attribute_type(z, :tNULL)", True),
    ("begins_with(s, :hello)", True),
    ("begins_with(s, :world)", False),
    ("begins_with(b, :b12)", True),
    ("begins_with(n, :hello)", False),
    ("contains(s, :world)", True),
    ("contains(s, :red)", False),
    ("contains(ss, :red)", True),
    ("contains(ss, :blue)", False),
    ("contains(ns, :2p5)", True),
    ("contains(ns, :3)", False),
    ("contains(bs, :b1)", True),
    ("contains(l, :7)", True),
    ("contains(l, :x)", True),
    ("contains(l, :red)", False),
    ("contains(absent, :red)", False),
    ("size(s) = :hw", False),
    ("size(u) = :7", True),
    ("size(ss) < :3", True),
    ("size(l) = :3", True),
    ("size(m) > :1", True),
    ("size(b) = :3", True),
    ("size(absent) = :3", False),
    ("size(n) = :1", False),
    ("size(s) BETWEEN :9 AND size(s)", True),
]


@pytest.mark.parametrize(("expr", "expected"), CONDITION_CASES)
def test_condition(expr: str, expected: bool) -> None:
    assert parse_condition(expr, NAMES, V).evaluate(ITEM) is expected


@pytest.mark.parametrize("item", [None, {}])
def test_condition_on_missing_item(item: dict[str, Any] | None) -> None:
    assert parse_condition("attribute_not_exists(pk)", None, None).evaluate(item) is True
    assert parse_condition("attribute_exists(pk)", None, None).evaluate(item) is False
    assert parse_condition("pk <> :x", None, V).evaluate(item) is True


def test_used_names_and_values() -> None:
    cond = parse_condition("#st = :active AND attribute_exists(#m.a) AND n IN (:1, :3)", NAMES, V)
    assert cond.used_names == {"#st", "#m"}
    assert cond.used_values == {":active", ":1", ":3"}
    upd = parse_update("SET #m.a = :1, n = n + :3 REMOVE #st ADD ss :ss", NAMES, V)
    assert upd.used_names == {"#m", "#st"}
    assert upd.used_values == {":1", ":3", ":ss"}
    assert upd.updated_paths == {"m", "n", "status", "ss"}
    proj = parse_projection("#pk, #m.a", NAMES)
    assert proj.used_names == {"#pk", "#m"}
    key = parse_key_condition("#pk = :x AND sk > :1", NAMES, V, "pk", "sk")
    assert key.used_names == {"#pk"}
    assert key.used_values == {":x", ":1"}


CONDITION_ERRORS = [
    ("status = :active", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status"),
    ("m.size = :1", "reserved keyword: size"),
    ("n = :nope", "An expression attribute value used in expression is not defined; attribute value: :nope"),
    ("#nope = :1", "An expression attribute name used in the document path is not defined; attribute name: #nope"),
    ("n = ", 'Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "= "'),
    ("n == :1", 'Syntax error; token: "=", near: "== :1"'),
    ("n = :1 :3", 'Syntax error; token: ":3"'),
    ("(n = :1", 'token: "<EOF>"'),
    ("n $ :1", 'Syntax error; token: "$"'),
    ("", "Invalid ConditionExpression: The expression can not be empty;"),
    ("   ", "The expression can not be empty;"),
    ("foo(n)", "Invalid function name; function: foo"),
    ("ATTRIBUTE_EXISTS(n)", "Invalid function name; function: ATTRIBUTE_EXISTS"),
    ("attribute_exists(:1)", "Operator or function requires a document path; operator or function: attribute_exists"),
    ("attribute_exists(n, s)", "Incorrect number of operands for operator or function; operator or function: "),
    ("attribute_type(n, :1)", "operator or function: attribute_type, operand type: N"),
    ("attribute_type(n, :hello)", "Invalid attribute type name found; type: hello"),
    ("begins_with(s, :5)", "operator or function: begins_with, operand type: N"),
    ("n < :map", "Incorrect operand type for operator or function; operator or function: <, operand type: M"),
    ("n BETWEEN :9 AND :1", "The BETWEEN operator requires upper bound to be greater than or equal to lower bound"),
    ("size(s)", "function: size"),
    ("if_not_exists(n, :1) = :1", "The function is not allowed to be used this way in an expression"),
    ("n IN (" + ", ".join([":1"] * 101) + ")", "too many operands; number of operands: 101"),
    ("l[x] = :1", 'Syntax error; token: "x"'),
]


@pytest.mark.parametrize(("expr", "message"), CONDITION_ERRORS)
def test_condition_errors(expr: str, message: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_condition(expr, NAMES, V)
    assert message in str(info.value)
    assert isinstance(info.value, DynlocustError)
    assert isinstance(info.value, ValueError)


def test_filter_kind_prefixes_message() -> None:
    with pytest.raises(ExpressionError, match=r"^Invalid FilterExpression: Syntax error"):
        parse_condition("n =", None, V, kind="FilterExpression")


def test_in_accepts_100_operands() -> None:
    values = {f":v{i}": {"N": str(i)} for i in range(100)}
    cond = parse_condition("n IN (" + ", ".join(values) + ")", None, values)
    assert cond.evaluate({"n": {"N": "99"}}) is True
    assert cond.evaluate({"n": {"N": "100"}}) is False


BASE: dict[str, dict[str, Any]] = {
    "pk": {"S": "k"},
    "n": {"N": "1.50"},
    "l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}]},
    "m": {"M": {"a": {"N": "1"}, "nest": {"M": {"x": {"S": "y"}}}}},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2"]},
    "bs": {"BS": [b64(b"\x01")]},
    "s": {"S": "str"},
}
UV: dict[str, Any] = {
    ":1": {"N": "1"},
    ":2": {"N": "2"},
    ":neg": {"N": "-0.5"},
    ":big": {"N": "99999999999999999999999999999999999999"},
    ":s": {"S": "v"},
    ":l": {"L": [{"S": "z"}]},
    ":ss": {"SS": ["b", "c"]},
    ":ssa": {"SS": ["a", "b"]},
    ":ns": {"NS": ["2.0", "3"]},
    ":bs": {"BS": [b64(b"\x02")]},
    ":m": {"M": {}},
}

UPDATE_CASES = [
    ("SET s = :s", {"s": {"S": "v"}}),
    ("set fresh = :s", {"fresh": {"S": "v"}}),
    ("SET n = n + :1", {"n": {"N": "2.5"}}),
    ("SET n = :1 + n", {"n": {"N": "2.5"}}),
    ("SET n = n - :2", {"n": {"N": "-0.5"}}),
    ("SET n = n + :neg", {"n": {"N": "1"}}),
    ("SET n = :1 + :1", {"n": {"N": "2"}}),
    ("SET c = if_not_exists(c, :1)", {"c": {"N": "1"}}),
    ("SET n = if_not_exists(n, :2)", {}),
    ("SET c = if_not_exists(c, :1) + :2", {"c": {"N": "3"}}),
    ("SET l = list_append(l, :l)", {"l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}, {"S": "z"}]}}),
    ("SET l = list_append(:l, l)", {"l": {"L": [{"S": "z"}, {"S": "a"}, {"S": "b"}, {"S": "c"}]}}),
    ("SET nl = list_append(if_not_exists(nl, :l), :l)", {"nl": {"L": [{"S": "z"}, {"S": "z"}]}}),
    ("SET m.a = :2", {"m": {"M": {"a": {"N": "2"}, "nest": {"M": {"x": {"S": "y"}}}}}}),
    ("SET m.nest.x = :s", {"m": {"M": {"a": {"N": "1"}, "nest": {"M": {"x": {"S": "v"}}}}}}),
    ("SET m.b = m.a", {"m": {"M": {"a": {"N": "1"}, "b": {"N": "1"}, "nest": {"M": {"x": {"S": "y"}}}}}}),
    ("SET l[1] = :s", {"l": {"L": [{"S": "a"}, {"S": "v"}, {"S": "c"}]}}),
    ("SET l[10] = :s", {"l": {"L": [{"S": "a"}, {"S": "b"}, {"S": "c"}, {"S": "v"}]}}),
    ("SET a = n, b = s", {"a": {"N": "1.50"}, "b": {"S": "str"}}),
    ("SET s = n, n = s", {"s": {"N": "1.50"}, "n": {"S": "str"}}),
    ("REMOVE s", {"s": None}),
    ("REMOVE s, absent", {"s": None}),
    ("REMOVE m.a", {"m": {"M": {"nest": {"M": {"x": {"S": "y"}}}}}}),
    ("REMOVE l[0], l[2]", {"l": {"L": [{"S": "b"}]}}),
    ("REMOVE l[2], l[0]", {"l": {"L": [{"S": "b"}]}}),
    ("REMOVE l[9]", {}),
    ("ADD n :1", {"n": {"N": "2.5"}}),
    ("ADD c :2", {"c": {"N": "2"}}),
    ("ADD ss :ss", {"ss": {"SS": ["a", "b", "c"]}}),
    ("ADD ns :ns", {"ns": {"NS": ["1", "2", "3"]}}),
    ("ADD bs :bs", {"bs": {"BS": [b64(b"\x01"), b64(b"\x02")]}}),
    ("ADD newset :ss", {"newset": {"SS": ["b", "c"]}}),
    ("DELETE ss :ss", {"ss": {"SS": ["a"]}}),
    ("DELETE ss :ssa", {"ss": None}),
    ("DELETE ns :ns", {"ns": {"NS": ["1"]}}),
    ("DELETE absent :ss", {}),
    (
        "SET s = :s REMOVE l ADD n :1 DELETE ss :ss",
        {"s": {"S": "v"}, "l": None, "n": {"N": "2.5"}, "ss": {"SS": ["a"]}},
    ),
    ("ADD n :1 SET s = :s", {"s": {"S": "v"}, "n": {"N": "2.5"}}),
    ("SET m.e = :m", {"m": {"M": {"a": {"N": "1"}, "e": {"M": {}}, "nest": {"M": {"x": {"S": "y"}}}}}}),
]


@pytest.mark.parametrize(("expr", "changes"), UPDATE_CASES)
def test_update(expr: str, changes: dict[str, Any]) -> None:
    before = copy.deepcopy(BASE)
    expected = dict(BASE)
    for k, v in changes.items():
        if v is None:
            expected.pop(k, None)
        else:
            expected[k] = v
    result = parse_update(expr, None, UV).apply(BASE)
    assert result == expected
    assert before == BASE, "apply() must not mutate its input"


def test_update_on_missing_item_creates_attributes() -> None:
    upd = parse_update("SET a = :s ADD c :1, tags :ss", None, UV)
    assert upd.apply({}) == {"a": {"S": "v"}, "c": {"N": "1"}, "tags": {"SS": ["b", "c"]}}


UPDATE_PARSE_ERRORS = [
    ("", "Invalid UpdateExpression: The expression can not be empty;"),
    ("SET a = :s SET b = :s", 'The "SET" section can only be used once in an update expression;'),
    ("SET a = :s REMOVE a", "Two document paths overlap with each other; must remove or rewrite one of these paths"),
    ("SET m.a = :s REMOVE m", "path one: [m, a], path two: [m]"),
    ("SET l[0] = :s, l.x = :s", "Two document paths conflict with each other"),
    ("SET a = :s, a = :s", "overlap"),
    ("SET a = :nope", "attribute value: :nope"),
    ("SET #nope = :s", "attribute name: #nope"),
    ("SET status = :s", "reserved keyword: status"),
    ("SET a :s", 'Syntax error; token: ":s"'),
    ("UPSERT a = :s", 'Syntax error; token: "UPSERT"'),
    ("SET a = :s,", 'token: "<EOF>"'),
    ("SET a = size(b)", "The function is not allowed in an update expression; function: size"),
    ("SET a = nope(b)", "Invalid function name; function: nope"),
    ("SET a = if_not_exists(:s, :s)", "requires a document path; operator or function: if_not_exists"),
    ("SET a = list_append(:s, :l)", "operator or function: list_append, operand type: S"),
    ("SET a = :s + :1", "operator or function: +, operand type: S"),
    ("ADD a :s", "operator: ADD, operand type: STRING"),
    ("ADD a :l", "operator: ADD, operand type: LIST"),
    ("DELETE a :1", "operator: DELETE, operand type: NUMBER"),
    ("ADD a b", 'Syntax error; token: "b"'),
]


@pytest.mark.parametrize(("expr", "message"), UPDATE_PARSE_ERRORS)
def test_update_parse_errors(expr: str, message: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_update(expr, NAMES, UV)
    assert message in str(info.value)


UPDATE_RUNTIME_ERRORS = [
    ("SET n = s + :1", "An operand in the update expression has an incorrect data type"),
    ("SET n = absent + :1", "The provided expression refers to an attribute that does not exist in the item"),
    ("SET a = n, b = a", "The provided expression refers to an attribute that does not exist in the item"),
    ("SET n = absent", "The provided expression refers to an attribute that does not exist in the item"),
    ("SET x = list_append(s, :l)", "An operand in the update expression has an incorrect data type"),
    ("ADD s :1", "An operand in the update expression has an incorrect data type"),
    ("ADD ss :ns", "An operand in the update expression has an incorrect data type"),
    ("DELETE s :ss", "An operand in the update expression has an incorrect data type"),
    ("SET nope.a = :s", "The document path provided in the update expression is invalid for update"),
    ("SET s.a = :s", "The document path provided in the update expression is invalid for update"),
    ("SET l[5].a = :s", "The document path provided in the update expression is invalid for update"),
    ("REMOVE absent.a", "The document path provided in the update expression is invalid for update"),
    ("REMOVE s.a", "The document path provided in the update expression is invalid for update"),
    ("DELETE absent.a :ss", "The document path provided in the update expression is invalid for update"),
    # a sum that needs more than 38 digits is refused, as the service refuses it (issue 34), not rounded
    ("SET n = :big + :big", "Attempting to store more than 38 significant digits in a Number"),
    ("SET n = n + :big", "Attempting to store more than 38 significant digits in a Number"),
]


@pytest.mark.parametrize(("expr", "message"), UPDATE_RUNTIME_ERRORS)
def test_update_runtime_errors(expr: str, message: str) -> None:
    upd = parse_update(expr, None, UV)
    with pytest.raises(ExpressionError) as info:
        upd.apply(BASE)
    assert message in str(info.value)


def test_number_overflow_is_an_error() -> None:
    values = {":a": {"N": "9.9E+125"}, ":b": {"N": "1E+125"}}
    with pytest.raises(ExpressionError, match="Number overflow"):
        parse_update("SET n = :a + :b", None, values).apply({})


PROJECTION_CASES = [
    ("pk, s", {"pk": BASE["pk"], "s": BASE["s"]}),
    ("pk, nope", {"pk": BASE["pk"]}),
    ("m.a", {"m": {"M": {"a": {"N": "1"}}}}),
    ("m.nest.x, s", {"m": {"M": {"nest": {"M": {"x": {"S": "y"}}}}}, "s": BASE["s"]}),
    ("m.a, m.nest", {"m": BASE["m"]}),
    ("l[2], l[0]", {"l": {"L": [{"S": "a"}, {"S": "c"}]}}),
    ("l[7]", {}),
    ("m.nope", {}),
    ("s.nope", {}),
    ("#m.a", {"m": {"M": {"a": {"N": "1"}}}}),
]


@pytest.mark.parametrize(("expr", "expected"), PROJECTION_CASES)
def test_projection(expr: str, expected: dict[str, Any]) -> None:
    assert parse_projection(expr, {"#m": "m"}).apply(BASE) == expected


def test_projection_nested_list_of_maps() -> None:
    item = {"l": {"L": [{"M": {"a": {"N": "1"}, "b": {"N": "2"}}}, {"S": "x"}, {"M": {"a": {"N": "3"}}}]}}
    proj = parse_projection("l[0].a, l[2].a, l[1].a", None)
    assert proj.apply(item) == {"l": {"L": [{"M": {"a": {"N": "1"}}}, {"M": {"a": {"N": "3"}}}]}}


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("a, a.b", "Invalid ProjectionExpression: Two document paths overlap with each other"),
        ("a, a", "overlap"),
        ("a,", 'Syntax error; token: "<EOF>"'),
        ("name", "reserved keyword: name"),
        ("#x", "attribute name: #x"),
        ("a = :v", 'Syntax error; token: "="'),
    ],
)
def test_projection_errors(expr: str, message: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_projection(expr, None)
    assert message in str(info.value)


KV: dict[str, Any] = {
    ":p": {"S": "p1"},
    ":a": {"S": "b"},
    ":z": {"S": "d"},
    ":pre": {"S": "ca"},
    ":n": {"N": "5"},
}
KEY_CASES: list[tuple[str, str | None, list[str], list[str]]] = [
    ("pk = :p", None, ["a", "zz"], []),
    ("pk = :p AND sk = :a", "=", ["b"], ["a", "c"]),
    ("sk = :a AND pk = :p", "=", ["b"], ["a"]),
    ("pk = :p AND sk < :a", "<", ["a", "ab"], ["b", "c"]),
    ("pk = :p AND sk <= :a", "<=", ["a", "b"], ["ba", "c"]),
    ("pk = :p AND sk > :a", ">", ["ba", "c"], ["a", "b"]),
    ("pk = :p AND sk >= :a", ">=", ["b", "c"], ["a"]),
    ("pk = :p AND sk BETWEEN :a AND :z", "BETWEEN", ["b", "c", "d"], ["a", "da", "e"]),
    ("pk = :p AND begins_with(sk, :pre)", "begins_with", ["ca", "cab"], ["c", "cb", "a"]),
    ("(pk = :p) AND (sk > :a)", ">", ["c"], ["a"]),
    ("PK = :p and SK > :a", ">", ["c"], ["a"]),
]


@pytest.mark.parametrize(("expr", "op", "matching", "not_matching"), KEY_CASES)
def test_key_condition(expr: str, op: str | None, matching: list[str], not_matching: list[str]) -> None:
    hash_key, range_key = ("PK", "SK") if expr.startswith("PK") else ("pk", "sk")
    kc = parse_key_condition(expr, None, KV, hash_key, range_key)
    assert kc.hash_value == {"S": "p1"}
    assert kc.range_op == op
    for sk in matching:
        assert kc.matches_range({"S": sk}), sk
    for sk in not_matching:
        assert not kc.matches_range({"S": sk}), sk


def test_key_condition_numbers_and_hash_only_table() -> None:
    kc = parse_key_condition("pk = :p AND sk > :n", None, KV, "pk", "sk")
    assert kc.matches_range({"N": "10"}) and not kc.matches_range({"N": "4.99"})
    assert not kc.matches_range({"S": "10"})
    assert not kc.matches_range(None)
    assert parse_key_condition("pk = :p", None, KV, "pk", None).matches_range(None)


KEY_ERRORS = [
    ("sk = :a", "pk", "sk", "Query condition missed key schema element: pk"),
    ("pk > :p", "pk", "sk", "Query key condition not supported"),
    ("pk = :p AND attr2 = :a", "pk", "sk", "Query condition missed key schema element: sk"),
    ("pk = :p AND sk > :a", "pk", None, "Query key condition not supported"),
    ("pk = :p OR sk = :a", "pk", "sk", "Invalid operator used in KeyConditionExpression: OR"),
    ("NOT pk = :p", "pk", "sk", "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk = :p AND sk <> :a", "pk", "sk", "Invalid operator used in KeyConditionExpression: <>"),
    ("pk = :p AND sk IN (:a)", "pk", "sk", "Invalid operator used in KeyConditionExpression: IN"),
    ("pk = :p AND contains(sk, :a)", "pk", "sk", "Invalid operator used in KeyConditionExpression: contains"),
    ("pk = :p AND pk = :p", "pk", "sk", "KeyConditionExpressions must only contain one condition per key"),
    # two conditions on sk: named as such (as the service answers a range written as two comparisons), not by count
    ("pk = :p AND sk > :a AND sk < :z", "pk", "sk", "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk BETWEEN :z AND :a", "pk", "sk", "requires upper bound to be greater than or equal"),
    ("pk = :p AND begins_with(sk, :n)", "pk", "sk", "operator or function: begins_with, operand type: N"),
    ("pk = :nope", "pk", "sk", "attribute value: :nope"),
    # two attributes in one condition (as dynalite's tests record the service), not a syntax error
    (
        "pk = sk",
        "pk",
        "sk",
        "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition",
    ),
    ("pk.x = :p", "pk", "sk", "nested path"),
]


@pytest.mark.parametrize(("expr", "hash_key", "range_key", "message"), KEY_ERRORS)
def test_key_condition_errors(expr: str, hash_key: str, range_key: str | None, message: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_key_condition(expr, None, KV, hash_key, range_key)
    assert message in str(info.value)


def test_key_condition_reparsed_text_takes_each_requests_values() -> None:
    """A key condition seen before (cached by text and names) still reads this request's values and placeholders."""
    names = {"#k": "pk"}
    first = parse_key_condition("#k = :h AND sk < :r", names, {":h": {"S": "a"}, ":r": {"N": "5"}}, "pk", "sk")
    second = parse_key_condition("#k = :h AND sk < :r", names, {":h": {"S": "b"}, ":r": {"N": "7"}}, "pk", "sk")
    assert (first.hash_value, first.range_values) == ({"S": "a"}, ({"N": "5"},))
    assert (second.hash_value, second.range_values) == ({"S": "b"}, ({"N": "7"},))
    assert second.used_names == {"#k"} and second.used_values == {":h", ":r"}
    assert second.matches_range({"N": "6"}) and not second.matches_range({"N": "7"})
    # other names, another key schema: parsed for them, not taken from the first
    other = parse_key_condition("#k = :h AND sk < :r", {"#k": "id"}, {":h": {"S": "c"}, ":r": {"N": "1"}}, "id", "sk")
    assert other.hash_key == "id" and other.hash_value == {"S": "c"}
    with pytest.raises(ExpressionError, match="Query condition missed key schema element: pk"):
        parse_key_condition("#k = :h AND sk < :r", {"#k": "id"}, {":h": {"S": "c"}, ":r": {"N": "1"}}, "pk", "sk")
    # a value missing or malformed this time: the same error as a first parse
    with pytest.raises(ExpressionError, match="attribute value: :r"):
        parse_key_condition("#k = :h AND sk < :r", names, {":h": {"S": "b"}}, "pk", "sk")
    with pytest.raises(ExpressionError, match="is not a valid attribute value"):
        parse_key_condition("#k = :h AND sk < :r", names, {":h": {"S": "b"}, ":r": {"S": "x", "N": "1"}}, "pk", "sk")


def test_key_condition_one_value_object_under_two_placeholders() -> None:
    """Two placeholders holding one object cannot tell which was parsed: the next request parses its own."""
    shared = {"S": "same"}
    parse_key_condition("pk = :b AND sk = :a", None, {":a": shared, ":b": shared}, "pk", "sk")
    kc = parse_key_condition("pk = :b AND sk = :a", None, {":a": {"S": "ra"}, ":b": {"S": "hb"}}, "pk", "sk")
    assert kc.hash_value == {"S": "hb"} and kc.range_values == ({"S": "ra"},)


def test_key_condition_cache_is_bounded() -> None:
    for i in range(keys.KEY_SHAPES_MAX + 50):
        parse_key_condition(f"pk = :v{i}", None, {f":v{i}": {"S": "x"}}, "pk", None)
    assert len(keys.key_shapes) <= keys.KEY_SHAPES_MAX
    kc = parse_key_condition("pk = :v3", None, {":v3": {"S": "y"}}, "pk", None)  # evicted: parsed again
    assert kc.hash_value == {"S": "y"}


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ({"S": "a"}, {"S": "b"}, -1),
        ({"S": "b"}, {"S": "a"}, 1),
        ({"S": "z"}, {"S": "é"}, -1),  # UTF-8 byte order: 0x7a < 0xc3
        ({"S": "\uffff"}, {"S": "\U0001f600"}, -1),  # 0xef.. < 0xf0.. in UTF-8 (UTF-16 order would disagree)
        ({"N": "10"}, {"N": "9"}, 1),
        ({"N": "-1"}, {"N": "0.5"}, -1),
        ({"N": "1.0"}, {"N": "1"}, 0),
        ({"N": "1e2"}, {"N": "99"}, 1),
        ({"B": b64(b"\x00\xff")}, {"B": b64(b"\x01")}, -1),
        ({"B": b64(b"\x01")}, {"B": b64(b"\x01\x00")}, -1),
    ],
)
def test_compare_values(a: dict[str, Any], b: dict[str, Any], expected: int) -> None:
    assert compare_values(a, b) == expected
    assert compare_values(b, a) == -expected


def test_compare_values_mixed_types_is_a_total_order() -> None:
    values = [{"S": "a"}, {"N": "1"}, {"B": b64(b"a")}, {"S": "b"}, {"N": "0"}]
    ordered = sorted(values, key=__import__("functools").cmp_to_key(compare_values))
    assert ordered == [{"B": b64(b"a")}, {"N": "0"}, {"N": "1"}, {"S": "a"}, {"S": "b"}]


@pytest.mark.parametrize(
    ("item", "size"),
    [
        ({"a": {"S": "abc"}}, 4),
        ({"żółw": {"S": "ż"}}, 7 + 2),
        ({"n": {"N": "1"}}, 1 + 2),
        ({"n": {"N": "12345"}}, 1 + 4),
        ({"n": {"N": "-1.500"}}, 1 + 4),  # 01 50, one for the sign (dynalite's recorded item-size tests)
        ({"n": {"N": "1000"}}, 1 + 2),
        ({"b": {"B": b64(b"12345")}}, 1 + 5),
        ({"t": {"BOOL": False}, "z": {"NULL": True}}, 4),
        ({"ss": {"SS": ["ab", "c"]}}, 2 + 3),
        ({"l": {"L": []}}, 1 + 3),
        ({"l": {"L": [{"S": "ab"}, {"N": "1"}]}}, 1 + 3 + (1 + 2) + (1 + 2)),
        ({"m": {"M": {"k": {"S": "v"}}}}, 1 + 3 + 1 + 1 + 1),
    ],
)
def test_item_size(item: dict[str, Any], size: int) -> None:
    assert item_size(item) == size


# -- properties -------------------------------------------------------------------------------------------------
def _random_number(rng: random.Random) -> str:
    digits = rng.randint(1, 20)
    mantissa = rng.randint(-(10**digits), 10**digits)
    return str(Decimal(mantissa).scaleb(-rng.randint(0, 10)))


def test_add_numbers_equals_decimal_sum() -> None:
    rng = random.Random(7)
    upd = parse_update("ADD n :d", None, {":d": {"N": "0"}})
    assert upd.apply({"n": {"N": "2"}}) == {"n": {"N": "2"}}
    for _ in range(300):
        a, b = _random_number(rng), _random_number(rng)
        got = parse_update("ADD n :d", None, {":d": {"N": b}}).apply({"n": {"N": a}})["n"]["N"]
        assert Decimal(got) == Decimal(a) + Decimal(b)
        assert "E" not in got and "e" not in got
        assert not (got.endswith("0") and "." in got), got
        sub = parse_update("SET n = n - :d", None, {":d": {"N": b}}).apply({"n": {"N": a}})["n"]["N"]
        assert Decimal(sub) == Decimal(a) - Decimal(b)


def test_set_then_remove_restores() -> None:
    rng = random.Random(11)
    for i in range(100):
        item: dict[str, dict[str, Any]] = {
            "pk": {"S": f"k{i}"},
            "m": {"M": {"x": {"N": str(i)}}},
            "l": {"L": [{"N": "1"}]},
        }
        path = rng.choice(["fresh", "m.fresh", "l[5]"])
        value = {":v": {"S": "v" * rng.randint(1, 5)}}
        updated = parse_update(f"SET {path} = :v", None, value).apply(item)
        assert updated != item
        removed_path = "l[1]" if path == "l[5]" else path
        assert parse_update(f"REMOVE {removed_path}", None, None).apply(updated) == item


def test_add_then_delete_set_restores() -> None:
    rng = random.Random(5)
    for _ in range(100):
        base = sorted({str(rng.randint(0, 20)) for _ in range(5)})
        extra = sorted({str(rng.randint(21, 40)) for _ in range(3)})
        item = {"s": {"NS": base}}
        values = {":e": {"NS": extra}}
        grown = parse_update("ADD s :e", None, values).apply(item)
        assert {Decimal(x) for x in grown["s"]["NS"]} == {Decimal(x) for x in base + extra}
        assert parse_update("DELETE s :e", None, values).apply(grown) == item


def test_parsed_objects_are_reusable_and_case_insensitive() -> None:
    cond = parse_condition("a between :1 and :9 AnD NoT b In (:1)", None, V)
    assert cond.evaluate({"a": {"N": "4"}, "b": {"N": "2"}}) is True
    assert cond.evaluate({"a": {"N": "4"}, "b": {"N": "1"}}) is False
    assert cond.evaluate({"a": {"N": "40"}}) is False


# -- differential test against moto's condition evaluator -------------------------------------------------------
_DIFF_VALUES: dict[str, Any] = {
    ":n1": {"N": "1"},
    ":n5": {"N": "5"},
    ":n10": {"N": "10"},
    ":sa": {"S": "a"},
    ":sab": {"S": "ab"},
    ":sz": {"S": "z"},
    ":typeN": {"S": "N"},
    ":typeS": {"S": "S"},
}
_ATTRS = ["a", "b", "c", "m.x", "l[0]"]


def _random_diff_item(rng: random.Random) -> dict[str, Any]:
    # No BOOL anywhere: moto compares them as Python values, so it finds False < 5 and True == 1.
    def scalar() -> dict[str, Any]:
        return rng.choice(
            [
                {"N": str(rng.randint(0, 12))},
                {"S": rng.choice(["a", "ab", "abc", "b", "z", ""])[:3] or "q"},
            ]
        )

    item: dict[str, Any] = {"pk": {"S": "k"}}
    for name in ("a", "b", "c"):
        if rng.random() < 0.8:
            item[name] = scalar()
    if rng.random() < 0.7:
        item["m"] = {"M": {"x": scalar()}}
    if rng.random() < 0.7:
        item["l"] = {"L": [scalar() for _ in range(rng.randint(1, 3))]}
    return item


def _random_condition(rng: random.Random, depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.4:
        op = rng.choice(["AND", "OR"])
        left, right = _random_condition(rng, depth + 1), _random_condition(rng, depth + 1)
        text = f"{left} {op} {right}"
        return f"NOT ({text})" if rng.random() < 0.2 else f"({text})"
    attr = rng.choice(_ATTRS)
    num = rng.choice([":n1", ":n5", ":n10"])
    string = rng.choice([":sa", ":sab", ":sz"])
    val = rng.choice([num, string])
    choice = rng.randrange(9)
    if choice == 0:
        return f"{attr} {rng.choice(['=', '<>'])} {val}"
    if choice == 1:
        return f"{attr} {rng.choice(['<', '<=', '>', '>='])} {rng.choice([num, string])}"
    if choice == 2:
        return f"{attr} BETWEEN :n1 AND :n5" if rng.random() < 0.5 else f"{attr} BETWEEN :sa AND :sz"
    if choice == 3:
        return f"{attr} IN ({val}, {rng.choice([num, string])})"
    if choice == 4:
        return f"{rng.choice(['attribute_exists', 'attribute_not_exists'])}({attr})"
    if choice == 5:
        return f"begins_with({attr}, {string})"
    if choice == 6:
        return f"contains({rng.choice(['a', 'l'])}, {rng.choice([num, string])})"
    if choice == 7:
        return f"attribute_type({attr}, {rng.choice([':typeN', ':typeS'])})"
    return f"size({rng.choice(['a', 'l', 'm'])}) {rng.choice(['=', '<', '>='])} {num}"


def test_conditions_agree_with_moto() -> None:
    comparisons = require_peer("moto.dynamodb.comparisons", MOTO_WHY)
    dynamo_type = require_peer("moto.dynamodb.models.dynamo_type", MOTO_WHY)
    rng = random.Random(2024)
    compared = 0
    for _ in range(400):
        expr = _random_condition(rng)
        ours = parse_condition(expr, None, _DIFF_VALUES)
        theirs = comparisons.get_filter_expression(expr, {}, _DIFF_VALUES)
        for _ in range(5):
            item = _random_diff_item(rng)
            moto_item = dynamo_type.Item(dynamo_type.DynamoType(item["pk"]), None, item)
            try:
                expected = bool(theirs.expr(moto_item))
            except Exception:  # moto raises on some type mixes the service treats as false
                continue
            assert ours.evaluate(item) is expected, (expr, item, expected)
            compared += 1
    assert compared > 1000


_UPDATE_VALUES: dict[str, Any] = {
    ":n1": {"N": "1"},
    ":n25": {"N": "2.5"},
    ":sa": {"S": "a"},
    ":l": {"L": [{"S": "z"}]},
    ":ss": {"SS": ["b", "c"]},
    ":ns": {"NS": ["1", "3"]},
}


def _canonical(av: dict[str, Any]) -> Any:
    """Compare by value: moto keeps "2.50" where the service (and we) render "2.5"; set order is free."""
    ((t, v),) = av.items()
    if t == "N":
        return ("N", Decimal(v))
    if t == "NS":
        return ("NS", frozenset(Decimal(x) for x in v))
    if t in ("SS", "BS"):
        return (t, frozenset(v))
    if t == "L":
        return ("L", tuple(_canonical(x) for x in v))
    if t == "M":
        return ("M", frozenset((k, _canonical(x)) for k, x in v.items()))
    return (t, v)


def _random_update_item(rng: random.Random) -> dict[str, Any]:
    def pick() -> dict[str, Any]:
        return copy.deepcopy(
            rng.choice(
                [{"N": "5"}, {"N": "0.5"}, {"S": "s"}, {"SS": ["a", "b"]}, {"NS": ["1", "2"]}, {"L": [{"S": "q"}]}]
            )
        )

    item: dict[str, Any] = {"pk": {"S": "k"}}
    for name in ("a", "b", "c"):
        if rng.random() < 0.75:
            item[name] = pick()
    if rng.random() < 0.6:
        item["m"] = {"M": {"x": pick()}}
    return item


def _random_update(rng: random.Random) -> str:
    targets = rng.sample(["a", "b", "c", "m.x", "d"], rng.randint(1, 3))
    kinds = [rng.randrange(8) for _ in targets]
    if any(k in (5, 6) for k in kinds):
        # moto's SET x = y shares y's set object, which its ADD/DELETE then mutate in place: keep those apart.
        kinds = [0 if k in (2, 7) else k for k in kinds]
    clauses: dict[str, list[str]] = {}
    for target, kind in zip(targets, kinds, strict=True):
        src = rng.choice(["a", "b", "c", "m.x", target])
        value = rng.choice(list(_UPDATE_VALUES))
        if kind == 0:
            clauses.setdefault("SET", []).append(f"{target} = {value}")
        elif kind == 1:
            op = rng.choice("+-")
            clauses.setdefault("SET", []).append(f"{target} = {src} {op} {rng.choice([':n1', ':n25'])}")
        elif kind == 2:
            clauses.setdefault("SET", []).append(f"{target} = if_not_exists({src}, {value})")
        elif kind == 3:
            clauses.setdefault("SET", []).append(f"{target} = list_append({src}, :l)")
        elif kind == 4:
            clauses.setdefault("REMOVE", []).append(target)
        elif kind == 5:
            clauses.setdefault("ADD", []).append(f"{target} {rng.choice([':n1', ':ss', ':ns'])}")
        elif kind == 6:
            clauses.setdefault("DELETE", []).append(f"{target} {rng.choice([':ss', ':ns'])}")
        else:
            clauses.setdefault("SET", []).append(f"{target} = {src}")
    parts = [f"{clause} {', '.join(actions)}" for clause, actions in clauses.items()]
    rng.shuffle(parts)
    return " ".join(parts)


def test_updates_agree_with_moto() -> None:
    executors = require_peer("moto.dynamodb.parsing.executors", MOTO_WHY)
    expressions = require_peer("moto.dynamodb.parsing.expressions", MOTO_WHY)
    validators = require_peer("moto.dynamodb.parsing.validators", MOTO_WHY)
    dynamo_type = require_peer("moto.dynamodb.models.dynamo_type", MOTO_WHY)
    table = types.SimpleNamespace(
        hash_key_attr="pk", range_key_attr=None, attribute_keys=["pk"], table_key_attrs=["pk"], attr=[]
    )

    def moto_apply(expr: str, item: dict[str, Any]) -> dict[str, Any]:
        moto_item = dynamo_type.Item(dynamo_type.DynamoType(item["pk"]), None, copy.deepcopy(item))
        ast = expressions.UpdateExpressionParser.make(expr)
        validated = validators.UpdateExpressionValidator(
            ast,
            expression_attribute_names={},
            expression_attribute_values=_UPDATE_VALUES,
            item=moto_item,
            table=table,
        ).validate()
        validated.normalize()
        executors.UpdateExpressionExecutor(validated, moto_item, {}).execute()
        return dict(moto_item.to_json()["Attributes"])

    rng = random.Random(1)
    succeeded = failed = 0
    for _ in range(1500):
        expr, item = _random_update(rng), _random_update_item(rng)
        try:
            theirs: dict[str, Any] | None = moto_apply(expr, item)
        except Exception:
            theirs = None
        try:
            ours: dict[str, Any] | None = parse_update(expr, None, _UPDATE_VALUES).apply(item)
        except ExpressionError:
            ours = None
        assert (ours is None) == (theirs is None), (expr, item, ours, theirs)
        if ours is None or theirs is None:
            failed += 1
            continue
        assert {k: _canonical(v) for k, v in ours.items()} == {k: _canonical(v) for k, v in theirs.items()}, (
            expr,
            item,
        )
        succeeded += 1
    assert succeeded > 400 and failed > 400


# -- issue 16: size, nesting and overlap checks stay bounded -------------------------------------------------------
def test_overlap_check_is_linear_in_the_number_of_paths() -> None:
    from dynlocust.local.expressions.paths import check_overlaps

    paths: list[tuple[str | int, ...]] = [(f"a{i}", "b", i) for i in range(50_000)]
    check_overlaps(paths, "ProjectionExpression")  # all distinct: 1.25e9 pairs were compared before
    with pytest.raises(ExpressionError, match=r"path one: \[a7, b, \[7\]\], path two: \[a7, b\]"):
        check_overlaps([*paths, ("a7", "b")], "ProjectionExpression")


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (
            "a.b, c, a",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; "
            "path one: [a, b], path two: [a]",
        ),
        (
            "a, c, a.b",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; "
            "path one: [a], path two: [a, b]",
        ),
        (
            "c, c",
            "Two document paths overlap with each other; must remove or rewrite one of these paths; "
            "path one: [c], path two: [c]",
        ),
        (
            "a.b, a[1]",
            "Two document paths conflict with each other; must remove or rewrite one of these paths; "
            "path one: [a, b], path two: [a, [1]]",
        ),
        (
            "x.a.b, y, x.a[0].c",
            "Two document paths conflict with each other; must remove or rewrite one of these "
            "paths; path one: [x, a, b], path two: [x, a, [0], c]",
        ),
    ],
)
def test_overlap_and_conflict_messages(expr: str, message: str) -> None:
    with pytest.raises(ExpressionError) as exc:
        parse_projection(expr, None)
    assert str(exc.value) == "Invalid ProjectionExpression: " + message


def test_distinct_siblings_do_not_overlap() -> None:
    p = parse_projection("a.b, a.c, a.d[0], x[1], x[2]", None)
    assert len(p.paths) == 5


def test_expression_size_counts_utf8_bytes() -> None:
    with pytest.raises(ExpressionError, match="Syntax error"):
        parse_condition("é" * 2000, None, None)  # 4,000 bytes: parsed (and refused as syntax)
    with pytest.raises(ExpressionError) as exc:
        parse_condition("é" * 2100, None, None)
    assert str(exc.value) == (
        "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 4200"
    )


def test_long_flat_or_chain_evaluates_without_recursion() -> None:
    cond = parse_condition(" OR ".join(["a = :v"] * 300), None, {":v": {"S": "x"}})
    assert cond.evaluate({"a": {"S": "x"}}) is True
    assert cond.evaluate({"a": {"S": "y"}}) is False
    both = parse_condition(" AND ".join(["NOT a = :w"] * 200), None, {":w": {"S": "z"}})
    assert both.evaluate({"a": {"S": "x"}}) is True


# -- issue 34: the expression grammar as the service has it, over HTTP --------------------------------------------
_FILTER = "Invalid FilterExpression: "
_S = {"S": "a"}
_OPERAND_TYPE = "Incorrect operand type for operator or function; operator or function: "
_DISTINCT = "The first operand must be distinct from the remaining operands for this operator or function; operator: "


@pytest.mark.parametrize(
    ("req", "message"),
    [
        # a bare name starts with a letter: a leading digit or underscore needs a placeholder
        (
            {"FilterExpression": "_a = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}},
            _FILTER + 'Syntax error; token: "_", near: "_"',
        ),
        (
            {"FilterExpression": "a = :v OR 1a = :v", "ExpressionAttributeValues": {":v": {"S": "a"}}},
            _FILTER + 'Syntax error; token: "1", near: "OR 1a"',
        ),
        ({"FilterExpression": "contains(a, a)"}, _FILTER + _DISTINCT + "contains, first operand: [a]"),
        (
            {"FilterExpression": "begins_with(#x.y[1], x.y[1])", "ExpressionAttributeNames": {"#x": "x"}},
            _FILTER + _DISTINCT + "begins_with, first operand: [x, y, [1]]",
        ),
        ({"FilterExpression": "a.b <> a.b"}, _FILTER + _DISTINCT + "<>, first operand: [a, b]"),
        (
            {"FilterExpression": "size(:v) > a", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            _FILTER + _OPERAND_TYPE + "size, operand type: N",
        ),
        (
            {"FilterExpression": "begins_with(:v, a)", "ExpressionAttributeValues": {":v": {"N": "1"}}},
            _FILTER
            + "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
        ),
        # a syntax error is reported before the placeholders given and not used
        (
            {"FilterExpression": "a IN ()", "ExpressionAttributeValues": {":v": {"S": "a"}}},
            _FILTER + 'Syntax error; token: ")", near: "()"',
        ),
        (
            {
                "FilterExpression": "a = :v",
                "ProjectionExpression": "a,, b",
                "ExpressionAttributeValues": {":v": {"S": "a"}, ":w": {"S": "b"}},
            },
            'Invalid ProjectionExpression: Syntax error; token: ",", near: ",, b"',
        ),
        # no syntax error: the unused placeholder is what is wrong
        (
            {"FilterExpression": "a = :v", "ExpressionAttributeValues": {":v": {"S": "a"}, ":w": {"S": "b"}}},
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}",
        ),
    ],
)
def test_grammar_refusals_over_http(endpoint: Any, client: Any, req: dict[str, Any], message: str) -> None:
    create_table(client)
    got = wire(endpoint, "Scan", {"TableName": "tab1", **req})
    assert got == (400, {"__type": "com.amazon.coral.validate#ValidationException", "message": message})


@pytest.mark.parametrize(
    ("expr", "values", "count"),
    [
        ("begins_with(:s, a)", {":s": {"S": "abc"}}, 1),  # "abc" begins with a's "ab"
        ("begins_with(:s, a)", {":s": {"S": "xbc"}}, 0),
        ("size(:v) = :n", {":v": {"S": "abcd"}, ":n": {"N": "4"}}, 1),
        ("size(:v) > size(a)", {":v": {"SS": ["p", "q", "r"]}}, 1),
    ],
)
def test_value_operands_where_the_service_takes_them(
    endpoint: Any, client: Any, expr: str, values: dict[str, Any], count: int
) -> None:
    create_table(client)
    assert (
        wire(
            endpoint, "PutItem", {"TableName": "tab1", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}, "a": {"S": "ab"}}}
        )[0]
        == 200
    )
    status, body = wire(
        endpoint, "Scan", {"TableName": "tab1", "FilterExpression": expr, "ExpressionAttributeValues": values}
    )
    assert (status, body.get("Count")) == (200, count), body
