"""The scenario locustfile: `locust -f locustfiles/scenario.py --scenario FILE` (and what `dynlocust run` runs).

Set-up happens in Locust's own events so that the web UI, headless runs and `dynlocust run` share one path:
`init` loads the scenario and starts the embedded endpoint when the target is local; `test_start` creates and
seeds the tables and starts the schedule on T0; `quitting` stops the run and tears down, whatever ended it.
"""

from __future__ import annotations

import logging
import secrets
import sys
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from locust import constant, events, task
from locust.exception import StopUser
from locust.runners import LocalRunner

import gevent

import dynlocust.metrics  # noqa: F401 - registers the Prometheus /metrics listeners (init, quitting)
from dynlocust import plugin
from dynlocust.errors import DynlocustError
from dynlocust.results import ResultsWriter
from dynlocust.runner import ScenarioRun
from dynlocust.scenario import load_scenario
from dynlocust.scenario.model import RemoteTarget, Scenario
from dynlocust.tables import TableManager
from dynlocust.transport.boto3 import make_client
from dynlocust.users import DynamoDBUser

log = logging.getLogger("dynlocust")

START_LEAD = 1.0
"""Seconds between the end of set-up and T0: every user is spawned and waiting when the first send is due."""


@dataclass
class RunState:
    scenario: Scenario
    run_id: str
    results_path: Path
    endpoint: Any = None
    tables: TableManager | None = None
    run: ScenarioRun | None = None


_STATES: weakref.WeakKeyDictionary[Any, RunState] = weakref.WeakKeyDictionary()


def current_run(environment: Any) -> ScenarioRun | None:
    """The scenario run of an environment, once it has started (for the web UI and metrics)."""
    state = _STATES.get(environment)
    return state.run if state is not None else None


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"dynlocust: error: {message}\n")
    sys.exit(code)


@events.init.add_listener
def _on_init(environment: Any, **_kwargs: Any) -> None:
    settings = plugin.settings_for(environment)
    if not settings.scenario:
        _fail("--scenario: expected a scenario YAML file (or DYNLOCUST_SCENARIO), found none")
    try:
        scenario = load_scenario(settings.scenario)
    except DynlocustError as exc:
        _fail(str(exc))
    if not isinstance(environment.runner, LocalRunner):
        _fail("distributed scenario runs (--master/--worker) are not supported yet; run without them")
    run_id = settings.run_id or new_run_id()
    results_path = Path(settings.results_dir) / run_id / "results.jsonl"
    if results_path.exists():
        _fail(f"--run-id: expected a new run id, found existing results at {results_path}; choose another id")
    state = RunState(scenario, run_id, results_path)
    _STATES[environment] = state
    if not environment.host:
        if isinstance(scenario.target, RemoteTarget) and scenario.target.endpoint:
            environment.host = scenario.target.endpoint
        elif scenario.is_local:
            from dynlocust.local.embedded import LocalEndpoint

            state.endpoint = LocalEndpoint(
                capacity_scale=scenario.target.capacity_scale,  # type: ignore[union-attr]
                time_scale=scenario.target.time_scale,  # type: ignore[union-attr]
            ).start()
            environment.host = state.endpoint.url
            log.info("embedded local endpoint at %s", environment.host)
    for user_class in environment.user_classes:
        user_class.host = environment.host


@events.test_start.add_listener
def _on_test_start(environment: Any, **_kwargs: Any) -> None:
    state = _STATES.get(environment)
    if state is None or state.run is not None:
        return
    settings = plugin.settings_for(environment)
    scenario = state.scenario
    region = (isinstance(scenario.target, RemoteTarget) and scenario.target.region) or settings.region
    client = make_client(
        environment.host or None,
        region=region,
        connect_timeout=settings.connect_timeout,
        read_timeout=scenario.deadline,
        pool_size=16,
    )
    state.tables = TableManager(client, scenario, state.run_id)
    try:
        state.tables.create_all()
        seeded = state.tables.seed_all()
    except Exception as exc:
        log.error("set-up failed: %s", exc)
        environment.process_exit_code = 2
        gevent.spawn(environment.runner.quit)
        return
    for name, seconds in state.tables.seconds_to_active.items():
        log.info("table %s ACTIVE after %.1f s", name, seconds)
    if seeded:
        log.info("seeded %d items", seeded)
    state.results_path.parent.mkdir(parents=True, exist_ok=True)

    def finished(code: int) -> None:
        environment.process_exit_code = code
        gevent.spawn(environment.runner.quit)

    state.run = ScenarioRun(
        scenario,
        state.tables.physical_names,
        ResultsWriter(state.results_path),
        state.run_id,
        t0=time.time() + START_LEAD,
        deadline=scenario.deadline,
        on_finished=finished,
    )
    state.run.start()


@events.quitting.add_listener
def _on_quitting(environment: Any, **_kwargs: Any) -> None:
    state = _STATES.pop(environment, None)
    if state is None:
        return
    try:
        if state.run is not None and state.run.exit_code is None:
            state.run.stop("interrupted")
            state.run.wait(state.scenario.deadline + 2.0)
            if state.run.exit_code is not None:
                environment.process_exit_code = state.run.exit_code
        if state.run is not None:
            state.run.results.close()
    finally:
        try:
            if state.tables is not None:
                deleted = state.tables.teardown()
                if deleted:
                    log.info("deleted tables %s", ", ".join(deleted))
        finally:
            if state.endpoint is not None:
                state.endpoint.stop()


class ScenarioUser(DynamoDBUser):
    """A slot of concurrency: takes the next due send from the pacer and performs it."""

    wait_time = constant(0)

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        state = _STATES.get(environment)
        if state is not None:
            self.client.deadline = state.scenario.deadline

    @task
    def send(self) -> None:
        state = _STATES.get(self.environment)
        run = state.run if state is not None else None
        if run is None:
            gevent.sleep(0.05)
            return
        ticket = run.next_ticket()
        if ticket is None:
            raise StopUser()
        run.execute(self.client, ticket)
