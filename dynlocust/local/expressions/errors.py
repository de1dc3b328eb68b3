"""The expression language's error: str() is the service's ValidationException message."""

from __future__ import annotations

from dynlocust.errors import DynlocustError


class ExpressionError(DynlocustError, ValueError):
    """An expression the service would reject with a ValidationException; str() is the service-style message."""

    def __init__(self, message: str, detected: bool = False) -> None:
        super().__init__(message)
        self.message = message
        # the service words some expression errors as "1 validation error detected: <message>"
        self.detected = detected


UPDATE_TYPE_ERROR = "An operand in the update expression has an incorrect data type"
MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
INVALID_PATH = "The document path provided in the update expression is invalid for update"
