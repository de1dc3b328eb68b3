"""Locust event hooks and the `ScenarioUser` of scenario runs, standalone or as a master/worker fleet.

Set-up happens in Locust's own events so the web UI, headless runs, `dynlocust run` and `locust -f` share one path:
- `init` loads the scenario and, on the master or a standalone process, starts the embedded endpoint when the
  target is local and no `--host` was given; workers register for the master's plan.
- `test_start` (master or standalone) creates and seeds the tables, picks T0 a little ahead, and hands each process
  its share: a worker gets a `dynlocust:plan` message, a standalone process starts its own `ScenarioRun`.
- `quitting` stops whatever still runs and tears down, whatever ended the run.

Locust loads a locustfile given by path as a module of its own; keeping this logic in a package module means it is
imported (and its listeners registered) exactly once, whichever entry point is used.
"""

from __future__ import annotations

import hashlib
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
from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner
from locust.user.users import LOCUST_STATE_STOPPING

import gevent

import dynlocust.metrics  # registers the Prometheus /metrics listeners (init, quitting)
import dynlocust.webui  # noqa: F401 - the DynamoDB tab in Locust's web UI (init listener)
from dynlocust import coordination, epilogue, plugin, redact, safety
from dynlocust.coordination import FleetReport
from dynlocust.deploy import results_table
from dynlocust.errors import DynlocustError
from dynlocust.fast_users import shared_fast_client
from dynlocust.runner import ScenarioRun
from dynlocust.scenario import load_scenario
from dynlocust.scenario.model import RemoteTarget, Scenario
from dynlocust.scenario.plan import build_plan
from dynlocust.tables import TableManager
from dynlocust.transport.boto3 import make_client
from dynlocust.users import DynamoDBUser

log = logging.getLogger("dynlocust")

START_LEAD = 1.0
"""Seconds between the end of set-up and T0 in a standalone run: every user is waiting when the first send is due."""
REPLAN_LEAD = 2.0
"""Seconds ahead a re-balanced share must start: the message must reach every survivor before that window."""
FLEET_START_LEAD = 3.0
"""The same for a fleet: the plan must reach every worker, and their users be spawned, before T0."""


@dataclass
class RunState:
    scenario: Scenario
    digest: str
    run_id: str = ""
    results_path: Path | None = None
    endpoint: Any = None
    tables: TableManager | None = None
    run: ScenarioRun | None = None
    report: FleetReport | None = None
    workers: tuple[str, ...] = ()
    t0: float = 0.0
    stage: str = "starting the run"
    """Where set-up is (starting the run, creating tables, seeding tables, running), for an interrupt's record."""
    setup_failed: bool = False

    def plan_message(self, environment: Any, worker: int) -> dict[str, Any]:
        """What a worker needs to run its share: T0, tables, its identity, the endpoint, the master's clock."""
        assert self.tables is not None
        return {
            "t0": self.t0,
            "run_id": self.run_id,
            "tables": self.tables.physical_names,
            "worker_index": worker,
            "worker_count": len(self.workers),
            "host": environment.host,
            "master_time": time.time(),
            "digest": self.digest,
        }


_STATES: weakref.WeakKeyDictionary[Any, RunState] = weakref.WeakKeyDictionary()


def current_run(environment: Any) -> ScenarioRun | None:
    """This process's scenario run once it has started (for the web UI and metrics)."""
    state = _STATES.get(environment)
    return state.run if state is not None else None


def current_report(environment: Any) -> FleetReport | None:
    """The fleet's merged view (master or standalone), once the run has started."""
    state = _STATES.get(environment)
    return state.report if state is not None else None


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def _fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"dynlocust: error: {message}\n")
    sys.exit(code)


@events.init.add_listener
def _on_init(environment: Any, **_kwargs: Any) -> None:
    redact.install()
    safety.route_interrupts()
    with safety.interrupts_held():  # a Ctrl-C here reaches Locust's main loop, which shuts down through `quitting`
        _init(environment)


