"""Safety rails of a running process: a watchdog, a guard against a vanished master, and a shielded teardown.

A load test against a real account must never hang silently. The `Watchdog` follows one `LocalRun`:
- a deadline for the whole run (the plan's end plus the per-call deadline plus a margin): a run that is still
  going past it is stuck somewhere, whatever the cause;
- a stall detector: requests are in flight but none has completed for `stall_after` seconds. The per-call
  `gevent.Timeout` should make that impossible, so when it happens something else is wrong (a blocked lock, a
  deadline set far too long, an endpoint that holds connections open).
On either, it writes a snapshot of where the process is stuck (each in-flight request's operation, table and
age, and the stack of every greenlet inside dynlocust) plus the partial counts, stops the run with the reason,
and aborts the stuck calls by raising `WatchdogAbort` inside them, so each is still recorded with an outcome.

A worker whose master was SIGKILLed hears nothing more; Locust's own check waits 60 s. `guard_worker` stops the
run and the worker once the master's heartbeats have been missing for `--master-timeout` seconds; the windows it
closed are already on disk in its own spool (`spool_windows`).

Signals: `route_interrupts` makes Ctrl-C and SIGTERM reach the main greenlet only (never kill the window closer or
a set-up greenlet in passing), and `hear_shutdown` passes on a SIGTERM that Locust's own handler heard, so that
the process shuts down once, from its main greenlet; `quit_once` and `shielded` run shutdown and teardown so that
a second Ctrl-C or SIGTERM cannot cut them short: tables must not be leaked.

Knobs (options, seconds): --stall-seconds, --run-margin-seconds, --master-timeout (see dynlocust/plugin/settings.py).
"""

from __future__ import annotations

import gc
import json
import logging
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from locust.env import Environment
from locust.runners import WorkerRunner

import gevent
import gevent.event
import greenlet as greenlet_module

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode, worst
from dynlocust.plugin import context
from dynlocust.request.client import measured_call
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.local_run import LocalRun
from dynlocust.run.progress import Progress
from dynlocust.run.results import ResultsWriter

log = logging.getLogger(__name__)

T = TypeVar("T")

STALL_EXTRA = 10.0
"""Seconds past the per-call deadline without a completed request before the run counts as stalled."""
RUN_MARGIN_MIN = 30.0
RUN_MARGIN_RATIO = 0.1
"""The whole-run deadline's margin: the larger of 30 s and 10% of the planned duration."""
SNAPSHOT_FILE = "watchdog.json"
MAX_STACKS = 64
"""Stacks kept in a snapshot: enough to see the pattern, bounded for a process running thousands of users."""

STALL = "stall"
DEADLINE = "deadline"


class WatchdogAbort(DynlocustError):
    """Raised inside a call the watchdog gave up on, so the call still ends with a recorded outcome."""


# -- where is it stuck ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InFlight:
    """A call inside `client.measured_call` (every client measures through it) when the snapshot was taken."""

    operation: str
    table: str
    index: str | None
    age: float
    greenlet: str


def _greenlets() -> list[Any]:
    return [o for o in gc.get_objects() if isinstance(o, greenlet_module.greenlet) and o.gr_frame is not None]


def _frames(frame: Any) -> list[Any]:
    frames = []
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames


def _name(g: Any) -> str:
    return f"{type(g).__name__}@{id(g):#x}"


def in_flight_calls(greenlets: list[Any] | None = None) -> list[InFlight]:
    """Every call suspended inside `measured_call`, oldest first, read from the greenlets' frames (no bookkeeping
    on the request path: the snapshot is rare, requests are not)."""
    code = measured_call.__code__
    found = []
    for g in _greenlets() if greenlets is None else greenlets:
        for frame in _frames(g.gr_frame):
            if frame.f_code is not code:
                continue
            local = frame.f_locals
            target = local.get("target")
            start, clock = local.get("start"), local.get("clock")
            age = clock() - start if callable(clock) and start is not None else -1.0
            operation = str(getattr(target, "operation", "?"))
            table = str(getattr(target, "physical_table", "?"))
            found.append(InFlight(operation, table, getattr(target, "index", None), round(age, 3), _name(g)))
            break
    return sorted(found, key=lambda call: call.age, reverse=True)


