"""The HTTP front of the local endpoint: a gevent StreamServer with a minimal HTTP/1.1 keep-alive parser.

Why hand-written: a WSGI stack costs more CPU per request than the whole PutItem; DynamoDB's JSON 1.0
protocol only needs POST with a Content-Length body, so the parser reads the head, the body, answers and loops.

What a client can hold (LocalConfig's limits, all options of `dynlocust local`):
- time: a request head must arrive within `header_timeout`, its body within `body_timeout`, and a keep-alive
  connection may wait `idle_timeout` for its next request; then it is closed (408 if a request was under way).
- sockets: at most `max_connections` at once (and never closer than FD_RESERVE to the process's descriptor
  limit); one more is answered 503 and closed, so new clients are never locked out by accept() failing.
- memory: buffered request bytes stay under `max_connections` x 128 KB (a head of at most 64 KB and one
  64 KB read) plus `max_buffered_bytes` for bodies still being received. A body is admitted only when its
  Content-Length fits in what is left of that budget (else 503), and never over 16 MB (413, as the service).
  Stored items are not part of this bound: a table holds what clients put in it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import os
import random
import re
import socket
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from dynlocust.dynamodb import JSON_CONTENT_TYPE, THROTTLE_CODES
from dynlocust.local import cloudwatch, errors
from dynlocust.local.api import Backend
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError
from dynlocust.local.heap import keep_heap_trimmed
from dynlocust.local.limits import MAX_HEAD_BYTES, MAX_REQUEST_BYTES
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
#: Bytes one read of a keep-alive connection takes at most: a request head and a typical body in one call.
RECV_BYTES = 65536
#: Pause between two slices of background work (dynlocust's choice): with backfill.SLICE_SECONDS, work in the
#: background takes at most about two thirds of the CPU while clients wait.
BACKGROUND_PAUSE = 0.001
#: Pauses of accepting while the process is out of descriptors (dynlocust's choice): from 10 ms, doubling to 1 s.
ACCEPT_PAUSE_MIN = 0.01
ACCEPT_PAUSE_MAX = 1.0
DESCRIPTORS_LOG_EVERY = 60.0
FD_RESERVE = 64  # descriptors kept free for the process itself (logs, the listening socket, files)
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
_HTTP_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")
#: Most bytes of a refused body read and dropped before closing (2 x the 16 MB limit; dynlocust's choice).
DRAIN_MAX = 2 * MAX_REQUEST_BYTES


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


def _fast_io(sock: Any, idle: float, inbox: memoryview) -> tuple[Callable[[int], bytes], Callable[[bytes], None]]:
    """recv(n) waiting at most `idle`, and sendall(data), for the keep-alive loop's common case.

    Why: gevent's socket methods build a new Timeout (a libev timer) for every wait and run a chunking loop for every
    send; at 10^4 requests/s that costs more than parsing the request. These call the underlying non-blocking
    socket directly, wait on the socket's read watcher under one reused idle timer, and leave a send that does not
    complete at once to gevent's sendall. A socket that is not a gevent socket gets its own methods.

    recv reads into `inbox` (one buffer per server) and copies out only the bytes received: socket.recv(n) takes n
    bytes from the C heap and shrinks them to the bytes read, once a request, which fragments the heap. Sharing the
    buffer is safe because no greenlet can switch between the read and the copy.
    """
    raw = getattr(sock, "_sock", None)
    read_event = getattr(sock, "_read_event", None)
    if raw is None or read_event is None:
        return sock.recv, sock.sendall
    from gevent import get_hub, getcurrent

    hub = get_hub()
    raw_recv_into, raw_send, wait = raw.recv_into, raw.send, hub.wait
    # the libev timer a gevent Timeout wraps, without the Python layer. Repeating, and armed with again(): a stopped
    # libev timer restarted with start() keeps only what was left of its time, so the idle limit would run out
    # over the connection's summed waits, closing a busy connection under a request in flight
    timer = hub.loop.timer(idle, idle)
    expire, expired = getcurrent().throw, TimeoutError("timed out")

    def recv(n: int) -> bytes:
        while True:
            try:
                got = raw_recv_into(inbox, n)
                return inbox[:got].tobytes()
            except BlockingIOError:
                pass
            timer.again(expire, expired, update=True)
            try:
                wait(read_event)
            finally:
                timer.stop()

    def send(data: bytes) -> None:
        try:
            sent = raw_send(data)
        except BlockingIOError:
            sent = 0
        if sent < len(data):
            sock.sendall(memoryview(data)[sent:])

    return recv, send


def _listener(stream_server: type) -> type:
    """gevent's StreamServer, except that running out of descriptors is one log line and a pause, not a traceback.

    Why: accept() fails with EMFILE while the process holds as many descriptors as its limit allows (connections
    being refused count too); gevent logs each failure with a traceback and retries. This logs the first of a run of
    them with what to do (and again at most every DESCRIPTORS_LOG_EVERY seconds), then pauses accepting for a delay
    that doubles up to ACCEPT_PAUSE_MAX while it lasts.
    """

    class Listener(stream_server):
        _pause = 0.0
        _logged_at = -math.inf

        def do_read(self) -> Any:
            try:
                accepted = super().do_read()
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                if time.monotonic() - self._logged_at >= DESCRIPTORS_LOG_EVERY:
                    self._logged_at = time.monotonic()
                    log.warning(
                        "out of file descriptors (limit %d): not accepting connections until some close; "
                        "raise the limit (ulimit -n) or lower --max-connections",
                        _descriptor_limit(),
                    )
                self._pause = min(ACCEPT_PAUSE_MAX, self._pause * 2 or ACCEPT_PAUSE_MIN)
                self.stop_accepting()
                self._timer = self.loop.timer(self._pause)
                self._timer.start(self._start_accepting_if_started)
                return None
            self._pause = 0.0
            return accepted

    return Listener


def _descriptor_limit() -> int:
    """The process's soft limit on open descriptors (a large number where there is none)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1 << 20
    return soft if soft != resource.RLIM_INFINITY and soft > 0 else 1 << 20


