"""Resource-based policies over HTTP: each step is a request and what the service answers, as moto's aws_verified
tests record it (tests/test_dynamodb/test_dynamodb_resource_policy.py, run against the service)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from tests.unit.local.conftest import wire

POLICY_NOT_FOUND = "com.amazonaws.dynamodb.v20120810#PolicyNotFoundException"
NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: "
TABLE = "pol"


@pytest.fixture
def ep() -> Iterator[tuple[ThreadedEndpoint, str]]:
    endpoint = serve_in_thread(capacity=None)
    try:
        status, body = wire(
            endpoint,
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        assert status == 200
        yield endpoint, body["TableDescription"]["TableArn"]
    finally:
        endpoint.stop()


def policy(action: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": [action]}]})


def put(ep: ThreadedEndpoint, arn: str, action: str, expected: str | None = None) -> tuple[int, Any]:
    req = {"ResourceArn": arn, "Policy": policy(action)}
    if expected is not None:
        req["ExpectedRevisionId"] = expected
    return wire(ep, "PutResourcePolicy", req)


def test_revisions_and_their_checks(ep: tuple[ThreadedEndpoint, str]) -> None:
    endpoint, arn = ep
    # test_get_resource_policy_from_resource_without
    assert wire(endpoint, "GetResourcePolicy", {"ResourceArn": arn}) == (
        400,
        {"__type": POLICY_NOT_FOUND, "message": NOT_FOUND + arn},
    )
    # test_put_resource_policy_against_norevision, test_put_resource_policy_multiple_times: the same policy again
    # is a no-op; another one is a later revision (timestamps, compared as strings)
    status, first = put(endpoint, arn, "dynamodb:*", "NO_POLICY")
    assert status == 200
    assert put(endpoint, arn, "dynamodb:*") == (200, first)
    status, second = put(endpoint, arn, "dynamodb:PutItem", first["RevisionId"])
    assert status == 200
    assert second["RevisionId"] > first["RevisionId"]
    assert wire(endpoint, "GetResourcePolicy", {"ResourceArn": arn}) == (
        200,
        {"Policy": policy("dynamodb:PutItem"), "RevisionId": second["RevisionId"]},
    )
    # test_put_resource_policy_against_previous_revision, ..._against_norevision_when_revision_exists
    assert put(endpoint, arn, "dynamodb:GetItem", first["RevisionId"]) == (
        400,
        {
            "__type": POLICY_NOT_FOUND,
            "message": NOT_FOUND + f"Requested update for policy with revision id {first['RevisionId']}, but the "
            f"policy associated to target table {TABLE} has revision id {second['RevisionId']}.",
        },
    )
    assert put(endpoint, arn, "dynamodb:GetItem", "NO_POLICY") == (
        400,
        {
            "__type": POLICY_NOT_FOUND,
            "message": NOT_FOUND + f"Requested policy update expecting none to be present for table {TABLE}, but a "
            f"policy exists with revision id {second['RevisionId']}.",
        },
    )
    # test_delete_resource_policy_with_revision
    assert (
        wire(endpoint, "DeleteResourcePolicy", {"ResourceArn": arn, "ExpectedRevisionId": second["RevisionId"]})[0]
        == 200
    )
    assert wire(endpoint, "GetResourcePolicy", {"ResourceArn": arn})[0] == 400


@pytest.mark.parametrize("op", ["PutResourcePolicy", "GetResourcePolicy", "DeleteResourcePolicy"])
def test_a_missing_table_is_named(ep: tuple[ThreadedEndpoint, str], op: str) -> None:
    # test_put_resource_policy_unknown_resource, test_get/delete_resource_policy_from_unknown_resource
    endpoint, arn = ep
    req = {"ResourceArn": arn + "unknown", "Policy": policy("dynamodb:*")}
    if op != "PutResourcePolicy":
        del req["Policy"]
    assert wire(endpoint, op, req) == (
        400,
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
            "message": f"Requested resource not found: Table: {TABLE}unknown not found",
        },
    )


@pytest.mark.parametrize(
    ("op", "req", "missing"),
    [
        pytest.param(
            "PutResourcePolicy", {"ConfirmRemoveSelfResourceAccess": True}, ["resourceArn", "policy"], id="put"
        ),
        pytest.param("GetResourcePolicy", {}, ["resourceArn"], id="get"),
        pytest.param("DeleteResourcePolicy", {"ExpectedRevisionId": "1"}, ["resourceArn"], id="delete"),
    ],
)
def test_required_members(ep: tuple[ThreadedEndpoint, str], op: str, req: dict[str, Any], missing: list[str]) -> None:
    # the model's required members, worded as the service words a missing one (the fuzzer found the missing Policy
    # answered HTTP 500)
    n = len(missing)
    sentences = [f"Value null at '{m}' failed to satisfy constraint: Member must not be null" for m in missing]
    assert wire(ep[0], op, req) == (
        400,
        {
            "__type": "com.amazon.coral.validate#ValidationException",
            "message": f"{n} validation error{'s' if n > 1 else ''} detected: " + "; ".join(sentences),
        },
    )
