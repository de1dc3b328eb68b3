"""Instructions per request of the request path without the network, by callgrind: repeatable on a busy machine.

A shared machine moves CPU time per request by 10-30% from one minute to the next; valgrind's callgrind counts the
instructions a process executes, which no other process changes. The path measured is a scenario run's per
request work short of the socket: `FastDynamoDB` (orjson, SigV4, the HTTP/1.1 read and parse) over a fake socket
that answers nginx's canned bytes, `DynamoDBClient` (deadline, outcome, record, one request event to Locust's
statistics) and the window tally. With `--socket pair` the answer comes instead through a real socket pair from a
greenlet of the same process, so every read waits as it does against a server: the hub's switches, the socket's
I/O watcher and its read timeout are counted too (the answering greenlet's own work is the same for every tree).
Each tree runs twice, `--small` and `--small + --requests` requests; the
difference over `--requests` is the instructions per request (start-up cancels out).

Run: ``python tests/benchmarks/bench_hot_path.py [TREE ...] [--requests 2000] [--answer ok|throttled]
[--socket fake|pair]`` (each TREE a
checkout's root, put first on PYTHONPATH; default: this checkout; `throttled`: every request is answered a
throttle). Needs valgrind. ``--child N`` runs the path N times (what valgrind runs).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ANSWER = (
    b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 06 Dec 2026 03:00:00 GMT\r\n"
    b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\nConnection: keep-alive\r\n"
    b"x-amz-crc32: 2745614147\r\nx-amzn-RequestId: canned\r\n\r\n{}"
)
"""What tests/support/canned_server.py's nginx answers a PutItem."""
THROTTLE_BODY = (
    b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Throughput exceeds the current '
    b'capacity of your table or index.","throttlingReasons":[{"reason":"TableWriteKeyRangeThroughputExceeded",'
    b'"resource":"arn:aws:dynamodb:us-east-1:000000000000:table/bench"}]}'
)
THROTTLE = (
    b"HTTP/1.1 400 Bad Request\r\nServer: nginx/1.22.1\r\nDate: Sun, 06 Dec 2026 03:00:00 GMT\r\n"
    b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: %d\r\nConnection: keep-alive\r\n"
    b"x-amz-crc32: %d\r\nx-amzn-RequestId: canned\r\n\r\n%s"
) % (len(THROTTLE_BODY), zlib.crc32(THROTTLE_BODY), THROTTLE_BODY)
"""A throttle as the service sends it (dynamodb-facts.md: HTTP 400, `throttlingReasons` in lower case)."""
ANSWERS = {"ok": ANSWER, "throttled": THROTTLE}
DEADLINE = 8.0
"""Each call's deadline, and the read timeout: a scenario run reads with its deadline when `--read-timeout` is unset."""
ITEM = {"pk": {"S": "0" * 32}, "n": {"N": "1"}, "pad": {"S": "x" * 990}}


class FakeSocket:
    """Takes any request whole and answers `ANSWER`; its fd is a real idle socket, for the pool's select()."""

    def __init__(self, answer: bytes = ANSWER) -> None:
        self._idle, self._peer = socket.socketpair()
        self._answer = answer
        self._timeout: float | None = None

    def fileno(self) -> int:
        return self._idle.fileno()

    def gettimeout(self) -> float | None:
        return self._timeout

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout

    def send(self, data: bytes) -> int:
        return len(data)

    def recv(self, _size: int) -> bytes:
        return self._answer

    def close(self) -> None:
        pass


def answering_pair(answer: bytes) -> Any:
    """One end of a gevent socket pair whose other end a greenlet answers: each request read whole, then `answer`."""
    import gevent
    import gevent.socket

    ours, theirs = gevent.socket.socketpair()

    def serve() -> None:
        buf = b""
        while chunk := theirs.recv(65536):
            buf += chunk
            while (end := buf.find(b"\r\n\r\n")) >= 0:
                length = int(re.search(rb"(?i)content-length: *(\d+)", buf[:end]).group(1))  # type: ignore[union-attr]
                if len(buf) < end + 4 + length:
                    break
                buf = buf[end + 4 + length :]
                theirs.sendall(answer)

    gevent.spawn(serve)
    return ours


def child(requests: int, answer: str = "ok", socket_kind: str = "fake") -> None:
    import locust  # noqa: F401 - before botocore
    from locust.event import EventHook
    from locust.stats import RequestStats

    from dynlocust.request.client import DynamoDBClient
    from dynlocust.request.transport import fast
    from dynlocust.run.pacing import Ticket
    from dynlocust.run.tally import WindowStats

    raw = fast.make_fast_client(
        "http://127.0.0.1:9", region="us-east-1", connect_timeout=1.0, read_timeout=DEADLINE, pool_size=1,
        credentials=("local", "local"),
    )  # fmt: skip
    if socket_kind == "pair":
        sock = answering_pair(ANSWERS[answer])
        sock.settimeout(raw._pool.read_timeout)  # as the pool's own connections are
    else:
        sock = FakeSocket(ANSWERS[answer])
    raw._pool._idle.append(fast._Connection(sock))
    stats = RequestStats()
    hook = EventHook()

    def on_request(request_type: str, name: str, response_time: int, response_length: int, **_: Any) -> None:
        stats.log_request(request_type, name, response_time, response_length)

    hook.add_listener(on_request)
    client = DynamoDBClient(raw, hook, deadline=DEADLINE)
    window = WindowStats(0, time.time() - 1, 3600.0, bin_seconds=5.0)
    kwargs = {"TableName": "bench", "Item": ITEM}
    now = time.time()
    record = None
    for i in range(requests):
        record = client.send("put_item", kwargs, ticket=Ticket(i, 0, now), label="put bench")
        window.add(record)
    assert record is not None and record.outcome.kind == answer, record
    assert window.total().operation("put bench").sent == requests


def instructions(tree: str, requests: int, answer: str = "ok", socket_kind: str = "fake") -> int:
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    env = {**os.environ, "PYTHONPATH": tree}
    argv += ["--child", str(requests), "--answer", answer, "--socket", socket_kind]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count for {tree}:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=[str(ROOT)])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--answer", choices=sorted(ANSWERS), default="ok", help="what every request is answered")
    parser.add_argument(
        "--socket", choices=("fake", "pair"), default="fake", help="fake: answered at once; pair: every read waits"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.answer, args.socket)
        return
    first = None
    for tree in args.trees:
        small = instructions(tree, args.small, args.answer, args.socket)
        large = instructions(tree, args.small + args.requests, args.answer, args.socket)
        per = (large - small) / args.requests
        first = first or per
        print(f"{tree}: {per:,.0f} instructions per request ({per / first:.3f}x the first)")


if __name__ == "__main__":
    main()
