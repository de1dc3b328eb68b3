"""Deprecated alias of `dynlocust.user_classes.mapper_user` (one release more): import MapperUser from `dynlocust`."""

from __future__ import annotations

import warnings
from typing import Any

from dynlocust.user_classes import mapper_user as _moved

warnings.warn(
    "dynlocust.mapper_users is deprecated: import MapperUser from dynlocust",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