def _init(environment: Any) -> None:
    settings = plugin.settings_for(environment)
    if not settings.scenario:
        _fail("--scenario: expected a scenario YAML file (or DYNLOCUST_SCENARIO), found none")
    try:
        scenario = load_scenario(settings.scenario)
    except DynlocustError as exc:
        _fail(str(exc))
    digest = hashlib.sha256(Path(settings.scenario).read_bytes()).hexdigest()
    state = RunState(scenario, digest)
    _STATES[environment] = state
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.register_message(coordination.PLAN, lambda msg, **_kw: _on_plan(environment, msg.data))
        runner.register_message(coordination.REPLAN, lambda msg, **_kw: _on_replan(environment, msg.data))
        runner.send_message(coordination.HELLO, {})  # now it can take a plan, even mid-run
        safety.guard_worker(environment, lambda: state.run)
        return
    state.run_id = settings.run_id or new_run_id()
    state.results_path = Path(settings.results_dir) / state.run_id / "results.jsonl"
    if state.results_path.exists():
        _fail(f"--run-id: expected a new run id, found existing results at {state.results_path}; choose another id")
    if isinstance(runner, MasterRunner):
        runner.register_message(coordination.WINDOW, lambda msg, **_kw: _on_worker_window(environment, msg.data))
        runner.register_message(coordination.DONE, lambda msg, **_kw: _on_worker_done(environment, msg.data))
        runner.register_message(coordination.CLOCK, lambda msg, **_kw: _on_worker_clock(environment, msg.data))
        runner.register_message(coordination.HELLO, lambda msg, **_kw: _on_worker_hello(environment, msg.node_id))
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
    _set_host(environment, environment.host)


def _set_host(environment: Any, host: str | None) -> None:
    environment.host = host
    for user_class in environment.user_classes:
        user_class.host = host


@events.test_start.add_listener
def _on_test_start(environment: Any, **_kwargs: Any) -> None:
    state = _STATES.get(environment)
    runner = environment.runner
    if safety.is_quitting(environment):
        raise gevent.GreenletExit  # shutdown has begun (an interrupt): neither set up nor spawn users
    if state is None or state.report is not None or isinstance(runner, WorkerRunner):
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
        state.stage = "creating tables"
        state.tables.create_all()
        state.stage = "seeding tables"
        seeded = state.tables.seed_all()
    except Exception as exc:
        if not safety.is_quitting(environment):  # else teardown stopped it: `_quit` records the interrupt
            log.error("set-up failed: %s", exc)
            state.setup_failed = True
            environment.process_exit_code = 2
            gevent.spawn(runner.quit)
        raise gevent.GreenletExit from None  # Locust spawns users after `test_start`: there must be none
    if safety.is_quitting(environment):
        raise gevent.GreenletExit  # interrupted as set-up ended: teardown has the tables, no run starts
    state.stage = "running"
    for name, seconds in state.tables.seconds_to_active.items():
        log.info("table %s ACTIVE after %.1f s", name, seconds)
    if seeded:
        log.info("seeded %d items", seeded)

    fleet = isinstance(runner, MasterRunner)
    state.workers = tuple(sorted(runner.clients)) if fleet else ("local",)
    t0 = time.time() + (FLEET_START_LEAD if fleet else START_LEAD)
    assert state.results_path is not None
    state.results_path.parent.mkdir(parents=True, exist_ok=True)

    def finished(code: int) -> None:
        environment.process_exit_code = code
        gevent.spawn(runner.quit)

    state.report = FleetReport(
        scenario,
        build_plan(scenario, t0=t0),
        results_table.results_writer(state.results_path, state.run_id),
        len(state.workers),
        on_finished=finished,
        thresholds=settings.thresholds,
    )
    state.report.start(
        run_id=state.run_id,
        tables=state.tables.physical_names,
        seconds_to_active=state.tables.seconds_to_active,
        workers=list(state.workers),
    )
    if fleet:
        state.t0 = t0
        for index, client_id in enumerate(state.workers):
            runner.send_message(coordination.PLAN, state.plan_message(environment, index), client_id=client_id)
        gevent.spawn(_watch_workers, environment, state)
    else:
        report = state.report
        state.run = ScenarioRun(
            scenario,
            state.tables.physical_names,
            state.run_id,
            t0=t0,
            deadline=scenario.deadline,
            on_window=lambda record: report.add_window(0, record),
            on_done=lambda totals: report.worker_done(0, totals),
            thresholds=settings.thresholds,
        )
        state.run.start()
        safety.watch(environment, state)


