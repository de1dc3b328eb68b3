"""Issue 34, "Length and size limits": nested members' lengths, and the batch limits, as the service checks them.

Each case is one raw request over HTTP to a real in-thread endpoint and the exact (status, body) the service
answers: the limits are the service model's (API reference "Length Constraints"), the wordings those recorded
against the service by dynalite's and ScyllaDB Alternator's tests (dynlocust/local/validation.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.local.conftest import wire

VALIDATION = "com.amazon.coral.validate#ValidationException"
KEY = {"pk": {"S": "a"}, "sk": {"N": "1"}}
HASH = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFS = [{"AttributeName": "pk", "AttributeType": "S"}]
ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/tab1"
PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"


def new_table(**over: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "TableName": "t_new",
        "KeySchema": HASH,
        "AttributeDefinitions": DEFS,
        "BillingMode": "PAY_PER_REQUEST",
    }
    req.update(over)
    return req


def gsi(name: str, **over: Any) -> list[dict[str, Any]]:
    return [{"IndexName": name, "KeySchema": HASH, "Projection": {"ProjectionType": "ALL"}, **over}]


def one(*problems: str) -> str:
    n = len(problems)
    return f"{n} validation error{'s' if n > 1 else ''} detected: " + "; ".join(problems)


def failed(value: str | None, path: str, rule: str) -> str:
    shown = "null" if value is None else f"'{value}'"
    return f"Value {shown} at '{path}' failed to satisfy constraint: {rule}"


LONGEST = "Member must have length less than or equal to"
SHORTEST = "Member must have length greater than or equal to"
LONG_KEY = "k" * 256
LONG_NAME = "n" * 65536


LENGTH_CASES = [
    # IndexName: "Minimum length of 3. Maximum length of 255. Pattern: [a-zA-Z0-9_.-]+"
    (
        "CreateTable",
        new_table(GlobalSecondaryIndexes=gsi("ab")),
        one(failed("ab", "globalSecondaryIndexes.1.member.indexName", f"{SHORTEST} 3")),
    ),
    (
        "CreateTable",
        new_table(GlobalSecondaryIndexes=gsi("i" * 256)),
        one(failed("i" * 256, "globalSecondaryIndexes.1.member.indexName", f"{LONGEST} 255")),
    ),
    (
        "CreateTable",
        new_table(GlobalSecondaryIndexes=gsi("h;")),
        one(
            failed("h;", "globalSecondaryIndexes.1.member.indexName", f"{SHORTEST} 3"),
            failed("h;", "globalSecondaryIndexes.1.member.indexName", PATTERN),
        ),
    ),
    (
        "Query",
        {
            "TableName": "tab1",
            "IndexName": "a b",
            "KeyConditionExpression": "pk = :v",
            "ExpressionAttributeValues": {":v": {"S": "a"}},
        },
        one(failed("a b", "indexName", PATTERN)),
    ),
    (
        "Scan",
        {"TableName": "tab1", "IndexName": "ix"},
        one(failed("ix", "indexName", f"{SHORTEST} 3")),
    ),
    (
        "UpdateTable",
        {"TableName": "tab1", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "x!"}}]},
        one(
            failed("x!", "globalSecondaryIndexUpdates.1.member.delete.indexName", f"{SHORTEST} 3"),
            failed("x!", "globalSecondaryIndexUpdates.1.member.delete.indexName", PATTERN),
        ),
    ),
    # key attribute names: "Minimum length of 1. Maximum length of 255." (KeySchemaElement, AttributeDefinition)
    (
        "CreateTable",
        new_table(
            KeySchema=[{"AttributeName": LONG_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": LONG_KEY, "AttributeType": "S"}],
        ),
        one(
            failed(LONG_KEY, "keySchema.1.member.attributeName", f"{LONGEST} 255"),
            failed(LONG_KEY, "attributeDefinitions.1.member.attributeName", f"{LONGEST} 255"),
        ),
    ),
    (
        "CreateTable",
        new_table(
            AttributeDefinitions=[*DEFS, {"AttributeName": "g", "AttributeType": "S"}],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "gsi1",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [LONG_KEY]},
                }
            ],
        ),
        one(failed(LONG_KEY, "globalSecondaryIndexes.1.member.projection.nonKeyAttributes.1.member", f"{LONGEST} 255")),
    ),
    # Tag: Key "Minimum length of 1. Maximum length of 128.", Value "Minimum length of 0. Maximum length of 256."
    (
        "CreateTable",
        new_table(Tags=[{"Key": "k" * 129, "Value": "v" * 257}]),
        one(
            failed("k" * 129, "tags.1.member.key", f"{LONGEST} 128"),
            failed("v" * 257, "tags.1.member.value", f"{LONGEST} 256"),
        ),
    ),
    (
        "TagResource",
        {"ResourceArn": ARN, "Tags": [{"Key": "", "Value": "v"}]},
        one(failed("", "tags.1.member.key", f"{SHORTEST} 1")),
    ),
    # any other attribute name: "Maximum length of 65535" (65536, the documentation's "64 KB", is refused)
    (
        "PutItem",
        {"TableName": "tab1", "Item": {**KEY, LONG_NAME: {"S": "v"}}},
        one(f"Value at 'item' failed to satisfy constraint: Map keys must satisfy constraint: [{LONGEST} 65535]"),
    ),
    (
        "GetItem",
        {"TableName": "tab1", "Key": KEY, "ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": LONG_NAME}},
        one(
            "Value at 'expressionAttributeNames' failed to satisfy constraint: Map value must satisfy constraint: "
            f"[{LONGEST} 65535]"
        ),
    ),
    (
        "GetItem",
        {"TableName": "tab1", "Key": KEY, "AttributesToGet": [LONG_NAME]},
        one(failed(LONG_NAME, "attributesToGet.1.member", f"{LONGEST} 65535")),
    ),
    (
        "UpdateItem",
        {"TableName": "tab1", "Key": KEY, "AttributeUpdates": {LONG_NAME: {"Action": "PUT", "Value": {"S": "v"}}}},
        one(
            "Value at 'attributeUpdates' failed to satisfy constraint: Map keys must satisfy constraint: "
            f"[{LONGEST} 65535]"
        ),
    ),
    # BatchWriteItem: 1 to 25 requests per table is the model's constraint, both its rules named
    (
        "BatchWriteItem",
        {
            "RequestItems": {
                "tab1": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": str(i)}}}} for i in range(26)]
            }
        },
        one(
            "Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
            f"[{LONGEST} 25, {SHORTEST} 1]"
        ),
    ),
    (
        "BatchWriteItem",
        {"RequestItems": {"tab1": []}},
        one(  # the map echoed as Java prints it (issue 45)
            "Value '{tab1=[]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
            f"[{LONGEST} 25, {SHORTEST} 1]"
        ),
    ),
]


@pytest.mark.parametrize(("op", "req", "message"), LENGTH_CASES)
def test_member_length_limits(endpoint: Any, tab1: str, op: str, req: dict[str, Any], message: str) -> None:
    if op == "TagResource":
        req = {**req, "ResourceArn": tab1}
    status, body = wire(endpoint, op, req)
    assert (status, body["__type"]) == (400, VALIDATION)
    if message.startswith("1 validation"):
        assert body["message"] == message
    else:  # several problems: the service lists them in no fixed order
        head, _, rest = message.partition(": ")
        got_head, _, got_rest = body["message"].partition(": ")
        assert got_head == head
        assert sorted(got_rest.split("; ")) == sorted(rest.split("; "))


def test_each_length_limit_includes_its_bound(endpoint: Any, tab1: str) -> None:
    """255-character key attribute and index names, 128/256-character tags and 65,535-character attribute names
    are accepted; one character more is refused."""

    def table(key_name: str, index_name: str, tag_key: str) -> dict[str, Any]:
        return new_table(
            KeySchema=[{"AttributeName": key_name, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": key_name, "AttributeType": "S"}],
            GlobalSecondaryIndexes=gsi(index_name, KeySchema=[{"AttributeName": key_name, "KeyType": "HASH"}]),
            Tags=[{"Key": tag_key, "Value": "v" * 256}, {"Key": "e", "Value": ""}],
        )

    for too_long in (table("k" * 256, "i" * 255, "t" * 128), table("k" * 255, "i" * 256, "t" * 128)):
        assert wire(endpoint, "CreateTable", too_long)[0] == 400
    assert wire(endpoint, "CreateTable", table("k" * 255, "i" * 255, "t" * 129))[0] == 400
    assert wire(endpoint, "CreateTable", table("k" * 255, "i" * 255, "t" * 128))[0] == 200
    longest = "n" * 65535
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": {**KEY, longest + "n": {"S": "v"}}})[0] == 400
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": {**KEY, longest: {"S": "v"}}}) == (200, {})
    got = wire(endpoint, "GetItem", {"TableName": "tab1", "Key": KEY, "AttributesToGet": [longest]})
    assert got == (200, {"Item": {longest: {"S": "v"}}})


def test_batch_write_limits_per_table_and_over_all_tables(endpoint: Any, tab1: str) -> None:
    """Over 25 in one table: the model's constraint; 25 or fewer per table but over 25 in all: the service's own
    sentence (as for BatchGetItem's 100)."""

    def puts(n: int) -> list[dict[str, Any]]:
        return [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": str(i)}}}} for i in range(n)]

    per_table = one(
        "Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
        f"[{LONGEST} 25, {SHORTEST} 1]"
    )
    assert wire(endpoint, "BatchWriteItem", {"RequestItems": {"tab1": puts(26)}}) == (
        400,
        {"__type": VALIDATION, "message": per_table},
    )
    assert wire(endpoint, "BatchWriteItem", {"RequestItems": {"tab1": puts(13), "tab2": puts(13)}}) == (
        400,
        {"__type": VALIDATION, "message": "Too many items requested for the BatchWriteItem call"},
    )
    assert wire(endpoint, "BatchWriteItem", {"RequestItems": {"tab1": puts(25)}}) == (200, {"UnprocessedItems": {}})


@pytest.mark.parametrize(
    ("tag", "what"),
    [({"Key": "ok", "Value": "#!%^&"}, "value '#!%^&'"), ({"Key": "->>;-)", "Value": "ok"}, "key '->>;-)'")],
)
def test_tags_hold_only_the_documented_characters(endpoint: Any, tab1: str, tag: dict[str, str], what: str) -> None:
    """Letters, whitespace, numbers and + - = . _ : / (Developer Guide, Tagging restrictions)."""
    status, body = wire(endpoint, "TagResource", {"ResourceArn": tab1, "Tags": [tag]})
    assert (status, body["__type"]) == (400, VALIDATION)
    assert body["message"] == (
        f"One or more parameter values were invalid: Tag {what} contains characters other than letters, "
        "whitespace, numbers and + - = . _ : /"
    )
    fine = {"Key": "Team name: ops/db_1 +=-.", "Value": "Ünïcode wörds 42"}
    assert wire(endpoint, "TagResource", {"ResourceArn": tab1, "Tags": [fine]}) == (200, {})
