"""LocalRun against the in-process local endpoint: windows are reported once each, ceilings stop the run."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.event import EventHook

import gevent
import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.client import DynamoDBClient
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.gcpause import freeze_survivors
from dynlocust.run.local_run import LocalRun
from dynlocust.scenario import load_scenario_text
from dynlocust.scenario.model import Limits
from tests.support.scenarios import scenario_yaml


def scenario_text(window: str = "1s") -> str:
    """Two steps of 100/s, each `window` long, of 3 puts to 1 get."""
    return scenario_yaml(
        "unit",
        f"steps: [{{rate: 100, window: {window}}}, {{rate: 100, window: {window}}}]",
        transport=None,
        item_size=100,
        operations="[{op: put, weight: 3}, {op: get, weight: 1, keys: {distribution: uniform, keyspace: 50}}]",
        deadline="1s",
    )


SCENARIO = scenario_text()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Any]:
    server = serve_in_thread()
    try:
        client = make_client(server.url, region="us-east-1", connect_timeout=1, read_timeout=1, pool_size=4)
        client.create_table(
            TableName="t-unit",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client
    finally:
        server.stop()


def run_scenario(
    raw: Any, limits: Limits | None = None, *, users: int = 4, pause: float = 0.0, window: str = "1s"
) -> tuple[LocalRun, list[dict], list[dict]]:
    """`users` greenlets take tickets; each waits `pause` seconds after a request before taking the next."""
    scenario = load_scenario_text(scenario_text(window), "unit.yaml")
    if limits is not None:
        scenario = dataclasses.replace(scenario, limits=limits)
    windows: list[dict] = []
    done: list[dict] = []
    # start() collects the heap before the first send; a test session's heap took seconds under stress-ng, past the
    # first sends' lateness allowance, so it is collected and frozen here, before t0 is taken
    freeze_survivors()
    run = LocalRun(
        scenario, {"t": "t-unit"}, "unit", t0=time.time() + 0.2, deadline=1.0,
        on_window=lambda record: windows.append(record.to_dict()), on_done=done.append,  # the wire's form
    )  # fmt: skip
    client = DynamoDBClient(raw, EventHook(), deadline=1.0)

    def user() -> None:
        while (ticket := run.next_ticket()) is not None:
            run.execute(client, ticket)
            gevent.sleep(pause)

    greenlets = [gevent.spawn(user) for _ in range(users)]
    run.start()
    run.wait(10)
    gevent.joinall(greenlets, timeout=5)
    return run, windows, done


def test_every_window_is_reported_once_with_every_request(endpoint: Any) -> None:
    run, windows, done = run_scenario(endpoint)
    assert [w["index"] for w in windows] == [0, 1]
    assert len(done) == 1 and done[0]["abort_reason"] is None
    sent = sum(sum(b["by_kind"].values()) for w in windows for b in w["bins"])
    dropped = sum(w["pacing"]["dropped"] for w in windows)
    assert sent == done[0]["sent"] == run.sent == sum(w["pacing"]["handed"] for w in windows)
    assert sent + dropped == 200  # every scheduled send is accounted for
    assert done[0]["write_units"] > 0 and done[0]["read_units"] > 0
    assert len(run.book) == 0  # each window's statistics went with its record: none is kept twice


def test_a_window_whose_last_sends_wait_for_a_user_is_closed_whole(endpoint: Any) -> None:
    """One user, busy elsewhere 15 ms after each request, cannot keep 100/s: sends queue for it and nothing is in
    flight most of the time. Each window closes once its queued sends are handed or dropped, never before: a
    window that ran to its end is not partial."""
    _, windows, done = run_scenario(endpoint, users=1, pause=0.015)
    assert [w["index"] for w in windows] == [0, 1] and done[0]["abort_reason"] is None
    assert [w["partial"] for w in windows] == [False, False], [w["pacing"] for w in windows]
    assert all(w["pacing"]["dropped"] > 0 for w in windows)  # the user really could not keep up
    assert sum(w["pacing"]["handed"] + w["pacing"]["dropped"] for w in windows) == 200


# The ceiling tests plan 1,000 sends in two 5 s windows and stop long before their end. On a busy machine most sends
# of a 1 s window can be dropped (late past the pacer's allowance), and 30 would then never be sent at all.


def test_the_request_ceiling_stops_the_run(endpoint: Any) -> None:
    run, windows, done = run_scenario(endpoint, Limits(max_requests=30), window="5s")
    assert done[0]["abort_reason"].startswith("request ceiling reached")
    assert 30 <= run.sent <= 34  # in-flight requests of the 4 users finish
    assert windows and any(w["partial"] for w in windows)  # the window the ceiling stopped


def test_the_cost_ceiling_stops_the_run(endpoint: Any) -> None:
    run, _, done = run_scenario(endpoint, Limits(max_cost_dollars=0.00001), window="5s")  # ~16 writes of 1 unit
    assert done[0]["abort_reason"].startswith("cost ceiling reached")
    assert run.sent < 40


def test_without_limits_the_ceiling_is_the_plan_plus_a_margin() -> None:
    scenario = load_scenario_text(SCENARIO, "unit.yaml")
    run = LocalRun(
        scenario, {"t": "t-unit"}, "unit", t0=0.0, deadline=1.0, on_window=lambda r: None, on_done=lambda t: None
    )
    assert scenario.limits.max_requests is None
    assert run.request_ceiling == 320  # 200 planned x 1.1 + 100
