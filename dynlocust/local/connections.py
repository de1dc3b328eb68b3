"""The HTTP/1.1 keep-alive connection loop of the local endpoint: sockets in, one request at a time to its protocol.

Why hand-written: a WSGI stack costs more CPU per request than the whole PutItem; DynamoDB's JSON 1.0
protocol only needs POST with a Content-Length body, so the loop reads the head, the body, answers and loops.
The seam is `Application`: the loop hands it (method, target, headers, body) and sends the bytes it returns
(`dynlocust.local.server.LocalServer` is the endpoint's); refusals at the HTTP level are answered here.

What a client can hold (LocalConfig's limits, all options of `dynlocust local`):
- time: a request head must arrive within `header_timeout`, its body within `body_timeout`, and a keep-alive
  connection may wait `idle_timeout` for its next request; then it is closed (408 if a request was under way).
- sockets: at most `max_connections` at once (and never closer than FD_RESERVE to the process's descriptor
  limit); one more is answered 503 and closed, so new clients are never locked out by accept() failing.
- memory: buffered request bytes stay under `max_connections` x 128 KB (a head of at most 64 KB and one
  64 KB read) plus `max_buffered_bytes` for bodies still being received. A body is admitted only when its
  Content-Length fits in what is left of that budget (else 503), and never over 16 MB (413, as the service); a
  chunked body reserves the whole 16 MB while it is received.
  Stored items are not part of this bound: a table holds what clients put in it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import random
import re
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

from dynlocust.local.config import LocalConfig
from dynlocust.local.limits import MAX_HEAD_BYTES, MAX_REQUEST_BYTES

log = logging.getLogger(__name__)

#: Bytes one read of a keep-alive connection takes at most: a request head and a typical body in one call.
RECV_BYTES = 65536
#: Pauses of accepting while the process is out of descriptors (dynlocust's choice): from 10 ms, doubling to 1 s.
ACCEPT_PAUSE_MIN = 0.01
ACCEPT_PAUSE_MAX = 1.0
DESCRIPTORS_LOG_EVERY = 60.0
FD_RESERVE = 64  # descriptors kept free for the process itself (logs, the listening socket, files)
_HTTP_VERSION = re.compile(r"HTTP/[0-9]\.[0-9]")
#: Most bytes of a refused body read and dropped before closing (2 x the 16 MB limit; dynlocust's choice).
DRAIN_MAX = 2 * MAX_REQUEST_BYTES
#: Longest line of a chunked body read (a chunk's size and its extensions, or a trailer; dynlocust's choice).
MAX_CHUNK_LINE = 4096


class Application(Protocol):
    """What the connection loop serves: one HTTP request in, the full response bytes (status line on) out."""

    def handle_request(self, method: str, target: str, headers: dict[str, str], body: bytes | bytearray) -> bytes: ...

    def response(
        self, status: int, body: bytes, content_type: str = ..., headers: dict[str, str] | None = None
    ) -> bytes:
        """A response of `status` with `body`: the loop's own refusals (408, 413, 503...) are built by it too."""
        ...


def service_latency() -> float:
    """A request's latency in the service, waited before answering when `latency_model` is on.

    In-region p50 of 4-5 ms with a modest tail (service-behaviour.md): lognormal around 4.5 ms."""
    return random.lognormvariate(math.log(0.0045), 0.3)


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


