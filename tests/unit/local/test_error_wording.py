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


def case(op: str, req: Any, *expected: str, id: str) -> Any:
    """One row: the request, then what the service answers (`__type` and message, or the message alone)."""
    return pytest.param(op, req, *expected, id=id)


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
        id="remove-range-key-of-missing-item",
    ),
    case(
        "UpdateItem",
        {"TableName": TABLE, "Key": KEY, "UpdateExpression": "REMOVE pk"},
        VALIDATION,
        KEY_UPDATE.format("pk"),
        id="remove-hash-key-of-missing-item",
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
        id="delete-from-range-key-of-missing-item",
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
        id="delete-return-values",
    ),
    case(
        "PutItem",
        {"TableName": "missing", "Item": KEY, "ReturnValues": "UPDATED_OLD"},
        VALIDATION,
        "1 validation error detected: ReturnValues can only be ALL_OLD or NONE",
        id="put-return-values-before-lookup",
    ),
    case(
        "BatchGetItem",
        {"RequestItems": {}},
        VALIDATION,
        "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must have length "
        "greater than or equal to 1",
        id="batch-get-empty-request-items",
    ),
    case(
        "BatchWriteItem",
        {"RequestItems": {TABLE: []}},
        VALIDATION,
        f"1 validation error detected: Value '{{{TABLE}=[]}}' at 'requestItems' failed to satisfy constraint: "
        "Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have "
        "length greater than or equal to 1]",
        id="batch-write-empty-list",
    ),
    case(
        "PutItem",
        {"TableName": LONG, "Item": KEY},
        VALIDATION,
        f"1 validation error detected: Value '{LONG}' at 'tableName' failed to satisfy constraint: Member must have "
        "length less than or equal to 255",
        id="put-256-char-name",
    ),
    case(
        "DescribeTable",
        {"TableName": LONG},
        VALIDATION,
        f"1 validation error detected: Value '{LONG}' at 'tableName' failed to satisfy constraint: Member must have "
        "length less than or equal to 255",
        id="describe-256-char-name",
    ),
    case(
        "BatchGetItem",
        {"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}},
        VALIDATION,
        """1 validation error detected: Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' failed to """
        "satisfy constraint: " + NAME_RULES,
        id="batch-get-bad-name",
    ),
    case(
        "BatchWriteItem",
        {"RequestItems": {"ab": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}}}}]}, "ReturnConsumedCapacity": "ALL"},
        VALIDATION,
        "2 validation errors detected: Value 'ALL' at 'returnConsumedCapacity' failed to satisfy constraint: Member "
        "must satisfy enum value set: [INDEXES, TOTAL, NONE]; "
        """Value '{"ab":[{"DeleteRequest":{"Key":{"pk":{"S":"a"}}}}]}' at 'requestItems' failed to satisfy """
        "constraint: " + NAME_RULES,
        id="batch-write-short-name-and-enum",
    ),
]


@pytest.mark.parametrize(("op", "req", "code", "message"), ENVELOPE)
def test_constraints_are_reported_in_the_envelope_before_the_table_lookup(
    ep: ThreadedEndpoint, op: str, req: dict[str, Any], code: str, message: str
) -> None:
    assert refused(ep, op, req) == (code, message)


# -- class 2: a SerializationException names what the model expects at that member -----------------------------
# Source: dynalite's tests recorded against the service (test/helpers.js, assertType: one row per expected type and
# JSON value), and issue 45 for a list where TableName expects a string.
MODEL = "com.amazonaws.dynamodb.v20120810."
AV_MAP = f"java.util.Map<java.lang.String, {MODEL}AttributeValue>"
CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class "
    "(sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base of "
    "loader 'bootstrap')"
)


def put(**item: Any) -> dict[str, Any]:
    return {"TableName": TABLE, "Item": {**KEY, **item}}


