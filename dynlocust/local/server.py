"""The local endpoint's protocol: one HTTP request in, the response bytes out, with the server's statistics.

`LocalServer.handle_request` answers DynamoDB's JSON 1.0 operations (through `dynlocust.local.api.Backend`),
CloudWatch's metric reads and the control paths (health, statistics and their reset) without touching a socket;
`dynlocust.local.connections` is the HTTP/1.1 keep-alive loop in front of it, where the client's limits live.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from dynlocust.dynamodb import JSON_CONTENT_TYPE, THROTTLE_CODES
from dynlocust.local import cloudwatch, errors
from dynlocust.local.api import Backend
from dynlocust.local.config import LocalConfig
from dynlocust.local.connections import Connections
from dynlocust.local.errors import ServiceError
from dynlocust.local.heap import keep_heap_trimmed
from dynlocust.local.state import Ctx, request_region

if TYPE_CHECKING:
    from dynlocust.local.capacity import CapacityModel

log = logging.getLogger(__name__)

TARGET_PREFIX = "DynamoDB_20120810."
STATS_PATH = "/_dynlocust/stats"
RESET_PATH = "/_dynlocust/reset-stats"
NO_TABLE = "-"
#: Distinct table names the statistics keep; requests naming further ones are counted under OTHER_TABLES.
MAX_STATS_TABLES = 1000
OTHER_TABLES = "(other)"
#: Pause between two slices of background work (dynlocust's choice): with backfill.SLICE_SECONDS, work in the
#: background takes at most about two thirds of the CPU while clients wait.
BACKGROUND_PAUSE = 0.001
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    408: "Request Timeout",
    413: "Request Entity Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


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
    entry's `unprocessed_items`. Requests to /_dynlocust/* are not counted. `max_request_seconds` is the longest
    time the server spent on one DynamoDB request (from its received bytes to its response bytes), measured by
    the server itself so that client-side queueing does not count; `max_request_cpu_seconds` is the most CPU
    time one request used, which other processes' load on the machine does not inflate. At most MAX_STATS_TABLES
    names are kept (a client naming ever new, missing tables would otherwise grow this for ever); requests naming
    any further table are counted under "(other)".
    """

    def __init__(self) -> None:
        self.requests_total = 0
        self.max_request_seconds = 0.0
        self.max_request_cpu_seconds = 0.0
        self.tables: dict[str, dict[str, dict[str, int]]] = {}

    def count(self, table: str, op: str, outcome: str, unprocessed: int = 0) -> None:
        self.requests_total += 1
        ops = self.tables.get(table)
        if ops is None:
            if len(self.tables) >= MAX_STATS_TABLES:  # names of tables that never existed must not grow this
                table = OTHER_TABLES
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
        return {
            "requests_total": self.requests_total,
            "max_request_seconds": self.max_request_seconds,
            "max_request_cpu_seconds": self.max_request_cpu_seconds,
            "tables": self.tables,
        }

    def reset(self) -> None:
        self.requests_total = 0
        self.max_request_seconds = 0.0
        self.max_request_cpu_seconds = 0.0
        self.tables = {}


def build_capacity(config: LocalConfig, notify: Callable[[str], None] | None = None) -> CapacityModel | None:
    """The capacity model for `config`, or None when capacity emulation is off (imported only when needed).

    `notify` gets each one-time notice of a scaling floor that bends a figure (the console's line)."""
    if not config.capacity:
        return None
    from dynlocust.local.capacity import CapacityModel

    return CapacityModel(capacity_scale=config.capacity_scale, time_scale=config.time_scale, notify=notify)


