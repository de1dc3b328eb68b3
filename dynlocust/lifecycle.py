"""Set-up of a scenario run: the scenario and endpoint once per process, then tables, T0 and the plan per run.

`prepare` runs at Locust's `init` (master or standalone; a worker only loads the scenario): it loads the scenario,
starts the embedded endpoint when the target is local and no `--host` was given, refuses a remote target without
credentials, and reserves the first run's id. `begin` runs at every `test_start`: it takes a fresh `RunState`
when the last one has been used (a second Start in the web UI), creates and seeds its tables, picks T0 a little
ahead, and hands each process its share (`dynlocust.fleet` on a master, a `ScenarioRun` standalone).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from locust.runners import MasterRunner, WorkerRunner

import gevent

from dynlocust import epilogue, fleet, safety
from dynlocust.coordination import FleetReport
from dynlocust.deploy import results_table
from dynlocust.errors import DynlocustError
from dynlocust.runner import ScenarioRun
from dynlocust.runstate import EnvironmentState, RunState, new_run_id, state_for
from dynlocust.scenario import scale
from dynlocust.scenario.model import RemoteTarget
from dynlocust.scenario.plan import build_plan
from dynlocust.tables import TableManager
from dynlocust.transport.boto3 import is_local_endpoint, make_client

log = logging.getLogger("dynlocust")

START_LEAD = 1.0
"""Seconds between the end of set-up and T0 in a standalone run: every user is waiting when the first send is due."""
FLEET_START_LEAD = 3.0
"""The same for a fleet: the plan must reach every worker, and their users be spawned, before T0."""

CREDENTIALS_HELP = (
    "provide them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary ones), "
    "AWS_PROFILE with ~/.aws/credentials, or an instance or task role; or test without AWS against the embedded "
    "endpoint with a scenario whose target is local (`target: {local: {}}`), or `dynlocust local` and --host"
)


def fail(message: str, code: int = 2) -> NoReturn:
    sys.stderr.write(f"dynlocust: error: {message}\n")
    sys.exit(code)


def prepare(environment: Any) -> EnvironmentState:
    """Load the scenario and set up what lives as long as the process (endpoint, host, the first run id)."""
    state = state_for(environment)
    settings = state.settings
    if not settings.scenario:
        fail("--scenario: expected a scenario YAML file (or DYNLOCUST_SCENARIO), found none")
    try:
        scenario = scale.load(settings.scenario, settings.scaling)
    except DynlocustError as exc:
        fail(str(exc))
    state.scenario = scenario
    state.digest = scale.digest(settings.scenario, settings.scaling)
    if isinstance(environment.runner, WorkerRunner):
        return state
    state.run = _new_run(state, settings.run_id or new_run_id(), explicit=True)
    if not environment.host:
        if isinstance(scenario.target, RemoteTarget) and scenario.target.endpoint:
            environment.host = scenario.target.endpoint
        elif scenario.is_local:
            from dynlocust.local.embedded import LocalEndpoint

            log.info("starting the embedded local endpoint")
            state.endpoint = LocalEndpoint(
                capacity_scale=scenario.target.capacity_scale,  # type: ignore[union-attr]
                time_scale=scenario.target.time_scale,  # type: ignore[union-attr]
            ).start()
            environment.host = state.endpoint.url
            log.info("embedded local endpoint at %s", environment.host)
    fleet.set_host(environment, environment.host)
    if not is_local_endpoint(environment.host):
        profile = scenario.target.profile if isinstance(scenario.target, RemoteTarget) else None
        _require_credentials(environment.host, _region(state), profile)
    return state


def _region(state: EnvironmentState) -> str:
    scenario = state.scenario
    assert scenario is not None
    return (isinstance(scenario.target, RemoteTarget) and scenario.target.region) or state.settings.region


def _require_credentials(host: str | None, region: str, profile: str | None = None) -> None:
    """Refuse a remote target without AWS credentials now, before any table or user exists."""
    import botocore.exceptions
    import botocore.session  # after locust (gevent patching), as everywhere

    try:
        credentials = botocore.session.Session(profile=profile).get_credentials()
    except botocore.exceptions.BotoCoreError:  # e.g. the scenario's profile is not configured
        credentials = None
    if credentials is None:
        where = host or f"DynamoDB in {region}"
        if profile:
            where += f" (profile {profile!r})"
        fail(f"no AWS credentials found for the remote target {where}: the run needs them to create its tables; "
             f"{CREDENTIALS_HELP}")  # fmt: skip


def _new_run(state: EnvironmentState, run_id: str, *, explicit: bool = False) -> RunState:
    """A run with a results path of its own; `explicit` (the user's --run-id) must not exist already."""
    results_dir = Path(state.settings.results_dir)
    while (results_dir / run_id / "results.jsonl").exists():
        if explicit:
            fail(f"--run-id: expected a new run id, found existing results at {results_dir / run_id / 'results.jsonl'}"
                 "; choose another id")  # fmt: skip
        run_id = new_run_id()
    return RunState(run_id, results_dir / run_id / "results.jsonl")


def begin(environment: Any) -> None:
    """`test_start` on a master or standalone process: set up a fresh run and start it, or end the process."""
    state = state_for(environment)
    runner = environment.runner
    if safety.is_quitting(environment):
        raise gevent.GreenletExit  # shutdown has begun (an interrupt): neither set up nor spawn users
    if state.scenario is None or isinstance(runner, WorkerRunner):
        return
    previous = state.run
    if previous is not None and previous.ending is not None:
        previous.ending.join()
    # every Start is a fresh run with the settings of that Start (the web UI's form may have changed --run-id or
    # --results-dir); an id whose results exist (an earlier Start's) gives way to a new one
    unused = previous.run_id if previous is not None and not previous.begun else None
    state.run = _new_run(state, state.settings.run_id or unused or new_run_id())
    run = state.run
    assert run is not None and run.results_path is not None
    settings = state.settings
    scenario = state.scenario
    client = make_client(
        environment.host or None,
        region=_region(state),
        connect_timeout=settings.connect_timeout,
        read_timeout=scenario.deadline,
        pool_size=16,
    )
    run.tables = TableManager(client, scenario, run.run_id)
    try:
        run.stage = "creating tables"
        run.tables.create_all()
        run.stage = "seeding tables"
        seeded = run.tables.seed_all()
    except Exception as exc:
        if not safety.is_quitting(environment):  # else teardown stopped it: it records the interrupt
            log.error("set-up failed: %s", exc)
            run.setup_error = str(exc)
            environment.process_exit_code = 2
            gevent.spawn(runner.stop if keeps_running(environment) else runner.quit)  # the web UI says why
        raise gevent.GreenletExit from None  # Locust spawns users after `test_start`: there must be none
    if safety.is_quitting(environment):
        raise gevent.GreenletExit  # interrupted as set-up ended: teardown has the tables, no run starts
    run.stage = "running"
    for name, seconds in run.tables.seconds_to_active.items():
        log.info("table %s ACTIVE after %.1f s", name, seconds)
    if seeded:
        log.info("seeded %d items", seeded)

    is_fleet = isinstance(runner, MasterRunner)
    run.workers = tuple(sorted(runner.clients)) if is_fleet else ("local",)
    t0 = time.time() + (FLEET_START_LEAD if is_fleet else START_LEAD)
    run.results_path.parent.mkdir(parents=True, exist_ok=True)

    def finished(code: int) -> None:
        environment.process_exit_code = code
        gevent.spawn(runner.stop if keeps_running(environment) else runner.quit)

    run.report = FleetReport(
        scenario,
        build_plan(scenario, t0=t0),
        results_table.results_writer(run.results_path, run.run_id),
        len(run.workers),
        on_finished=finished,
        thresholds=settings.thresholds,
        table_in_epilogue=epilogue.prints_table(environment.parsed_options),
    )
    run.report.start(
        run_id=run.run_id,
        tables=run.tables.physical_names,
        seconds_to_active=run.tables.seconds_to_active,
        workers=list(run.workers),
    )
    if is_fleet:
        run.t0 = t0
        fleet.send_plans(environment, run)
        return
    report = run.report
    run.run = ScenarioRun(
        scenario,
        run.tables.physical_names,
        run.run_id,
        t0=t0,
        deadline=scenario.deadline,
        on_window=lambda record: report.add_window(0, record),
        on_done=lambda totals: report.worker_done(0, totals),
        thresholds=settings.thresholds,
    )
    run.run.start()
    safety.watch(environment, run)


def keeps_running(environment: Any) -> bool:
    """Whether the process outlives a run: the web UI's, where each Start begins another (not headless)."""
    options = getattr(environment, "parsed_options", None)
    return getattr(environment, "web_ui", None) is not None and not getattr(options, "headless", False)