SERIALIZATION_CASES = [
    case(
        "PutItem",
        {"TableName": ["t"], "Item": KEY},
        "Unrecognized collection type class java.lang.String",
        id="str-list",
    ),
    case(
        "Query",
        {"TableName": TABLE, "Limit": []},
        "Unrecognized collection type class java.lang.Integer",
        id="int-list",
    ),
    case("Query", {"TableName": TABLE, "Limit": True}, "TRUE_VALUE cannot be converted to Integer", id="int-true"),
    case(
        "Query",
        {"TableName": TABLE, "ConsistentRead": []},
        "Unrecognized collection type class java.lang.Boolean",
        id="bool-list",
    ),
    case(
        "Query", {"TableName": TABLE, "ConsistentRead": "23"}, "Unexpected token received from parser", id="bool-text"
    ),
    case(
        "Query",
        {"TableName": TABLE, "ConsistentRead": 34.56},
        "DECIMAL_VALUE cannot be converted to Boolean",
        id="bool-dec",
    ),
    case("Query", {"TableName": TABLE, "AttributesToGet": "a"}, "Unexpected field type", id="list-field-text"),
    case("Query", {"TableName": TABLE, "KeyConditions": 5}, "Unexpected field type", id="map-field-number"),
    case(
        "Query",
        {"TableName": TABLE, "KeyConditions": []},
        f"Unrecognized collection type java.util.Map<java.lang.String, {MODEL}Condition>",
        id="map-field-list",
    ),
    case(
        "Query",
        {"TableName": TABLE, "KeyConditions": {"a": "x"}},
        "Unexpected value type in payload",
        id="struct-value",
    ),
    case(
        "Query",
        {"TableName": TABLE, "KeyConditions": {"a": []}},
        f"Unrecognized collection type class {MODEL}Condition",
        id="struct-value-list",
    ),
    case("PutItem", {"TableName": TABLE, "Item": []}, f"Unrecognized collection type {AV_MAP}", id="item-list"),
    case("PutItem", {"TableName": TABLE, "Item": "x"}, "Unexpected field type", id="item-text"),
    case("PutItem", put(a="x"), "Unexpected value type in payload", id="attribute-text"),
    case("PutItem", put(a=[]), f"Unrecognized collection type class {MODEL}AttributeValue", id="attribute-list"),
    case("PutItem", put(a={"B": 5}), "only base-64-encoded strings are convertible to bytes", id="blob-number"),
    case("PutItem", put(a={"B": []}), "Unrecognized collection type class java.nio.ByteBuffer", id="blob-list"),
    case("PutItem", put(a={"SS": "x"}), "Unexpected field type", id="set-text"),
    case("PutItem", put(a={"M": []}), f"Unrecognized collection type {AV_MAP}", id="m-list"),
    case("PutItem", put(a={"BOOL": "maybe"}), "Unexpected token received from parser", id="bool-attribute-text"),
    case(
        "PutItem",
        {**put(), "Expected": {"a": {"Value": "x"}}},
        "Unexpected field type",
        id="attribute-value-field-text",
    ),
    case("BatchGetItem", {"RequestItems": {TABLE: {"Keys": ["x"]}}}, CAST, id="key-in-list-text"),
    case(
        "BatchGetItem",
        {"RequestItems": {TABLE: {"Keys": [[]]}}},
        f"Unrecognized collection type {AV_MAP}",
        id="key-list",
    ),
    case("BatchWriteItem", {"RequestItems": {TABLE: "x"}}, CAST, id="write-list-text"),
    case(
        "BatchWriteItem",
        {"RequestItems": []},
        f"Unrecognized collection type java.util.Map<java.lang.String, java.util.List<{MODEL}WriteRequest>>",
        id="request-items-list",
    ),
    case("CreateTable", {"TableName": "abc", "KeySchema": "x"}, "Unexpected field type", id="key-schema-text"),
    case(
        "CreateTable", {"TableName": "abc", "KeySchema": ["x"]}, "Unexpected value type in payload", id="element-text"
    ),
    case(
        "CreateTable",
        {"TableName": "abc", "ProvisionedThroughput": []},
        f"Unrecognized collection type class {MODEL}ProvisionedThroughput",
        id="struct-field-list",
    ),
]


