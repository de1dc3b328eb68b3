"""Deprecated alias of `dynlocust.user_classes.dynamodb_user` (one release more): import its names from `dynlocust`."""

from __future__ import annotations

import warnings
from typing import Any

from dynlocust.user_classes import dynamodb_user as _moved

warnings.warn(
    "dynlocust.users is deprecated: import DynamoDBUser, shared_boto3_client from dynlocust",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
