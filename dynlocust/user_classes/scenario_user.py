"""`ScenarioUser`: a slot of concurrency in a scenario run, serving the pacer's due sends.

Locust loads a locustfile given by path as a module of its own; keeping the user (and the registration of the
scenario's listeners, `dynlocust.plugin.listeners`) in a package module means they are imported, and registered,
exactly once, whichever entry point is used.
"""

from __future__ import annotations

from collections.abc import Callable

from locust import constant, task
from locust.env import Environment
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_STOPPING

import gevent

from dynlocust.plugin import context, listeners
from dynlocust.plugin.settings import Settings
from dynlocust.request.transport.base import BotocoreClient
from dynlocust.scenario.model import TransportName
from dynlocust.user_classes.dynamodb_user import DynamoDBUser, shared_boto3_client
from dynlocust.user_classes.fast_user import shared_fast_client

listeners.register_scenario()

TRANSPORT_FACTORIES: dict[TransportName, Callable[[Environment, str | None, Settings], BotocoreClient]] = {
    "fast": shared_fast_client,
    "boto3": shared_boto3_client,
}
"""A scenario's `transport:` name -> the process's shared transport client for an endpoint (one pool each)."""


class ScenarioUser(DynamoDBUser):
    """A slot of concurrency: takes the next due send from the pacer and performs it."""

    wait_time = constant(0)

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        scenario = context.state_for(environment).scenario
        if scenario is not None:
            self.client.deadline = scenario.deadline

    def _raw_client(self, environment: Environment, settings: Settings) -> BotocoreClient:
        scenario = context.state_for(environment).scenario
        factory = TRANSPORT_FACTORIES[scenario.transport] if scenario is not None else shared_boto3_client
        return factory(environment, self.host or None, settings)

    @task
    def send(self) -> None:
        run = context.current_share(self.environment)
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