@pytest.mark.parametrize(("op", "req", "message"), SERIALIZATION_CASES)
def test_serialization_errors_name_the_expected_shape(
    ep: ThreadedEndpoint, op: str, req: dict[str, Any], message: str
) -> None:
    assert refused(ep, op, req) == (SERIALIZATION, message)


def test_a_boolean_given_as_text_is_read_as_the_service_reads_it(ep: ThreadedEndpoint) -> None:
    """dynalite's tests record that the service's deserializer converts "true", "1", "yes" and their opposites."""
    assert wire(ep, "GetItem", {"TableName": TABLE, "Key": KEY, "ConsistentRead": "yes"}) == (200, {})
    assert wire(ep, "PutItem", put(flag={"BOOL": "TRUE"}))[0] == 200
    assert wire(ep, "GetItem", {"TableName": TABLE, "Key": KEY, "ConsistentRead": "0"}) == (
        200,
        {"Item": {**KEY, "flag": {"BOOL": True}}},
    )
    assert wire(ep, "DeleteItem", {"TableName": TABLE, "Key": KEY})[0] == 200


# -- class 4 (and 9): numbers as the service's BigDecimal reads them, in every position --------------------------
# Source: issue 45 (an exponent outside Java's int cannot be converted; 1e2147483647 is an underflow; 0e126 is
# refused, worded here as the overflow it is: its precision less its scale passes 126).
CONVERT = "The parameter cannot be converted to a numeric value: {}"
OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
NUMBERS = [
    ("1e99999999999", CONVERT.format("1e99999999999")),
    ("1e-99999999999", CONVERT.format("1e-99999999999")),
    ("1e2147483647", UNDERFLOW),
    ("1e2147483646", OVERFLOW),
    ("", CONVERT.format("")),
    ("0e126", OVERFLOW),
]
POSITIONS = [
    ("where", "SELECT * FROM tab1 WHERE pk = 'a' AND n = ?", lambda n: [{"N": n}]),
    ("value", "INSERT INTO tab1 VALUE {'pk': 'x', 'sk': 'y', 'n': ?}", lambda n: [{"N": n}]),
    ("set", "UPDATE tab1 SET n = ? WHERE pk = 'a' AND sk = 'b'", lambda n: [{"N": n}]),
    ("list", "UPDATE tab1 SET n = ? WHERE pk = 'a' AND sk = 'b'", lambda n: [{"L": [{"N": "1"}, {"N": n}]}]),
    ("map", "UPDATE tab1 SET n = ? WHERE pk = 'a' AND sk = 'b'", lambda n: [{"M": {"m": {"N": n}}}]),
    ("set-member", "UPDATE tab1 SET n = ? WHERE pk = 'a' AND sk = 'b'", lambda n: [{"NS": ["1", n]}]),
]


@pytest.mark.parametrize(("number", "message"), NUMBERS, ids=[n or "empty" for n, _ in NUMBERS])
@pytest.mark.parametrize(("statement", "parameters"), [p[1:] for p in POSITIONS], ids=[p[0] for p in POSITIONS])
def test_partiql_parameter_numbers(
    ep: ThreadedEndpoint, number: str, message: str, statement: str, parameters: Any
) -> None:
    req = {"Statement": statement, "Parameters": parameters(number)}
    assert refused(ep, "ExecuteStatement", req) == (VALIDATION, message)
    batch = {"Statements": [req]}
    assert refused(ep, "BatchExecuteStatement", batch) == (VALIDATION, message)
    if not statement.startswith("SELECT"):
        assert refused(ep, "ExecuteTransaction", {"TransactStatements": [req]}) == (VALIDATION, message)


