"""The one base error of dynlocust: every message says what was expected, what was found, and where."""

from __future__ import annotations

from dynlocust.exit_codes import ExitCode


class DynlocustError(Exception):
    """Base of every error dynlocust raises on purpose; the CLI prints it without a traceback (exit code 2)."""

    exit_code: int = ExitCode.BAD_INPUT


class ConfigurationError(DynlocustError):
    """An option, a botocore Config, credentials or an endpoint are not usable as given."""
