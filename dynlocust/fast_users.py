"""Deprecated alias of `dynlocust.user_classes.fast_user` (one release more): import FastDynamoDBUser from
`dynlocust`."""

from __future__ import annotations

import warnings
from typing import Any

from dynlocust.user_classes import fast_user as _moved

warnings.warn(
    "dynlocust.fast_users is deprecated: import FastDynamoDBUser from dynlocust",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
