"""The fast transport: a signed DynamoDB client on a gevent keep-alive socket pool, shaped like a botocore client.

Why hand-rolled: boto3 spends ~2 ms of CPU per request, most of it in urllib3, http.client, request objects and
generic signing. A DynamoDB data-plane call is one JSON `POST /` with a fixed header set, so this client does one
`orjson` encode, a templated SigV4 (`sigv4.py`), one `sendall` and a minimal HTTP/1.1 response read.

Contract (tested against botocore): the data-plane methods take the low-level client's keyword arguments and return
the dicts botocore returns, `ResponseMetadata` included; errors raise botocore's own modeled exceptions built from
the same parsed error body; socket failures raise the botocore exceptions botocore raises for them. So
`dynlocust.request.client.DynamoDBClient` wraps a `FastDynamoDB` unchanged and `outcomes.classify` needs no new rules.
It is also a `Transport` (`transport.base`): `handle_request` answers an error as its status and that same parsed
body, without building the exception (a scenario run's throttles).
Exactly one HTTP request per call: no retries, not even on a stale keep-alive connection (dropped idle connections
are detected before reuse, as urllib3 does). The response CRC32 (`x-amz-crc32`) is checked on every response and a
mismatch raises botocore's `ChecksumError` (boto3 with retries off accepts the response silently).

Other methods (create_table, describe_table, ...) are served by a lazily built botocore client with the same
endpoint, region, credentials and no retries.
"""

from __future__ import annotations

import base64
import contextlib
import socket as _stdlib_socket
import zlib
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import gevent.socket
import gevent.ssl
import orjson
from gevent.monkey import get_original

from dynlocust.dynamodb import JSON_CONTENT_TYPE
from dynlocust.errors import ConfigurationError
from dynlocust.request.transport.base import Reply
from dynlocust.request.transport.pool_wait import PoolWaitCounter
from dynlocust.request.transport.sigv4 import CredentialSource, SigV4Signer, host_header

if TYPE_CHECKING:
    from dynlocust.request.transport.boto3 import BotocoreTransport

DATA_PLANE = (
    "PutItem",
    "GetItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "BatchWriteItem",
    "BatchGetItem",
    "TransactWriteItems",
    "TransactGetItems",
)
TARGET_PREFIX = "DynamoDB_20120810."
USER_AGENT = "dynlocust-fast/1"
RECV_SIZE = 65536

_real_select = get_original("select", "select")
_dumps = orjson.dumps
_loads = orjson.loads
_crc32 = zlib.crc32


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"expected JSON-serializable request values or bytes, found {type(value).__name__}")


