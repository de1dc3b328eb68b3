"""The roles a dynlocust process plays, one object per role: `Standalone`, `Master` or `Worker`.

`create` picks the role from Locust's runner at `init`; it is the only place that asks what the runner is. As in
Locust, where the runner is the object that runs, the role is the object that owns a run's life: its listeners
(`dynlocust.plugin.listeners` hands each Locust event to the process's role), its metrics wiring and fleet
messages, its set-up and its end. The roles that own runs (standalone, master) `begin` each run in single-purpose
steps (`dynlocust.plugin.setup`: claim the run id, create the tables, open the results, start the merge), hand it out
(a `LocalRun` here, or a plan to every worker) and hand themselves to `dynlocust.plugin.teardown` to end it. A worker
plays the share a plan hands it. Imports go one way: listeners, then roles, then what they call (setup, teardown,
metrics wiring, the watchdog), then the run state (`dynlocust.plugin.context`).

The fleet's messages: the master sends each worker a `dynlocust:plan` (T0, tables, its identity), watches for
workers Locust marks missing and re-balances the remaining windows over the survivors (`dynlocust:replan`), and
gives a worker that joins mid-run a share from the next window far enough ahead. Workers send each closed window,
their totals and a clock reading back; the master's `FleetMerge` merges them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from locust.env import Environment
from locust.runners import (
    STATE_CLEANUP,
    STATE_MISSING,
    STATE_SPAWNING,
    STATE_STOPPED,
    STATE_STOPPING,
    MasterRunner,
    WorkerRunner,
)

import gevent
from prometheus_client import CollectorRegistry

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet import merge
from dynlocust.fleet.merge import FleetMerge
from dynlocust.plugin import metrics_wiring, safety, setup, teardown
from dynlocust.plugin.context import RunContext, current, current_merge, current_share, keeps_running, state_for
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.gcpause import freeze_survivors
from dynlocust.run.local_run import LocalRun
from dynlocust.run.table_state import TableStatePoller
from dynlocust.scenario import scale

if TYPE_CHECKING:
    from dynlocust.observe.metrics import Metrics
    from dynlocust.plugin.settings import Settings

log = logging.getLogger("dynlocust")

START_LEAD = 1.0
"""Seconds between the end of set-up and T0 in a standalone run: every user is waiting when the first send is due."""
FLEET_START_LEAD = 3.0
"""The same for a fleet: the plan must reach every worker, and their users be spawned, before T0."""
PROBE_LEAD = 0.25
"""Seconds between a search's decision and its next probe in one process: the run's users take it at once."""
FLEET_PROBE_LEAD = 1.0
"""The same for a fleet: the `dynlocust:probe` message must reach every worker before the probe starts."""
REPLAN_LEAD = 2.0
"""Seconds ahead a re-balanced share must start: the message must reach every survivor before that window."""


class Role:
    """What a process does that depends on its place in a run."""

    name: ClassVar[str]
    owns_run: ClassVar[bool] = False
    """Sets up runs: tables, T0, results and teardown (a worker only plays the share it is handed)."""
    is_fleet: ClassVar[bool] = False

    def __init__(self, environment: Environment) -> None:
        self.environment = environment

    def register(self) -> None:
        """Register the role's messages at `init` (a standalone process has none)."""

    def install_metrics(self, registry: CollectorRegistry | None = None) -> Metrics:
        """Prometheus metrics for this process, wired by its role (`wire_metrics`)."""
        return metrics_wiring.install(self.environment, registry, wire=self.wire_metrics)

    def uninstall_metrics(self) -> None:
        """Locust's `quitting`: stop the metrics sampler and server (after one last scrape)."""
        metrics_wiring.uninstall(self.environment)

    def wire_metrics(self, metrics: Metrics) -> None:
        """Count this process's requests for Prometheus, and serve them."""
        metrics_wiring.count_requests(self.environment, metrics)
        metrics_wiring.serve(self.environment, metrics)

    def prepare(self) -> None:
        """`init` of a scenario run: load the scenario (a worker plays it too)."""
        setup.load_scenario(self.environment)

    def begin(self) -> None:
        """Locust's `test_start`: a worker's share comes as a plan, so it has nothing to begin."""

    def on_test_stopping(self) -> None:
        """Locust's `test_stopping`, fired before its runner says stopped (a fleet's windows come from its workers,
        which hear of the stop only after this)."""

    def on_test_stop(self) -> None:
        """Locust's `test_stop` (the web UI's Stop, the plan's end)."""

    def quit(self) -> None:
        """Locust's `quitting`: end the current run (an interrupt aborts it), then stop the embedded endpoint."""
        safety.quit_once(
            self.environment, lambda: teardown.quit(self), signal_aborts=not keeps_running(self.environment)
        )


