"""The fast transport's HTTP, parsing and error mapping, against a canned in-process gevent server."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import gevent
import pytest
from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ParamValidationError,
    ReadTimeoutError,
    SSLError,
)
from gevent.server import StreamServer

from dynlocust.request.outcomes import CONNECTION, classify
from dynlocust.request.transport.fast import FastDynamoDB, make_fast_client

Reply = Callable[[dict[str, Any]], list[bytes] | None]


def http(status: int, body: bytes, *, crc: bool | int = True, extra: str = "", length: bool = True) -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/x-amz-json-1.0\r\nx-amzn-RequestId: RID\r\n{extra}"
    if length:
        head += f"Content-Length: {len(body)}\r\n"
    if crc is not False:
        head += f"x-amz-crc32: {zlib.crc32(body) if crc is True else crc}\r\n"
    return (head + "\r\n").encode() + body


class Canned:
    """Answers each request with `reply(request)`: a list of byte pieces sent with short pauses, or None to close."""

    def __init__(self, **ssl_args: str) -> None:
        self.reply: Reply = lambda _req: [http(200, b"{}")]
        self.requests: list[dict[str, Any]] = []
        self.connections = 0
        self.close_after_reply = False
        self.server = StreamServer(("127.0.0.1", 0), self._handle, **ssl_args)
        self.server.start()
        self.url = f"{'https' if ssl_args else 'http'}://127.0.0.1:{self.server.server_port}"

    def _handle(self, sock: Any, _addr: Any) -> None:
        self.connections += 1
        reader = sock.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                headers = {}
                while (h := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = h.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = reader.read(int(headers.get("content-length", 0)))
                request = {"line": line.decode(), "headers": headers, "body": body}
                self.requests.append(request)
                pieces = self.reply(request)
                if pieces is None:
                    return
                for i, piece in enumerate(pieces):
                    if i:
                        gevent.sleep(0.01)
                    sock.sendall(piece)
                if self.close_after_reply:
                    return
        finally:
            reader.close()
            sock.close()


@pytest.fixture
def canned() -> Iterator[Canned]:
    server = Canned()
    try:
        yield server
    finally:
        server.server.stop(timeout=1)


def client(url: str, **kwargs: Any) -> FastDynamoDB:
    options: dict[str, Any] = {"region": "us-east-1", "connect_timeout": 1.0, "read_timeout": 2.0, "pool_size": 2}
    options.update(kwargs)
    return make_fast_client(url, **options)


GET = {"TableName": "tbl", "Key": {"pk": {"S": "a"}}}


def test_request_is_one_signed_json_post(canned: Canned) -> None:
    fast = client(canned.url)
    fast.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "b": {"B": b"\x00\xff"}})
    (request,) = canned.requests
    assert request["line"] == "POST / HTTP/1.1\r\n"
    headers = request["headers"]
    assert headers["x-amz-target"] == "DynamoDB_20120810.PutItem"
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert headers["host"] == canned.url.removeprefix("http://")
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=local/")
    assert json.loads(request["body"])["Item"]["b"] == {"B": base64.b64encode(b"\x00\xff").decode()}


def test_response_metadata_matches_botocore_shape(canned: Canned) -> None:
    canned.reply = lambda _r: [
        http(200, b'{"Item": {"pk": {"S": "a"}}, "Unmodeled": 1}', extra="X-Dup: a\r\nx-dup: b\r\n")
    ]
    response = client(canned.url).get_item(**GET)
    assert response["Item"] == {"pk": {"S": "a"}}
    assert "Unmodeled" not in response  # botocore keeps only modeled members
    meta = response["ResponseMetadata"]
    assert meta["RequestId"] == "RID" and meta["HTTPStatusCode"] == 200 and meta["RetryAttempts"] == 0
    assert meta["HTTPHeaders"]["x-dup"] == "a, b"


def test_keep_alive_reuses_one_connection(canned: Canned) -> None:
    fast = client(canned.url)
    for _ in range(5):
        fast.get_item(**GET)
    assert canned.connections == 1 and fast.pool.opened == 1 and len(canned.requests) == 5


def test_large_body_arrives_whole(canned: Canned) -> None:
    items = [{"pk": {"S": f"{i:06d}"}, "v": {"S": "x" * 1000}} for i in range(3000)]  # ~3 MB
    body = json.dumps({"Items": items, "Count": len(items), "ScannedCount": len(items)}).encode()
    whole = http(200, body)
    canned.reply = lambda _r: [whole[:100_000], whole[100_000:]]
    response = client(canned.url).scan(TableName="tbl")
    assert response["Count"] == 3000 and response["Items"][-1] == items[-1]


def test_response_split_over_many_writes_and_chunked_body(canned: Canned) -> None:
    whole = http(200, b'{"Item": {"pk": {"S": "split"}}}')
    canned.reply = lambda _r: [whole[i : i + 7] for i in range(0, len(whole), 7)]
    fast = client(canned.url)
    assert fast.get_item(**GET)["Item"] == {"pk": {"S": "split"}}
    body = b'{"Item": {"pk": {"S": "chunked"}}}'
    chunked = http(200, b"", crc=zlib.crc32(body), extra="Transfer-Encoding: chunked\r\n", length=False)
    chunked += b"5\r\n" + body[:5] + b"\r\n" + f"{len(body) - 5:x}".encode() + b"\r\n" + body[5:] + b"\r\n0\r\n\r\n"
    canned.reply = lambda _r: [chunked[:30], chunked[30:]]
    assert fast.get_item(**GET)["Item"] == {"pk": {"S": "chunked"}}
    assert fast.get_item(**GET)["Item"] == {"pk": {"S": "chunked"}}
    assert fast.pool.opened == 1  # a clean chunked body keeps the connection


def test_connection_close_is_honoured(canned: Canned) -> None:
    canned.reply = lambda _r: [http(200, b"{}", extra="Connection: close\r\n")]
    fast = client(canned.url)
    fast.get_item(**GET)
    fast.get_item(**GET)
    assert fast.pool.opened == 2


def test_crc32_mismatch_raises_checksum_error(canned: Canned) -> None:
    canned.reply = lambda _r: [http(200, b'{"Item": {}}', crc=12345)]
    with pytest.raises(ChecksumError) as info:
        client(canned.url).get_item(**GET)
    assert classify(None, info.value).code == "ChecksumError"


def test_missing_crc32_header_is_accepted(canned: Canned) -> None:
    canned.reply = lambda _r: [http(200, b'{"Count": 0, "Items": []}', crc=False)]
    assert client(canned.url).scan(TableName="tbl")["Count"] == 0


def test_idle_connection_closed_by_server_is_not_reused(canned: Canned) -> None:
    canned.close_after_reply = True
    fast = client(canned.url)
    fast.get_item(**GET)
    gevent.sleep(0.05)  # the server's FIN reaches the idle pooled connection
    canned.close_after_reply = False
    fast.get_item(**GET)  # detected before sending: a new connection, and still one request per call
    assert fast.pool.opened == 2 and len(canned.requests) == 2


def test_server_dropping_the_connection_mid_call_is_connection_closed(canned: Canned) -> None:
    canned.reply = lambda _r: None
    fast = client(canned.url)
    with pytest.raises(ConnectionClosedError):
        fast.get_item(**GET)
    assert len(canned.requests) == 1  # no retry
    canned.reply = lambda _r: [http(200, b"{}")]
    assert fast.get_item(**GET)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_read_timeout_and_refused_connection_map_to_botocore_errors(canned: Canned) -> None:
    def late(_request: dict[str, Any]) -> list[bytes]:
        gevent.sleep(0.6)
        return [http(200, b"{}")]

    canned.reply = late
    with pytest.raises(ReadTimeoutError):
        client(canned.url, read_timeout=0.3).get_item(**GET)
    with pytest.raises(EndpointConnectionError):
        client("http://127.0.0.1:9").get_item(**GET)


def test_only_a_deadline_within_the_read_timeout_lifts_it_and_only_for_its_own_exchange(canned: Canned) -> None:
    answer_after = [0.0]

    def late(_request: dict[str, Any]) -> list[bytes]:
        gevent.sleep(answer_after[0])
        return [http(200, b"{}")]

    canned.reply = late
    fast = client(canned.url, read_timeout=0.3, pool_size=1)
    fast.handle_request("GetItem", GET, deadline=0.3)  # bounded: its connection reads without a timeout
    assert [conn.timeout for conn in fast.pool._idle] == [None]
    answer_after[0] = 0.6
    with pytest.raises(ReadTimeoutError):  # the same connection, unbounded: the read timeout is back
        fast.get_item(**GET)
    with pytest.raises(ReadTimeoutError):  # a deadline longer than the read timeout leaves it in force
        fast.handle_request("GetItem", GET, deadline=5.0)
    assert canned.connections == 2


def test_error_response_raises_botocore_modeled_exception(canned: Canned) -> None:
    body = json.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": "The conditional request failed",
            "Item": {"b": {"B": base64.b64encode(b"\x01").decode()}},
        }
    ).encode()
    canned.reply = lambda _r: [http(400, body)]
    fast = client(canned.url)
    with pytest.raises(fast.exceptions.ConditionalCheckFailedException) as info:
        fast.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    response = info.value.response
    assert response["Error"] == {"Code": "ConditionalCheckFailedException", "Message": "The conditional request failed"}
    assert response["Item"] == {"b": {"B": b"\x01"}}
    assert classify(None, info.value).kind == "condition_failed"


def test_generic_5xx_without_body(canned: Canned) -> None:
    canned.reply = lambda _r: [http(503, b"")]
    with pytest.raises(ClientError) as info:
        client(canned.url).get_item(**GET)
    assert info.value.response["Error"]["Code"] == "503"
    assert classify(None, info.value).kind == "server_error"


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"Key": {"pk": {"S": "a"}}}, 'Missing required parameter in input: "TableName"'),
        ({**GET, "Bogus": 1}, 'Unknown parameter in input: "Bogus"'),
    ],
)
def test_parameter_validation_sends_nothing(canned: Canned, kwargs: dict[str, Any], text: str) -> None:
    with pytest.raises(ParamValidationError, match=text):
        client(canned.url).get_item(**kwargs)
    assert canned.requests == []


def test_control_plane_calls_go_to_botocore(canned: Canned) -> None:
    fast = client(canned.url)
    assert fast.meta.method_to_api_mapping["describe_table"] == "DescribeTable"
    assert fast.describe_table.__self__.__class__.__name__ == "DynamoDB"  # botocore's generated client


def test_concurrent_calls_share_a_bounded_pool(canned: Canned) -> None:
    fast = client(canned.url, pool_size=4)
    canned.reply = lambda _r: (gevent.sleep(0.01), [http(200, b'{"Item": {"pk": {"S": "a"}}}')])[1]

    def worker() -> list[dict[str, Any]]:
        return [fast.get_item(**GET)["Item"] for _ in range(5)]

    jobs = [gevent.spawn(worker) for _ in range(20)]
    gevent.joinall(jobs, timeout=20, raise_error=True)
    assert all(job.value == [{"pk": {"S": "a"}}] * 5 for job in jobs)
    assert len(canned.requests) == 100
    assert len(fast.pool._idle) <= fast.pool.maxsize and fast.pool.opened >= 20  # extra sockets are not kept


OPENSSL_REQ = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
OPENSSL_REQ += ["-addext", "subjectAltName=IP:127.0.0.1"]


@pytest.fixture
def certificate(tmp_path: Path) -> dict[str, str]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(
        [*OPENSSL_REQ, "-keyout", key, "-out", cert],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return {"certfile": cert, "keyfile": key}


@pytest.fixture
def tls_canned(certificate: dict[str, str]) -> Iterator[Canned]:
    server = Canned(**certificate)
    try:
        yield server
    finally:
        server.server.stop(timeout=1)


def test_tls_endpoint_with_its_ca_bundle(tls_canned: Canned, certificate: dict[str, str]) -> None:
    tls_canned.reply = lambda _r: [http(200, b'{"Item": {"pk": {"S": "tls"}}}')]
    fast = client(tls_canned.url, verify=certificate["certfile"])
    assert fast.get_item(**GET)["Item"] == {"pk": {"S": "tls"}}
    assert fast.get_item(**GET)["Item"] == {"pk": {"S": "tls"}}
    assert fast.pool.opened == 1 and tls_canned.requests[0]["headers"]["host"] == tls_canned.url.split("//")[1]


def test_tls_untrusted_certificate_is_a_connection_outcome(tls_canned: Canned) -> None:
    with pytest.raises(SSLError) as info:
        client(tls_canned.url).get_item(**GET)
    assert classify(None, info.value).kind == CONNECTION
    assert tls_canned.requests == []
