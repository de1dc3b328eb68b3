"""The roles a dynlocust process plays, one object per role: `Standalone`, `Master` or `Worker`.

`create` picks the role from Locust's runner at `init`; it is the only place that asks what the runner is. Every
behaviour that differs by role lives on its object: who sets up a run and owns its tables and results (standalone,
master), how a run is handed out (a `LocalRun` here, or a plan to every worker), how metrics are wired, and what a
Stop means. The fleet's messages: the master sends each worker a `dynlocust:plan` (T0, tables, its identity),
watches for workers Locust marks missing and re-balances the remaining windows over the survivors
(`dynlocust:replan`), and gives a worker that joins mid-run a share from the next window far enough ahead. Workers
send each closed window, their totals and a clock reading back; the master's `FleetMerge` merges them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from locust.env import Environment
from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner

import gevent

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet import merge
from dynlocust.fleet.merge import FleetMerge
from dynlocust.plugin import metrics_wiring, safety
from dynlocust.plugin.context import RunContext, current, current_merge, current_share, state_for
from dynlocust.run.closed_window import ClosedWindow
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
    owns_run: ClassVar[bool] = True
    """Sets up runs: tables, T0, results and teardown (a worker only plays the share it is handed)."""
    is_fleet: ClassVar[bool] = False
    start_lead: ClassVar[float] = START_LEAD
    probe_lead: ClassVar[float] = PROBE_LEAD
    """Seconds between a search deciding its next probe and the probe's start."""

    def __init__(self, environment: Environment) -> None:
        self.environment = environment

    def register(self) -> None:
        """Register the role's messages at `init` (a standalone process has none)."""

    def wire_metrics(self, metrics: Metrics) -> None:
        """Count this process's requests for Prometheus, and serve them."""
        metrics_wiring.count_requests(self.environment, metrics)
        metrics_wiring.serve(self.environment, metrics)

    def run_workers(self) -> tuple[str, ...]:
        """Who plays a new run: the worker ids of a fleet, or this process."""
        return ("local",)

    def play(self, run: RunContext, t0: float) -> None:
        """Hand out a run whose set-up is done."""
        raise NotImplementedError

    def watch_tables(self, client: Any, tables: dict[str, str], deadline: float) -> TableStatePoller | None:
        """The poll of the run's tables at each window boundary (`dynlocust.run.table_state`), its first poll
        (the state before the run) done now: the process that owns the run polls, once for the whole fleet."""
        poller = TableStatePoller(client, tables, deadline)
        poller.poll_before()
        return poller

    def on_test_stopping(self) -> None:
        """Locust's `test_stopping`, fired before its runner says stopped (a fleet's windows come from its workers,
        which hear of the stop only after this)."""

    def on_test_stop(self) -> None:
        """Locust's `test_stop` (the web UI's Stop, the plan's end): end the current run and delete its tables."""
        from dynlocust.plugin import setup, teardown

        run = current(self.environment)
        if run is not None and run.begun and setup.keeps_running(self.environment):
            teardown.end_run(self.environment, run, "stopped")


class Standalone(Role):
    name = "standalone"

    def on_test_stopping(self) -> None:
        """A Stop in the web UI closes the run's windows before Locust's runner says stopped: its page polls
        while it says running, and the windows it shows last must be the closed ones, not a stale running one."""
        from dynlocust.plugin import setup

        run = current_share(self.environment)
        if run is not None and not run.finished and setup.keeps_running(self.environment):
            run.stop("stopped")
            run.wait(run.deadline + 2.0)

    def play(self, run: RunContext, t0: float) -> None:
        state = state_for(self.environment)
        report, scenario, tables = run.merge, state.scenario, run.tables
        assert report is not None and scenario is not None and tables is not None
        run.share = LocalRun(
            scenario,
            tables.physical_names,
            run.run_id,
            t0=t0,
            deadline=scenario.deadline,
            on_window=lambda record: report.add_window(0, record),
            on_done=lambda totals: report.worker_done(0, totals),
            thresholds=state.settings.thresholds,
        )
        local = run.share

        def probe(index: int, start: float, rate: float) -> None:
            local.set_probe(index, start, rate)

        report.on_probe, report.on_search_end = probe, local.end_search
        run.share.start()
        safety.watch(self.environment, run)


