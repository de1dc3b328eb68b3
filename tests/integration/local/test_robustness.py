"""Robustness of the local endpoint: thousands of generated malformed requests against a real `dynlocust local`.

Shapes come from botocore's DynamoDB service model: for every operation, Hypothesis walks a random path through
its input shape (into structures, lists, maps and AttributeValue's M and L) and puts a JSON value of the wrong type
at the end of it. Added to those: deep nesting, huge sizes and HTTP-level garbage. Derandomized, so a failure
reproduces. It asserts that
- no request is ever answered 500;
- no request takes the server more than 100 ms (the server measures it: stats' max_request_cpu_seconds, the CPU
  time of its worst request; the wall time, max_request_seconds, is printed too: on a loaded machine it also
  counts the time other processes held the CPU);
- a well-formed client in its own process, running throughout, keeps its p99 latency under 20 ms, or, on a machine
  whose other work already makes that client slower alone, under 4 times its own p99 alone (measured just before
  the attack in the same test): the attack may not starve it, and the machine's load is not the attack's.
It prints the figures (requests tried, 500s, worst server time, well-formed p99 alone and under attack, endpoint
RSS before and after).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import botocore.session
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynlocust.local.embedded import LocalEndpoint
from tests.integration.local.conftest import client_for

pytestmark = pytest.mark.slow

TARGET = "DynamoDB_20120810."
MAX_SERVER_SECONDS = 0.100
MAX_WELL_FORMED_P99 = 0.020
ATTACK_P99_FACTOR = 4.0  # the well-formed client's p99 under attack against its p99 alone, on a loaded machine
MAX_PATH_DEPTH = 8
MODEL = botocore.session.get_session().get_service_model("dynamodb")
OPERATIONS = sorted(MODEL.operation_names)

# The well-formed client: its own interpreter, so the attack's CPU in this process does not delay it.
WELL_FORMED_CLIENT = r"""
import http.client, json, signal, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))  # stop measuring, report what was measured
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
headers = {"Content-Type": "application/x-amz-json-1.0"}
latencies, bad, i = [], 0, 0
end = time.monotonic() + seconds
while not stop and time.monotonic() < end:
    i += 1
    if i % 2:
        op, body = "PutItem", {"TableName": "okay", "Item": {"pk": {"S": str(i % 50)}, "n": {"N": str(i)}}}
    else:
        op, body = "GetItem", {"TableName": "okay", "Key": {"pk": {"S": str(i % 50)}}}
    headers["X-Amz-Target"] = "DynamoDB_20120810." + op
    started = time.perf_counter()
    conn.request("POST", "/", body=json.dumps(body), headers=headers)
    resp = conn.getresponse()
    resp.read()
    latencies.append(time.perf_counter() - started)
    bad += resp.status != 200
    time.sleep(0.005)