@pytest.mark.parametrize(("number", "message"), NUMBERS, ids=[n or "empty" for n, _ in NUMBERS])
def test_put_item_numbers(ep: ThreadedEndpoint, number: str, message: str) -> None:
    assert refused(ep, "PutItem", put(n={"N": number})) == (VALIDATION, message)


# -- class 5: PartiQL's FROM-first UPDATE runs as an UPDATE (issue 45) ------------------------------------------
@pytest.fixture
def item(ep: ThreadedEndpoint) -> Iterator[None]:
    assert wire(ep, "PutItem", put(c={"N": "0"}, d={"S": "x"}))[0] == 200
    yield
    assert wire(ep, "DeleteItem", {"TableName": TABLE, "Key": KEY})[0] == 200


def stored(ep: ThreadedEndpoint) -> dict[str, Any]:
    status, body = wire(ep, "GetItem", {"TableName": TABLE, "Key": KEY})
    assert status == 200
    return dict(body["Item"])


WHERE = "WHERE pk = 'a' AND sk = 'b'"


@pytest.mark.parametrize(
    ("statement", "after"),
    [
        pytest.param(f'FROM "{TABLE}" {WHERE} SET c = 1', {"c": {"N": "1"}, "d": {"S": "x"}}, id="set"),
        pytest.param(
            f"FROM {TABLE} {WHERE} SET c = 2 SET e = 'y'",
            {"c": {"N": "2"}, "d": {"S": "x"}, "e": {"S": "y"}},
            id="two-sets",
        ),
        pytest.param(f"FROM {TABLE} {WHERE} REMOVE d", {"c": {"N": "0"}}, id="remove"),
        pytest.param(f"FROM {TABLE} {WHERE} SET c = c + 5 REMOVE d", {"c": {"N": "5"}}, id="set-and-remove"),
    ],
)
def test_from_first_update_runs_as_an_update(
    ep: ThreadedEndpoint, item: None, statement: str, after: dict[str, Any]
) -> None:
    assert wire(ep, "ExecuteStatement", {"Statement": statement}) == (200, {"Items": []})
    assert stored(ep) == {**KEY, **after}


def test_from_first_update_in_batches_and_transactions(ep: ThreadedEndpoint, item: None) -> None:
    status, body = wire(ep, "BatchExecuteStatement", {"Statements": [{"Statement": f"FROM {TABLE} {WHERE} SET c = 7"}]})
    assert (status, body["Responses"][0].get("Error")) == (200, None)
    assert stored(ep)["c"] == {"N": "7"}
    tx = {"TransactStatements": [{"Statement": f"FROM {TABLE} {WHERE} SET c = 8"}]}
    assert wire(ep, "ExecuteTransaction", tx)[0] == 200
    assert stored(ep)["c"] == {"N": "8"}
    returning = {"Statement": f"FROM {TABLE} {WHERE} SET c = 9 RETURNING MODIFIED NEW *"}
    assert wire(ep, "ExecuteStatement", returning) == (200, {"Items": [{"c": {"N": "9"}}]})


# -- class 6: PartiQL's grammar, worded as the service words it ------------------------------------------------
MALFORMED = "Statement wasn't well formed, can't be processed: "
GRAMMAR = [
    case(f"SELECT * FROM {TABLE} # a comment", VALIDATION, MALFORMED, id="hash-comment"),
    case(f"SELECT * FROM {TABLE} /* open", VALIDATION, MALFORMED, id="unterminated-block-comment"),
    case(f"SELECT * FROM {TABLE} AS t {WHERE}", VALIDATION, "Aliasing is not supported", id="table-alias"),
    case(f"SELECT c AS x FROM {TABLE} {WHERE}", VALIDATION, "Aliasing is not supported", id="column-alias"),
]


@pytest.mark.parametrize(("statement", "code", "message"), GRAMMAR)
def test_partiql_grammar_messages(ep: ThreadedEndpoint, statement: str, code: str, message: str) -> None:
    assert refused(ep, "ExecuteStatement", {"Statement": statement}) == (code, message)


