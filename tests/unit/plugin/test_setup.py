"""Set-up's decisions that need no run: when a web UI process quits by itself, and when there is no runner yet."""

from __future__ import annotations

from types import SimpleNamespace

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment

import pytest

from dynlocust.plugin.context import state_for
from dynlocust.plugin.roles import begin
from dynlocust.plugin.setup import autoquit_seconds


@pytest.mark.parametrize(
    ("options", "seconds"),
    [
        ({"autostart": True, "autoquit": 5}, 5.0),
        ({"autostart": True, "autoquit": 0}, 0.0),
        ({"autostart": True, "autoquit": -1}, None),  # Locust's default: stay up until Ctrl-C
        ({"autostart": False, "autoquit": 5}, None),  # Locust refuses this; a Start from the page never quits
        ({}, None),
    ],
    ids=["after-5s", "at-once", "default", "no-autostart", "no-options"],
)
def test_autoquit_applies_to_an_autostarted_run_only(options: dict[str, object], seconds: float | None) -> None:
    assert autoquit_seconds(SimpleNamespace(**options)) == seconds


def test_a_test_start_before_the_runner_exists_sets_nothing_up() -> None:
    """A worker joining a running fleet gets the master's spawn while Locust still builds its runner: `begin` must
    neither fail nor take the process for a standalone one (which would set up a run of its own)."""
    environment = Environment()
    assert environment.runner is None
    begin(environment)
    assert state_for(environment).role is None and state_for(environment).run is None