class RunOwner(Role):
    """A role that owns its runs (standalone, master): it sets each up, hands it out and ends it."""

    owns_run = True
    start_lead: ClassVar[float] = START_LEAD
    probe_lead: ClassVar[float] = PROBE_LEAD
    """Seconds between a search deciding its next probe and the probe's start."""

    def prepare(self) -> None:
        """`init`: the scenario, then what lives as long as the process (endpoint, host, the first run id)."""
        super().prepare()
        setup.prepare_run(self.environment)

    def begin(self) -> None:
        """`test_start`: set up a fresh run and hand it out, or end the process."""
        environment = self.environment
        runner = environment.runner
        assert runner is not None
        if safety.is_quitting(environment):
            raise gevent.GreenletExit  # shutdown has begun (an interrupt): neither set up nor spawn users
        if state_for(environment).scenario is None:
            return
        # Locust fires test_start while its runner still says ready (stopped, after an earlier run) and says
        # spawning only once this returns: its web page, polling meanwhile, would take the run for not started and
        # stop polling. Set-up is how this test starts, so the runner says so from now on.
        runner.update_state(STATE_SPAWNING)
        run = setup.claim_run(environment)
        client = setup.create_tables(environment, run)
        writer = setup.open_results(environment, run)
        run.workers = self.run_workers()
        poller = self.watch_tables(client, run)
        if safety.is_quitting(environment):
            raise gevent.GreenletExit  # interrupted during the first table-state poll: no run starts
        if not self.is_fleet:
            freeze_survivors()  # what the run's start collects, collected before T0: seconds on a starved process
        t0 = time.time() + self.start_lead
        fleet = setup.start_merge(environment, run, writer, t0, table_states=poller, probe_lead=self.probe_lead)
        self.play(run, fleet, t0)
        poller.start([w.end for w in fleet.plan.windows], fleet.table_state_polled)
        if safety.is_quitting(environment) or runner.state in (STATE_STOPPING, STATE_STOPPED, STATE_CLEANUP):
            # interrupted while the run started: teardown ends it as aborted; Locust, whose shutdown has stopped
            # the runner under this listener, must not go on to spawn users
            raise gevent.GreenletExit

    def run_workers(self) -> tuple[str, ...]:
        """Who plays a new run: the worker ids of a fleet, or this process."""
        return ("local",)

    def watch_tables(self, client: Any, run: RunContext) -> TableStatePoller:
        """The poll of the run's tables at each window boundary (`dynlocust.run.table_state`), its first poll
        (the state before the run) done now: the process that owns the run polls, once for the whole fleet."""
        scenario = state_for(self.environment).scenario
        assert run.tables is not None and scenario is not None
        poller = TableStatePoller(client, run.tables.physical_names, scenario.deadline)
        poller.poll_before()
        return poller

    def play(self, run: RunContext, fleet: FleetMerge, t0: float) -> None:
        """Hand out a run whose set-up is done."""
        raise NotImplementedError

    def on_test_stop(self) -> None:
        """`test_stop`: end the current run and delete its tables (a web UI process then waits for the next Start)."""
        run = current(self.environment)
        if run is not None and run.begun and keeps_running(self.environment):
            teardown.end_run(self, run, "stopped")