class HTTPResponse:
    """Status, lower-cased headers (repeated headers joined with ', ', as urllib3 does) and the raw body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _Connection:
    __slots__ = ("fd", "sock", "timeout", "wait_readable")

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.fd = sock.fileno()  # select() on the int: a gevent socket's fileno() is a Python call
        self.timeout: float | None = sock.gettimeout()
        self.wait_readable = _readable_waiter(sock)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def _readable_waiter(sock: Any) -> Callable[[], None] | None:
    """What blocks until `sock` is readable, under its timeout, as gevent's own `recv` waits (None: not known).

    An answer is never there the moment its request is sent, so a first `recv` fails with EAGAIN, raised and caught
    in Python (1.7 us by timeit), before gevent waits; waiting first skips that. A plain gevent socket waits
    through its `_wait` and `_read_event`; a TLS socket may hold decrypted bytes its descriptor no longer shows, and
    where a gevent lacks these, `recv` waits by itself."""
    if isinstance(sock, gevent.ssl.SSLSocket):
        return None
    wait, watcher = getattr(sock, "_wait", None), getattr(sock, "_read_event", None)
    return partial(wait, watcher) if wait is not None and watcher is not None else None


class ConnectionPool:
    """HTTP/1.1 keep-alive connections to one endpoint; up to `maxsize` idle ones are kept (like urllib3 with
    `block=False`: more concurrent requests open extra sockets that are closed afterwards)."""

    def __init__(
        self,
        endpoint_url: str,
        *,
        connect_timeout: float,
        read_timeout: float,
        maxsize: int,
        verify: bool | str = True,
    ) -> None:
        parts = urlsplit(endpoint_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(f"fast transport endpoint: expected an http(s) URL, found {endpoint_url!r}")
        self.endpoint_url = endpoint_url
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.maxsize = max(1, maxsize)
        self._ssl_context = _ssl_context(verify) if parts.scheme == "https" else None
        self._idle: list[_Connection] = []
        self.opened = 0
        self._busy = 0
        self.waits = PoolWaitCounter()
        """Requests that found all `maxsize` pooled connections busy and had to open one outside the pool."""

    def __repr__(self) -> str:
        return f"ConnectionPool({self.endpoint_url!r}, idle={len(self._idle)}, opened={self.opened})"

    def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _connect(self) -> _Connection:
        from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, SSLError

        url = self.endpoint_url
        try:
            sock = gevent.socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except TimeoutError as exc:
            raise ConnectTimeoutError(endpoint_url=url, error=exc) from exc
        except OSError as exc:
            raise EndpointConnectionError(endpoint_url=url, error=exc) from exc
        sock.setsockopt(_stdlib_socket.IPPROTO_TCP, _stdlib_socket.TCP_NODELAY, 1)
        sock.setsockopt(_stdlib_socket.SOL_SOCKET, _stdlib_socket.SO_KEEPALIVE, 1)
        if self._ssl_context is not None:
            try:
                sock = self._ssl_context.wrap_socket(sock, server_hostname=self.host)
            except TimeoutError as exc:
                sock.close()
                raise ConnectTimeoutError(endpoint_url=url, error=exc) from exc
            except OSError as exc:
                sock.close()
                raise SSLError(endpoint_url=url, error=exc) from exc
        sock.settimeout(self.read_timeout)
        self.opened += 1
        return _Connection(sock)

    def _acquire(self) -> _Connection:
        idle = self._idle
        while idle:
            conn = idle.pop()
            try:
                # An idle keep-alive connection has nothing to read; anything readable is EOF, a reset or a
                # close_notify, so the connection is dead (urllib3's is_connection_dropped test).
                readable = _real_select([conn.fd], [], [], 0)[0]
            except (OSError, ValueError):
                readable = [conn]
            if not readable:
                return conn
            conn.close()
        return self._connect()

    def request(self, data: bytes, bounded: bool = False) -> HTTPResponse:
        """Send one complete request and read its response; never retries.

        `bounded`: the caller's deadline fires before the read timeout could, so the socket reads without one.
        gevent starts a `Timeout` for every read that waits on a socket with a timeout (2.3 us by timeit, once or
        more per request); the setting is kept per connection and changed only when the next request differs."""
        if not self._idle and self._busy >= self.maxsize:
            self.waits.increment()
        self._busy += 1
        try:
            conn = self._acquire()
            timeout = None if bounded else self.read_timeout
            try:
                if conn.timeout != timeout:
                    conn.sock.settimeout(timeout)
                    conn.timeout = timeout
                response, keep = self._exchange(conn.sock, data, conn.wait_readable)
            except BaseException:
                conn.close()
                raise
        finally:
            self._busy -= 1
        if keep and len(self._idle) < self.maxsize:
            self._idle.append(conn)
        else:
            conn.close()
        return response

    def _exchange(
        self, sock: Any, data: bytes, wait_readable: Callable[[], None] | None = None
    ) -> tuple[HTTPResponse, bool]:
        url = self.endpoint_url
        try:
            # one send() takes a whole request as a rule; gevent's sendall() asks SO_SNDBUF on every call
            sent = sock.send(data)
            if sent < len(data):
                sock.sendall(memoryview(data)[sent:])
            if wait_readable is not None:
                wait_readable()
            buf = sock.recv(RECV_SIZE)
            while True:
                if not buf:
                    raise _closed(url)
                end = buf.find(b"\r\n\r\n")
                if end >= 0:
                    break
                more = sock.recv(RECV_SIZE)
                if not more:
                    raise _closed(url)
                buf += more
            lines = buf[:end].decode("latin-1").split("\r\n")
            status_line = lines[0]
            status = int(status_line[9:12])
            headers: dict[str, str] = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                value = value.strip()
                if name in headers:
                    headers[name] = f"{headers[name]}, {value}"
                else:
                    headers[name] = value
            rest = buf[end + 4 :]
            keep = not status_line.startswith("HTTP/1.0") and headers.get("connection", "").lower() != "close"
            length = headers.get("content-length")
            if length is not None:
                need = int(length)
                if len(rest) < need:
                    rest = _read_exactly(sock, rest, need, url)
                if len(rest) != need:
                    keep = False  # bytes past the body: the connection state is not ours to trust
                body = rest[:need]
            elif "chunked" in headers.get("transfer-encoding", "").lower():
                body, clean = _read_chunked(sock, rest, url)
                keep = keep and clean
            else:
                chunks = [rest]
                while chunk := sock.recv(RECV_SIZE):
                    chunks.append(chunk)
                body = b"".join(chunks)
                keep = False
        except TimeoutError as exc:
            from botocore.exceptions import ReadTimeoutError

            raise ReadTimeoutError(endpoint_url=url, error=exc) from exc
        except (OSError, ValueError, IndexError) as exc:  # reset, broken pipe, TLS EOF, garbled status line
            raise _closed(url, exc) from exc
        return HTTPResponse(status, headers, body), keep


def _closed(url: str, error: BaseException | None = None) -> Exception:
    """botocore's `ConnectionClosedError`, imported only when one is raised: an import statement on the request
    path costs 0.74 us by timeit on every request."""
    from botocore.exceptions import ConnectionClosedError

    if error is None:
        return ConnectionClosedError(endpoint_url=url)
    return ConnectionClosedError(endpoint_url=url, error=error)


def _read_exactly(sock: Any, start: bytes, need: int, url: str) -> bytes:
    """Read into one preallocated buffer: a multi-megabyte Query page costs one copy, not one per recv."""
    buffer = bytearray(need)
    view = memoryview(buffer)
    have = len(start)
    view[:have] = start
    while have < need:
        got = sock.recv_into(view[have:])
        if not got:
            raise _closed(url)
        have += got
    return bytes(buffer)


def _read_chunked(sock: Any, buf: bytes, url: str) -> tuple[bytes, bool]:
    def fill(buffer: bytes, need: int) -> bytes:
        while len(buffer) < need:
            more = sock.recv(RECV_SIZE)
            if not more:
                raise _closed(url)
            buffer += more
        return buffer

    parts: list[bytes] = []
    while True:
        while (eol := buf.find(b"\r\n")) < 0:
            buf = fill(buf, len(buf) + 1)
        size = int(buf[:eol].split(b";", 1)[0], 16)
        buf = buf[eol + 2 :]
        if size == 0:
            while (end := buf.find(b"\r\n")) != 0:  # trailers, then the blank line
                buf = fill(buf, len(buf) + 1) if end < 0 else buf[end + 2 :]
            return b"".join(parts), len(buf) == 2
        buf = fill(buf, size + 2)
        parts.append(buf[:size])
        buf = buf[size + 2 :]


def _ssl_context(verify: bool | str) -> Any:
    if verify is False:
        context = gevent.ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = gevent.ssl.CERT_NONE
        return context
    if isinstance(verify, str):
        return gevent.ssl.create_default_context(cafile=verify)
    from botocore.httpsession import get_cert_path

    return gevent.ssl.create_default_context(cafile=get_cert_path(True))


class _Meta:
    """The parts of botocore's `client.meta` that callers (and `DynamoDBClient`) read."""

    def __init__(self, endpoint_url: str, region_name: str, service_model: Any, mapping: dict[str, str]) -> None:
        self.endpoint_url = endpoint_url
        self.region_name = region_name
        self.service_model = service_model
        self.method_to_api_mapping = mapping