@pytest.mark.parametrize(
    ("test", "found"),
    [
        pytest.param("attribute_exists(ss) = true", True, id="exists-true"),
        pytest.param("attribute_exists(ss) = false", False, id="exists-false"),
        pytest.param("attribute_exists(zz) = true", False, id="missing-true"),
        pytest.param("attribute_not_exists(zz) <> false", True, id="not-exists-not-false"),
        pytest.param("begins_with(d, 'x') = TRUE", True, id="begins-with-true"),
    ],
)
def test_a_predicate_compared_with_a_boolean_is_accepted(
    ep: ThreadedEndpoint, item: None, test: str, found: bool
) -> None:
    assert (
        wire(
            ep,
            "UpdateItem",
            {
                "TableName": TABLE,
                "Key": KEY,
                "UpdateExpression": "SET ss = :s",
                "ExpressionAttributeValues": {":s": {"SS": ["x"]}},
            },
        )[0]
        == 200
    )
    status, body = wire(ep, "ExecuteStatement", {"Statement": f"SELECT pk FROM {TABLE} {WHERE} AND {test}"})
    assert (status, body["Items"]) == (200, [{"pk": {"S": "a"}}] if found else [])


# -- class 1 (nested members) and class 8: the model's constraints at every depth ------------------------------
# Source: dynalite's tests recorded against the service (paths such as 'queryFilter.a.member.comparisonOperator',
# 'provisionedThroughput.readCapacityUnits', 'globalSecondaryIndexes.1.member.projection.projectionType', and the
# enum sets in the service's order); issue 45 for the operator name in the wrong case. Enum sets the recorded tests
# do not show (StreamViewType, AttributeAction) are printed in the model's order: a choice.
OPERATORS = "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"
ONE = "1 validation error detected: "


def new_table(**over: Any) -> dict[str, Any]:
    return {
        "TableName": "tab2",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
        **over,
    }


EQ_A = {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}
NESTED = [
    case(
        "Query",
        {"TableName": TABLE, "KeyConditions": {"pk": {**EQ_A, "ComparisonOperator": "eq"}}},
        VALIDATION,
        f"{ONE}Value 'eq' at 'keyConditions.pk.member.comparisonOperator' failed to satisfy constraint: Member must "
        f"satisfy enum value set: {OPERATORS}",
        id="key-condition-operator-case",
    ),
    case(
        "PutItem",
        {**put(), "Expected": {"a": {**EQ_A, "ComparisonOperator": "eq"}}},
        VALIDATION,
        f"{ONE}Value 'eq' at 'expected.a.member.comparisonOperator' failed to satisfy constraint: Member must "
        f"satisfy enum value set: {OPERATORS}",
        id="expected-operator-case",
    ),
    case(
        "Query",
        {"TableName": TABLE, "KeyConditions": {"pk": EQ_A}, "QueryFilter": {"a": {}}},
        VALIDATION,
        f"{ONE}Value null at 'queryFilter.a.member.comparisonOperator' failed to satisfy constraint: Member must not "
        "be null",
        id="filter-without-operator",
    ),
    case(
        "CreateTable",
        new_table(BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}),
        VALIDATION,
        f"{ONE}Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have "
        "value greater than or equal to 1",
        id="capacity-units-range",
    ),
    case(
        "CreateTable",
        new_table(
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "gsi",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "abc"},
                }
            ],
        ),
        VALIDATION,
        f"{ONE}Value 'abc' at 'globalSecondaryIndexes.1.member.projection.projectionType' failed to satisfy "
        "constraint: Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]",
        id="projection-type-enum",
    ),
    case(
        "Scan",
        {"TableName": TABLE, "Segment": 1000000, "TotalSegments": 5},
        VALIDATION,
        f"{ONE}Value '1000000' at 'segment' failed to satisfy constraint: Member must have value less than or equal "
        "to 999999",
        id="segment-range",
    ),
    case(
        "UpdateItem",
        {"TableName": TABLE, "Key": KEY, "AttributeUpdates": {"c": {"Action": "put", "Value": {"S": "x"}}}},
        VALIDATION,
        f"{ONE}Value 'put' at 'attributeUpdates.c.member.action' failed to satisfy constraint: Member must satisfy "
        "enum value set: [ADD, PUT, DELETE]",
        id="attribute-action-case",
    ),
    case(
        "UpdateTimeToLive",
        {"TableName": TABLE, "TimeToLiveSpecification": {"Enabled": True}},
        VALIDATION,
        f"{ONE}Value null at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must not "
        "be null",
        id="ttl-attribute-required",
    ),
    case(
        "Scan",
        {"TableName": TABLE, "Select": "ALL", "Limit": 0, "Segment": -1, "TotalSegments": 2},
        VALIDATION,
        "3 validation errors detected: Value 'ALL' at 'select' failed to satisfy constraint: Member must satisfy "
        "enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]; Value '0' at "
        "'limit' failed to satisfy constraint: Member must have value greater than or equal to 1; Value '-1' at "
        "'segment' failed to satisfy constraint: Member must have value greater than or equal to 0",
        id="several-in-one",
    ),
    # class 12: Tags and TagKeys are required (dynalite's tests record the service)
    case(
        "TagResource",
        {"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tab1"},
        VALIDATION,
        f"{ONE}Value null at 'tags' failed to satisfy constraint: Member must not be null",
        id="tags-required",
    ),
    case(
        "UntagResource",
        {"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/tab1"},
        VALIDATION,
        f"{ONE}Value null at 'tagKeys' failed to satisfy constraint: Member must not be null",
        id="tag-keys-required",
    ),
]