class Standalone(RunOwner):
    name = "standalone"

    def on_test_stopping(self) -> None:
        """A Stop in the web UI closes the run's windows before Locust's runner says stopped: its page polls
        while it says running, and the windows it shows last must be the closed ones, not a stale running one."""
        share = current_share(self.environment)
        if share is not None and not share.finished and keeps_running(self.environment):
            share.stop("stopped")
            share.wait(share.deadline + 2.0)

    def play(self, run: RunContext, fleet: FleetMerge, t0: float) -> None:
        state = state_for(self.environment)
        scenario, tables = state.scenario, run.tables
        assert scenario is not None and tables is not None
        share = run.share = LocalRun(
            scenario,
            tables.physical_names,
            run.run_id,
            t0=t0,
            deadline=scenario.deadline,
            on_window=lambda record: fleet.add_window(0, record),
            on_done=lambda totals: fleet.worker_done(0, totals),
            thresholds=state.settings.thresholds,
        )

        def probe(index: int, start: float, rate: float) -> None:
            share.set_probe(index, start, rate)

        fleet.on_probe, fleet.on_search_end = probe, share.end_search
        share.start()
        safety.watch(self.environment, run)


class Master(RunOwner):
    name = "master"
    is_fleet = True
    start_lead = FLEET_START_LEAD
    probe_lead = FLEET_PROBE_LEAD

    @property
    def runner(self) -> MasterRunner:
        runner = self.environment.runner
        assert isinstance(runner, MasterRunner)
        return runner

    def register(self) -> None:
        self.runner.register_message(merge.WINDOW, lambda msg, **_kw: self.on_worker_window(msg.data))
        self.runner.register_message(merge.DONE, lambda msg, **_kw: self.on_worker_done(msg.data))
        self.runner.register_message(merge.CLOCK, lambda msg, **_kw: self.on_worker_clock(msg.data))
        self.runner.register_message(merge.HELLO, lambda msg, **_kw: self.on_worker_hello(msg.node_id))

    def wire_metrics(self, metrics: Metrics) -> None:
        metrics_wiring.merge_worker_reports(self.environment, metrics)
        metrics_wiring.serve(self.environment, metrics)

    def run_workers(self) -> tuple[str, ...]:
        return tuple(sorted(self.runner.clients))

    def play(self, run: RunContext, fleet: FleetMerge, t0: float) -> None:
        """Hand every worker its share, then watch for workers lost on the way."""
        run.t0 = t0
        for index, client_id in enumerate(run.workers):
            self.runner.send_message(merge.PLAN, self.plan_message(run, index), client_id=client_id)
        fleet.on_probe = lambda index, start, rate: self._to_live(run, {"index": index, "start": start, "rate": rate})
        fleet.on_search_end = lambda windows: self._to_live(run, {"end": windows})
        gevent.spawn(self._watch_workers, run)

    def _to_live(self, run: RunContext, probe: dict[str, Any]) -> None:
        """A search's next probe (or its end) to every worker still in the run."""
        fleet = run.merge
        for index, client_id in enumerate(run.workers):
            if fleet is None or index not in fleet.lost:
                self.runner.send_message(merge.PROBE, probe, client_id=client_id)

    def plan_message(self, run: RunContext, worker: int) -> dict[str, Any]:
        """What a worker needs to run its share: T0, tables, its identity, the endpoint, the master's clock."""
        assert run.tables is not None
        return {
            "t0": run.t0,
            "run_id": run.run_id,
            "tables": run.tables.physical_names,
            "worker_index": worker,
            "worker_count": len(run.workers),
            "host": self.environment.host,
            "master_time": time.time(),
            "digest": state_for(self.environment).digest,
            **_agreement(state_for(self.environment).settings),
        }

    def _watch_workers(self, run: RunContext) -> None:
        """Tell the merge about workers Locust has marked missing (no heartbeat for a few seconds)."""
        fleet = run.merge
        assert fleet is not None
        # once shutdown has begun the master quits its workers itself: a worker gone then was stopped, not lost
        while not fleet.finished and not safety.is_quitting(self.environment):
            for index, client_id in enumerate(run.workers):
                node = self.runner.clients.get(client_id)
                if index not in fleet.lost and (node is None or node.state == STATE_MISSING):
                    fleet.worker_lost(index)
                    from_window = _next_window(fleet)
                    if from_window is not None:
                        self._rebalance(run, fleet, from_window)
            gevent.sleep(1.0)

    def _rebalance(self, run: RunContext, fleet: FleetMerge, from_window: int, joined: int | None = None) -> None:
        """Split every window from `from_window` over the live workers: after one was lost, or when `joined` came."""
        live = [i for i in range(len(run.workers)) if i not in fleet.lost]
        if not live:
            return
        for share_index, worker in enumerate(live):
            share = {"from_window": from_window, "share_index": share_index, "share_count": len(live)}
            if worker == joined:
                self.runner.send_message(
                    merge.PLAN, {**self.plan_message(run, worker), **share, "first_window": from_window},
                    client_id=run.workers[worker],
                )  # fmt: skip
            else:
                self.runner.send_message(merge.REPLAN, share, client_id=run.workers[worker])
        for worker in fleet.lost:
            fleet.rebalance(worker, from_window)
        if joined is not None:
            fleet.worker_joined(joined, from_window)

    def on_worker_hello(self, client_id: str) -> None:
        """A worker joining a running fleet takes a share from the next window that starts far enough ahead."""
        run = current(self.environment)
        fleet = run.merge if run is not None else None
        if run is None or fleet is None or fleet.finished or client_id in run.workers:
            return
        from_window = _next_window(fleet)
        if from_window is None:
            return
        run.workers = (*run.workers, client_id)
        self._rebalance(run, fleet, from_window, joined=fleet.add_worker())

    def on_worker_window(self, data: dict[str, Any]) -> None:
        fleet = current_merge(self.environment)
        if fleet is not None:
            fleet.add_window(int(data["worker_index"]), ClosedWindow.from_dict(data["record"]))

    def on_worker_done(self, data: dict[str, Any]) -> None:
        fleet = current_merge(self.environment)
        if fleet is not None:
            fleet.worker_done(int(data["worker_index"]), data)

    def on_worker_clock(self, data: dict[str, Any]) -> None:
        fleet = current_merge(self.environment)
        if fleet is not None:
            fleet.record_clock(int(data["worker_index"]), float(data["master_time"]), float(data["worker_time"]))


