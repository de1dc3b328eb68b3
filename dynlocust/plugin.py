"""Hooks dynlocust into Locust: options on the parser, validated once at `init`, per-environment state."""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass, field
from typing import Any

from locust import events

from dynlocust import settings as settings_module
from dynlocust.errors import DynlocustError
from dynlocust.settings import Settings
from dynlocust.transport.boto3 import validate_endpoint


@dataclass
class EnvironmentState:
    """What dynlocust keeps per Locust environment (shared clients, validated settings)."""

    settings: Settings
    clients: dict[Any, Any] = field(default_factory=dict)


_STATES: weakref.WeakKeyDictionary[Any, EnvironmentState] = weakref.WeakKeyDictionary()


def state_for(environment: Any) -> EnvironmentState:
    state = _STATES.get(environment)
    if state is None:
        state = EnvironmentState(settings_module.from_options(getattr(environment, "parsed_options", None)))
        _STATES[environment] = state
    return state


def settings_for(environment: Any) -> Settings:
    return state_for(environment).settings


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
