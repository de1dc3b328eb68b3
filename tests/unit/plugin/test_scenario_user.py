"""A scenario's `transport:` name picks the shared transport client its users send through, by the name -> factory
map (no user class is tested for its identity)."""

from __future__ import annotations

from locust.env import Environment

import pytest

from dynlocust.plugin import context
from dynlocust.request.transport.boto3 import BotocoreTransport
from dynlocust.request.transport.fast import FastDynamoDB
from dynlocust.scenario import load_scenario_text
from dynlocust.scenario.spec import TRANSPORTS
from dynlocust.user_classes.dynamodb_user import shared_boto3_client
from dynlocust.user_classes.fast_user import shared_fast_client
from dynlocust.user_classes.scenario_user import TRANSPORT_FACTORIES, ScenarioUser
from tests.support.scenarios import scenario_yaml

HOST = "http://127.0.0.1:9"
"""Never dialled: building a transport client does no I/O."""


def test_every_transport_name_has_a_factory() -> None:
    assert set(TRANSPORT_FACTORIES) == set(TRANSPORTS)


@pytest.mark.parametrize("transport", ["fast", "boto3"])
def test_the_scenarios_transport_name_picks_the_users_shared_client(transport: str) -> None:
    environment = Environment()
    text = scenario_yaml("unit", "steps: [{rate: 20, window: 1s}]", transport=transport, item_size=100)
    context.state_for(environment).scenario = load_scenario_text(text, "unit.yaml")
    user_class = type("Local", (ScenarioUser,), {"host": HOST})  # as Locust sets `--host` on the class
    first, second = user_class(environment), user_class(environment)
    settings = context.settings_for(environment)
    shared = shared_fast_client if transport == "fast" else shared_boto3_client
    assert first.client.raw is second.client.raw is shared(environment, HOST, settings)
    if transport == "fast":
        assert isinstance(first.client.raw, FastDynamoDB) and first.client.transport is first.client.raw
    else:
        assert isinstance(first.client.transport, BotocoreTransport)
