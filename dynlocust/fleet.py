"""A master/worker fleet: the master's plan, re-plan and worker messages; a worker's share of the run.

The master sends each worker a `dynlocust:plan` (T0, tables, its identity), watches for workers Locust marks
missing and re-balances the remaining windows over the survivors (`dynlocust:replan`), and gives a worker that
joins mid-run a share from the next window far enough ahead. Workers send each closed window, their totals and a
clock reading back; the master's `FleetReport` merges them.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from locust.runners import STATE_MISSING, MasterRunner, WorkerRunner

import gevent

from dynlocust import coordination, safety
from dynlocust.coordination import FleetReport
from dynlocust.runner import ScenarioRun
from dynlocust.runstate import RunState, current, current_report, current_run, state_for
from dynlocust.windows import ClosedRecord

log = logging.getLogger("dynlocust")

REPLAN_LEAD = 2.0
"""Seconds ahead a re-balanced share must start: the message must reach every survivor before that window."""


def register(environment: Any) -> None:
    """Register the fleet's messages on a master or a worker (a standalone process has none)."""
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        runner.register_message(coordination.PLAN, lambda msg, **_kw: on_plan(environment, msg.data))
        runner.register_message(coordination.REPLAN, lambda msg, **_kw: on_replan(environment, msg.data))
        runner.send_message(coordination.HELLO, {})  # now it can take a plan, even mid-run
        safety.guard_worker(environment, lambda: current_run(environment))
        return
    if isinstance(runner, MasterRunner):
        runner.register_message(coordination.WINDOW, lambda msg, **_kw: on_worker_window(environment, msg.data))
        runner.register_message(coordination.DONE, lambda msg, **_kw: on_worker_done(environment, msg.data))
        runner.register_message(coordination.CLOCK, lambda msg, **_kw: on_worker_clock(environment, msg.data))
        runner.register_message(coordination.HELLO, lambda msg, **_kw: on_worker_hello(environment, msg.node_id))


def set_host(environment: Any, host: str | None) -> None:
    """The endpoint every user class of the process calls (the master's, on a worker)."""
    environment.host = host
    for user_class in environment.user_classes:
        user_class.host = host


def plan_message(environment: Any, run: RunState, worker: int) -> dict[str, Any]:
    """What a worker needs to run its share: T0, tables, its identity, the endpoint, the master's clock."""
    assert run.tables is not None
    return {
        "t0": run.t0,
        "run_id": run.run_id,
        "tables": run.tables.physical_names,
        "worker_index": worker,
        "worker_count": len(run.workers),
        "host": environment.host,
        "master_time": time.time(),
        "digest": state_for(environment).digest,
    }


def send_plans(environment: Any, run: RunState) -> None:
    """The master hands every worker its share, then watches for workers lost on the way."""
    for index, client_id in enumerate(run.workers):
        environment.runner.send_message(coordination.PLAN, plan_message(environment, run, index), client_id=client_id)
    gevent.spawn(_watch_workers, environment, run)


def _watch_workers(environment: Any, run: RunState) -> None:
    """Tell the report about workers Locust has marked missing (no heartbeat for a few seconds)."""
    runner = environment.runner
    report = run.report
    assert report is not None
    while not report.finished:
        for index, client_id in enumerate(run.workers):
            node = runner.clients.get(client_id)
            if index not in report.lost and (node is None or node.state == STATE_MISSING):
                report.worker_lost(index)
                from_window = _next_window(report)
                if from_window is not None:
                    _rebalance(environment, run, report, from_window)
        gevent.sleep(1.0)


def _next_window(report: FleetReport) -> int | None:
    """The first window that starts far enough ahead for a new share to reach every worker in time."""
    start_after = time.time() + REPLAN_LEAD
    return next((w.index for w in report.plan.windows if w.start > start_after), None)


