"""Set-up of a scenario run, in single-purpose steps that the role owning a run calls (`dynlocust.plugin.roles`).

Once per process, at Locust's `init`: `load_scenario` (every role: a worker only loads it), then, for the role that
owns runs, `prepare_run`: the scenario's concurrency as Locust's user count unless `-u` was given (Locust's own
default, one user, would cap the open model at one request in flight), the first run's id reserved, the embedded
endpoint started when the target is local and no `--host` was given, a remote target without credentials refused.
At every `test_start` the owning role's `begin` takes these steps in turn: `claim_run` (a fresh `RunContext` when the
last one has been used, as after a second Start in the web UI, under an id found free), `create_tables` (created
and seeded once the run id is free on the target, `dynlocust.run.claim`), `open_results` (its results file,
created exclusively) and `start_merge` (the fleet's merge, its run record written). A step that fails ends the run
with exit code 2 and spawns no user.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, NoReturn

from locust.env import Environment

import gevent

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.fleet import results_table
from dynlocust.fleet.merge import FleetMerge
from dynlocust.plugin import epilogue, safety, webform
from dynlocust.plugin.context import EnvironmentState, RunContext, RunOutcome, keeps_running, state_for
from dynlocust.request.transport.boto3 import is_local_endpoint, make_client
from dynlocust.run.claim import RunIdTaken, results_taken_message
from dynlocust.run.results import ResultsWriter
from dynlocust.run.run_id import new_run_id
from dynlocust.run.search import new_search
from dynlocust.run.table_state import TableStatePoller
from dynlocust.run.tables import TableManager
from dynlocust.scenario import scale
from dynlocust.scenario.model import RemoteTarget
from dynlocust.scenario.plan import build_plan

log = logging.getLogger("dynlocust")

CREDENTIALS_HELP = (
    "provide them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary ones), "
    "AWS_PROFILE with ~/.aws/credentials, or an instance or task role; or test without AWS against the embedded "
    "endpoint with a scenario whose target is local (`target: {local: {}}`), or `dynlocust local` and --host"
)


def fail(message: str, code: int = ExitCode.BAD_INPUT) -> NoReturn:
    sys.stderr.write(f"dynlocust: error: {message}\n")
    sys.exit(code)


def load_scenario(environment: Environment) -> EnvironmentState:
    """Load the scenario, once per process (every role: a worker plays it too)."""
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
    return state


def prepare_run(environment: Environment) -> None:
    """What lives as long as a process that owns runs: Locust's user count, the first run id, endpoint, host."""
    state = state_for(environment)
    scenario = state.scenario
    assert scenario is not None
    if environment.parsed_options is not None:  # `locust -f ... --headless` (or --autostart) without -u
        webform.fill_defaults(environment.parsed_options, scenario.concurrency)
    try:
        state.run = _new_run(state, state.settings.run_id or new_run_id(), explicit=True)
    except RunIdTaken as exc:
        fail(str(exc))
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
    set_host(environment, environment.host)
    if not is_local_endpoint(environment.host):
        profile = scenario.target.profile if isinstance(scenario.target, RemoteTarget) else None
        _require_credentials(environment.host, _region(state), profile)


def set_host(environment: Environment, host: str | None) -> None:
    """The endpoint every user class of the process calls (the master's, on a worker)."""
    environment.host = host
    for user_class in environment.user_classes:
        user_class.host = host


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


def _new_run(state: EnvironmentState, run_id: str, *, explicit: bool = False) -> RunContext:
    """A run with a results path of its own; `explicit` (the user's --run-id) must not exist already, else this
    raises `RunIdTaken`. (Two runs starting at once both pass this: the results file's exclusive create decides.)"""
    results_dir = Path(state.settings.results_dir)
    while (results_dir / run_id / "results.jsonl").exists():
        if explicit:
            raise RunIdTaken(results_taken_message(results_dir / run_id / "results.jsonl"))
        run_id = new_run_id()
    return RunContext(run_id, results_dir / run_id / "results.jsonl")


def _ran_here(state: EnvironmentState, run_id: str) -> bool:
    """Whether this process has begun a run of `run_id` (a further Start in the web UI gives way to a new id)."""
    previous = state.run
    return any(o.run_id == run_id for o in state.outcomes) or (
        previous is not None and previous.begun and previous.run_id == run_id
    )


def _setup_failed(environment: Environment, run: RunContext, exc: Exception) -> NoReturn:
    """End a run whose set-up failed: exit code 2 and its line (unless an interrupt stopped it: teardown records
    that), no user spawned."""
    state = state_for(environment)
    runner = environment.runner
    assert runner is not None
    if not safety.is_quitting(environment):  # else teardown stopped it: it records the interrupt
        log.error("set-up failed: %s", exc)
        run.setup_error = str(exc)
        environment.process_exit_code = state.record(RunOutcome(run.run_id, ExitCode.BAD_INPUT))
        epilogue.arm_exit_line(environment.parsed_options)
        gevent.spawn(runner.stop if keeps_running(environment) else runner.quit)  # the web UI says why
    raise gevent.GreenletExit from None  # Locust spawns users after `test_start`: there must be none