def _watch_workers(environment: Any, state: RunState) -> None:
    """Tell the report about workers Locust has marked missing (no heartbeat for a few seconds)."""
    runner = environment.runner
    report = state.report
    assert report is not None
    while not report.finished:
        for index, client_id in enumerate(state.workers):
            node = runner.clients.get(client_id)
            if index not in report.lost and (node is None or node.state == STATE_MISSING):
                report.worker_lost(index)
                from_window = _next_window(report)
                if from_window is not None:
                    _rebalance(environment, state, report, from_window)
        gevent.sleep(1.0)


def _next_window(report: FleetReport) -> int | None:
    """The first window that starts far enough ahead for a new share to reach every worker in time."""
    start_after = time.time() + REPLAN_LEAD
    return next((w.index for w in report.plan.windows if w.start > start_after), None)


def _rebalance(
    environment: Any, state: RunState, report: FleetReport, from_window: int, joined: int | None = None
) -> None:
    """Split every window from `from_window` over the live workers: after one was lost, or when `joined` came."""
    live = [i for i in range(len(state.workers)) if i not in report.lost]
    if not live:
        return
    for share_index, worker in enumerate(live):
        share = {"from_window": from_window, "share_index": share_index, "share_count": len(live)}
        if worker == joined:
            environment.runner.send_message(
                coordination.PLAN, {**state.plan_message(environment, worker), **share, "first_window": from_window},
                client_id=state.workers[worker],
            )  # fmt: skip
        else:
            environment.runner.send_message(coordination.REPLAN, share, client_id=state.workers[worker])
    for worker in report.lost:
        report.rebalance(worker, from_window)
    if joined is not None:
        report.worker_joined(joined, from_window)


def _on_worker_hello(environment: Any, client_id: str) -> None:
    """A worker joining a running fleet takes a share from the next window that starts far enough ahead."""
    state = _STATES.get(environment)
    report = state.report if state is not None else None
    if state is None or report is None or report.finished or client_id in state.workers:
        return
    from_window = _next_window(report)
    if from_window is None:
        return
    state.workers = (*state.workers, client_id)
    _rebalance(environment, state, report, from_window, joined=report.add_worker())


# -- worker side -----------------------------------------------------------------------------------------------


def _on_plan(environment: Any, plan: dict[str, Any]) -> None:
    state = _STATES.get(environment)
    runner = environment.runner
    if state is None or state.run is not None:
        return
    if plan["digest"] != state.digest:
        log.error("this worker's --scenario differs from the master's; refusing the plan")
        refusal = {"worker_index": plan["worker_index"], "abort_reason": "its scenario file differs from the master's"}
        runner.send_message(coordination.DONE, refusal)
        return
    runner.send_message(
        coordination.CLOCK,
        {"worker_index": plan["worker_index"], "master_time": plan["master_time"], "worker_time": time.time()},
    )
    _set_host(environment, plan["host"])
    index = int(plan["worker_index"])  # this worker's identity in the fleet's reports
    state.run = ScenarioRun(
        state.scenario,
        dict(plan["tables"]),
        plan["run_id"],
        t0=float(plan["t0"]),
        deadline=state.scenario.deadline,
        on_window=lambda record: runner.send_message(coordination.WINDOW, {"worker_index": index, "record": record}),
        on_done=lambda totals: runner.send_message(coordination.DONE, {**totals, "worker_index": index}),
        worker_index=int(plan.get("share_index", index)),
        worker_count=int(plan.get("share_count", plan["worker_count"])),
        first_window=int(plan.get("first_window", 0)),
        thresholds=plugin.settings_for(environment).thresholds,
    )
    results_dir = Path(plugin.settings_for(environment).results_dir) / plan["run_id"]
    safety.spool_windows(state.run, results_dir / f"worker-{index}.jsonl")
    state.run.start()
    safety.watch(environment, state, results_dir / f"watchdog-{index}.json")


