"""Turn whatever a DynamoDB call ended with into one `Outcome`.

One function, `classify`, sees every response and every exception, so every layer above (request events, window
statistics, Prometheus) agrees on what happened. The wire facts it relies on are in the project's reference
(error codes after `#` in `__type`, both spellings of `throttlingReasons`, batch leftovers on HTTP 200). A
throttle also says which index refused it (its reason's resource, `.../index/<name>`) and, from the embedded
endpoint only, why a shared on-demand budget was full (`THROTTLE_CAUSE_HEADER`); the service sends no such header.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gevent

from dynlocust.dynamodb import THROTTLE_CANCELLATION_CODES, THROTTLE_CAUSE_HEADER, THROTTLE_CAUSES, THROTTLE_CODES

OK = "ok"
THROTTLED = "throttled"
UNPROCESSED = "unprocessed"
CONDITION_FAILED = "condition_failed"
TRANSACTION_CONFLICT = "transaction_conflict"
VALIDATION = "validation"
NOT_FOUND = "not_found"
AUTH = "auth"
TIMEOUT = "timeout"
CONNECTION = "connection"
SERVER_ERROR = "server_error"
ERROR = "error"

KINDS = (
    OK,
    THROTTLED,
    UNPROCESSED,
    CONDITION_FAILED,
    TRANSACTION_CONFLICT,
    VALIDATION,
    NOT_FOUND,
    AUTH,
    TIMEOUT,
    CONNECTION,
    SERVER_ERROR,
    ERROR,
)

AUTH_CODES = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "AccessDeniedException",
        "MissingAuthenticationTokenException",
        "IncompleteSignatureException",
        "ExpiredTokenException",
        "InvalidClientTokenId",
    }
)
NOT_FOUND_CODES = frozenset({"ResourceNotFoundException"})
VALIDATION_CODES = frozenset(
    {"ValidationException", "SerializationException", "ItemCollectionSizeLimitExceededException"}
)
CONFLICT_CODES = frozenset({"TransactionConflictException", "TransactionInProgressException"})

# Timeout kinds: which limit ended the call.
CONNECT_TIMEOUT = "ConnectTimeout"
READ_TIMEOUT = "ReadTimeout"
DEADLINE = "DeadlineExceeded"


@dataclass(frozen=True, slots=True)
class ThrottlingReason:
    """One `{reason, resource}` entry; `scope` and `access` are parsed out of the reason for labels."""

    reason: str
    resource: str = ""

    @property
    def scope(self) -> str:
        """`table` or `index`: which resource said no."""
        return "index" if self.reason.startswith("Index") or "/index/" in self.resource else "table"

    @property
    def index(self) -> str | None:
        """The index that said no (from `.../index/<name>`), or None when the table did."""
        _, found, name = self.resource.partition("/index/")
        return (name or None) if found else None

    @property
    def access(self) -> str:
        """`read`, `write` or `unknown`."""
        body = self.reason.removeprefix("Table").removeprefix("Index")
        if body.startswith("Read"):
            return "read"
        if body.startswith("Write"):
            return "write"
        return "unknown"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one call ended with. `code` is the service's error code, or the timeout/connection kind."""

    kind: str
    code: str | None = None
    http_status: int | None = None
    message: str = ""
    reasons: tuple[ThrottlingReason, ...] = ()
    unprocessed: int = 0
    items: int = 0
    cancellation_codes: tuple[str, ...] = ()
    cause: str | None = None
    """Why a shared on-demand budget refused a throttle (`dynlocust.dynamodb.THROTTLE_CAUSES`), as the embedded
    endpoint says; None from the service, which does not say."""

    @property
    def ok(self) -> bool:
        return self.kind == OK

    @property
    def throttled_index(self) -> str | None:
        """The index whose limit refused the call: a GSI on a base-table write, or the index a query read."""
        return next((r.index for r in self.reasons if r.index), None)

    @property
    def label(self) -> str:
        """The failure name Locust groups by: the error code, with the first throttling reason when there is one."""
        name = self.code or self.kind
        if self.reasons:
            return f"{name} ({self.reasons[0].reason})"
        if self.kind == UNPROCESSED:
            return f"UnprocessedItems ({self.unprocessed})"
        return name


def classify(response: Mapping[str, Any] | None = None, exception: BaseException | None = None) -> Outcome:
    """Classify a finished call: pass the response dict on success, or the exception it raised."""
    if exception is not None:
        return _classify_exception(exception)
    return _classify_response(response or {})


def classify_error(response: Mapping[str, Any]) -> Outcome:
    """Classify a service error from its parsed body (a transport's error reply, a `ClientError`'s response)."""
    error = response.get("Error", {})
    code = error.get("Code") or "Unknown"
    message = error.get("Message") or error.get("message") or ""
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    reasons = _throttling_reasons(response)
    if code in THROTTLE_CODES:
        return Outcome(THROTTLED, code, status, message, reasons, cause=_cause(response))
    if code == "TransactionCanceledException":
        return _classify_cancellation(response, code, status, message, reasons)
    if code == "ConditionalCheckFailedException":
        return Outcome(CONDITION_FAILED, code, status, message)
    if code in CONFLICT_CODES:
        return Outcome(TRANSACTION_CONFLICT, code, status, message)
    if code in AUTH_CODES:
        return Outcome(AUTH, code, status, message)
    if code in NOT_FOUND_CODES:
        return Outcome(NOT_FOUND, code, status, message)
    if code in VALIDATION_CODES:
        return Outcome(VALIDATION, code, status, message)
    if status is not None and status >= 500:
        return Outcome(SERVER_ERROR, code, status, message)
    return Outcome(ERROR, code, status, message)


