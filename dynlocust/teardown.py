"""The end of a run and of the process: stop what still runs, close the results, delete the run's tables.

`end_run` ends one run, once, whatever ended it: the plan's end or Stop in the web UI (Locust's `test_stop`, so
the tables go at once and the next Start begins afresh), or the process quitting (an interrupt, a headless run's
end). `quit` ends the current run and stops the embedded endpoint. A run interrupted during set-up still gets a
results file whose end record says at which stage.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from locust.runners import WorkerRunner

import gevent

from dynlocust import coordination, epilogue, safety
from dynlocust.coordination import FleetReport
from dynlocust.deploy import results_table
from dynlocust.errors import DynlocustError
from dynlocust.runstate import NOT_STARTED, EnvironmentState, RunState, state_for
from dynlocust.scenario.plan import build_plan

log = logging.getLogger("dynlocust")


def end_run(environment: Any, run: RunState, reason: str = "interrupted") -> None:
    """End `run` once (later callers wait for the first), shielded from interrupts; `reason` if it must abort."""
    if run.ending is None:
        run.ending = gevent.spawn(_end, environment, run, reason)
    safety.wait_shielded(run.ending, what="teardown")


def quit(environment: Any) -> None:
    """The process's shutdown: end the current run, then stop the embedded endpoint."""
    state = state_for(environment)
    try:
        if state.run is not None:
            end_run(environment, state.run)
    finally:
        if state.endpoint is not None:
            state.endpoint.stop()
            state.endpoint = None


def _end(environment: Any, run: RunState, reason: str) -> None:
    state = state_for(environment)
    scenario = state.scenario
    try:
        if run.run is not None and not run.run.finished:
            run.run.stop(reason)
            run.run.wait(run.run.deadline + 2.0)
        report = run.report
        if report is not None:
            if report.exit_code is None:  # the run did not wind down in time: it still ends as aborted
                report.abort(f"{reason}; the run did not stop in time")
            environment.process_exit_code = report.exit_code
            report.results.close()
            if run.results_path is not None:
                epilogue.arm(environment.parsed_options, run.results_path)  # printed when Locust quits
        elif scenario is not None and _setup_interrupted(environment, run):
            _record_setup_abort(environment, state, run)
    finally:
        if run.tables is not None:
            deleted = safety.shielded(run.tables.teardown)
            if deleted:
                log.info("deleted tables %s", ", ".join(deleted))


def _setup_interrupted(environment: Any, run: RunState) -> bool:
    """Shut down before the run began, by an interrupt (not a set-up failure, not a web UI left unused)."""
    if run.setup_error or run.results_path is None or isinstance(environment.runner, WorkerRunner):
        return False
    return run.stage != NOT_STARTED or bool(getattr(environment.parsed_options, "headless", False))


def _record_setup_abort(environment: Any, state: EnvironmentState, run: RunState) -> None:
    """Exit code 4, and a results file whose end record says at which stage of set-up the run was interrupted."""
    reason = f"interrupted during set-up ({run.stage})"
    environment.process_exit_code = coordination.EXIT_ABORTED
    assert run.results_path is not None and state.scenario is not None
    try:
        run.results_path.parent.mkdir(parents=True, exist_ok=True)
        writer = results_table.results_writer(run.results_path, run.run_id)
    except (OSError, DynlocustError) as exc:
        log.error("%s; could not record it: %s", reason, exc)
        return
    scenario = state.scenario
    report = FleetReport(scenario, build_plan(scenario, t0=time.time()), writer, max(len(run.workers), 1))
    tables = run.tables.physical_names if run.tables is not None else {}
    report.start(run_id=run.run_id, tables=tables, seconds_to_active={}, workers=list(run.workers))
    report.abort(reason)
    writer.close()