def claim_run(environment: Environment) -> RunContext:
    """A fresh run for this Start, under an id free here: every Start is a fresh run with the settings of that
    Start (the web UI's form may have changed --run-id or --results-dir)."""
    state = state_for(environment)
    previous = state.run
    if previous is not None and previous.ending is not None:
        previous.ending.join()
    # an id whose results exist (an earlier Start's) gives way to a new one
    unused = previous.run_id if previous is not None and not previous.begun else None
    settings = state.settings
    wanted = settings.run_id or unused or new_run_id()
    # the user's --run-id gives way only to this process's own earlier run; another process's is refused
    explicit = bool(settings.run_id) and not _ran_here(state, settings.run_id)
    try:
        run = state.run = _new_run(state, wanted, explicit=explicit)
    except RunIdTaken as exc:
        run = state.run = RunContext(wanted)
        _setup_failed(environment, run, exc)
    return run


def create_tables(environment: Environment, run: RunContext) -> Any:
    """Create and seed the run's tables; the client that did (for the table-state poll)."""
    state = state_for(environment)
    scenario = state.scenario
    assert scenario is not None
    client = make_client(
        environment.host or None,
        region=_region(state),
        connect_timeout=state.settings.connect_timeout,
        read_timeout=scenario.deadline,
        pool_size=16,
    )
    results_table_name = state.settings.results_table.name  # on ECS: tagged, not the scenario's
    run.tables = TableManager(client, scenario, run.run_id, ignore=(results_table_name,) if results_table_name else ())
    try:
        run.stage = "creating tables"
        run.tables.create_all()
        run.stage = "seeding tables"
        run.tables.seed_all()  # each table's own line says what it seeded, how fast
    except Exception as exc:
        _setup_failed(environment, run, exc)
    if safety.is_quitting(environment):
        raise gevent.GreenletExit  # interrupted as set-up ended: teardown has the tables, no run starts
    return client


def open_results(environment: Environment, run: RunContext) -> ResultsWriter:
    """The run's results file, created exclusively: of two processes given one run id and one results directory,
    only one writes there."""
    assert run.results_path is not None
    try:
        run.results_path.parent.mkdir(parents=True, exist_ok=True)
        writer = results_table.results_writer(
            run.results_path, run.run_id, state_for(environment).settings.results_table, exclusive=True
        )
    except (OSError, DynlocustError) as exc:
        _setup_failed(environment, run, exc)
    run.stage = "running"
    assert run.tables is not None
    for name, seconds in run.tables.seconds_to_active.items():
        log.info("table %s ACTIVE after %.1f s", name, seconds)
    return writer


def start_merge(
    environment: Environment,
    run: RunContext,
    writer: ResultsWriter,
    t0: float,
    *,
    table_states: TableStatePoller,
    probe_lead: float,
) -> FleetMerge:
    """The fleet's merge of the run's windows, its run record written; when the run ends, the process's exit code
    is recorded and the run wound down (`after_run`)."""
    state = state_for(environment)
    scenario = state.scenario
    assert scenario is not None and run.tables is not None

    def finished(code: int) -> None:
        environment.process_exit_code = state.record(RunOutcome(run.run_id, code))
        gevent.spawn(after_run, environment)

    merge = run.merge = FleetMerge(
        scenario,
        build_plan(scenario, t0=t0),
        writer,
        len(run.workers),
        on_finished=finished,
        thresholds=state.settings.thresholds,
        table_in_epilogue=epilogue.prints_table(environment.parsed_options),
        table_states=table_states,
        search=new_search(scenario),
        probe_lead=probe_lead,
    )
    merge.start(
        run_id=run.run_id,
        tables=run.tables.physical_names,
        seconds_to_active=run.tables.seconds_to_active,
        workers=list(run.workers),
        table_state=table_states.before,
    )
    if merge.finished:
        raise gevent.GreenletExit  # its run record could not be written: it failed, it quits, no user spawns
    return merge


def after_run(environment: Environment) -> None:
    """The plan has ended: a headless process quits; a web UI process stops the run and waits for the next Start,
    or, started with `--autostart --autoquit N`, quits N seconds later (as Locust does after `--run-time`)."""
    runner = environment.runner
    assert runner is not None
    if not keeps_running(environment):
        runner.quit()
        return
    runner.stop()
    autoquit = autoquit_seconds(environment.parsed_options)
    if autoquit is not None:
        log.info("the plan has ended: quitting in %s s (--autoquit)", f"{autoquit:g}")
        gevent.sleep(autoquit)
        runner.quit()
        if environment.web_ui is not None:
            environment.web_ui.stop()  # Locust's main loop waits on the web UI: stopped, it shuts down


def autoquit_seconds(options: Any) -> float | None:
    """`--autoquit N` of an `--autostart` web UI run: quit N s after the run; None when it should stay up."""
    autoquit = getattr(options, "autoquit", -1)
    if not getattr(options, "autostart", False) or autoquit is None or autoquit < 0:
        return None
    return float(autoquit)