class _Operation:
    """What one data-plane operation needs at call time, computed once from botocore's service model."""

    __slots__ = ("allowed", "blobs", "head", "members", "model", "name", "required", "target")

    def __init__(self, model: Any, host: str) -> None:
        self.model = model
        self.name = model.name
        self.target = TARGET_PREFIX + model.name
        input_shape = model.input_shape
        self.allowed = frozenset(input_shape.members)
        self.required = frozenset(input_shape.required_members)
        self.members = frozenset(model.output_shape.members) if model.output_shape is not None else frozenset()
        self.blobs = model.output_shape is not None and _has_blob(model.output_shape, set())
        self.head = (
            f"POST / HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {USER_AGENT}\r\nContent-Type: {JSON_CONTENT_TYPE}\r\n"
            f"X-Amz-Target: {TARGET_PREFIX}{model.name}\r\namz-sdk-request: attempt=1; max=1\r\n"
        )


def _has_blob(shape: Any, seen: set[str]) -> bool:
    if shape.type_name == "blob":
        return True
    if shape.name in seen:
        return False
    seen.add(shape.name)
    if shape.type_name == "structure":
        return any(_has_blob(member, seen) for member in shape.members.values())
    if shape.type_name == "list":
        return _has_blob(shape.member, seen)
    if shape.type_name == "map":
        return _has_blob(shape.value, seen)
    return False