_OK_OUTCOMES: dict[tuple[Any, int], Outcome] = {}
"""Successes by (HTTP status, items): an `Outcome` is frozen, so each distinct one is built once and shared."""
_MAX_OK_OUTCOMES = 1024


def _classify_response(response: Mapping[str, Any]) -> Outcome:
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
    unprocessed = _count_unprocessed(response)
    items = _count_items(response)
    if unprocessed:
        return Outcome(UNPROCESSED, "UnprocessedItems", status, unprocessed=unprocessed, items=items)
    key = (status, items)
    outcome = _OK_OUTCOMES.get(key)
    if outcome is None:
        outcome = Outcome(OK, None, status, items=items)
        if len(_OK_OUTCOMES) < _MAX_OK_OUTCOMES:
            _OK_OUTCOMES[key] = outcome
    return outcome


def _count_unprocessed(response: Mapping[str, Any]) -> int:
    total = 0
    for requests in (response.get("UnprocessedItems") or {}).values():
        total += len(requests)
    for keys_and_attrs in (response.get("UnprocessedKeys") or {}).values():
        total += len(keys_and_attrs.get("Keys", ()))
    return total


def _count_items(response: Mapping[str, Any]) -> int:
    if "Items" in response:
        return len(response["Items"])
    if "Item" in response:
        return 1
    if "Responses" in response:
        responses = response["Responses"]
        if isinstance(responses, (dict, Mapping)):  # BatchGetItem
            return sum(len(items) for items in responses.values())
        return sum(1 for r in responses if "Item" in r)  # TransactGetItems
    return 0


def _classify_exception(exc: BaseException) -> Outcome:
    from botocore import exceptions as bex  # local: keeps `import locust` first for callers

    if isinstance(exc, bex.ClientError):
        return classify_error(exc.response)
    if isinstance(exc, gevent.Timeout | DeadlineExceeded):
        return Outcome(TIMEOUT, DEADLINE, message=str(exc) or "total deadline exceeded")
    if isinstance(exc, bex.ConnectTimeoutError):
        return Outcome(TIMEOUT, CONNECT_TIMEOUT, message=str(exc))
    if isinstance(exc, bex.ReadTimeoutError):
        return Outcome(TIMEOUT, READ_TIMEOUT, message=str(exc))
    if isinstance(exc, bex.EndpointConnectionError):
        return Outcome(CONNECTION, "ConnectionRefused", message=str(exc))
    if isinstance(exc, bex.ConnectionClosedError):
        return Outcome(CONNECTION, "ConnectionClosed", message=str(exc))
    if isinstance(exc, bex.NoCredentialsError | bex.PartialCredentialsError):
        return Outcome(AUTH, type(exc).__name__, message=str(exc))
    if isinstance(exc, bex.ConnectionError | ConnectionError | socket.error):
        return Outcome(CONNECTION, _connection_code(exc), message=str(exc))
    if isinstance(exc, bex.ChecksumError):
        return Outcome(ERROR, "ChecksumError", message=str(exc))
    if isinstance(exc, bex.ParamValidationError):
        return Outcome(VALIDATION, "ParamValidationError", message=str(exc))
    return Outcome(ERROR, type(exc).__name__, message=str(exc))


def _connection_code(exc: BaseException) -> str:
    text = f"{type(exc).__name__} {exc}".lower()
    if "reset" in text:
        return "ConnectionReset"
    if "refused" in text:
        return "ConnectionRefused"
    if "closed" in text or "aborted" in text:
        return "ConnectionClosed"
    return "ConnectionError"


def _classify_cancellation(
    response: Mapping[str, Any], code: str, status: int | None, message: str, reasons: tuple[ThrottlingReason, ...]
) -> Outcome:
    cancellation = tuple(r.get("Code", "None") for r in response.get("CancellationReasons") or ())
    if THROTTLE_CANCELLATION_CODES.intersection(cancellation):
        return Outcome(THROTTLED, code, status, message, reasons, cancellation_codes=cancellation)
    if "ConditionalCheckFailed" in cancellation:
        return Outcome(CONDITION_FAILED, code, status, message, cancellation_codes=cancellation)
    if "TransactionConflict" in cancellation:
        return Outcome(TRANSACTION_CONFLICT, code, status, message, cancellation_codes=cancellation)
    if "ValidationError" in cancellation:
        return Outcome(VALIDATION, code, status, message, cancellation_codes=cancellation)
    return Outcome(ERROR, code, status, message, cancellation_codes=cancellation)


def _throttling_reasons(response: Mapping[str, Any]) -> tuple[ThrottlingReason, ...]:
    """Read both spellings: ThrottlingException sends `throttlingReasons`, the others `ThrottlingReasons`."""
    raw = response.get("ThrottlingReasons") or response.get("throttlingReasons") or ()
    if not raw:
        error = response.get("Error", {})
        raw = error.get("ThrottlingReasons") or error.get("throttlingReasons") or ()
    reasons = []
    for entry in raw:
        if isinstance(entry, (dict, Mapping)):
            reason = entry.get("reason") or entry.get("Reason") or ""
            resource = entry.get("resource") or entry.get("Resource") or ""
            reasons.append(ThrottlingReason(str(reason), str(resource)))
    return tuple(reasons)


def _cause(response: Mapping[str, Any]) -> str | None:
    """The cause word of the embedded endpoint's header (`<cause>; write-load=...`); an unknown one is dropped."""
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders") or {}
    value = headers.get(THROTTLE_CAUSE_HEADER)
    if not value:
        return None
    cause = str(value).partition(";")[0].strip()
    return cause if cause in THROTTLE_CAUSES else None


class DeadlineExceeded(Exception):
    """A call ran past its total deadline; raised inside the call by its deadline timer (`client.measured_call`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"total deadline of {seconds:g} s exceeded")
        self.seconds = seconds
