"""The errors of a diff, each said in one line: a comparison refused (exit code 2), or left with nothing to
compare (exit code 8)."""

from __future__ import annotations

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode


class DiffError(DynlocustError):
    """Inputs that cannot be compared: malformed, partial, or not the same experiment."""


class DiffInconclusive(DiffError):
    """Readable runs of one experiment whose matched windows were all skipped (client-bound, partial or not run on
    a side): nothing comparable remains, which says nothing about a regression (exit code 8, never 2)."""

    exit_code: int = ExitCode.INCONCLUSIVE
