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


# The service's deserializer (Java) words a JSON value of the wrong type after the type it expected there, as
# recorded against the service by dynalite's tests (test/helpers.js, assertType) and issue 45: the token it found
# for a scalar member, the Java class it wanted for a JSON list, and for a container whether it was a structure's
# field or a collection's member (a list element, a map value).
_JSON_TOKENS = {int: "NUMBER_VALUE", float: "DECIMAL_VALUE", str: "STRING_VALUE"}
JAVA_MODEL = "com.amazonaws.dynamodb.v20120810."
JAVA_CLASSES = {
    "string": "java.lang.String",
    "boolean": "java.lang.Boolean",
    "integer": "java.lang.Integer",
    "long": "java.lang.Long",
    "double": "java.lang.Double",
    "float": "java.lang.Float",
    "blob": "java.nio.ByteBuffer",
    "timestamp": "java.util.Date",
}
_CAST = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class java.lang.Class "
    "(sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class are in module java.base of "
    "loader 'bootstrap')"
)


def wrong_json_type(value: Any, expected: str, java: str = "", member: bool = False) -> ServiceError:
    """The SerializationException the service answers when a JSON value has the wrong type for its member.

    `expected` is the member's shape type ("string", "integer", "boolean", ... or "structure", "map", "list"),
    `java` the Java type the service reads it as (a scalar's is implied), `member` whether the value is an element
    of a list or a value of a map rather than a structure's field.
    """
    if isinstance(value, dict):
        return serialization("Start of structure or map found where not expected")
    java = java or JAVA_CLASSES.get(expected, "")
    if isinstance(value, list):  # a generic type prints bare, a class as "class X"
        return serialization(f"Unrecognized collection type {java if '<' in java else 'class ' + java}")
    if expected in ("list", "map"):
        return serialization(_CAST if member else "Unexpected field type")
    if expected == "structure":
        return serialization("Unexpected value type in payload" if member else "Unexpected field type")
    if expected == "blob":
        return serialization("only base-64-encoded strings are convertible to bytes")
    if expected == "boolean" and isinstance(value, str):
        return serialization("Unexpected token received from parser")
    if isinstance(value, bool):
        token = "TRUE_VALUE" if value else "FALSE_VALUE"
    else:
        token = _JSON_TOKENS.get(type(value), "VALUE")
    return serialization(f"{token} cannot be converted to {expected.capitalize()}")


_BOOLEAN_TEXTS = {"TRUE": True, "1": True, "YES": True, "FALSE": False, "0": False, "NO": False}


def boolean_text(value: Any) -> bool | None:
    """The boolean a JSON string stands for where the model wants a boolean ("true", "1", "yes" and their
    opposites, any case: the service's deserializer converts them, as dynalite's tests record), else None."""
    return _BOOLEAN_TEXTS.get(value.upper()) if isinstance(value, str) else None
