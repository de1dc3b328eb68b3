"""Issue 16, finding 4: HTTP parsing is strict and every connection is bounded in time, count and memory.

Each test talks raw HTTP over a real socket to an in-thread endpoint with small limits, so a limit that is not
enforced shows as a hang (the client's read times out) or as a wrong answer.
"""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dynlocust.local.embedded import ThreadedEndpoint, serve_in_thread

MAX_REQUEST_BYTES = 16 * 1024 * 1024  # the service answers 413 above this
LIST_TABLES = b"X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Type: application/x-amz-json-1.0\r\n"


def connect(ep: ThreadedEndpoint, timeout: float = 5.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", ep.port), timeout=timeout)


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the test fails on a client timeout)."""
    out = b""
    while True:
        data = sock.recv(65536)
        if not data:
            return out
        out += data


def exchange(ep: ThreadedEndpoint, data: bytes) -> bytes:
    with connect(ep) as sock:
        sock.sendall(data)
        return read_all(sock)


def list_tables(content_length: str = "2", body: bytes = b"{}", extra: bytes = b"") -> bytes:
    return (
        b"POST / HTTP/1.1\r\nHost: x\r\n"
        + LIST_TABLES
        + extra
        + f"Content-Length: {content_length}\r\n\r\n".encode()
        + body
    )


@pytest.fixture
def limited() -> Iterator[ThreadedEndpoint]:
    ep = serve_in_thread(
        capacity=None,
        header_timeout=0.3,
        body_timeout=0.3,
        idle_timeout=0.5,
        max_connections=3,
        max_buffered_bytes=1_000_000,
    )
    try:
        yield ep
    finally:
        ep.stop()


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def test_well_formed_request_still_served(limited: ThreadedEndpoint) -> None:
    with connect(limited) as sock:
        for _ in range(3):  # keep-alive
            sock.sendall(list_tables())
            head = sock.recv(65536)
            assert head.startswith(b"HTTP/1.1 200 OK\r\n")
            assert head.endswith(b'{"TableNames":[]}')


@pytest.mark.parametrize("value", ["+2", "0_2", "2 2", "-1", "0x2", "2,2", "²"])
def test_content_length_must_be_plain_digits(limited: ThreadedEndpoint, value: str) -> None:
    response = exchange(limited, list_tables(value).replace("²".encode(), "²".encode("latin-1")))
    assert status_of(response) == 400
    assert b"invalid Content-Length" in response


def test_bare_lf_request_is_answered_not_hung(limited: ThreadedEndpoint) -> None:
    request = b"POST / HTTP/1.1\nHost: x\nX-Amz-Target: DynamoDB_20120810.ListTables\nContent-Length: 2\n\n{}"
    response = exchange(limited, request)
    assert status_of(response) == 400
    assert b"bare LF" in response


def test_bare_lf_inside_a_crlf_head_is_refused(limited: ThreadedEndpoint) -> None:
    response = exchange(limited, list_tables(extra=b"X-A: 1\nX-B: 2\r\n"))
    assert status_of(response) == 400


def test_body_over_16_mb_is_refused_with_413_before_reading_it(limited: ThreadedEndpoint) -> None:
    response = exchange(limited, list_tables(str(MAX_REQUEST_BYTES + 1), body=b""))
    assert status_of(response) == 413
    assert b"Connection: close" in response


def test_idle_connection_is_closed_after_idle_timeout(limited: ThreadedEndpoint) -> None:
    with connect(limited) as sock:
        sock.sendall(list_tables())
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert read_all(sock) == b""  # the server closes; without an idle timeout this read times out


def test_the_idle_limit_counts_each_wait_not_their_sum(limited: ThreadedEndpoint) -> None:
    """Five requests 0.3 s apart wait 1.5 s in all on one connection, three times the 0.5 s idle limit, and each
    is answered: the limit restarts with every request (a restarted libev timer would keep only what was left)."""
    with connect(limited) as sock:
        for _ in range(5):
            time.sleep(0.3)
            sock.sendall(list_tables())
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_slow_head_gets_408(limited: ThreadedEndpoint) -> None:
    with connect(limited) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")  # never finished
        response = read_all(sock)
    assert status_of(response) == 408


def test_slow_body_gets_408(limited: ThreadedEndpoint) -> None:
    with connect(limited) as sock:
        sock.sendall(list_tables("100", body=b"{"))  # 1 of 100 bytes
        response = read_all(sock)
    assert status_of(response) == 408


def test_connection_cap_answers_503_and_frees_slots(limited: ThreadedEndpoint) -> None:
    held = [connect(limited) for _ in range(3)]
    try:
        for sock in held:  # each connection is being served, so it counts
            sock.sendall(list_tables())
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        response = exchange(limited, list_tables())
        assert status_of(response) == 503
        held.pop().close()
        deadline = time.monotonic() + 5
        while status_of(exchange(limited, list_tables())) != 200:  # the freed slot is reused
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        for sock in held:
            sock.close()


def test_half_sent_bodies_share_one_memory_budget(limited: ThreadedEndpoint) -> None:
    first = connect(limited)
    try:
        first.sendall(list_tables("800000", body=b"{"))  # reserves 800 KB of the 1 MB budget
        deadline = time.monotonic() + 5
        while limited.server.connections._buffered < 800_000:  # the server has read the head and reserved the body
            assert time.monotonic() < deadline
            time.sleep(0.005)
        response = exchange(limited, list_tables("800000", body=b"{"))
        assert status_of(response) == 503
        assert b"too many request bytes in flight" in response
    finally:
        first.close()


def test_large_body_within_budget_is_read_in_pieces(limited: ThreadedEndpoint) -> None:
    body = b"{" + b" " * 700_000 + b"}"
    with connect(limited) as sock:
        sock.sendall(list_tables(str(len(body)), body=b""))
        for i in range(0, len(body), 100_000):
            sock.sendall(body[i : i + 100_000])
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_server_measures_its_own_request_time(endpoint: Any) -> None:
    assert endpoint.stats()["max_request_seconds"] == endpoint.stats()["max_request_cpu_seconds"] == 0.0
    assert status_of(exchange(endpoint, list_tables(extra=b"Connection: close\r\n"))) == 200
    stats = endpoint.stats()
    assert 0.0 < stats["max_request_seconds"] < 5.0
    assert 0.0 < stats["max_request_cpu_seconds"] < 5.0


def test_statistics_keep_a_bounded_number_of_table_names(endpoint: Any) -> None:
    """GetItem of ever new, missing tables (the soak benchmark's top grower): counted, in bounded memory."""
    import http.client
    import json

    from dynlocust.local.server import MAX_STATS_TABLES, OTHER_TABLES

    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"}
    sent = MAX_STATS_TABLES + 50
    try:
        for i in range(sent):
            body = json.dumps({"TableName": f"missing{i}", "Key": {"pk": {"S": "a"}}})
            conn.request("POST", "/", body=body, headers=headers)
            assert conn.getresponse().read().startswith(b'{"__type"')
    finally:
        conn.close()
    stats = endpoint.stats()
    assert len(stats["tables"]) == MAX_STATS_TABLES + 1
    assert stats["tables"][OTHER_TABLES]["GetItem"]["error"] == 50
    assert stats["requests_total"] == sent


def test_a_17_mb_body_gets_a_413_its_client_can_read(endpoint: Any) -> None:
    """A client sends its whole body before it reads the answer: the server reads and drops the body it refused
    (the old code closed with it unread, and the reset reached the client before the 413)."""
    conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=30)
    try:
        conn.request("POST", "/", body=b"{" + b" " * (17 * 1024 * 1024) + b"}", headers={"X-Amz-Target": "x"})
        response = conn.getresponse()
        assert (response.status, response.getheader("Connection")) == (413, "close")
    finally:
        conn.close()


@pytest.mark.parametrize(("version", "status"), [(b"HTTP/9.9", 505), (b"HTTP/2.0", 505), (b"HTTP/1", 400)])
def test_only_http_1_is_served(limited: ThreadedEndpoint, version: bytes, status: int) -> None:
    response = exchange(limited, list_tables().replace(b"HTTP/1.1", version, 1))
    assert status_of(response) == status
    assert b"Connection: close" in response