def _rebalance(
    environment: Any, run: RunState, report: FleetReport, from_window: int, joined: int | None = None
) -> None:
    """Split every window from `from_window` over the live workers: after one was lost, or when `joined` came."""
    live = [i for i in range(len(run.workers)) if i not in report.lost]
    if not live:
        return
    for share_index, worker in enumerate(live):
        share = {"from_window": from_window, "share_index": share_index, "share_count": len(live)}
        if worker == joined:
            environment.runner.send_message(
                coordination.PLAN, {**plan_message(environment, run, worker), **share, "first_window": from_window},
                client_id=run.workers[worker],
            )  # fmt: skip
        else:
            environment.runner.send_message(coordination.REPLAN, share, client_id=run.workers[worker])
    for worker in report.lost:
        report.rebalance(worker, from_window)
    if joined is not None:
        report.worker_joined(joined, from_window)


def on_worker_hello(environment: Any, client_id: str) -> None:
    """A worker joining a running fleet takes a share from the next window that starts far enough ahead."""
    run = current(environment)
    report = run.report if run is not None else None
    if run is None or report is None or report.finished or client_id in run.workers:
        return
    from_window = _next_window(report)
    if from_window is None:
        return
    run.workers = (*run.workers, client_id)
    _rebalance(environment, run, report, from_window, joined=report.add_worker())


# -- worker side -----------------------------------------------------------------------------------------------


def on_plan(environment: Any, plan: dict[str, Any]) -> None:
    """A worker takes its share of a run; a plan for a new run (a further Start) replaces a finished one."""
    state = state_for(environment)
    runner = environment.runner
    scenario = state.scenario
    previous = state.run
    if scenario is None or (previous is not None and previous.run is not None and previous.run_id == plan["run_id"]):
        return
    if plan["digest"] != state.digest:
        log.error("this worker's --scenario differs from the master's; refusing the plan")
        refusal = {"worker_index": plan["worker_index"], "abort_reason": "its scenario file differs from the master's"}
        runner.send_message(coordination.DONE, refusal)
        return
    if previous is not None and previous.run is not None and not previous.run.finished:
        previous.run.stop("a new run began")
    runner.send_message(
        coordination.CLOCK,
        {"worker_index": plan["worker_index"], "master_time": plan["master_time"], "worker_time": time.time()},
    )
    set_host(environment, plan["host"])
    index = int(plan["worker_index"])  # this worker's identity in the fleet's reports
    run = state.run = RunState(str(plan["run_id"]), stage="running")
    run.run = ScenarioRun(
        scenario,
        dict(plan["tables"]),
        plan["run_id"],
        t0=float(plan["t0"]),
        deadline=scenario.deadline,
        on_window=lambda record: runner.send_message(
            coordination.WINDOW, {"worker_index": index, "record": record.to_dict()}
        ),
        on_done=lambda totals: runner.send_message(coordination.DONE, {**totals, "worker_index": index}),
        worker_index=int(plan.get("share_index", index)),
        worker_count=int(plan.get("share_count", plan["worker_count"])),
        first_window=int(plan.get("first_window", 0)),
        thresholds=state.settings.thresholds,
    )
    results_dir = Path(state.settings.results_dir) / plan["run_id"]
    safety.spool_windows(run.run, results_dir / f"worker-{index}.jsonl")
    run.run.start()
    safety.watch(environment, run, results_dir / f"watchdog-{index}.json")


def on_replan(environment: Any, replan: dict[str, Any]) -> None:
    run = current_run(environment)
    if run is not None:
        run.replan(int(replan["from_window"]), int(replan["share_index"]), int(replan["share_count"]))


# -- master side -----------------------------------------------------------------------------------------------


def on_worker_window(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.add_window(int(data["worker_index"]), ClosedRecord.from_dict(data["record"]))


def on_worker_done(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.worker_done(int(data["worker_index"]), data)


def on_worker_clock(environment: Any, data: dict[str, Any]) -> None:
    report = current_report(environment)
    if report is not None:
        report.record_clock(int(data["worker_index"]), float(data["master_time"]), float(data["worker_time"]))
