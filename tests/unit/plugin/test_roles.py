"""Each role's life, with real parts: Locust's own runners (a master and its worker over ZeroMQ in this process),
the embedded endpoint over HTTP, and the results file on disk. A standalone process sets up, plays and ends its
run; a master sets up and merges while its worker plays the share a plan hands it; teardown deletes the tables."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import locust  # noqa: F401 - first, for gevent patching
from locust.argument_parser import parse_options
from locust.env import Environment
from locust.event import Events

import gevent
import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.plugin import listeners, roles, setup
from dynlocust.plugin.context import current_share, state_for
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.gcpause import thaw
from dynlocust.user_classes.scenario_user import ScenarioUser
from tests.support.scenarios import put_scenario, write_scenario
from tests.support.webui import free_port

TWO_WINDOWS = put_scenario("roles", "steps: [{rate: 20, window: 1s}, {rate: 20, window: 1s}]", concurrency=2)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    started = LocalEndpoint().start()
    try:
        yield started
    finally:
        started.stop()


def _environment(tmp_path: Path, endpoint: LocalEndpoint, run_id: str) -> Environment:
    listeners.register_plugin()  # dynlocust's options on Locust's parser, as importing a dynlocust user does
    scenario = write_scenario(tmp_path, TWO_WINDOWS)
    options = parse_options(
        ["--headless", "--scenario", str(scenario), "--results-dir", str(tmp_path / "runs"), "--run-id", run_id,
         "--metrics-port", "0", "--host", endpoint.url]
    )  # fmt: skip
    return Environment(user_classes=[ScenarioUser], events=Events(), parsed_options=options, host=endpoint.url)


def _tables(endpoint: LocalEndpoint) -> list[str]:
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=1)
    return list(client.list_tables()["TableNames"])


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _until(done: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    until = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < until, what
        gevent.sleep(0.05)


@pytest.mark.timeout(120)
def test_a_standalone_process_sets_up_plays_and_ends_its_run(
    tmp_path: Path, endpoint: LocalEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    environment = _environment(tmp_path, endpoint, "alone")
    frozen_at_t0: list[int] = []
    start_merge = setup.start_merge

    def observed_start_merge(*args: Any, **kwargs: Any) -> Any:  # called with T0, just fixed
        frozen_at_t0.append(gc.get_freeze_count())
        return start_merge(*args, **kwargs)

    monkeypatch.setattr(setup, "start_merge", observed_start_merge)
    thaw()
    runner = environment.create_local_runner()
    role = roles.role_for(environment)
    assert isinstance(role, roles.Standalone) and role.owns_run and not role.is_fleet
    state = state_for(environment)
    try:
        role.prepare()
        assert state.scenario is not None and state.endpoint is None  # --host given: no embedded endpoint
        assert state.run is not None and state.run.run_id == "alone" and not state.run.begun
        role.begin()
        run = state.run
        assert run.stage == "running" and run.workers == ("local",)
        # the heap was collected before T0 was fixed: under load, collecting it after ate the first sends' lead
        assert len(frozen_at_t0) == 1 and frozen_at_t0[0] > 0
        assert run.share is not None and run.merge is not None and run.tables is not None
        assert set(run.tables.physical_names.values()) <= set(_tables(endpoint))
        runner.start(2, spawn_rate=100)  # the scenario's users take the share's sends
        _until(lambda: run.merge is not None and run.merge.finished, "the merge never finished")
    finally:
        role.quit()
        runner.quit()
    assert run.ending is not None and run.ending.ready()
    assert not set(run.tables.physical_names.values()) & set(_tables(endpoint))  # teardown deleted them
    records = _records(tmp_path / "runs" / "alone" / "results.jsonl")
    windows = [r for r in records if r["type"] == "window"]
    assert records[0]["type"] == "run" and records[-1]["type"] == "end" and len(windows) == 2
    assert sum(w["summary"]["sent"] for w in windows) == run.share.sent > 0
    assert [o.run_id for o in state.outcomes] == ["alone"]
    assert state.outcomes[0].exit_code == records[-1]["exit_code"] == environment.process_exit_code


@pytest.mark.timeout(120)
def test_a_master_hands_its_worker_a_share_and_merges_the_windows_it_sends(
    tmp_path: Path, endpoint: LocalEndpoint
) -> None:
    master_env = _environment(tmp_path, endpoint, "fleet")
    worker_env = _environment(tmp_path, endpoint, "fleet")
    port = free_port()
    master_runner = master_env.create_master_runner("127.0.0.1", port)
    worker_runner = worker_env.create_worker_runner("127.0.0.1", port)
    master, worker = roles.role_for(master_env), roles.role_for(worker_env)
    assert isinstance(master, roles.Master) and master.owns_run and master.is_fleet
    assert isinstance(worker, roles.Worker) and not worker.owns_run
    master_state, worker_state = state_for(master_env), state_for(worker_env)
    try:
        master.register()
        worker.register()  # says hello: a worker can take a plan from now on
        master.prepare()
        worker.prepare()
        assert worker_state.scenario is not None and worker_state.run is None  # a worker reserves no run
        _until(lambda: len(master_runner.clients) == 1, "the worker never joined")
        worker.begin()  # a worker's test_start sets nothing up: its share comes as a plan
        assert worker_state.run is None
        master.begin()
        run = master_state.run
        assert run is not None and run.merge is not None and run.share is None  # the master plays no share
        assert run.workers == tuple(master_runner.clients)
        _until(lambda: current_share(worker_env) is not None, "no plan reached the worker")
        share = current_share(worker_env)
        assert share is not None and share.run_id == "fleet" and share.t0 == run.t0
        _until(lambda: run.merge is not None and run.merge.finished, "the merge never finished")
    finally:
        master.quit()
        worker.quit()
        worker_runner.quit()
        master_runner.quit()
    assert share.finished and len(share.closed) == 2  # the worker closed both windows and sent them
    assert (tmp_path / "runs" / "fleet" / "worker-0.jsonl").exists()  # spooled on the worker's side too
    assert run.tables is not None and not set(run.tables.physical_names.values()) & set(_tables(endpoint))
    records = _records(tmp_path / "runs" / "fleet" / "results.jsonl")
    assert records[0]["type"] == "run" and records[-1]["type"] == "end"
    assert [r["index"] for r in records if r["type"] == "window"] == [0, 1]
    assert master_state.outcomes[0].exit_code == records[-1]["exit_code"]
