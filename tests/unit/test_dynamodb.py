"""The facts module against the service's own published model (botocore's `dynamodb` service JSON) and the
SigV4 references: a fact restated wrongly here fails against a source the project does not write."""

from __future__ import annotations

import hashlib
import hmac

import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from dynlocust.dynamodb import (
    MAX_BATCH_GET,
    MAX_BATCH_WRITE,
    MAX_TRANSACT,
    SIGV4_ALGORITHM,
    derive_signing_key,
)


def _member_max(operation: str, member: str, *, nested: str | None = None) -> int:
    model = botocore.session.get_session().get_service_model("dynamodb")
    shape = model.operation_model(operation).input_shape.members[member]
    if nested is not None:
        shape = shape.value.members[nested]  # a map of structures
    return int(shape.metadata["max"])


@pytest.mark.parametrize(
    ("fact", "operation", "member", "nested"),
    [
        (MAX_BATCH_WRITE, "BatchWriteItem", "RequestItems", None),
        (MAX_BATCH_GET, "BatchGetItem", "RequestItems", None),
        (MAX_BATCH_GET, "BatchGetItem", "RequestItems", "Keys"),
        (MAX_TRANSACT, "TransactWriteItems", "TransactItems", None),
        (MAX_TRANSACT, "TransactGetItems", "TransactItems", None),
    ],
)
def test_limits_match_the_service_model(fact: int, operation: str, member: str, nested: str | None) -> None:
    assert fact == _member_max(operation, member, nested=nested)


def test_signing_key_matches_the_documented_example() -> None:
    # IAM User Guide, "Examples of how to derive a signing key for Signature Version 4".
    key = derive_signing_key("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam")
    assert key.hex() == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"


def test_signing_key_signs_as_botocore_does() -> None:
    auth = SigV4Auth(Credentials("AKID", "secret/key+1"), "dynamodb", "eu-west-1")
    request = AWSRequest(method="POST", url="https://dynamodb.eu-west-1.amazonaws.com/", data=b"{}")
    request.context["timestamp"] = "20261201T120000Z"
    string_to_sign = f"{SIGV4_ALGORITHM}\n20261201T120000Z\n20261201/eu-west-1/dynamodb/aws4_request\nabc"
    ours = hmac.new(
        derive_signing_key("secret/key+1", "20261201", "eu-west-1", "dynamodb"), string_to_sign.encode(), hashlib.sha256
    )
    assert ours.hexdigest() == auth.signature(string_to_sign, request)
