"""Service errors of the local endpoint, shaped exactly as DynamoDB sends them on the wire."""

from __future__ import annotations

from typing import Any

from dynlocust.errors import DynlocustError

PREFIX = "com.amazonaws.dynamodb.v20120810#"
CORAL_PREFIX = "com.amazon.coral.service#"
VALIDATE_PREFIX = "com.amazon.coral.validate#"


_CAPITAL_MESSAGE = frozenset(("TransactionCanceledException", "SerializationException"))


class ServiceError(DynlocustError):
    """An error answered to the client: HTTP status, `__type` code, message and any extra body fields.

    Raised inside operation handlers; the server turns it into the JSON 1.0 error body. It is not a bug of
    dynlocust, it is the answer the service would give.
    """

    def __init__(
        self,
        code: str,
        message: str,
        status: int = 400,
        extra: dict[str, Any] | None = None,
        prefix: str = PREFIX,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.extra = extra or {}
        self.prefix = prefix
        self.headers = headers  # extra response headers (this endpoint's own, e.g. THROTTLE_CAUSE_HEADER)

    def body(self) -> dict[str, Any]:
        """The JSON error body; TransactionCanceledException and SerializationException use `Message`, all others
        `message` (as the service sends them: a raw-HTTP client reads the key it was given)."""
        out: dict[str, Any] = {"__type": self.prefix + self.code}
        key = "Message" if self.code in _CAPITAL_MESSAGE else "message"
        if self.message:
            out[key] = self.message
        out.update(self.extra)
        return out


def validation(message: str) -> ServiceError:
    return ServiceError("ValidationException", message, prefix=VALIDATE_PREFIX)


def detected(*messages: str) -> ServiceError:
    """The service's aggregate form: "1 validation error detected: a" or "2 validation errors detected: a; b"."""
    n = len(messages)
    return validation(f"{n} validation error{'s' if n > 1 else ''} detected: {'; '.join(messages)}")


def not_found(message: str = "Requested resource not found") -> ServiceError:
    return ServiceError("ResourceNotFoundException", message)


def in_use(message: str) -> ServiceError:
    return ServiceError("ResourceInUseException", message)


def conditional_failed(item: dict[str, Any] | None = None) -> ServiceError:
    extra = {"Item": item} if item else None
    return ServiceError("ConditionalCheckFailedException", "The conditional request failed", extra=extra)


def serialization(message: str) -> ServiceError:
    return ServiceError("SerializationException", message, prefix=CORAL_PREFIX)


def unknown_operation() -> ServiceError:
    return ServiceError("UnknownOperationException", "", prefix=CORAL_PREFIX)


# the service's deserializer names the JSON token it found (as recorded against the service by dynalite's tests)
_JSON_TOKENS = {
    True: "TRUE_VALUE",
    False: "FALSE_VALUE",
    int: "NUMBER_VALUE",
    float: "DECIMAL_VALUE",
    str: "STRING_VALUE",
}
_EXPECTED_CONTAINER = {"structure": "Expected null", "map": "Expected map or null", "list": "Expected list or null"}


def wrong_json_type(value: Any, expected: str) -> ServiceError:
    """The SerializationException the service answers when a JSON value has the wrong type for its member.

    `expected` is the member's shape type: "string", "integer", "boolean", ... or "structure", "map", "list".
    """
    if isinstance(value, dict):
        return serialization("Start of structure or map found where not expected")
    if isinstance(value, list):
        return serialization("Start of list found where not expected")
    container = _EXPECTED_CONTAINER.get(expected)
    if container is not None:
        return serialization(container)
    if isinstance(value, bool):
        token = "TRUE_VALUE" if value else "FALSE_VALUE"
    else:
        token = _JSON_TOKENS.get(type(value), "VALUE")
    return serialization(f"{token} cannot be converted to {expected.capitalize()}")
