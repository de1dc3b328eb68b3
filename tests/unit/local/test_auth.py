"""SigV4 verification: botocore-signed requests pass; wrong key or secret gets the service's error."""

from __future__ import annotations

import datetime
import hashlib
import http.client
import json
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.auth
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from dynlocust.local.embedded import LocalEndpoint, ThreadedEndpoint, serve_in_thread
from tests.unit.local.conftest import CONFIG, error_of
from tests.unit.local.test_errors_and_control import raw


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


# -- issue 16, finding 5: a signature binds the body, the time, the operation and the scope -------------------------
class _Signer(SigV4Auth):
    """botocore's signer, optionally leaving headers unsigned or signing under another scope date."""

    def __init__(
        self, region: str = "us-east-1", service: str = "dynamodb", unsigned: tuple[str, ...] = (), scope_date: str = ""
    ):
        super().__init__(Credentials("AKIDLOCAL", "s3cret"), service, region)
        self.unsigned = unsigned
        self.scope_date = scope_date

    def headers_to_sign(self, request: Any) -> Any:
        headers = super().headers_to_sign(request)
        for name in self.unsigned:
            del headers[name]
        return headers

    def signature(self, string_to_sign: str, request: Any) -> str:
        stamp = request.context["timestamp"]
        if self.scope_date:
            request.context["timestamp"] = self.scope_date + stamp[8:]
        try:
            return str(super().signature(string_to_sign, request))
        finally:
            request.context["timestamp"] = stamp

    def credential_scope(self, request: Any) -> str:
        scope = super().credential_scope(request)
        return self.scope_date + scope[8:] if self.scope_date else scope

    def scope(self, request: Any) -> str:
        key_id, date, rest = str(super().scope(request)).split("/", 2)
        return f"{key_id}/{self.scope_date or date}/{rest}"


def send(
    ep: ThreadedEndpoint,
    op: str,
    body: dict[str, Any],
    signer: _Signer | None = None,
    add_after: dict[str, str] | None = None,
    add_before: dict[str, str] | None = None,
    send_body: bytes | None = None,
    path: str = "/",
    method: str = "POST",
) -> tuple[int, dict[str, Any]]:
    """Sign a request with botocore, optionally add unsigned headers or change the body after, send it raw."""
    data = json.dumps(body).encode() if method == "POST" else b""
    headers = {"Content-Type": "application/x-amz-json-1.0"}
    if op:
        headers["X-Amz-Target"] = "DynamoDB_20120810." + op
    headers.update(add_before or {})
    request = AWSRequest(method=method, url=ep.url + path, data=data, headers=headers)
    (signer or _Signer()).add_auth(request)
    final = dict(request.headers.items())
    final.update(add_after or {})
    conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=10)
    try:
        conn.request(method, path, body=send_body if send_body is not None else data, headers=final)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_signed_request_over_raw_http_is_accepted(signed_endpoint: ThreadedEndpoint) -> None:
    assert send(signed_endpoint, "ListTables", {}) == (200, {"TableNames": []})


def test_unsigned_content_hash_header_cannot_carry_a_changed_body(signed_endpoint: ThreadedEndpoint) -> None:
    original = {"TableName": "t", "Limit": 1}
    changed = json.dumps({"TableName": "t", "Limit": 999999}).encode()
    claimed = hashlib.sha256(json.dumps(original).encode()).hexdigest()
    status, body = send(
        signed_endpoint, "DescribeTable", original, add_after={"x-amz-content-sha256": claimed}, send_body=changed
    )
    assert (status, body["__type"]) == (400, "com.amazon.coral.service#InvalidSignatureException")


def test_target_must_be_signed(signed_endpoint: ThreadedEndpoint) -> None:
    # signed as ListTables with the target left out of SignedHeaders, then re-pointed at CreateTable
    status, body = send(
        signed_endpoint,
        "ListTables",
        {},
        signer=_Signer(unsigned=("x-amz-target",)),
        add_after={"X-Amz-Target": "DynamoDB_20120810.DeleteTable"},
    )
    assert status == 400
    assert body == {
        "__type": "com.amazon.coral.service#InvalidSignatureException",
        "message": "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.",
    }


def test_host_must_be_signed(signed_endpoint: ThreadedEndpoint) -> None:
    status, body = send(signed_endpoint, "ListTables", {}, signer=_Signer(unsigned=("host",)))
    assert (status, body["message"]) == (
        400,
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    )