class Worker(Role):
    name = "worker"

    @property
    def runner(self) -> WorkerRunner:
        runner = self.environment.runner
        assert isinstance(runner, WorkerRunner)
        return runner

    @property
    def index(self) -> int:
        return int(getattr(self.runner, "worker_index", 0))

    def register(self) -> None:
        self.runner.register_message(merge.PLAN, lambda msg, **_kw: self.on_plan(msg.data))
        self.runner.register_message(merge.REPLAN, lambda msg, **_kw: self.on_replan(msg.data))
        self.runner.register_message(merge.PROBE, lambda msg, **_kw: self.on_probe(msg.data))
        self.runner.send_message(merge.HELLO, {})  # now it can take a plan, even mid-run
        safety.guard_worker(self.environment, self.runner, lambda: current_share(self.environment))

    def wire_metrics(self, metrics: Metrics) -> None:
        metrics.worker = str(self.index)
        metrics_wiring.count_requests(self.environment, metrics)
        metrics_wiring.ship_to_master(self.environment, metrics)

    def on_test_stop(self) -> None:
        """`test_stop`: stop this worker's share (the master ends the run)."""
        share = current_share(self.environment)
        if share is not None and not share.finished:
            share.stop("stopped by the master")

    def on_plan(self, plan: dict[str, Any]) -> None:
        """Take a share of a run; a plan for a new run (a further Start) replaces a finished one."""
        state = state_for(self.environment)
        runner = self.runner
        scenario = state.scenario
        previous = state.run
        if scenario is None or (
            previous is not None and previous.share is not None and previous.run_id == plan["run_id"]
        ):
            return
        if plan["digest"] != state.digest:
            why = _disagreement(plan, state.settings)
            log.error("this worker's %s; refusing the plan (exit code 2)", why)
            runner.send_message(merge.DONE, {"worker_index": plan["worker_index"], "abort_reason": why})
            self.environment.process_exit_code = ExitCode.BAD_INPUT  # a worker that cannot play is no worker
            gevent.spawn(runner.quit)
            return
        if previous is not None and previous.share is not None and not previous.share.finished:
            previous.share.stop("a new run began")
        runner.send_message(
            merge.CLOCK,
            {"worker_index": plan["worker_index"], "master_time": plan["master_time"], "worker_time": time.time()},
        )
        setup.set_host(self.environment, plan["host"])
        index = int(plan["worker_index"])  # this worker's identity in the fleet's reports
        run = state.run = RunContext(str(plan["run_id"]), stage="running")
        run.share = LocalRun(
            scenario,
            dict(plan["tables"]),
            plan["run_id"],
            t0=float(plan["t0"]),
            deadline=scenario.deadline,
            on_window=lambda record: runner.send_message(
                merge.WINDOW, {"worker_index": index, "record": record.to_dict()}
            ),
            on_done=lambda totals: runner.send_message(merge.DONE, {**totals, "worker_index": index}),
            worker_index=int(plan.get("share_index", index)),
            worker_count=int(plan.get("share_count", plan["worker_count"])),
            first_window=int(plan.get("first_window", 0)),
            thresholds=state.settings.thresholds,
        )
        results_dir = Path(state.settings.results_dir) / plan["run_id"]
        safety.spool_windows(run.share, results_dir / f"worker-{index}.jsonl")
        run.share.start()
        safety.watch(self.environment, run, results_dir / f"watchdog-{index}.json")

    def on_probe(self, probe: dict[str, Any]) -> None:
        """The master's search decided the next probe (or stopped): take this worker's share of it."""
        run = current_share(self.environment)
        if run is None:
            return
        if "end" in probe:
            run.end_search(int(probe["end"]))
        else:
            run.set_probe(int(probe["index"]), float(probe["start"]), float(probe["rate"]))

    def on_replan(self, replan: dict[str, Any]) -> None:
        run = current_share(self.environment)
        if run is not None:
            run.replan(int(replan["from_window"]), int(replan["share_index"]), int(replan["share_count"]))


