"""What dynlocust keeps per Locust environment, in one place: settings, shared clients, the scenario, the current run.

Every module that needs per-environment state (the hooks, metrics, the web UI, safety, the user classes) reads it
from here; none keeps a store of its own or reaches into another module for it. A process keeps one
`EnvironmentState` for its life and a fresh `RunState` for every run it starts: in the web UI, each Start begins
a new run (new run id, plan and tables) and its Stop ends that run alone.

Nothing here imports Locust: the state is plain data, and its users wire it to Locust's events.
"""

from __future__ import annotations

import secrets
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynlocust import settings as settings_module
from dynlocust.settings import Settings

if TYPE_CHECKING:
    import gevent

    from dynlocust.coordination import FleetReport
    from dynlocust.runner import ScenarioRun
    from dynlocust.scenario.model import Scenario
    from dynlocust.tables import TableManager

NOT_STARTED = "starting the run"


@dataclass
class RunState:
    """One run of the scenario, from its set-up to its teardown (a process in the web UI starts several)."""

    run_id: str
    results_path: Path | None = None
    """The run's results file (the master or a standalone process; None on a worker)."""
    tables: TableManager | None = None
    run: ScenarioRun | None = None
    """This process's share of the run, once it plays (standalone or worker)."""
    report: FleetReport | None = None
    """The fleet's merged view (master or standalone), once set-up is done."""
    workers: tuple[str, ...] = ()
    t0: float = 0.0
    stage: str = NOT_STARTED
    """Where set-up is (starting the run, creating tables, seeding tables, running), for an interrupt's record."""
    setup_error: str = ""
    """Why set-up failed ("" while it has not), for the web UI and the interrupt's record."""
    ending: gevent.Greenlet | None = None
    """The teardown of this run, once begun (it runs once; later callers wait for it)."""

    @property
    def begun(self) -> bool:
        """Whether a test_start has taken this run (a further Start needs a fresh one)."""
        return self.stage != NOT_STARTED or bool(self.setup_error) or self.ending is not None


@dataclass
class EnvironmentState:
    """What dynlocust keeps for one Locust environment, for the life of the process."""

    settings: Settings
    clients: dict[Any, Any] = field(default_factory=dict)
    """Transport clients shared by every user of the process (one connection pool each)."""
    scenario: Scenario | None = None
    digest: str = ""
    """SHA-256 of the scenario file: a worker refuses a plan for a different file."""
    endpoint: Any = None
    """The embedded local endpoint this process started, if any."""
    run: RunState | None = None
    """The current (or last) run."""
    metrics: Any = None
    """The installed Prometheus metrics (`dynlocust.metrics_wiring`), if any."""
    quitting: gevent.Greenlet | None = None
    """The process's shutdown work, once begun."""


_STATES: weakref.WeakKeyDictionary[Any, EnvironmentState] = weakref.WeakKeyDictionary()


def state_for(environment: Any) -> EnvironmentState:
    """The environment's state, created (with settings validated from its parsed options) on first use."""
    state = _STATES.get(environment)
    if state is None:
        options = getattr(environment, "parsed_options", None)
        state = _STATES[environment] = EnvironmentState(settings_module.from_options(options))
    return state


def settings_for(environment: Any) -> Settings:
    return state_for(environment).settings


def current(environment: Any) -> RunState | None:
    """The environment's current (or last) run, if any; never creates state."""
    state = _STATES.get(environment)
    return state.run if state is not None else None


def current_scenario(environment: Any) -> Scenario | None:
    """The scenario this process runs (None without a scenario locustfile); never creates state."""
    state = _STATES.get(environment)
    return state.scenario if state is not None else None


def current_run(environment: Any) -> ScenarioRun | None:
    """This process's scenario run once it has started (for the users, the web UI and metrics)."""
    run = current(environment)
    return run.run if run is not None else None


def current_report(environment: Any) -> FleetReport | None:
    """The fleet's merged view (master or standalone), once the current run has started."""
    run = current(environment)
    return run.report if run is not None else None


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)