def greenlet_stacks(*, limit: int = MAX_STACKS) -> list[dict[str, Any]]:
    """Stacks of the suspended greenlets that run dynlocust code (the others are Locust's and gevent's own)."""
    stacks = []
    package = str(Path(__file__).parents[1])  # the dynlocust package
    for g in _greenlets():
        frames = _frames(g.gr_frame)
        if not any(f.f_code.co_filename.startswith(package) for f in frames):
            continue
        stack = traceback.format_stack(g.gr_frame)
        stacks.append({"greenlet": _name(g), "stack": [line.rstrip("\n") for line in stack]})
        if len(stacks) >= limit:
            break
    return stacks


def snapshot(progress: Progress) -> dict[str, Any]:
    """Partial counts of a run's `progress` plus where it is stuck."""
    return {
        "counts": {
            "sent": progress.sent,
            "completed": progress.sent - progress.in_flight_total,
            "in_flight": {str(w): n for w, n in progress.in_flight.items()},
            "read_units": progress.read_units,
            "write_units": progress.write_units,
            "windows_closed": progress.windows_closed,
            "windows_planned": progress.windows_planned,
        },
        "requests": [vars(c) for c in in_flight_calls()],
        "greenlets": greenlet_stacks(),
    }


# -- the watchdog --------------------------------------------------------------------------------------------


@dataclass
class Trip:
    """Why the watchdog stopped a run, and what it saw."""

    kind: str
    reason: str
    at: float
    snapshot: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "reason": self.reason, "at": self.at, **self.snapshot}


def run_deadline(run: LocalRun, margin: float | None = None) -> float:
    """Wall-clock time by which `run` must be over: its last window's end (a search's longest course), the per-call
    deadline and a margin."""
    end = run.progress().plan_end
    if margin is None:
        margin = max(RUN_MARGIN_MIN, RUN_MARGIN_RATIO * (end - run.t0))
    return end + run.deadline + margin


@dataclass
class Watchdog:
    """Follows one `LocalRun` through its `Progress`; `check()` is one step (for tests), `start()` runs it every
    `interval` seconds."""

    run: LocalRun
    deadline_at: float
    stall_after: float
    snapshot_path: Path | None = None
    on_trip: Callable[[Trip], None] = lambda trip: None
    on_stuck: Callable[[Trip], None] = lambda trip: None
    """Called when the run has still not finished `run.deadline + 5` s after the trip (its closer is stuck)."""
    interval: float = 0.25
    monotonic: Callable[[], float] = time.monotonic
    trip: Trip | None = None
    _completed: int = -1
    _progress_at: float = 0.0
    _idle: bool = True
    _greenlet: gevent.Greenlet | None = field(default=None, repr=False)

    def start(self) -> Watchdog:
        self._greenlet = gevent.spawn(self._loop)
        return self

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)

    def _loop(self) -> None:
        while not self.run.finished and self.trip is None:
            self.check()
            gevent.sleep(self.interval)
        if self.trip is None:
            return
        until = self.monotonic() + self.run.deadline + 5.0
        while not self.run.finished and self.monotonic() < until:
            gevent.sleep(0.1)
        if not self.run.finished:
            log.error("watchdog: the run did not finish after it was stopped; ending the process")
            self.on_stuck(self.trip)

    def check(self) -> Trip | None:
        """Look once; trip (and act) on a passed deadline or a stall. Returns the trip, if any."""
        if self.trip is not None:
            return self.trip
        progress = self.run.progress()
        if progress.finished:
            return None
        now = self.monotonic()
        in_flight = progress.in_flight_total
        completed = progress.sent - in_flight
        if completed != self._completed or in_flight == 0 or self._idle:
            # the first look that sees requests in flight starts the stall clock: they began after the look before,
            # which a starved process may have taken long before them
            self._completed, self._progress_at = completed, now
        self._idle = in_flight == 0
        if progress.at > self.deadline_at:
            over = progress.at - self.deadline_at
            return self._trip(DEADLINE, f"watchdog: the run passed its deadline by {over:.1f} s")
        if now - self._progress_at >= self.stall_after:
            return self._trip(
                STALL,
                f"watchdog: stalled, {in_flight} requests in flight and none completed for "
                f"{now - self._progress_at:.1f} s",
            )
        return None

    def _trip(self, kind: str, reason: str) -> Trip:
        progress = self.run.progress()
        trip = Trip(kind, reason, progress.at, snapshot(progress))
        self.trip = trip
        log.error("%s; %d requests in flight", reason, len(trip.snapshot["requests"]))
        for call in trip.snapshot["requests"][:10]:
            log.error("  in flight: %s %s for %.1f s", call["operation"], call["table"], call["age"])
        if self.snapshot_path is not None:
            _write_json(self.snapshot_path, trip.to_dict())
        self.run.stop(reason)
        self._abort_calls(reason)
        self.on_trip(trip)
        return trip

    def _abort_calls(self, reason: str) -> None:
        code = measured_call.__code__
        for g in _greenlets():
            if isinstance(g, gevent.Greenlet) and any(f.f_code is code for f in _frames(g.gr_frame)):
                g.kill(WatchdogAbort(f"aborted by the {reason}"), block=False)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.error("watchdog: could not write %s: %s", path, exc)


