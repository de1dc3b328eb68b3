"""Locust glue: settings, the run context, roles, set-up and teardown, safety rails, the web form and tab, the epilogue.

Everything here knows Locust; the layers below (`fleet`, `observe`, `run`, `request`) are handed what they need.
The public user classes, defined on top of it, live in `dynlocust.user_classes`.
"""

from __future__ import annotations

import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    # `dynlocust.plugin.settings_for` was the module `dynlocust.plugin`'s; kept one release for copied starters.
    if name == "settings_for":
        warnings.warn(
            "dynlocust.plugin.settings_for is deprecated: use `from dynlocust import settings_for`",
            DeprecationWarning,
            stacklevel=2,
        )
        from dynlocust.plugin.context import settings_for

        return settings_for
    raise AttributeError(f"module 'dynlocust.plugin' has no attribute {name!r}")