class Master(Role):
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

    def play(self, run: RunContext, t0: float) -> None:
        """Hand every worker its share, then watch for workers lost on the way."""
        run.t0 = t0
        for index, client_id in enumerate(run.workers):
            self.runner.send_message(merge.PLAN, self.plan_message(run, index), client_id=client_id)
        report = run.merge
        assert report is not None
        report.on_probe = lambda index, start, rate: self._to_live(run, {"index": index, "start": start, "rate": rate})
        report.on_search_end = lambda windows: self._to_live(run, {"end": windows})
        gevent.spawn(self._watch_workers, run)

    def _to_live(self, run: RunContext, probe: dict[str, Any]) -> None:
        """A search's next probe (or its end) to every worker still in the run."""
        report = run.merge
        for index, client_id in enumerate(run.workers):
            if report is None or index not in report.lost:
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
        """Tell the report about workers Locust has marked missing (no heartbeat for a few seconds)."""
        report = run.merge
        assert report is not None
        # once shutdown has begun the master quits its workers itself: a worker gone then was stopped, not lost
        while not report.finished and not safety.is_quitting(self.environment):
            for index, client_id in enumerate(run.workers):
                node = self.runner.clients.get(client_id)
                if index not in report.lost and (node is None or node.state == STATE_MISSING):
                    report.worker_lost(index)
                    from_window = _next_window(report)
                    if from_window is not None:
                        self._rebalance(run, report, from_window)
            gevent.sleep(1.0)

    def _rebalance(self, run: RunContext, report: FleetMerge, from_window: int, joined: int | None = None) -> None:
        """Split every window from `from_window` over the live workers: after one was lost, or when `joined` came."""
        live = [i for i in range(len(run.workers)) if i not in report.lost]
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
        for worker in report.lost:
            report.rebalance(worker, from_window)
        if joined is not None:
            report.worker_joined(joined, from_window)

    def on_worker_hello(self, client_id: str) -> None:
        """A worker joining a running fleet takes a share from the next window that starts far enough ahead."""
        run = current(self.environment)
        report = run.merge if run is not None else None
        if run is None or report is None or report.finished or client_id in run.workers:
            return
        from_window = _next_window(report)
        if from_window is None:
            return
        run.workers = (*run.workers, client_id)
        self._rebalance(run, report, from_window, joined=report.add_worker())

    def on_worker_window(self, data: dict[str, Any]) -> None:
        report = current_merge(self.environment)
        if report is not None:
            report.add_window(int(data["worker_index"]), ClosedWindow.from_dict(data["record"]))

    def on_worker_done(self, data: dict[str, Any]) -> None:
        report = current_merge(self.environment)
        if report is not None:
            report.worker_done(int(data["worker_index"]), data)

    def on_worker_clock(self, data: dict[str, Any]) -> None:
        report = current_merge(self.environment)
        if report is not None:
            report.record_clock(int(data["worker_index"]), float(data["master_time"]), float(data["worker_time"]))


class Worker(Role):
    name = "worker"
    owns_run = False

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

    def play(self, run: RunContext, t0: float) -> None:
        raise AssertionError("a worker plays the share a plan hands it (on_plan), it never sets up a run")

    def watch_tables(self, client: Any, tables: dict[str, str], deadline: float) -> TableStatePoller | None:
        """A worker never polls the tables: its master does, once for the fleet."""
        return None

    def on_test_stop(self) -> None:
        run = current_share(self.environment)
        if run is not None and not run.finished:
            run.stop("stopped by the master")

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
        set_host(self.environment, plan["host"])
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


def role_for(environment: Environment) -> Role:
    """The role `init` gave this process (created now if `init` has not run, as in tests that skip it)."""
    state = state_for(environment)
    if state.role is None:
        state.role = create(environment)
    return state.role


def set_host(environment: Environment, host: str | None) -> None:
    """The endpoint every user class of the process calls (the master's, on a worker)."""
    environment.host = host
    for user_class in environment.user_classes:
        user_class.host = host


def _next_window(report: FleetMerge) -> int | None:
    """The first window that starts far enough ahead for a new share to reach every worker in time."""
    start_after = time.time() + REPLAN_LEAD
    return next((w.index for w in report.plan.windows if w.start > start_after), None)


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