def watch(environment: Environment, state: context.RunContext, snapshot_path: Path | None = None) -> Watchdog:
    """Start a watchdog over `state.share`; its snapshot goes to `snapshot_path`, by default next to the results
    file."""
    from dynlocust.exit_codes import ExitCode

    run = state.share
    assert run is not None, "a watchdog follows a started run"
    if snapshot_path is None and state.results_path is not None:
        snapshot_path = state.results_path.parent / SNAPSHOT_FILE

    def stuck(_trip: Trip) -> None:
        environment.process_exit_code = ExitCode.ABORTED
        _quit_runner(environment)

    settings = context.settings_for(environment)
    dog = Watchdog(
        run,
        deadline_at=run_deadline(run, settings.run_margin),
        stall_after=settings.stall_seconds or run.deadline + STALL_EXTRA,
        snapshot_path=snapshot_path,
        on_stuck=stuck,
    )
    return dog.start()


# -- workers without a master --------------------------------------------------------------------------------


def spool_windows(run: LocalRun, path: Path) -> ResultsWriter | None:
    """Write each window `run` closes to `path` before it is sent: a worker's data survives its master.

    A spool that cannot be opened is logged and skipped: the run itself does not depend on it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = ResultsWriter(path)
    except (OSError, DynlocustError) as exc:
        log.error("not spooling this worker's windows: %s", exc)
        return None
    send = run.on_window

    def on_window(record: ClosedWindow) -> None:
        try:
            writer.write_window(**record.to_dict())
        except DynlocustError as exc:
            log.error("could not spool window %s: %s", record.index, exc)
        send(record)

    run.on_window = on_window
    return writer


def master_silent(last: float | None, timeout: float, now: float | None = None) -> float | None:
    """Seconds since the master's `last` heartbeat if more than `timeout`, else None (also before the first)."""
    if last is None:
        return None
    silence = (time.time() if now is None else now) - last
    return silence if silence > timeout else None


def _quit_runner(environment: Environment, *, wait: bool = False) -> None:
    runner = environment.runner
    if runner is not None:
        runner.quit() if wait else gevent.spawn(runner.quit)


def guard_worker(
    environment: Environment, runner: WorkerRunner, current: Callable[[], LocalRun | None], timeout: float | None = None
) -> gevent.Greenlet:
    """On a worker: once the master is silent for `timeout` s, stop this worker's run and quit the worker."""
    limit = context.settings_for(environment).master_timeout if timeout is None else timeout

    def loop() -> None:
        while (silence := master_silent(getattr(runner, "last_heartbeat_timestamp", None), limit)) is None:
            gevent.sleep(0.5)
        run = current()
        environment.process_exit_code = ExitCode.MASTER_LOST
        log.error("master lost: no heartbeat for %.1f s; stopping this worker (exit code 7)", silence)
        if run is not None:
            log.error(
                "run %s: the master's tables may be left behind; delete them with: dynlocust cleanup --run-id %s",
                run.run_id,
                run.run_id,
            )
        if run is not None and not run.finished:
            run.stop(f"master lost: no heartbeat for {silence:.0f} s")
            run.wait(run.deadline + 2.0)
        _quit_runner(environment, wait=True)

    return gevent.spawn(loop)


