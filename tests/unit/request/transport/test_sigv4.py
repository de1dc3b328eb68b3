"""SigV4: byte-identical to botocore's SigV4Auth (the oracle) for the same request and timestamp."""

from __future__ import annotations

import datetime
import json
import random
import string
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.credentials import Credentials, RefreshableCredentials
from botocore.exceptions import NoCredentialsError

from dynlocust.dynamodb import derive_signing_key
from dynlocust.request.transport.boto3 import make_client
from dynlocust.request.transport.sigv4 import (
    CredentialSource,
    FrozenCredentials,
    SigV4Signer,
    host_header,
)

REGIONS = ["us-east-1", "eu-west-1", "ap-southeast-2", "cn-north-1", "us-gov-west-1", "local"]
ENDPOINTS = [
    "http://127.0.0.1:8000",
    "https://dynamodb.{region}.amazonaws.com",
    "https://DynamoDB.{region}.amazonaws.com:443",
    "http://localhost",
    "https://example.test:8443/",
]
OPERATIONS = ["PutItem", "GetItem", "Query", "Scan", "BatchWriteItem", "TransactWriteItems", "DescribeTable"]


def random_body(rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return b""
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))
    text = "".join(rng.choice(string.printable + "é漢") for _ in range(rng.randrange(1, 500)))
    if kind == 2:
        return json.dumps({"TableName": "t", "Item": {"pk": {"S": text}}}, ensure_ascii=rng.random() < 0.5).encode()
    return text.encode()


def random_token(rng: random.Random) -> str | None:
    if rng.random() < 0.4:
        return None
    alphabet = string.ascii_letters + string.digits + "+/="
    token = "".join(rng.choice(alphabet) for _ in range(rng.randrange(16, 400)))
    if rng.random() < 0.2:  # botocore collapses whitespace inside a signed header value
        token = f" {token[:10]}  {token[10:]} "
    return token


def oracle_authorization(
    monkeypatch: pytest.MonkeyPatch,
    creds: Credentials,
    region: str,
    url: str,
    target: str,
    body: bytes,
    when: datetime.datetime,
) -> tuple[str, dict[str, str]]:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    request = AWSRequest(
        method="POST",
        url=url,
        data=body,
        headers={"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.0"},
    )
    SigV4Auth(creds, "dynamodb", region).add_auth(request)
    return request.headers["Authorization"], {k: v for k, v in request.headers.items()}


def test_signature_is_byte_identical_to_botocore_over_random_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20261130)
    for case in range(300):
        region = rng.choice(REGIONS)
        url = rng.choice(ENDPOINTS).format(region=region)
        target = "DynamoDB_20120810." + rng.choice(OPERATIONS)
        body = random_body(rng)
        token = random_token(rng)
        secret = "".join(rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
        access_key = "AKIA" + "".join(rng.choice(string.ascii_uppercase) for _ in range(16))
        when = datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=rng.randrange(10**9))
        expected, oracle_headers = oracle_authorization(
            monkeypatch, Credentials(access_key, secret, token), region, url, target, body, when
        )
        signer = SigV4Signer(CredentialSource(Credentials(access_key, secret, token)), url, region)
        headers = dict(signer.sign(target, body, when.strftime("%Y%m%dT%H%M%SZ")))
        assert headers["Authorization"] == expected, f"case {case}: {url} {region} {target} token={bool(token)}"
        assert headers["X-Amz-Date"] == oracle_headers["X-Amz-Date"]
        assert headers.get("X-Amz-Security-Token") == oracle_headers.get("X-Amz-Security-Token")
        lines = signer.header_lines(target, body, when.strftime("%Y%m%dT%H%M%SZ"))
        assert lines == "".join(f"{name}: {value}\r\n" for name, value in headers.items()), f"case {case}"