class LocalServer:
    """Protocol handling independent of sockets: `handle_request` turns one HTTP request into response bytes."""

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
        self._open = 0  # connections being served
        self._buffered = 0  # bytes of request bodies being received, reserved by Content-Length
        self._max_open = config.max_connections
        self._rid_prefix = os.urandom(8).hex().upper()
        self._rid = 0
        self._server: Any = None
        self._trimmer: Any = None
        self._background: set[Any] = set()  # greenlets of background work (index backfills)
        self._inbox = memoryview(bytearray(RECV_BYTES))

    # ---------------------------------------------------------------- protocol
    def _response(
        self,
        status: int,
        body: bytes,
        content_type: str = JSON_CONTENT_TYPE,
        headers: dict[str, str] | None = None,
    ) -> bytes:
        self._rid += 1
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items()) if headers else ""
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}\r\n"
            f"x-amzn-RequestId: {self._rid_prefix}{self._rid:020d}\r\n"
            f"x-amz-crc32: {zlib.crc32(body) & 0xFFFFFFFF}\r\n"
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
            return self._response(200, f"healthy: dynamodb.{self.config.region}.amazonaws.com ".encode(), "text/plain")
        if self.verifier is not None:
            try:
                self.verifier.verify(method, target, headers, body)
            except ServiceError as exc:
                return self._response(exc.status, orjson.dumps(exc.body()))
        if method == "GET" and target == STATS_PATH:
            snapshot = self.stats.snapshot()
            capacity = self.backend.capacity
            if capacity is not None:
                snapshot = {**snapshot, "capacity": capacity.snapshot()}
            return self._response(200, orjson.dumps(snapshot), "application/json")
        if method == "POST" and target == RESET_PATH:
            self.stats.reset()
            return self._response(200, b"{}", "application/json")
        return self._response(404, b"", "text/plain")

    def _cloudwatch(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes:
        """CloudWatch's GetMetricData and ListMetrics for the endpoint's own tables (`dynlocust.local.cloudwatch`)."""
        try:
            if self.verifier is not None:
                self.verifier.verify(method, target, headers, body, signing_name=cloudwatch.SERVICE)
        except ServiceError as exc:
            return self._response(exc.status, orjson.dumps(exc.body()))
        operation = headers["x-amz-target"][len(cloudwatch.TARGET_PREFIX) :]
        status, answer = cloudwatch.answer(self.minutes, operation, body)
        return self._response(status, orjson.dumps(answer))

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
            return self._response(200, out)
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
                return self._response(exc.status, out, headers=exc.headers)
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
    def _refuse(self, sock: Any, status: int, message: str = "", unread: int = 0) -> None:
        """Answer an HTTP-level refusal and let the caller close the connection; `unread`: bytes of a body the
        client is still sending, read and dropped first (at most DRAIN_MAX of them, within body_timeout)."""
        head_body = self._response(status, message.encode(), "text/plain")
        end = head_body.index(b"\r\n\r\n")
        sock.sendall(head_body[:end] + b"\r\nConnection: close" + head_body[end:])
        # half-close, then read what the client sends: closing with unread input would send a reset, which can
        # reach the client before the answer does (a client sends its whole body before it reads the answer)
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + self.config.body_timeout
        sock.settimeout(self.config.body_timeout if unread else 0.05)
        with contextlib.suppress(OSError):
            got = sock.recv_into(self._inbox)
            left = min(unread, DRAIN_MAX) - got
            while got and left > 0 and time.monotonic() < deadline:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                got = sock.recv_into(self._inbox)
                left -= got

    def _read_more(self, sock: Any, deadline: float) -> bytes:
        """One read that must complete before `deadline` (monotonic): b"" when the peer closed, TimeoutError after."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        return sock.recv(RECV_BYTES)

    def _read_body(self, sock: Any, buf: bytes, length: int) -> bytearray | None:
        """The rest of a body that did not come with its head, read into one buffer reserved by Content-Length.

        Returns None when the peer closed early. Raises TimeoutError after body_timeout.
        """
        body = bytearray(length)
        body[: len(buf)] = buf
        view = memoryview(body)
        got = len(buf)
        deadline = time.monotonic() + self.config.body_timeout
        while got < length:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
            n = sock.recv_into(view[got:])
            if not n:
                return None
            got += n
        return body

    def handle_connection(self, sock: Any, _addr: Any) -> None:
        """Serve one keep-alive connection until the client closes it, asks `Connection: close`, or a limit ends it."""
        self._open += 1
        try:
            if self._open > self._max_open:
                self._refuse(sock, 503, "too many connections")
                return
            self._serve(sock)
        except OSError:  # includes socket timeouts and TimeoutError: the connection just ends
            return
        finally:
            self._open -= 1
            with contextlib.suppress(OSError):
                sock.close()

    def _serve(self, sock: Any) -> None:
        import gevent

        # responses go out in one sendall; without NODELAY a multi-segment page (a 1 MB Query) can wait for
        # the client's delayed ACK
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        idle = self.config.idle_timeout
        sock.settimeout(idle)
        recv, send = _fast_io(sock, idle, self._inbox)
        buf = b""
        latency = self.config.latency_model
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if not buf:
                    buf = recv(RECV_BYTES)  # waits at most idle_timeout for the next request
                    if not buf:
                        return
                    end = buf.find(b"\r\n\r\n")
                if end < 0:  # a head in several reads: the slow path, bounded by header_timeout
                    deadline = time.monotonic() + self.config.header_timeout
                    try:
                        while end < 0:
                            if b"\n\n" in buf or len(buf) > MAX_HEAD_BYTES:
                                break
                            data = self._read_more(sock, deadline)
                            if not data:
                                return
                            buf += data
                            end = buf.find(b"\r\n\r\n")
                    except TimeoutError:
                        self._refuse(sock, 408, "request head not received within the header timeout")
                        return
                    sock.settimeout(idle)
                    if end < 0:
                        if len(buf) > MAX_HEAD_BYTES:
                            self._refuse(sock, 413, "request head too large")
                        else:
                            self._refuse(sock, 400, "bare LF line endings are not supported; use CRLF")
                        return
            head = buf[:end]
            if head.count(b"\n") != head.count(b"\r\n"):
                self._refuse(sock, 400, "bare LF line endings are not supported; use CRLF")
                return
            lines = head.decode("latin-1").split("\r\n")
            buf = buf[end + 4 :]
            parts = lines[0].split(" ")
            if len(parts) != 3:
                self._refuse(sock, 400, "malformed request line")
                return
            method, target, version = parts
            if version != "HTTP/1.1" and version != "HTTP/1.0":
                if _HTTP_VERSION.fullmatch(version):
                    self._refuse(sock, 505, "only HTTP/1.1 and HTTP/1.0 are supported")
                else:
                    self._refuse(sock, 400, "malformed request line")
                return
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                value = value.strip()
                headers[name] = f"{headers[name]},{value}" if name in headers else value
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._refuse(sock, 400, "chunked transfer encoding is not supported")
                return
            cl = headers.get("content-length", "0")
            # digits only: int() would also take "+2", " 2" and "0_2"
            if not (cl.isdigit() and cl.isascii()):
                self._refuse(sock, 400, "invalid Content-Length")
                return
            length = int(cl)
            if length > MAX_REQUEST_BYTES:
                self._refuse(sock, 413, unread=length - len(buf))
                return
            reserved = 0
            try:
                if len(buf) >= length:
                    body: bytes | bytearray = buf[:length]
                    buf = buf[length:]
                else:
                    if self._buffered + length > self.config.max_buffered_bytes:
                        self._refuse(sock, 503, "too many request bytes in flight")
                        return
                    reserved = length
                    self._buffered += length
                    if headers.get("expect", "").lower() == "100-continue":
                        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    try:
                        got = self._read_body(sock, buf, length)
                    except TimeoutError:
                        self._refuse(sock, 408, "request body not received within the body timeout")
                        return
                    if got is None:
                        return
                    body = got
                    buf = b""
                    sock.settimeout(idle)
                if latency:
                    gevent.sleep(self._latency())
                conn = headers.get("connection", "").lower()
                close = conn == "close" or (version == "HTTP/1.0" and conn != "keep-alive")
                out = self.handle_request(method, target, headers, body)
            finally:
                self._buffered -= reserved
            if close:
                head_end = out.index(b"\r\n\r\n")
                out = out[:head_end] + b"\r\nConnection: close" + out[head_end:]
            send(out)
            if close:
                return

    def start(self, host: str | None = None, port: int | None = None) -> tuple[str, int]:
        """Bind and start serving in the current gevent hub; returns the bound (host, port)."""
        import gevent
        from gevent.server import StreamServer

        h = host if host is not None else self.config.host
        p = port if port is not None else self.config.port
        self._max_open = max(1, min(self.config.max_connections, _descriptor_limit() - FD_RESERVE))
        self._server = _listener(StreamServer)((h, p), self.handle_connection, backlog=1024)
        self._server.start()
        self._trimmer = gevent.spawn(keep_heap_trimmed)  # fragmentation must not grow the RSS (see heap.py)
        self.backend.state.background = self._in_background
        bound = self._server.address
        return bound[0], bound[1]

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
        if self._server is not None:
            self._server.stop(timeout=1)
            self._server = None
