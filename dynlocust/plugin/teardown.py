"""The end of a run and of the process: stop what still runs, close the results, delete the run's tables.

The role ending a run hands itself over (`dynlocust.plugin.roles`). `end_run` ends one run, once, whatever ended
it: the plan's end or Stop in the web UI (Locust's `test_stop`, so the tables go at once and the next Start begins
afresh), or the process quitting (an interrupt, a headless run's end). `quit` ends the current run and stops the
embedded endpoint. A run interrupted during set-up still gets a results file whose end record says at which stage.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from locust.env import Environment

import gevent

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode, worst
from dynlocust.fleet import results_table
from dynlocust.fleet.merge import FleetMerge
from dynlocust.plugin import epilogue, safety, witness_at_end
from dynlocust.plugin.context import NOT_STARTED, EnvironmentState, RunContext, RunOutcome, keeps_running, state_for
from dynlocust.scenario.plan import build_plan

if TYPE_CHECKING:
    from dynlocust.plugin.roles import Role

log = logging.getLogger("dynlocust")


def end_run(role: Role, run: RunContext, reason: str = "interrupted") -> None:
    """End `role`'s `run` once (later callers wait for the first), shielded from interrupts; `reason` if it must
    abort."""
    if run.ending is None:
        run.ending = gevent.spawn(_end, role, run, reason)
    safety.wait_shielded(run.ending, what="teardown")


def quit(role: Role) -> None:
    """The process's shutdown: end the role's current run, then stop the embedded endpoint."""
    environment = role.environment
    state = state_for(environment)
    try:
        if state.run is not None:
            end_run(role, state.run)
            witness_at_end.run(environment)  # `--witness`: while the embedded endpoint still answers
    finally:
        if state.endpoint is not None:
            state.endpoint.stop()
            state.endpoint = None


def _end(role: Role, run: RunContext, reason: str) -> None:
    environment = role.environment
    state = state_for(environment)
    code: int | None = None
    try:
        if run.share is not None and not run.share.finished:
            run.share.stop(reason)
            run.share.wait(run.share.deadline + 2.0)
        report = run.merge
        if report is not None:
            if report.exit_code is None:  # the run did not wind down in time: it still ends as aborted
                report.abort(f"{reason}; the run did not stop in time")
            code = report.exit_code
            report.results.close()
        elif state.scenario is not None and _setup_interrupted(role, run):
            code = _record_setup_abort(environment, state, run)
        elif run.setup_error:
            code = ExitCode.BAD_INPUT
    finally:
        if run.tables is not None:
            if run.tables.created:
                log.info("deleting tables %s", ", ".join(run.tables.created))
            deleted = safety.shielded(run.tables.teardown)
            if deleted:
                log.info("deleted tables %s", ", ".join(deleted))
    if code is not None:
        _conclude(environment, state, run, code)


def _conclude(environment: Environment, state: EnvironmentState, run: RunContext, code: int) -> None:
    """Record how `run` ended; the process's exit code becomes the worst of its runs'. A headless run's report is
    built when Locust quits, after its own tables; a web UI run's now, so that its tab can show it."""
    options = environment.parsed_options
    report = run.merge
    outcome = RunOutcome(
        run.run_id,
        code,
        conclusion=report.conclusion.text if report is not None and report.conclusion is not None else None,
        slo_failures=tuple(f for w in report.closed for f in w.slo_failures) if report is not None else (),
        slos=len(state.scenario.slos) if state.scenario is not None else 0,
    )
    results = run.results_path if report is not None else None  # a run that began has results to report
    if results is not None and not keeps_running(environment):
        epilogue.arm(options, results)  # printed when Locust quits
    elif results is None and not keeps_running(environment):
        epilogue.arm_exit_line(options)  # interrupted in set-up: its end record is written, its report is not
    elif results is not None:
        # in a thread: matplotlib's PNGs take seconds of CPU, and the web UI must keep answering meanwhile
        path, error, failed = gevent.get_hub().threadpool.apply(epilogue.build, (results, epilogue.output(options)))
        code = worst([code, ExitCode.FAILED]) if failed else code
        outcome = replace(outcome, exit_code=code, report=path, report_error=error)
    if keeps_running(environment):
        epilogue.arm_ended(options, outcome)
    run.outcome = outcome
    environment.process_exit_code = state.record(outcome)


def _setup_interrupted(role: Role, run: RunContext) -> bool:
    """Shut down before the run began, by an interrupt (not a set-up failure, not a web UI left unused)."""
    if run.setup_error or run.results_path is None or not role.owns_run:
        return False
    return run.stage != NOT_STARTED or bool(getattr(role.environment.parsed_options, "headless", False))


def _record_setup_abort(environment: Environment, state: EnvironmentState, run: RunContext) -> int:
    """Exit code 4 (1 if the results could not be written), and a results file whose end record says at which stage
    of set-up the run was interrupted."""
    reason = f"interrupted during set-up ({run.stage})"
    assert run.results_path is not None and state.scenario is not None
    try:
        run.results_path.parent.mkdir(parents=True, exist_ok=True)
        writer = results_table.results_writer(run.results_path, run.run_id, state.settings.results_table)
    except (OSError, DynlocustError) as exc:
        log.error("%s; could not record it: %s", reason, exc)
        return ExitCode.ABORTED
    scenario = state.scenario
    report = FleetMerge(scenario, build_plan(scenario, t0=time.time()), writer, max(len(run.workers), 1))
    tables = run.tables.physical_names if run.tables is not None else {}
    report.start(run_id=run.run_id, tables=tables, seconds_to_active={}, workers=list(run.workers))
    report.abort(reason)
    writer.close()
    return report.exit_code if report.exit_code is not None else ExitCode.ABORTED  # 1 if the disk was full