@pytest.mark.parametrize(
    ("shift", "word"),
    [
        (-30 * 86400, "Signature expired"),
        (-301, "Signature expired"),
        (86400, "Signature not yet current"),
        (301, "Signature not yet current"),
    ],
)
def test_dates_outside_five_minutes_are_refused(
    signed_endpoint: ThreadedEndpoint, monkeypatch: pytest.MonkeyPatch, shift: int, word: str
) -> None:
    then = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(seconds=shift)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: then)
    status, body = send(signed_endpoint, "ListTables", {})
    assert (status, body["__type"]) == (400, "com.amazon.coral.service#InvalidSignatureException")
    assert body["message"].startswith(word + ": " + then.strftime("%Y%m%dT%H%M%SZ"))


def test_dates_within_five_minutes_are_accepted(
    signed_endpoint: ThreadedEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    for shift in (-240, 240):
        then = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(seconds=shift)
        monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda then=then: then)
        assert send(signed_endpoint, "ListTables", {})[0] == 200


@pytest.mark.parametrize(
    ("signer", "message"),
    [
        (
            _Signer(scope_date="20200101"),
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20200101' != ",
        ),
        (_Signer(region="not a region"), "Credential should be scoped to a valid region. "),
        (_Signer(service="s3"), "Credential should be scoped to correct service: 'dynamodb'. "),
    ],
    ids=["date", "region", "service"],
)
def test_credential_scope_must_match_the_request(
    signed_endpoint: ThreadedEndpoint, signer: _Signer, message: str
) -> None:
    status, body = send(signed_endpoint, "ListTables", {}, signer=signer)
    assert (status, body["__type"]) == (400, "com.amazon.coral.service#InvalidSignatureException")
    assert body["message"].startswith(message)


def test_region_in_host_name_must_match_the_scope(signed_endpoint: ThreadedEndpoint) -> None:
    host = {"Host": "dynamodb.eu-west-1.amazonaws.com"}
    status, body = send(signed_endpoint, "ListTables", {}, signer=_Signer(region="us-east-1"), add_before=host)
    assert (status, body["message"]) == (400, "Credential should be scoped to a valid region. ")
    assert send(signed_endpoint, "ListTables", {}, signer=_Signer(region="eu-west-1"), add_before=host)[0] == 200


@pytest.mark.parametrize(("region", "status"), [("us-east-1", 200), ("eu-west-1", 400), ("us-west-2", 400)])
def test_without_a_region_in_the_host_the_scope_must_name_the_endpoints_region(
    signed_endpoint: ThreadedEndpoint, region: str, status: int
) -> None:
    """127.0.0.1 names no region: the endpoint is its --region's (us-east-1 here), as a regional endpoint is."""
    got, body = send(signed_endpoint, "ListTables", {}, signer=_Signer(region=region))
    assert got == status
    if status == 400:
        assert (body["__type"], body["message"]) == (
            "com.amazon.coral.service#InvalidSignatureException",
            "Credential should be scoped to a valid region. ",
        )


def test_an_endpoint_of_another_region_takes_that_regions_scope() -> None:
    ep = serve_in_thread(capacity=None, verify_signatures=True, credentials={"AKIDLOCAL": "s3cret"}, region="eu-west-1")
    try:
        assert send(ep, "ListTables", {}, signer=_Signer(region="eu-west-1"))[0] == 200
        assert send(ep, "ListTables", {}, signer=_Signer(region="us-east-1"))[0] == 400
    finally:
        ep.stop()


@pytest.mark.parametrize(("path", "method"), [("/_dynlocust/stats", "GET"), ("/_dynlocust/reset-stats", "POST")])
def test_control_endpoints_need_a_signature(signed_endpoint: ThreadedEndpoint, path: str, method: str) -> None:
    status, _, body = raw(signed_endpoint.port, None, b"", path=path, method=method)
    assert (status, body["__type"]) == (400, "com.amazon.coral.service#MissingAuthenticationTokenException")
    status, body = send(signed_endpoint, "", {}, path=path, method=method)
    assert status == 200


def test_local_endpoint_process_signs_its_control_requests() -> None:
    with LocalEndpoint(capacity=False, verify_signatures=True, credentials={"AKIDLOCAL": "s3cret"}) as ep:
        assert ep.stats()["requests_total"] == 0
        ep.reset_stats()
