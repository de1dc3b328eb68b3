"""The run context: one `EnvironmentState` per Locust environment for the life of the process (settings validated
once from its options), a fresh `RunContext` per run, and read-only accessors that never create state."""

from __future__ import annotations

import gc
import weakref
from argparse import Namespace
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment
from locust.event import Events

import gevent
import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.exit_codes import ExitCode
from dynlocust.plugin import context
from dynlocust.plugin.context import (
    NOT_STARTED,
    RunContext,
    RunOutcome,
    current,
    current_merge,
    current_scenario,
    current_share,
    settings_for,
    state_for,
)
from dynlocust.plugin.settings import Settings


def environment(**options: Any) -> Environment:
    env = Environment(events=Events())
    env.parsed_options = Namespace(**options) if options else None
    return env


def test_state_is_made_once_per_environment_with_its_validated_settings() -> None:
    first, second = environment(deadline="3"), environment()
    state = state_for(first)
    assert state_for(first) is state and state_for(second) is not state
    assert settings_for(first).deadline == 3.0 and settings_for(first) is state.settings
    assert settings_for(second) == Settings()


def test_bad_options_are_refused_when_the_state_is_made() -> None:
    with pytest.raises(ConfigurationError, match=r"--deadline: expected .*found"):
        state_for(environment(deadline="soon"))


def test_the_accessors_never_create_state() -> None:
    env = environment(deadline="bad")  # state_for would raise: the accessors must not try
    assert (current(env), current_scenario(env), current_share(env), current_merge(env)) == (None, None, None, None)
    assert env not in context._STATES


def test_the_accessors_read_the_current_share() -> None:
    env = environment()
    state = state_for(env)
    assert current(env) is None
    run = state.run = RunContext("run-1")
    assert current(env) is run and current_share(env) is None and current_merge(env) is None
    marker_run, marker_report = object(), object()
    run.share, run.merge = marker_run, marker_report  # type: ignore[assignment]  # identity is all that is read
    assert current_share(env) is marker_run and current_merge(env) is marker_report
    state.run = RunContext("run-2")  # the web UI's next Start: a fresh context, the old one untouched
    assert current(env) is not run and current_share(env) is None and run.share is marker_run


def test_a_state_goes_with_its_environment() -> None:
    env = environment()
    state = weakref.ref(state_for(env))
    assert state() is not None
    del env
    gc.collect()
    assert state() is None


@pytest.mark.parametrize(
    ("changes", "begun"),
    [
        ({}, False),
        ({"stage": "creating tables"}, True),
        ({"setup_error": "the table could not be created"}, True),
        ({"ending": "greenlet"}, True),
    ],
)
def test_a_run_is_begun_once_set_up_has_taken_it(changes: dict[str, Any], begun: bool) -> None:
    run = RunContext("r")
    assert run.stage == NOT_STARTED
    for name, value in changes.items():
        setattr(run, name, gevent.spawn(lambda: None) if value == "greenlet" else value)
    assert run.begun is begun


def test_the_process_exits_with_the_worst_of_its_runs_each_counted_once() -> None:
    state = state_for(environment())
    assert state.record(RunOutcome("a", ExitCode.SLO_FAILED)) == ExitCode.SLO_FAILED
    assert state.record(RunOutcome("b", ExitCode.PASSED)) == ExitCode.SLO_FAILED  # a later pass hides nothing
    assert state.record(RunOutcome("c", ExitCode.ABORTED)) == ExitCode.ABORTED
    # a run's end recorded again (its code known first, its report later) replaces its first record
    assert state.record(RunOutcome("c", ExitCode.ABORTED, conclusion="stopped")) == ExitCode.ABORTED
    assert [(o.run_id, o.conclusion) for o in state.outcomes] == [("a", None), ("b", None), ("c", "stopped")]