def create(environment: Environment) -> Role:
    """The role of this process, from Locust's runner: the one place that asks which runner it is."""
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        return Master(environment)
    if isinstance(runner, WorkerRunner):
        return Worker(environment)
    return Standalone(environment)


def begin(environment: Environment) -> None:
    """Locust's `test_start`: the process's role begins a run (standalone, master) or waits for its plan (worker)."""
    if environment.runner is None:
        # A worker joining a running fleet: the master's spawn reaches it while Locust still builds its runner,
        # before `init`. A worker never owns a run (its share comes as a plan), so there is nothing to do.
        return
    role_for(environment).begin()


def role_for(environment: Environment) -> Role:
    """The role `init` gave this process (created now if `init` has not run, as in tests that skip it)."""
    state = state_for(environment)
    if state.role is None:
        state.role = create(environment)
    return state.role


def _next_window(fleet: FleetMerge) -> int | None:
    """The first window that starts far enough ahead for a new share to reach every worker in time."""
    start_after = time.time() + REPLAN_LEAD
    return next((w.index for w in fleet.plan.windows if w.start > start_after), None)


def _agreement(settings: Settings) -> dict[str, str]:
    """What master and worker must share, piece by piece, so a worker that refuses a plan can say which differs."""
    return {"file_digest": scale.digest(settings.scenario, scale.Scaling()), "scaling": settings.scaling.describe()}


def _disagreement(plan: dict[str, Any], settings: Settings) -> str:
    """Why this worker's scenario is not the master's: the file, or only the scale options it was started with."""
    mine = _agreement(settings)
    if plan.get("file_digest") == mine["file_digest"] and plan.get("scaling") != mine["scaling"]:
        return (
            f"scale options differ from the master's (same scenario file; master: {plan['scaling']}; this worker: "
            f"{mine['scaling']}): start it with the master's --local, --rate-scale, --duration-scale, "
            "--capacity-scale and --time-scale"
        )
    return "scenario file differs from the master's"