# -- interrupts and a teardown that a second one cannot cut short ---------------------------------------------


@dataclass
class _Interrupts:
    routed: bool = False
    held: bool = False
    """Inside `interrupts_held()`: a Ctrl-C is kept for later, not thrown."""
    pending: bool = False
    draining: bool = False
    """Shutdown has begun (`hear_shutdown`): a further Ctrl-C has nothing left to stop and is only acknowledged."""
    thrown: bool = False
    """An interrupt is on its way to the main greenlet: the process is shutting down, a run must not start."""
    during_shutdown: bool = False
    """A Ctrl-C or SIGTERM arrived while shutdown ran: the process exits aborted (4), not with a passed run's 0."""


_INTERRUPTS = _Interrupts()


_PARKED: list[Any] = []
"""Greenlets of Locust's own SIGTERM handler, each waiting for ever once it has passed its signal on."""


def _throw_to_main() -> None:
    _INTERRUPTS.thrown = True
    hub = gevent.get_hub()
    hub.loop.run_callback(_throw, hub.parent)


def _throw(main: Any) -> None:
    if _INTERRUPTS.draining:  # shutdown began after the signal came: thrown now, it would cut shutdown short
        _note_during_shutdown()
    else:
        main.throw(KeyboardInterrupt())


def _note_during_shutdown() -> None:
    _INTERRUPTS.during_shutdown = True
    # thrown now, it would cut Locust's exit short (the process would die by the signal, not exit with its code)
    sys.stderr.write("dynlocust: shutdown in progress, not interrupting it (deleting this run's tables)\n")


def _interrupt() -> None:
    if _INTERRUPTS.draining:
        _note_during_shutdown()
    elif _INTERRUPTS.held:
        _INTERRUPTS.pending = True
    else:
        _throw_to_main()


