"""Deprecated alias of `dynlocust.plugin.fast_users` (one release more): import FastDynamoDBUser from `dynlocust`."""

from __future__ import annotations

import warnings
from typing import Any

from dynlocust.plugin import fast_users as _moved

warnings.warn(
    "dynlocust.fast_users is deprecated: import FastDynamoDBUser from dynlocust",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