@pytest.mark.parametrize(("op", "req", "code", "message"), NESTED)
def test_nested_constraints_are_reported_in_the_envelope(
    ep: ThreadedEndpoint, op: str, req: dict[str, Any], code: str, message: str
) -> None:
    assert refused(ep, op, req) == (code, message)


# -- class 7: key conditions (issue 45; dynalite's recorded tests for a value before the key) --------------------
def query(expression: str, **values: Any) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "KeyConditionExpression": expression,
        "ExpressionAttributeValues": {f":{k}": v for k, v in values.items()},
    }


INCORRECT = "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: "
KEY_CONDITIONS = [
    case(
        "Query",
        query("pk = :p AND sk < :v", p={"S": "a"}, v={"BOOL": True}),
        VALIDATION,
        f"{INCORRECT}<, operand type: BOOL",
        id="lt-bool",
    ),
    case(
        "Query",
        query("pk = :p AND sk >= :v", p={"S": "a"}, v={"NULL": True}),
        VALIDATION,
        f"{INCORRECT}>=, operand type: NULL",
        id="ge-null",
    ),
    case(
        "Query",
        query("pk = :p AND sk = :v AND c = :c", p={"S": "a"}, v={"S": "x"}, c={"S": "y"}),
        VALIDATION,
        "The number of query conditions (3) exceeds the number of key attributes defined in the schema (2)",
        id="three-conditions",
    ),
]


@pytest.mark.parametrize(("op", "req", "code", "message"), KEY_CONDITIONS)
def test_key_condition_refusals(ep: ThreadedEndpoint, op: str, req: dict[str, Any], code: str, message: str) -> None:
    assert refused(ep, op, req) == (code, message)


def test_an_unordered_operand_is_refused_after_the_same_text_was_parsed(ep: ThreadedEndpoint) -> None:
    """The endpoint remembers a key condition's parse by its text: a BOOL given later is still refused."""
    assert wire(ep, "Query", query("pk = :p AND sk < :v", p={"S": "a"}, v={"S": "x"}))[0] == 200
    bool_value = query("pk = :p AND sk < :v", p={"S": "a"}, v={"BOOL": True})
    assert refused(ep, "Query", bool_value) == (VALIDATION, f"{INCORRECT}<, operand type: BOOL")