def route_interrupts() -> None:
    """Deliver Ctrl-C to the main greenlet only (idempotent; main thread only).

    Python raises KeyboardInterrupt in whichever greenlet happens to run when the signal arrives: the window
    closer, a user, the seeding pool. That greenlet dies (a run that never finishes, a set-up half done) before
    the main greenlet even hears of it. Routed through the hub, the interrupt reaches Locust's main loop alone,
    which then shuts down through `quitting` with every greenlet still intact.
    """
    if _INTERRUPTS.routed or threading.current_thread() is not threading.main_thread():
        return
    gevent.signal_handler(signal.SIGINT, _interrupt)
    # SIGTERM the same way until Locust installs its own handler (after `init`), which then replaces this one
    # (before, a SIGTERM killed the process (143) in the middle of set-up, leaving its tables); from then on
    # `hear_shutdown` passes each SIGTERM Locust hears on to `_interrupt`
    signal.signal(signal.SIGTERM, lambda _signum, _frame: _interrupt())
    _INTERRUPTS.routed = True


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Keep a Ctrl-C that arrives inside the block for its end (then it reaches the main greenlet as usual).

    For Locust's `init`: thrown there, the interrupt would escape Locust's main loop and skip `quitting` (no
    teardown, no record of why the run ended). Kept, it arrives once the main loop waits, which shuts down."""
    _INTERRUPTS.held = True
    try:
        yield
    finally:
        _INTERRUPTS.held = False
        if _INTERRUPTS.pending:
            _INTERRUPTS.pending = False
            _throw_to_main()


def shielded(work: Callable[[], T], *, limit: float = 120.0, what: str = "teardown") -> T | None:
    """Run `work` in its own greenlet and wait for it through Ctrl-C and SIGTERM (up to `limit` seconds).

    Interrupts reach the waiting greenlet; `work` runs elsewhere, so it is never interrupted, only waited for.
    A failure is logged, not raised: teardown must not mask how the run ended.
    """
    return _wait_shielded(gevent.spawn(work), limit, what)


def wait_shielded(job: gevent.Greenlet, *, limit: float = 600.0, what: str = "teardown") -> Any:
    """Wait for `job` (running elsewhere) through Ctrl-C and SIGTERM, as `shielded` does; its value, or None."""
    return _wait_shielded(job, limit, what)


def _wait_shielded(job: gevent.Greenlet, limit: float, what: str) -> Any:
    until = time.monotonic() + limit
    while not job.ready():
        try:
            job.join(max(0.0, until - time.monotonic()))
        except (KeyboardInterrupt, SystemExit):
            sys.stderr.write(f"dynlocust: {what} in progress, not interrupting it (deleting this run's tables)\n")
            continue
        if time.monotonic() >= until:
            log.error("%s did not finish within %.0f s", what, limit)
            return None
    if not job.successful():
        log.error("%s failed: %s", what, job.exception)
        return None
    return job.value


def quit_once(
    environment: Environment, work: Callable[[], None], *, limit: float = 600.0, signal_aborts: bool = True
) -> None:
    """Run an environment's shutdown work once, shielded; a second caller waits for the first instead of exiting
    under it.

    From here on a Ctrl-C or SIGTERM is acknowledged, not thrown, and once the work is done it is only noted: the
    process exits aborted (4), with its exit code line, never by the signal (Python restores the default handler,
    which kills, while it exits; `settle_signals` ignores them once that line is out). So does a process that
    `signal_aborts` (one run, headless) shut down by a signal that came before: its run may have passed just before
    the signal, and the process still did not end by itself. A web UI quit by Ctrl-C when no run is in progress
    exits with the worst of its runs."""
    _INTERRUPTS.draining = True
    own_signals = _INTERRUPTS.routed and threading.current_thread() is threading.main_thread()
    if own_signals:  # SIGTERM too: Locust's own handler would start a second shutdown that exits under this one
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda _signum, _frame: _interrupt())
    state = context.state_for(environment)
    job = state.quitting
    if job is None:
        job = state.quitting = gevent.spawn(work)
    _wait_shielded(job, limit, "shutdown")
    if own_signals:  # Locust prints its tables, then the epilogue its own and the report: a signal now is noted
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _noted)
    if _INTERRUPTS.during_shutdown or (_INTERRUPTS.thrown and signal_aborts):
        environment.process_exit_code = worst([environment.process_exit_code or ExitCode.PASSED, ExitCode.ABORTED])


def _noted(_signum: int, _frame: Any) -> None:
    _INTERRUPTS.during_shutdown = True


def interrupted_during_shutdown() -> bool:
    """Whether a Ctrl-C or SIGTERM arrived once shutdown had begun (the process then exits aborted)."""
    return _INTERRUPTS.during_shutdown


def settle_signals() -> None:
    """Ignore Ctrl-C and SIGTERM from now on: the exit code's line is printed, and the process exits with it.

    Blocked as well as ignored: a gevent watcher of the signal, once closed, resets it to the default, which
    kills (measured: `cancel()` of a SIGTERM watcher undid SIG_IGN)."""
    if _INTERRUPTS.routed and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def hear_shutdown(environment: Environment, **_kwargs: Any) -> None:
    """A `quitting` listener added once Locust's runner exists, so that it hears first (Locust fires `quitting`
    in reverse): a master's runner quits its workers in its own listener, and set-up running meanwhile would
    otherwise start a run without them (exit 5, a lost worker, instead of 4). From here on a signal is only
    acknowledged.

    Locust's own SIGTERM handler shuts down in a greenlet of its own while the main greenlet goes on, which then
    shuts down a second time when its run ends: two "Shutting down" lines, and the first one's `sys.exit` thrown
    into the main greenlet as it exits (a `SystemExit` traceback, and a passed run's 0 after a SIGTERM). Heard here,
    that SIGTERM is routed as a Ctrl-C is (`_interrupt`), and its greenlet goes no further: it waits for ever (it
    cannot end: the end of a signal handler's greenlet, by any exception, is thrown into the main greenlet)."""
    if _INTERRUPTS.routed and greenlet_module.getcurrent() is not gevent.get_hub().parent:
        _interrupt()
        _PARKED.append(greenlet_module.getcurrent())
        gevent.event.Event().wait()
    _INTERRUPTS.draining = True
    context.state_for(environment).shutdown_heard = True


def is_quitting(environment: Environment) -> bool:
    """Whether `environment`'s shutdown has begun (set-up still running elsewhere must not go on to start)."""
    state = context.state_for(environment)
    return state.shutdown_heard or state.quitting is not None or _INTERRUPTS.thrown