print(json.dumps({"latencies": latencies, "bad": bad}))
"""

# -- strategies -----------------------------------------------------------------------------------------------
_JSON_KINDS: dict[str, st.SearchStrategy[Any]] = {
    "str": st.text(max_size=20),
    "int": st.integers(-(2**70), 2**70),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "bool": st.booleans(),
    "list": st.lists(st.integers(), max_size=3),
    "dict": st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
}
_RIGHT_KINDS = {
    "string": {"str"},
    "blob": {"str"},
    "integer": {"int", "float"},
    "long": {"int", "float"},
    "double": {"int", "float"},
    "float": {"int", "float"},
    "boolean": {"bool"},
    "timestamp": {"int", "float", "str"},
    "structure": {"dict"},
    "map": {"dict"},
    "list": {"list"},
}


def _wrong_value(draw: Any, type_name: str) -> Any:
    kinds = sorted(set(_JSON_KINDS) - _RIGHT_KINDS[type_name])
    return draw(_JSON_KINDS[draw(st.sampled_from(kinds))])


def _wrong_at_path(draw: Any, shape: Any, depth: int) -> Any:
    """A value of `shape` holding exactly one JSON value of the wrong type, somewhere down a random path."""
    t = shape.type_name
    container = t in ("structure", "list", "map") and (t != "structure" or shape.members)
    if not container or depth >= MAX_PATH_DEPTH or draw(st.integers(0, 3)) == 0:
        return _wrong_value(draw, t)
    if t == "structure":
        name = draw(st.sampled_from(sorted(shape.members)))
        return {name: _wrong_at_path(draw, shape.members[name], depth + 1)}
    if t == "list":
        return [_wrong_at_path(draw, shape.member, depth + 1)]
    return {draw(st.text(min_size=1, max_size=8)): _wrong_at_path(draw, shape.value, depth + 1)}


@st.composite
def wrong_types(draw: Any) -> tuple[str, bytes]:
    op = draw(st.sampled_from(OPERATIONS))
    body = _wrong_at_path(draw, MODEL.operation_model(op).input_shape, 0)
    return op, json.dumps(body).encode()


def _deep_av(levels: int, kind: str) -> str:
    opener, closer = ('{"M":{"x":', "}}") if kind == "M" else ('{"L":[', "]}")
    return opener * (levels - 1) + '{"S":"x"}' + closer * (levels - 1)


@st.composite
def deep_nesting(draw: Any) -> tuple[str, bytes]:
    levels = draw(st.integers(30, 600))
    av = _deep_av(levels, draw(st.sampled_from(["M", "L"])))
    where = draw(st.sampled_from(["Item", "Key", "Values", "Json"]))
    if where == "Item":
        return "PutItem", ('{"TableName":"okay","Item":{"pk":{"S":"d"},"v":' + av + "}}").encode()
    if where == "Key":
        return "GetItem", ('{"TableName":"okay","Key":{"pk":' + av + "}}").encode()
    if where == "Values":
        body = '{"TableName":"okay","Key":{"pk":{"S":"d"}},"UpdateExpression":"SET v = :v",'
        return "UpdateItem", (body + '"ExpressionAttributeValues":{":v":' + av + "}}").encode()
    op = draw(st.sampled_from(OPERATIONS))
    return op, ("[" * levels + "]" * levels).encode()  # plain JSON nesting in place of the request object


@st.composite
def huge_sizes(draw: Any) -> tuple[str, bytes]:
    n = draw(st.integers(1, 30)) * 1000
    kind = draw(st.sampled_from(["projection", "condition", "update", "name", "string", "attributes", "number"]))
    key = {"pk": {"S": "h"}}
    if kind == "projection":
        body: dict[str, Any] = {
            "TableName": "okay",
            "Key": key,
            "ProjectionExpression": ",".join(f"a{i}" for i in range(n)),
        }
        return "GetItem", json.dumps(body).encode()
    if kind == "condition":
        cond = draw(st.sampled_from(["NOT ", "(", "attribute_exists(a) OR ", "size("])) * n + "attribute_exists(a)"
        body = {"TableName": "okay", "Item": key, "ConditionExpression": cond}
        return "PutItem", json.dumps(body).encode()
    if kind == "update":
        body = {"TableName": "okay", "Key": key, "UpdateExpression": "SET " + ", ".join(f"a{i} = :v" for i in range(n))}
        return "UpdateItem", json.dumps({**body, "ExpressionAttributeValues": {":v": {"N": "1"}}}).encode()
    if kind == "name":
        return "DescribeTable", json.dumps({"TableName": "t" * n * 100}).encode()
    if kind == "string":
        return "PutItem", json.dumps({"TableName": "okay", "Item": {**key, "s": {"S": "x" * n * 100}}}).encode()
    if kind == "number":
        return "PutItem", json.dumps({"TableName": "okay", "Item": {**key, "n": {"N": "9" * n * 100}}}).encode()
    item = {**key, **{f"a{i}": {"NULL": True} for i in range(n // 10)}}
    return "PutItem", json.dumps({"TableName": "okay", "Item": item}).encode()


_HEADER_NAMES = ["Content-Length", "Transfer-Encoding", "Host", "X-Amz-Target", "Expect", "Connection", "X"]


@st.composite
def http_garbage(draw: Any) -> bytes:
    kind = draw(st.sampled_from(["bytes", "request-line", "headers", "content-length", "oversize", "bare-lf"]))
    if kind == "bytes":
        return draw(st.binary(min_size=1, max_size=300))
    if kind == "request-line":
        line = draw(st.text(alphabet=st.characters(max_codepoint=255), max_size=60))
        return line.encode("latin-1", "replace") + b"\r\n\r\n"
    if kind == "headers":
        lines = draw(st.lists(st.tuples(st.sampled_from(_HEADER_NAMES), st.text(max_size=20)), max_size=6))
        head = "".join(f"{n}: {v}\r\n" for n, v in lines).encode("utf-8", "replace")
        return b"POST / HTTP/1.1\r\n" + head + b"\r\n{}"
    if kind == "content-length":
        value = draw(st.sampled_from(["+2", "0_2", "-1", " 2", "2 2", "1e3", "0x10", "99999999999999999999", "2,3"]))
        return f"POST / HTTP/1.1\r\nX-Amz-Target: {TARGET}ListTables\r\nContent-Length: {value}\r\n\r\n{{}}".encode()
    if kind == "oversize":
        size = 16 * 1024 * 1024 + draw(st.integers(1, 10**8))
        return f"POST / HTTP/1.1\r\nX-Amz-Target: {TARGET}PutItem\r\nContent-Length: {size}\r\n\r\n".encode()
    return f"POST / HTTP/1.1\nX-Amz-Target: {TARGET}ListTables\nContent-Length: 2\n\n{{}}".encode()


# -- the attack -----------------------------------------------------------------------------------------------
class Attacker:
    """Sends malformed requests over one keep-alive connection (reopened when the server closes it)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None
        self.statuses: Counter[int] = Counter()
        self.server_errors: list[str] = []

    def request(self, op: str, body: bytes) -> None:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": TARGET + op}
        try:
            self.conn.request("POST", "/", body=body, headers=headers)
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            self.statuses[0] += 1  # the server closed the connection: not a 500
            return
        self._record(resp.status, f"{op} {body[:200]!r}: {data[:200]!r}")
        if resp.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None

    def garbage(self, data: bytes) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
            try:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)  # the server sees the end of what we send, never waits for more
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            except OSError:
                self.statuses[0] += 1
                return
        if not answer:
            self.statuses[0] += 1
            return
        parts = answer.split(b" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1
        self._record(status, f"garbage {data[:200]!r}: {answer[:200]!r}")

    def _record(self, status: int, what: str) -> None:
        self.statuses[status] += 1
        if status >= 500 and status != 503:
            self.server_errors.append(what)

    @property
    def tried(self) -> int:
        return sum(self.statuses.values())


def _rss(pid: int) -> int:
    """Resident bytes of a process (Linux: /proc/<pid>/statm counts pages; psutil is the benchmarks' extra)."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _well_formed(port: int, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WELL_FORMED_CLIENT, str(port), str(seconds)], stdout=subprocess.PIPE, text=True
    )


def _latencies(client: subprocess.Popen[str]) -> tuple[list[float], int]:
    out, _ = client.communicate(timeout=60)
    result: dict[str, Any] = json.loads(out) if out.strip() else {"latencies": [], "bad": 0}
    return sorted(result["latencies"]), int(result["bad"])


def _p(latencies: list[float], q: float) -> float:
    return latencies[min(len(latencies) - 1, int(len(latencies) * q))] if latencies else float("nan")


def test_malformed_requests_never_crash_stall_or_slow_the_endpoint() -> None:
    with LocalEndpoint(capacity=False) as ep:
        assert ep.pid is not None
        c = client_for(ep.url)
        c.create_table(
            TableName="okay",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        c.put_item(TableName="okay", Item={"pk": {"S": "h"}})
        baseline, _ = _latencies(_well_formed(ep.port, 5))  # the same client without the attack, for comparison
        ep.reset_stats()
        rss_start = _rss(ep.pid)
        attacker = Attacker(ep.port)
        client = _well_formed(ep.port, 120)  # stops by itself after 120 s at the latest
        started = time.monotonic()
        try:
            run = settings(
                max_examples=2000,
                derandomize=True,
                database=None,
                deadline=None,
                suppress_health_check=list(HealthCheck),
            )

            @run
            @given(wrong_types())
            def attack_wrong_types(case: tuple[str, bytes]) -> None:
                attacker.request(*case)

            @settings(run, max_examples=300)
            @given(deep_nesting())
            def attack_deep(case: tuple[str, bytes]) -> None:
                attacker.request(*case)

            @settings(run, max_examples=150)
            @given(huge_sizes())
            def attack_huge(case: tuple[str, bytes]) -> None:
                attacker.request(*case)

            @settings(run, max_examples=400)
            @given(http_garbage())
            def attack_http(data: bytes) -> None:
                attacker.garbage(data)

            for attack in (attack_wrong_types, attack_deep, attack_huge, attack_http):
                attack()
            attack_seconds = time.monotonic() - started
        finally:
            client.terminate()  # the attack is over: the client reports what it measured and exits
            latencies, bad = _latencies(client)
        stats = ep.stats()
        rss_end = _rss(ep.pid)
    p99 = _p(latencies, 0.99)
    print(
        f"\nrobustness: {attacker.tried} malformed requests in {attack_seconds:.1f} s, statuses "
        f"{dict(sorted(attacker.statuses.items()))} (0 = connection closed), 500s: {len(attacker.server_errors)}; "
        f"worst server time of one request: cpu {stats['max_request_cpu_seconds'] * 1000:.1f} ms, "
        f"wall {stats['max_request_seconds'] * 1000:.1f} ms; well-formed client p50/p99: alone "
        f"{_p(baseline, 0.5) * 1000:.2f}/{_p(baseline, 0.99) * 1000:.2f} ms ({len(baseline)} requests), under attack "
        f"{_p(latencies, 0.5) * 1000:.2f}/{p99 * 1000:.2f} ms ({len(latencies)} requests, {bad} not 200); "
        f"endpoint RSS {rss_start / 2**20:.0f} MB -> {rss_end / 2**20:.0f} MB; load average {os.getloadavg()[0]:.1f}"
    )
    assert attacker.tried >= 2500
    assert attacker.server_errors == []
    assert stats["max_request_cpu_seconds"] < MAX_SERVER_SECONDS
    assert bad == 0
    assert len(latencies) > 100
    assert p99 < max(MAX_WELL_FORMED_P99, ATTACK_P99_FACTOR * _p(baseline, 0.99))