@pytest.mark.parametrize(
    ("expression", "found"),
    [
        pytest.param(":p = pk", True, id="hash-value-first"),
        pytest.param(":p = pk AND :v = sk", True, id="both-value-first"),
        pytest.param("pk = :p AND :v < sk", True, id="lt-value-first"),
        pytest.param("pk = :p AND :v > sk", False, id="gt-value-first"),
    ],
)
def test_a_value_before_the_key_is_accepted(ep: ThreadedEndpoint, item: None, expression: str, found: bool) -> None:
    values = {":p": {"S": "a"}, ":v": {"S": "a"} if "<" in expression else {"S": "b"}}
    req = {"TableName": TABLE, "KeyConditionExpression": expression, "ExpressionAttributeValues": values}
    if "AND" not in expression:
        req["ExpressionAttributeValues"] = {":p": {"S": "a"}}
    status, body = wire(ep, "Query", req)
    assert (status, body["Count"]) == (200, 1 if found else 0)


def test_a_gap_in_a_multi_attribute_sort_key_is_named_as_the_service_names_it(ep: ThreadedEndpoint) -> None:
    """Issue 45: 'RANGE key attributes b must have equality conditions ...', not 'missed key schema element'."""
    attrs = ["g", "a", "b", "c"]
    table = new_table(
        TableName="multi",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ["pk", *attrs]],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "gsi",
                "KeySchema": [
                    {"AttributeName": "g", "KeyType": "HASH"},
                    *({"AttributeName": n, "KeyType": "RANGE"} for n in attrs[1:]),
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    assert wire(ep, "CreateTable", table)[0] == 200
    req = {
        "TableName": "multi",
        "IndexName": "gsi",
        "KeyConditionExpression": "g = :v AND a = :v AND c = :v",
        "ExpressionAttributeValues": {":v": {"S": "x"}},
    }
    assert refused(ep, "Query", req) == (
        VALIDATION,
        "RANGE key attributes b must have equality conditions specified in the query because a condition is present "
        "on key attribute c",
    )
    req["KeyConditionExpression"] = "g = :v AND c = :v"
    assert refused(ep, "Query", req)[1].startswith("RANGE key attributes a, b must have equality conditions")


# -- class 9: a number's size as the service counts it ---------------------------------------------------------
# 3.14159 is 03 14 15 90 in base 100: 1 + 4 bytes (dynalite's tests, recorded against the service's 400 KB limit).
# pk, sk and n name 5 bytes, their values 1 + 1 + 5, "pad" 3: an item of 409,600 bytes takes a pad of 409,585.
@pytest.mark.parametrize(("pad", "status"), [(409585, 200), (409586, 400)], ids=["409600-bytes", "409601-bytes"])
def test_the_item_size_counts_a_numbers_digits_in_pairs(ep: ThreadedEndpoint, pad: int, status: int) -> None:
    status_, body = wire(ep, "PutItem", put(n={"N": "3.14159"}, pad={"S": "x" * pad}))
    assert status_ == status, body
    if status == 400:
        assert body["message"] == "Item size has exceeded the maximum allowed size"
    else:
        assert wire(ep, "DeleteItem", {"TableName": TABLE, "Key": KEY})[0] == 200


def test_set_members_are_returned_by_their_bytes(ep: ThreadedEndpoint) -> None:
    """Issue 45: the service returns a string or binary set's members sorted by their bytes, as written or added."""
    given = {"ss": {"SS": ["b", "é", "a", "Z"]}, "bs": {"BS": ["Ag==", "AQ==", "/w=="]}}
    assert wire(ep, "PutItem", put(**given))[0] == 200
    update = {
        "TableName": TABLE,
        "Key": KEY,
        "UpdateExpression": "ADD ss :s",
        "ExpressionAttributeValues": {":s": {"SS": ["c", "A"]}},
        "ReturnValues": "UPDATED_NEW",
    }
    assert wire(ep, "UpdateItem", update) == (200, {"Attributes": {"ss": {"SS": ["A", "Z", "a", "b", "c", "é"]}}})
    got = stored(ep)
    assert (got["ss"], got["bs"]) == ({"SS": ["A", "Z", "a", "b", "c", "é"]}, {"BS": ["AQ==", "Ag==", "/w=="]})
    assert wire(ep, "DeleteItem", {"TableName": TABLE, "Key": KEY})[0] == 200


# -- class 11: transactions ------------------------------------------------------------------------------------
def test_a_transaction_with_an_item_over_400_kb_names_the_item_size(ep: ThreadedEndpoint) -> None:
    """Issue 45: a 5 MB Put answers the item-size message, not the transaction-size one."""
    big = {"Put": {"TableName": TABLE, "Item": {**KEY, "big": {"S": "x" * (5 * 1024 * 1024)}}}}
    assert refused(ep, "TransactWriteItems", {"TransactItems": [big]}) == (
        VALIDATION,
        "Item size has exceeded the maximum allowed size",
    )


@pytest.mark.parametrize("key", [{"pk": {"N": "1"}, "sk": {"S": "b"}}, {}], ids=["key-of-the-wrong-type", "empty-key"])
def test_a_misfit_key_cancels_the_transaction_with_a_validation_reason(ep: ThreadedEndpoint, key: Any) -> None:
    actions = [{"Put": {"TableName": TABLE, "Item": put()["Item"]}}, {"Delete": {"TableName": TABLE, "Key": key}}]
    status, body = wire(ep, "TransactWriteItems", {"TransactItems": actions})
    assert (status, body["__type"].split("#")[1]) == (400, "TransactionCanceledException")
    assert [r["Code"] for r in body["CancellationReasons"]] == ["None", "ValidationError"]
    assert wire(ep, "GetItem", {"TableName": TABLE, "Key": KEY}) == (200, {})


# -- class 9: an empty binary key is named as binary on every operation (issue 45) ----------------------------
EMPTY_BINARY = (
    "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty "
    "binary value. Key: pk"
)
EMPTY_B = {"pk": {"B": ""}}


@pytest.fixture(scope="module")
def binary_table(ep: ThreadedEndpoint) -> str:
    table = new_table(TableName="binkeys", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "B"}])
    assert wire(ep, "CreateTable", table)[0] == 200
    return "binkeys"