class Connections:
    """Accepts connections and serves each, one request at a time, to `app`; holds the limits shared by all of them."""

    def __init__(self, config: LocalConfig, app: Application) -> None:
        self.config = config
        self.app = app
        self._open = 0  # connections being served
        self._buffered = 0  # bytes of request bodies being received, reserved by Content-Length
        self._max_open = config.max_connections
        self._server: Any = None
        self._inbox = memoryview(bytearray(RECV_BYTES))

    def _refuse(self, sock: Any, status: int, message: str = "", unread: int = 0) -> None:
        """Answer an HTTP-level refusal and let the caller close the connection; `unread`: bytes of a body the
        client is still sending, read and dropped first (at most DRAIN_MAX of them, within body_timeout)."""
        head_body = self.app.response(status, message.encode(), "text/plain")
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

    def _read_chunked(self, sock: Any, buf: bytes) -> tuple[bytearray, bytes] | int | None:
        """A chunked body: (the body, the bytes after it), None when the peer closed early, or the status to refuse
        it with: 413 once it passes 16 MB (as the service refuses any body over it), 400 when a chunk is malformed.
        Raises TimeoutError after body_timeout."""
        data, pos, body = bytearray(buf), 0, bytearray()
        deadline = time.monotonic() + self.config.body_timeout

        def line() -> int | None:  # the end of the line at pos, reading more as needed; -1 if too long, None if closed
            while (end := data.find(b"\r\n", pos)) < 0 and len(data) - pos <= MAX_CHUNK_LINE:
                if not (more := self._read_more(sock, deadline)):
                    return None
                data.extend(more)
            return end if 0 <= end - pos <= MAX_CHUNK_LINE else -1

        while True:
            if (end := line()) is None or end < 0:
                return None if end is None else 400
            size_text = bytes(data[pos:end]).split(b";", 1)[0].strip()
            if not size_text or size_text.strip(b"0123456789abcdefABCDEF"):
                return 400
            size = int(size_text, 16)
            if len(body) + size > MAX_REQUEST_BYTES:
                return 413
            pos = end + 2
            if size == 0:
                break
            while len(data) < pos + size + 2:
                if not (more := self._read_more(sock, deadline)):
                    return None
                data.extend(more)
            if data[pos + size : pos + size + 2] != b"\r\n":
                return 400
            body += data[pos : pos + size]
            del data[: pos + size + 2]
            pos = 0
        while (end := line()) != pos:  # trailer lines, then the empty line
            if end is None or end < 0:
                return None if end is None else 400
            pos = end + 2
        return body, bytes(data[pos + 2 :])

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
            chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            cl = headers.get("content-length", "0")
            # digits only: int() would also take "+2", " 2" and "0_2"
            if not chunked and not (cl.isdigit() and cl.isascii()):
                self._refuse(sock, 400, "invalid Content-Length")
                return
            length = MAX_REQUEST_BYTES if chunked else int(cl)
            if length > MAX_REQUEST_BYTES:
                self._refuse(sock, 413, unread=length - len(buf))
                return
            reserved = 0
            try:
                if not chunked and len(buf) >= length:
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
                        got = self._read_chunked(sock, buf) if chunked else self._read_body(sock, buf, length)
                    except TimeoutError:
                        self._refuse(sock, 408, "request body not received within the body timeout")
                        return
                    if got is None:
                        return
                    if isinstance(got, int):  # a chunked body over 16 MB (413) or malformed (400)
                        self._refuse(sock, got, "" if got == 413 else "malformed chunked body", unread=DRAIN_MAX)
                        return
                    body, buf = got if isinstance(got, tuple) else (got, b"")
                    sock.settimeout(idle)
                if latency:
                    gevent.sleep(service_latency())
                conn = headers.get("connection", "").lower()
                close = conn == "close" or (version == "HTTP/1.0" and conn != "keep-alive")
                out = self.app.handle_request(method, target, headers, body)
            finally:
                self._buffered -= reserved
            if close:
                head_end = out.index(b"\r\n\r\n")
                out = out[:head_end] + b"\r\nConnection: close" + out[head_end:]
            send(out)
            if close:
                return

    def start(self, host: str, port: int) -> tuple[str, int]:
        """Bind and start accepting in the current gevent hub; returns the bound (host, port)."""
        from gevent.server import StreamServer

        self._max_open = max(1, min(self.config.max_connections, _descriptor_limit() - FD_RESERVE))
        self._server = _listener(StreamServer)((host, port), self.handle_connection, backlog=1024)
        self._server.start()
        bound = self._server.address
        return bound[0], bound[1]

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(timeout=1)
            self._server = None
