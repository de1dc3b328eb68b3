"""Hooks dynlocust into Locust: options on the parser, validated once at `init` (the state is `runstate`'s)."""

from __future__ import annotations

import sys
from typing import Any

from locust import events

from dynlocust import settings as settings_module
from dynlocust.errors import DynlocustError
from dynlocust.runstate import settings_for, state_for
from dynlocust.transport.boto3 import validate_endpoint


@events.init_command_line_parser.add_listener
def _add_arguments(parser: Any) -> None:
    settings_module.add_arguments(parser)


@events.init.add_listener
def _validate(environment: Any, **_kwargs: Any) -> None:
    try:
        state_for(environment)
        if environment.host:
            validate_endpoint(environment.host)
    except DynlocustError as exc:
        sys.stderr.write(f"dynlocust: error: {exc}\n")
        sys.exit(exc.exit_code)


__all__ = ["settings_for", "state_for"]
