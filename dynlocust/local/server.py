"""The HTTP front of the local endpoint: a gevent StreamServer with a minimal HTTP/1.1 keep-alive parser.

Why hand-written: a WSGI stack costs more CPU per request than the whole PutItem; DynamoDB's JSON 1.0
protocol only needs POST with a Content-Length body, so the parser reads the head, the body, answers and loops.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import random
import socket
import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from dynlocust.local import errors
from dynlocust.local.api import Backend, Ctx, request_region
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError

log = logging.getLogger(__name__)

TARGET_PREFIX = "DynamoDB_20120810."
STATS_PATH = "/_dynlocust/stats"
RESET_PATH = "/_dynlocust/reset-stats"
NO_TABLE = "-"
MAX_HEAD = 64 * 1024
MAX_BODY = 32 * 1024 * 1024
THROTTLE_CODES = frozenset(("ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"))
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large", 500: "Internal Server Error"}


def _is_throttle(exc: ServiceError) -> bool:
    if exc.code in THROTTLE_CODES:
        return True
    if exc.code == "TransactionCanceledException":
        return any(
            r.get("Code") in ("ThrottlingError", "ProvisionedThroughputExceeded")
            for r in exc.extra.get("CancellationReasons", [])
        )
    return False


class Stats:
    """The server's own request counts, so tests can reconcile what clients counted with what was served.

    Each DynamoDB request is counted exactly once: under the first table it names (in request order; for
    batches and transactions the first table of RequestItems/TransactItems) or under "-" when it names none
    (ListTables, unknown operations, rejected signatures). Batch items left unprocessed are added to that same
    entry's `unprocessed_items`. Requests to /_dynlocust/* are not counted.
    """

    def __init__(self) -> None:
        self.requests_total = 0
        self.tables: dict[str, dict[str, dict[str, int]]] = {}

    def count(self, table: str, op: str, outcome: str, unprocessed: int = 0) -> None:
        self.requests_total += 1
        ops = self.tables.get(table)
        if ops is None:
            ops = self.tables[table] = {}
        c = ops.get(op)
        if c is None:
            c = ops[op] = {"ok": 0, "throttled": 0, "error": 0, "unprocessed_items": 0}
        c[outcome] += 1
        if unprocessed:
            c["unprocessed_items"] += unprocessed

    def snapshot(self) -> dict[str, Any]:
        return {"requests_total": self.requests_total, "tables": self.tables}

    def reset(self) -> None:
        self.requests_total = 0
        self.tables = {}


def build_capacity(config: LocalConfig) -> Any:
    """The capacity model for `config`, or None when capacity emulation is off (imported only when needed)."""
    if not config.capacity:
        return None
    from dynlocust.local.capacity import CapacityModel

    return CapacityModel(capacity_scale=config.capacity_scale, time_scale=config.time_scale)


class LocalServer:
    """Protocol handling independent of sockets: `handle_request` turns one HTTP request into response bytes."""

    def __init__(self, config: LocalConfig, capacity: Any = None, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.backend = Backend(config, capacity=capacity, clock=clock)
        self.stats = Stats()
        self.verifier = None
        if config.verify_signatures:
            from dynlocust.local.auth import SigV4Verifier

            self.verifier = SigV4Verifier(config.credentials)
        self._rid_prefix = os.urandom(8).hex().upper()
        self._rid = 0
        self._server: Any = None

    # ---------------------------------------------------------------- protocol
    def _response(self, status: int, body: bytes, content_type: str = "application/x-amz-json-1.0") -> bytes:
        self._rid += 1
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}\r\n"
            f"x-amzn-RequestId: {self._rid_prefix}{self._rid:020d}\r\n"
            f"x-amz-crc32: {zlib.crc32(body) & 0xFFFFFFFF}\r\n"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("latin-1") + body

    def handle_request(self, method: str, target: str, headers: dict[str, str], body: bytes) -> bytes:
        """One request -> the full response bytes (status line, headers, body)."""
        if method == "GET" and target == STATS_PATH:
            snapshot = self.stats.snapshot()
            capacity = self.backend.capacity
            if capacity is not None:
                snapshot = {**snapshot, "capacity": capacity.snapshot()}
            return self._response(200, orjson.dumps(snapshot), "application/json")
        if method == "POST" and target == RESET_PATH:
            self.stats.reset()
            return self._response(200, b"{}", "application/json")
        if method == "GET" and target in ("/", ""):
            return self._response(200, f"healthy: dynamodb.{self.config.region}.amazonaws.com ".encode(), "text/plain")
        amz_target = headers.get("x-amz-target", "")
        op = amz_target[len(TARGET_PREFIX) :] if amz_target.startswith(TARGET_PREFIX) else ""
        ctx = Ctx(region=request_region(headers))
        try:
            if method != "POST":
                raise errors.unknown_operation()
            if self.verifier is not None:
                self.verifier.verify(method, target, headers, body)
            handler = self.backend.ops.get(op)
            if handler is None:
                raise errors.unknown_operation()
            try:
                req = orjson.loads(body) if body else {}
            except orjson.JSONDecodeError as exc:
                raise errors.serialization("Start of structure or map found where not expected.") from exc
            if not isinstance(req, dict):
                raise errors.serialization("Start of structure or map found where not expected.")
            result = handler(req, ctx)
            out = orjson.dumps(result)
            self.stats.count(ctx.tables[0] if ctx.tables else NO_TABLE, op or "Unknown", "ok", ctx.unprocessed)
            return self._response(200, out)
        except ServiceError as exc:
            outcome = "throttled" if _is_throttle(exc) else "error"
            self.stats.count(ctx.tables[0] if ctx.tables else NO_TABLE, op or "Unknown", outcome, ctx.unprocessed)
            return self._response(exc.status, orjson.dumps(exc.body()))
        except Exception:
            log.exception("internal error while handling %s", op or target)
            self.stats.count(ctx.tables[0] if ctx.tables else NO_TABLE, op or "Unknown", "error")
            body_out = json.dumps(
                {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "Internal server error"}
            ).encode()
            return self._response(500, body_out)

    def _latency(self) -> float:
        # in-region p50 of 4-5 ms with a modest tail (service-behaviour.md): lognormal around 4.5 ms
        return random.lognormvariate(math.log(0.0045), 0.3)

    # ---------------------------------------------------------------- sockets
    def handle_connection(self, sock: Any, _addr: Any) -> None:
        """Serve one keep-alive connection until the client closes it or asks `Connection: close`."""
        import gevent

        # responses go out in one sendall; without NODELAY a multi-segment page (a 1 MB Query) can wait for
        # the client's delayed ACK
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        recv = sock.recv
        buf = b""
        latency = self.config.latency_model
        try:
            while True:
                end = buf.find(b"\r\n\r\n")
                while end < 0:
                    if len(buf) > MAX_HEAD:
                        sock.sendall(self._response(413, b""))
                        return
                    data = recv(65536)
                    if not data:
                        return
                    buf += data
                    end = buf.find(b"\r\n\r\n")
                lines = buf[:end].decode("latin-1").split("\r\n")
                buf = buf[end + 4 :]
                parts = lines[0].split(" ")
                if len(parts) != 3:
                    sock.sendall(self._response(400, b""))
                    return
                method, target, version = parts
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    name = name.strip().lower()
                    value = value.strip()
                    headers[name] = f"{headers[name]},{value}" if name in headers else value
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    sock.sendall(self._response(400, b"chunked transfer encoding is not supported", "text/plain"))
                    return
                try:
                    length = int(headers.get("content-length", "0") or 0)
                except ValueError:
                    length = -1
                if length < 0:
                    sock.sendall(self._response(400, b"invalid Content-Length", "text/plain"))
                    return
                if length > MAX_BODY:
                    sock.sendall(self._response(413, b""))
                    return
                if length and headers.get("expect", "").lower() == "100-continue" and len(buf) < length:
                    sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                while len(buf) < length:
                    data = recv(max(65536, length - len(buf)))
                    if not data:
                        return
                    buf += data
                body = buf[:length]
                buf = buf[length:]
                if latency:
                    gevent.sleep(self._latency())
                conn = headers.get("connection", "").lower()
                close = conn == "close" or (version == "HTTP/1.0" and conn != "keep-alive")
                out = self.handle_request(method, target, headers, body)
                if close:
                    head_end = out.index(b"\r\n\r\n")
                    out = out[:head_end] + b"\r\nConnection: close" + out[head_end:]
                sock.sendall(out)
                if close:
                    return
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def start(self, host: str | None = None, port: int | None = None) -> tuple[str, int]:
        """Bind and start serving in the current gevent hub; returns the bound (host, port)."""
        from gevent.server import StreamServer

        h = host if host is not None else self.config.host
        p = port if port is not None else self.config.port
        self._server = StreamServer((h, p), self.handle_connection, backlog=1024)
        self._server.start()
        bound = self._server.address
        return bound[0], bound[1]

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(timeout=1)
            self._server = None