def _on_replan(environment: Any, replan: dict[str, Any]) -> None:
    run = current_run(environment)
    if run is not None:
        run.replan(int(replan["from_window"]), int(replan["share_index"]), int(replan["share_count"]))


# -- master side -----------------------------------------------------------------------------------------------


def _on_worker_window(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.add_window(int(data["worker_index"]), data["record"])


def _on_worker_done(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.worker_done(int(data["worker_index"]), data)


def _on_worker_clock(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.record_clock(int(data["worker_index"]), float(data["master_time"]), float(data["worker_time"]))


@events.quitting.add_listener
def _on_quitting(environment: Any, **_kwargs: Any) -> None:
    # Locust can fire `quitting` twice (a signal's shutdown, then the main loop's): the second waits for the first
    safety.quit_once(environment, lambda: _quit(environment))


def _quit(environment: Any) -> None:
    state = _STATES.pop(environment, None)
    if state is None:
        return
    try:
        if state.run is not None and not state.run.finished:
            state.run.stop("interrupted")
            state.run.wait(state.scenario.deadline + 2.0)
        report = state.report
        if report is not None:
            if report.exit_code is None:  # the run did not wind down in time: it still ends as aborted
                report.abort("interrupted; the run did not stop in time")
            environment.process_exit_code = report.exit_code
            report.results.close()
            if state.results_path is not None:
                epilogue.arm(environment.parsed_options, state.results_path)  # printed when Locust quits
        elif _setup_interrupted(environment, state):
            _record_setup_abort(environment, state)
    finally:
        try:
            if state.tables is not None:
                deleted = safety.shielded(state.tables.teardown)
                if deleted:
                    log.info("deleted tables %s", ", ".join(deleted))
        finally:
            if state.endpoint is not None:
                state.endpoint.stop()


def _setup_interrupted(environment: Any, state: RunState) -> bool:
    """Shut down before the run began, by an interrupt (not a set-up failure, not a web UI left unused)."""
    if state.setup_failed or state.results_path is None or isinstance(environment.runner, WorkerRunner):
        return False
    return state.stage != "starting the run" or bool(getattr(environment.parsed_options, "headless", False))


def _record_setup_abort(environment: Any, state: RunState) -> None:
    """Exit code 4, and a results file whose end record says at which stage of set-up the run was interrupted."""
    reason = f"interrupted during set-up ({state.stage})"
    environment.process_exit_code = coordination.EXIT_ABORTED
    assert state.results_path is not None
    try:
        state.results_path.parent.mkdir(parents=True, exist_ok=True)
        writer = results_table.results_writer(state.results_path, state.run_id)
    except (OSError, DynlocustError) as exc:
        log.error("%s; could not record it: %s", reason, exc)
        return
    report = FleetReport(state.scenario, build_plan(state.scenario, t0=time.time()), writer, max(len(state.workers), 1))
    tables = state.tables.physical_names if state.tables is not None else {}
    report.start(run_id=state.run_id, tables=tables, seconds_to_active={}, workers=list(state.workers))
    report.abort(reason)
    writer.close()


class ScenarioUser(DynamoDBUser):
    """A slot of concurrency: takes the next due send from the pacer and performs it."""

    wait_time = constant(0)

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        state = _STATES.get(environment)
        if state is not None:
            self.client.deadline = state.scenario.deadline

    def _raw_client(self, environment: Any, settings: Any) -> Any:
        state = _STATES.get(environment)
        if state is not None and state.scenario.transport == "fast":
            return shared_fast_client(environment, self.host or None, settings)
        return super()._raw_client(environment, settings)

    @task
    def send(self) -> None:
        run = current_run(self.environment)
        if run is None:
            gevent.sleep(0.05)
            return
        # one task call serves tickets until the schedule ends: Locust's per-task scheduling and its sleep(0)
        # between tasks would otherwise cost each request a hub switch; a graceful stop still ends the loop
        while self._state != LOCUST_STATE_STOPPING:
            ticket = run.next_ticket()
            if ticket is None:
                raise StopUser()
            run.execute(self.client, ticket)