class FastDynamoDB:
    """A botocore-compatible DynamoDB client for the data plane; everything else goes to a botocore client.

    Build it with `make_fast_client`. One instance is shared by all users of a process (one pool), like botocore's.
    """

    def __init__(
        self,
        endpoint_url: str,
        *,
        region: str,
        credentials: CredentialSource,
        connect_timeout: float,
        read_timeout: float,
        pool_size: int,
        verify: bool | str = True,
        botocore_factory: Callable[[], Any] | None = None,
    ) -> None:
        from botocore.errorfactory import ClientExceptionsFactory
        from botocore.parsers import create_parser
        from botocore.session import Session

        service_model = Session().get_service_model("dynamodb")
        self.exceptions = ClientExceptionsFactory().create_client_exceptions(service_model)
        self._service_model = service_model
        self._parser = create_parser("json")
        self._signer = SigV4Signer(credentials, endpoint_url, region)
        self._pool = ConnectionPool(
            endpoint_url,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            maxsize=pool_size,
            verify=verify,
        )
        self._botocore_factory = botocore_factory
        self._botocore: Any = None
        self._control_plane: BotocoreTransport | None = None
        mapping: dict[str, str] = {}
        from botocore import xform_name

        for name in service_model.operation_names:
            mapping[xform_name(name)] = name
        self.meta = _Meta(endpoint_url, region, service_model, mapping)
        host = host_header(endpoint_url)
        self._operations: dict[str, _Operation] = {}
        for name in DATA_PLANE:
            op = _Operation(service_model.operation_model(name), host)
            self._operations[name] = op
            setattr(self, xform_name(name), self._method(op))

    def __repr__(self) -> str:
        return f"FastDynamoDB({self.meta.endpoint_url!r}, region={self.meta.region_name!r})"

    @property
    def pool(self) -> ConnectionPool:
        return self._pool

    @property
    def pool_waits(self) -> PoolWaitCounter:
        """Requests that found every pooled connection busy (`dynlocust.run.saturation`'s `pool` reason)."""
        return self._pool.waits

    @property
    def botocore(self) -> Any:
        """The botocore client used for operations outside the data plane (built on first use)."""
        if self._botocore is None:
            if self._botocore_factory is None:
                raise ConfigurationError(
                    "FastDynamoDB: expected a botocore factory for control-plane calls, found none"
                )
            self._botocore = self._botocore_factory()
        return self._botocore

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.botocore, name)

    def close(self) -> None:
        """Close pooled connections (and the control-plane botocore client, if one was built)."""
        self._pool.close()
        if self._botocore is not None:
            self._botocore.close()

    def _method(self, op: _Operation) -> Callable[..., dict[str, Any]]:
        send, parse, error = self._send, self._parse, self._error

        def method(**kwargs: Any) -> dict[str, Any]:
            response = send(op, kwargs)
            if response.status >= 300:
                raise error(op, response)
            return parse(op, response)

        method.__name__ = op.name
        method.__doc__ = f"DynamoDB {op.name} over the fast transport (botocore's arguments and response)."
        return method

    def handle_request(self, operation: str, params: dict[str, Any], deadline: float | None = None) -> Reply:
        """`Transport`'s one method: a service error comes back as its status and parsed body, not as an exception.

        Operations outside the data plane go to the botocore client, through `BotocoreTransport`. A `deadline` no
        longer than the read timeout fires before any read could time out: the exchange then reads without one
        (`ConnectionPool.request`'s `bounded`)."""
        op = self._operations.get(operation)
        if op is None:
            return self.control_plane.handle_request(operation, params, deadline)
        response = self._send(op, params, deadline is not None and deadline <= self._pool.read_timeout)
        if response.status >= 300:
            return Reply(response.status, self._error_body(op, response))
        return Reply(response.status, self._parse(op, response))

    @property
    def control_plane(self) -> BotocoreTransport:
        """The botocore client as a `Transport` (built on first use)."""
        if self._control_plane is None:
            from dynlocust.request.transport.boto3 import BotocoreTransport

            self._control_plane = BotocoreTransport(self.botocore)
        return self._control_plane

    def _send(self, op: _Operation, kwargs: dict[str, Any], bounded: bool = False) -> HTTPResponse:
        """Validate, sign and send one call; the response's CRC32 is checked, its status is not."""
        keys = kwargs.keys()
        if not (keys <= op.allowed and op.required <= keys):
            _raise_param_error(op, keys)
        body = _dumps(kwargs, default=_json_default)
        signed = self._signer.header_lines(op.target, body)
        head = f"{op.head}{signed}Content-Length: {len(body)}\r\n\r\n"
        response = self._pool.request(head.encode("latin-1") + body, bounded)
        expected = response.headers.get("x-amz-crc32")
        if expected is not None and _crc32(response.body) != int(expected):
            from botocore.exceptions import ChecksumError

            actual = _crc32(response.body)
            raise ChecksumError(checksum_type="crc32", expected_checksum=expected, actual_checksum=actual)
        return response

    def _parse(self, op: _Operation, response: HTTPResponse) -> dict[str, Any]:
        """The response dict botocore returns for a success."""
        headers = response.headers
        body = response.body
        status = response.status
        if op.blobs and b'"B' in body:
            parsed: dict[str, Any] = self._parser.parse(self._response_dict(op, response), op.model.output_shape)
            parsed["ResponseMetadata"].update(MaxAttemptsReached=True, RetryAttempts=0)
            return parsed
        raw = _loads(body) if body else {}
        members = op.members
        parsed = {k: v for k, v in raw.items() if k in members and v is not None}
        metadata: dict[str, Any] = {}
        request_id = headers.get("x-amzn-requestid")
        if request_id is not None:
            metadata["RequestId"] = request_id
        metadata["HTTPStatusCode"] = status
        metadata["HTTPHeaders"] = headers
        metadata["MaxAttemptsReached"] = True
        metadata["RetryAttempts"] = 0
        parsed["ResponseMetadata"] = metadata
        return parsed

    def _response_dict(self, op: _Operation, response: HTTPResponse) -> dict[str, Any]:
        return {
            "status_code": response.status,
            "headers": response.headers,
            "body": response.body,
            "context": {"operation_name": op.name},
        }

    def _error_body(self, op: _Operation, response: HTTPResponse) -> dict[str, Any]:
        """Botocore's parse of an error, modeled fields included: what its `ClientError.response` holds."""
        response_dict = self._response_dict(op, response)
        parser = self._parser
        parsed: dict[str, Any] = parser.parse(response_dict, op.model.output_shape)
        code = parsed.get("Error", {}).get("Code")
        if code:
            error_shape = self._service_model.shape_for_error_code(code)
            if error_shape is not None:
                parsed.update(parser.parse(response_dict, error_shape))
        parsed.setdefault("ResponseMetadata", {}).update(MaxAttemptsReached=True, RetryAttempts=0)
        return parsed

    def _error(self, op: _Operation, response: HTTPResponse) -> Exception:
        """The error as botocore's own exception class, for the botocore-shaped methods."""
        parsed = self._error_body(op, response)
        error: Exception = self.exceptions.from_code(parsed.get("Error", {}).get("Code"))(parsed, op.name)
        return error