class LocalServer:
    """Protocol handling independent of sockets: `handle_request` turns one HTTP request into response bytes.

    `start` serves it on a socket through `Connections` (and starts the heap trimmer and background work)."""

    def __init__(
        self, config: LocalConfig, capacity: CapacityModel | None = None, clock: Callable[[], float] = time.monotonic
    ):
        self.config = config
        self.backend = Backend(config, capacity=capacity, clock=clock)
        self.stats = Stats()
        self.minutes = cloudwatch.MinuteCounters()
        if capacity is not None:
            capacity.minutes = self.minutes
        self.verifier = None
        if config.verify_signatures:
            from dynlocust.local.auth import SigV4Verifier

            self.verifier = SigV4Verifier(config.credentials, region=config.region)
        self.connections = Connections(config, self)
        self._rid_prefix = os.urandom(8).hex().upper()
        self._rid = 0
        self._trimmer: Any = None
        self._background: set[Any] = set()  # greenlets of background work (index backfills)
        self._date_second, self._date_text = -1, ""

    # ---------------------------------------------------------------- protocol
    def _date(self) -> str:
        """The Date header's value (RFC 7231's IMF-fixdate), formatted once a second."""
        now = int(time.time())
        if now != self._date_second:
            self._date_second, self._date_text = now, email.utils.formatdate(now, usegmt=True)
        return self._date_text

    def response(
        self,
        status: int,
        body: bytes,
        content_type: str = JSON_CONTENT_TYPE,
        headers: dict[str, str] | None = None,
    ) -> bytes:
        """The full response bytes, with the service's request id, CRC32, `Server: Server` and RFC 7231 `Date`
        headers (issue 45, class 10), for the loop's refusals too."""
        self._rid += 1
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()) if headers else ""
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}\r\n"
            f"x-amzn-RequestId: {self._rid_prefix}{self._rid:020d}\r\n"
            f"x-amz-crc32: {zlib.crc32(body) & 0xFFFFFFFF}\r\n"
            f"Server: Server\r\nDate: {self._date()}\r\n"
            f"{extra}"
            f"Content-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("latin-1") + body

    def handle_request(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes:
        """One request -> the full response bytes (status line, headers, body)."""
        if target.startswith("/_dynlocust/") or (method == "GET" and target in ("/", "")):
            return self._control(method, target, headers, body)
        if headers.get("x-amz-target", "").startswith(cloudwatch.TARGET_PREFIX):
            return self._cloudwatch(method, target, headers, body)
        started, cpu_started = time.perf_counter(), time.thread_time()
        try:
            return self._dynamodb(method, target, headers, body)
        finally:
            stats = self.stats
            elapsed = time.perf_counter() - started
            if elapsed > stats.max_request_seconds:
                stats.max_request_seconds = elapsed
            # a request's CPU time is at most its elapsed time: only then can it be a new largest (this saves a
            # system call per request, the thread's CPU clock has no fast path)
            if elapsed > stats.max_request_cpu_seconds:
                cpu = time.thread_time() - cpu_started
                if cpu > stats.max_request_cpu_seconds:
                    stats.max_request_cpu_seconds = cpu

    def _control(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes:
        """Health, stats and stats reset; with --verify-signatures, stats and reset need a signed request too."""
        if target in ("/", ""):
            return self.response(200, f"healthy: dynamodb.{self.config.region}.amazonaws.com ".encode(), "text/plain")
        if self.verifier is not None:
            try:
                self.verifier.verify(method, target, headers, body)
            except ServiceError as exc:
                return self.response(exc.status, orjson.dumps(exc.body()))
        if method == "GET" and target == STATS_PATH:
            snapshot = self.stats.snapshot()
            capacity = self.backend.capacity
            if capacity is not None:
                snapshot = {**snapshot, "capacity": capacity.snapshot()}
            return self.response(200, orjson.dumps(snapshot), "application/json")
        if method == "POST" and target == RESET_PATH:
            self.stats.reset()
            return self.response(200, b"{}", "application/json")
        return self.response(404, b"", "text/plain")

    def _cloudwatch(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes:
        """CloudWatch's GetMetricData and ListMetrics for the endpoint's own tables (`dynlocust.local.cloudwatch`)."""
        try:
            if self.verifier is not None:
                self.verifier.verify(method, target, headers, body, signing_name=cloudwatch.SERVICE)
        except ServiceError as exc:
            return self.response(exc.status, orjson.dumps(exc.body()))
        operation = headers["x-amz-target"][len(cloudwatch.TARGET_PREFIX) :]
        status, answer = cloudwatch.answer(self.minutes, operation, body)
        return self.response(status, orjson.dumps(answer))

    def _dynamodb(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes:
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
            return self.response(200, out)
        except ServiceError as exc:
            try:  # an error's body carries what the request named (an item, keys): it must not end the connection
                out = orjson.dumps(exc.body())
            except Exception:
                log.exception("internal error while answering %s's %s", op or target, exc.code)
            else:
                outcome = "throttled" if _is_throttle(exc) else "error"
                self.stats.count(ctx.tables[0] if ctx.tables else NO_TABLE, op or "Unknown", outcome, ctx.unprocessed)
                if outcome == "throttled" and ctx.tables:
                    self.minutes.throttled_request(ctx.tables[0], op)
                return self.response(exc.status, out, headers=exc.headers)
        except Exception:
            log.exception("internal error while handling %s", op or target)
        self.stats.count(ctx.tables[0] if ctx.tables else NO_TABLE, op or "Unknown", "error")
        body_out = json.dumps(
            {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "Internal server error"}
        ).encode()
        return self.response(500, body_out)

    def start(self, host: str | None = None, port: int | None = None) -> tuple[str, int]:
        """Bind and start serving in the current gevent hub; returns the bound (host, port)."""
        import gevent

        h = host if host is not None else self.config.host
        p = port if port is not None else self.config.port
        bound = self.connections.start(h, p)
        self._trimmer = gevent.spawn(keep_heap_trimmed)  # fragmentation must not grow the RSS (see heap.py)
        self.backend.state.background = self._in_background
        return bound

    def _in_background(self, step: Callable[[], bool]) -> None:
        """Run step() until it answers True, pausing BACKGROUND_PAUSE between calls so that requests are served."""
        import gevent

        def run() -> None:
            while not step():
                gevent.sleep(BACKGROUND_PAUSE)  # a timer, not sleep(0): the hub polls the sockets meanwhile

        self._background.add(gevent.spawn(run))
        self._background = {g for g in self._background if not g.dead}

    def stop(self) -> None:
        for g in self._background:
            g.kill(block=False)
        self._background = set()
        if self._trimmer is not None:
            self._trimmer.kill(block=False)
            self._trimmer = None
        self.connections.stop()