def test_signature_matches_what_a_real_botocore_client_sends() -> None:
    """No patching: capture the request a botocore client signs and re-sign it at its own timestamp."""
    client = make_client(
        "http://127.0.0.1:9",
        region="eu-west-1",
        connect_timeout=1,
        read_timeout=1,
        pool_size=1,
        credentials=("AK", "SK"),
    )
    seen: list[Any] = []

    class Body:
        def stream(self, **_kwargs: Any) -> Any:
            return iter([b"{}"])

    def capture(request: Any, **_kwargs: Any) -> AWSResponse:
        seen.append(request)
        return AWSResponse(request.url, 200, {}, Body())  # answers without a network round trip

    client.meta.events.register("before-send.dynamodb", capture)
    client.put_item(TableName="tbl", Item={"pk": {"S": "é"}, "b": {"B": b"\x00\xff"}})
    client.query(TableName="tbl", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "x"}})
    assert len(seen) == 2
    signer = SigV4Signer(CredentialSource(Credentials("AK", "SK")), "http://127.0.0.1:9", "eu-west-1")
    for request in seen:
        sent = {k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()}
        ours = dict(signer.sign(sent["x-amz-target"], request.body, sent["x-amz-date"]))
        assert ours["Authorization"] == sent["authorization"]


def test_signing_key_is_derived_once_per_day_and_matches_the_chain() -> None:
    signer = SigV4Signer(CredentialSource(Credentials("AK", "SK")), "http://127.0.0.1:8000", "us-east-1")
    signer.sign("DynamoDB_20120810.GetItem", b"{}", "20261130T000000Z")
    signer.sign("DynamoDB_20120810.GetItem", b"{}", "20261130T235959Z")
    assert list(signer._keys) == [("SK", "20261130")]
    signer.sign("DynamoDB_20120810.GetItem", b"{}", "20261201T000000Z")
    assert len(signer._keys) == 2
    assert signer.signing_key("SK", "20261201") == derive_signing_key("SK", "20261201", "us-east-1", "dynamodb")


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000"),
        ("http://127.0.0.1:80", "127.0.0.1"),
        ("https://Dynamodb.us-east-1.amazonaws.com:443/", "dynamodb.us-east-1.amazonaws.com"),
        ("https://h.test:80", "h.test:80"),
        ("http://[::1]:8000", "[::1]:8000"),
    ],
)
def test_host_header_follows_botocore(url: str, host: str) -> None:
    assert host_header(url) == host == botocore.auth._host_from_url(url)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_refreshable_credentials_are_refreshed_before_expiry() -> None:
    """botocore's RefreshableCredentials refresh inside get_frozen_credentials when expiry is near."""
    issued: list[int] = []

    def refresh() -> dict[str, str]:
        issued.append(1)
        n = len(issued)
        expiry = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=5)  # inside the window
        return {"access_key": f"AK{n}", "secret_key": f"SK{n}", "token": f"T{n}", "expiry_time": expiry.isoformat()}

    creds = RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")
    clock = Clock()
    source = CredentialSource(creds, clock=clock)
    first = source.get()
    assert source.get() is first  # re-checked at most once a second
    clock.now += 1.5
    second = source.get()
    assert second.access_key != first.access_key and second.token != first.token


def test_static_credentials_are_frozen_once() -> None:
    source = CredentialSource(Credentials("AK", "SK"))
    assert source.get() is source.get()
    assert source.get() == FrozenCredentials("AK", "SK", None)


def test_missing_credentials_raise_botocore_no_credentials_error() -> None:
    signer = SigV4Signer(CredentialSource(None), "http://127.0.0.1:8000", "us-east-1")
    with pytest.raises(NoCredentialsError):
        signer.sign("DynamoDB_20120810.GetItem", b"{}")


def test_secrets_never_appear_in_reprs() -> None:
    frozen = FrozenCredentials("AKID", "very-secret-key", "session-token-value")
    source = CredentialSource(Credentials("AKID", "very-secret-key", "session-token-value"))
    source.get()
    signer = SigV4Signer(source, "http://127.0.0.1:8000", "us-east-1")
    for text in (repr(frozen), str(frozen), repr(source), repr(signer)):
        assert "very-secret-key" not in text and "session-token-value" not in text