def _raise_param_error(op: _Operation, keys: Iterable[str]) -> None:
    from botocore.exceptions import ParamValidationError

    given = set(keys)
    problems = [f'Missing required parameter in input: "{name}"' for name in sorted(op.required - given)]
    problems += [
        f'Unknown parameter in input: "{name}", must be one of: {", ".join(sorted(op.allowed))}'
        for name in sorted(given - op.allowed)
    ]
    raise ParamValidationError(report="\n".join(problems))


def resolve_credentials(
    endpoint_url: str | None, credentials: tuple[str, ...] | None
) -> tuple[Any, tuple[str, ...] | None]:
    """Credentials as `make_client` picks them: given ones, else `local` for loopback, else the provider chain.

    Returns the botocore credentials object (or None) and the explicit key tuple when one was given or defaulted.
    """
    from botocore.credentials import Credentials
    from botocore.session import Session

    from dynlocust.request.transport.boto3 import LOCAL_CREDENTIALS, has_env_credentials, is_local_endpoint

    if credentials is None and is_local_endpoint(endpoint_url) and not has_env_credentials():
        credentials = LOCAL_CREDENTIALS
    if credentials is not None:
        if len(credentials) not in (2, 3):
            raise ConfigurationError(
                f"fast transport credentials: expected (access key, secret[, token]), found {len(credentials)} values"
            )
        return Credentials(*credentials), tuple(credentials)
    return Session().get_credentials(), None


