"""dynlocust's options on Locust's parser, validated once at `init` (the settings live in the run context)."""

from __future__ import annotations

import sys
from typing import Any

from locust.env import Environment

from dynlocust.errors import DynlocustError
from dynlocust.plugin import settings as settings_module
from dynlocust.plugin.context import settings_for, state_for
from dynlocust.request.transport.boto3 import validate_endpoint


def add_arguments(parser: Any, **_kwargs: Any) -> None:
    settings_module.add_arguments(parser)


def validate(environment: Environment, **_kwargs: Any) -> None:
    """Settings and the endpoint, validated before anything starts: a bad value ends the process (exit code 2)."""
    try:
        state_for(environment)
        if environment.host:
            validate_endpoint(environment.host)
    except DynlocustError as exc:
        sys.stderr.write(f"dynlocust: error: {exc}\n")
        sys.exit(exc.exit_code)


__all__ = ["settings_for", "state_for"]
