"""SigV4 verification: botocore-signed requests pass; wrong key or secret gets the service's error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread
from tests.unit.local.conftest import CONFIG, error_of


@pytest.fixture
def signed_endpoint() -> Iterator[ThreadedEndpoint]:
    ep = serve_in_thread(capacity=None, verify_signatures=True, credentials={"AKIDLOCAL": "s3cret"})
    try:
        yield ep
    finally:
        ep.stop()


def client_for(ep: ThreadedEndpoint, key: str, secret: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=ep.url,
        config=CONFIG,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
    )


def test_correct_signature_accepted(signed_endpoint: ThreadedEndpoint) -> None:
    assert client_for(signed_endpoint, "AKIDLOCAL", "s3cret").list_tables()["TableNames"] == []


@pytest.mark.parametrize(
    ("key", "secret", "code", "message"),
    [
        ("UNKNOWN", "s3cret", "UnrecognizedClientException", "The security token included in the request is invalid."),
        (
            "AKIDLOCAL",
            "wrong",
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. Check your AWS "
            "Secret Access Key and signing method. Consult the service documentation for details.",
        ),
    ],
)
def test_rejected_signatures(signed_endpoint: ThreadedEndpoint, key: str, secret: str, code: str, message: str) -> None:
    with pytest.raises(ClientError) as exc:
        client_for(signed_endpoint, key, secret).list_tables()
    assert error_of(exc) == (400, code, message)
    assert signed_endpoint.stats()["tables"]["-"]["ListTables"]["error"] == 1


def test_verifier_repr_hides_secrets() -> None:
    from dynlocust.local.auth import SigV4Verifier

    assert "s3cret" not in repr(SigV4Verifier({"AKIDLOCAL": "s3cret"}))