@pytest.mark.parametrize(
    ("op", "req"),
    [
        ("GetItem", {"Key": EMPTY_B}),
        ("DeleteItem", {"Key": EMPTY_B}),
        (
            "UpdateItem",
            {"Key": EMPTY_B, "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}},
        ),
        ("PutItem", {"Item": EMPTY_B}),
        ("Query", {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"B": ""}}}),
        ("Scan", {"ExclusiveStartKey": EMPTY_B}),
        ("BatchGetItem", {"RequestItems": {"binkeys": {"Keys": [EMPTY_B]}}}),
        ("BatchWriteItem", {"RequestItems": {"binkeys": [{"DeleteRequest": {"Key": EMPTY_B}}]}}),
        ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "binkeys", "Key": EMPTY_B}}]}),
        ("TransactWriteItems", {"TransactItems": [{"Delete": {"TableName": "binkeys", "Key": EMPTY_B}}]}),
    ],
)
def test_an_empty_binary_key_is_named_binary(
    ep: ThreadedEndpoint, binary_table: str, op: str, req: dict[str, Any]
) -> None:
    if "RequestItems" not in req and "TransactItems" not in req:
        req = {"TableName": binary_table, **req}
    assert refused(ep, op, req) == (VALIDATION, EMPTY_BINARY)
