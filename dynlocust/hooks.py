"""Locust event hooks of scenario runs and their `ScenarioUser`: thin adapters from Locust's events to the run state.

Set-up happens in Locust's own events so the web UI, headless runs, `dynlocust run` and `locust -f` share one path:
- `init`: `lifecycle.prepare` (scenario, endpoint, credentials) and `fleet.register` (a fleet's messages);
- `test_start` (master or standalone): `lifecycle.begin` sets up a fresh run (tables, T0, plan) and starts it;
- `test_stop` in the web UI: `teardown.end_run` ends that run and deletes its tables at once, so the next Start
  begins afresh; a worker stops its share;
- `quitting`: `teardown.quit` stops whatever still runs and tears down, whatever ended the run.

Locust loads a locustfile given by path as a module of its own; keeping this logic in a package module means it is
imported (and its listeners registered) exactly once, whichever entry point is used.
"""

from __future__ import annotations

from typing import Any

from locust import constant, events, task
from locust.exception import StopUser
from locust.runners import WorkerRunner
from locust.user.task import LOCUST_STATE_STOPPING

import gevent

import dynlocust.console  # leaves out Locust's "No run time limit set" (init listener)
import dynlocust.metrics_wiring
import dynlocust.webui  # noqa: F401 - the DynamoDB tab in Locust's web UI (init listener)
from dynlocust import fleet, lifecycle, redact, runstate, safety, teardown
from dynlocust.fast_users import shared_fast_client
from dynlocust.users import DynamoDBUser


@events.init.add_listener
def _on_init(environment: Any, **_kwargs: Any) -> None:
    redact.install()
    safety.route_interrupts()
    with safety.interrupts_held():  # a Ctrl-C here reaches Locust's main loop, which shuts down through `quitting`
        lifecycle.prepare(environment)
        fleet.register(environment)


@events.test_start.add_listener
def _on_test_start(environment: Any, **_kwargs: Any) -> None:
    lifecycle.begin(environment)


@events.test_stop.add_listener
def _on_test_stop(environment: Any, **_kwargs: Any) -> None:
    if isinstance(environment.runner, WorkerRunner):
        run = runstate.current_run(environment)
        if run is not None and not run.finished:
            run.stop("stopped by the master")
        return
    current = runstate.current(environment)
    if current is not None and current.begun and lifecycle.keeps_running(environment):
        teardown.end_run(environment, current, "stopped")


@events.quitting.add_listener
def _on_quitting(environment: Any, **_kwargs: Any) -> None:
    # Locust can fire `quitting` twice (a signal's shutdown, then the main loop's): the second waits for the first
    safety.quit_once(environment, lambda: teardown.quit(environment))


class ScenarioUser(DynamoDBUser):
    """A slot of concurrency: takes the next due send from the pacer and performs it."""

    wait_time = constant(0)

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        scenario = runstate.state_for(environment).scenario
        if scenario is not None:
            self.client.deadline = scenario.deadline

    def _raw_client(self, environment: Any, settings: Any) -> Any:
        scenario = runstate.state_for(environment).scenario
        if scenario is not None and scenario.transport == "fast":
            return shared_fast_client(environment, self.host or None, settings)
        return super()._raw_client(environment, settings)

    @task
    def send(self) -> None:
        run = runstate.current_run(self.environment)
        if run is None:
            gevent.sleep(0.05)
            return
        self.client.logical_names = run.logical_names
        # one task call serves tickets until the schedule ends: Locust's per-task scheduling and its sleep(0)
        # between tasks would otherwise cost each request a hub switch; a graceful stop still ends the loop
        while self._state != LOCUST_STATE_STOPPING:
            ticket = run.next_ticket()
            if ticket is None:
                raise StopUser()
            run.execute(self.client, ticket)