def make_fast_client(
    endpoint_url: str | None,
    *,
    region: str,
    connect_timeout: float,
    read_timeout: float,
    pool_size: int,
    credentials: tuple[str, ...] | None = None,
    verify: bool | str = True,
) -> FastDynamoDB:
    """Build the fast client (no I/O here); with no endpoint, AWS's endpoint for `region` is used.

    `credentials` is (access key, secret) or (access key, secret, session token); without it, loopback endpoints get
    `local`/`local` and others botocore's provider chain (refreshed before expiry).
    """
    from dynlocust.request.transport.boto3 import MIN_POOL, retry_free_config, validate_endpoint

    endpoint_url = validate_endpoint(endpoint_url)
    if endpoint_url is None:
        endpoint_url = f"https://dynamodb.{region}.amazonaws.com"
        if region.startswith("cn-"):
            endpoint_url += ".cn"
    resolved, explicit = resolve_credentials(endpoint_url, credentials)
    url = endpoint_url

    def botocore_factory() -> Any:
        from botocore.session import Session

        config = retry_free_config(connect_timeout=connect_timeout, read_timeout=read_timeout, pool_size=MIN_POOL)
        kwargs: dict[str, Any] = {"region_name": region, "endpoint_url": url, "config": config}
        if explicit is not None:
            kwargs["aws_access_key_id"], kwargs["aws_secret_access_key"] = explicit[0], explicit[1]
            if len(explicit) == 3:
                kwargs["aws_session_token"] = explicit[2]
        return Session().create_client("dynamodb", verify=verify, **kwargs)

    return FastDynamoDB(
        endpoint_url,
        region=region,
        credentials=CredentialSource(resolved),
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        pool_size=max(pool_size, MIN_POOL),
        verify=verify,
        botocore_factory=botocore_factory,
    )
