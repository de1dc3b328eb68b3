"""The one error of a diff: a comparison refused (exit code 2), said in one line."""

from __future__ import annotations

from dynlocust.errors import DynlocustError


class DiffError(DynlocustError):
    """Inputs that cannot be compared: malformed, partial, or not the same experiment."""
