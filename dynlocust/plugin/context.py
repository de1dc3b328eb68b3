"""What dynlocust keeps per Locust environment, in one place: settings, shared clients, the scenario, the current run.

Every module that needs per-environment state (the hooks, metrics, the web UI, safety, the user classes) reads it
from here; none keeps a store of its own or reaches into another module for it. A process keeps one
`EnvironmentState` for its life and a fresh `RunContext` for every run it starts: in the web UI, each Start begins
a new run (new run id, plan and tables) and its Stop ends that run alone.

Nothing here imports Locust: the state is plain data, and its users wire it to Locust's events.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynlocust.exit_codes import worst
from dynlocust.plugin import settings as settings_module
from dynlocust.plugin.settings import Settings

if TYPE_CHECKING:
    from locust.env import Environment

    import gevent

    from dynlocust.fleet.merge import FleetMerge
    from dynlocust.local.embedded import LocalEndpoint
    from dynlocust.plugin.roles import Role
    from dynlocust.run.local_run import LocalRun
    from dynlocust.run.tables import TableManager
    from dynlocust.scenario.model import Scenario

NOT_STARTED = "starting the run"


@dataclass(frozen=True)
class RunOutcome:
    """How one run ended: its own exit code and what it found, for the web UI's tab and the process's last lines."""

    run_id: str
    exit_code: int
    conclusion: str | None = None
    slo_failures: tuple[str, ...] = ()
    slos: int = 0
    """How many SLOs the scenario sets (none held or failed without any)."""
    report: Path | None = None
    """The HTML report, once built (a web UI run builds it as it ends; a headless one when the process quits)."""
    report_error: str = ""
    """Why the report could not be built ("" when it was, or is still to be)."""


@dataclass
class RunContext:
    """One run of the scenario, from its set-up to its teardown (a process in the web UI starts several)."""

    run_id: str
    results_path: Path | None = None
    """The run's results file (the master or a standalone process; None on a worker)."""
    tables: TableManager | None = None
    share: LocalRun | None = None
    """This process's share of the run, once it plays (standalone or worker)."""
    merge: FleetMerge | None = None
    """The fleet's merge of every share's windows (master or standalone), once set-up is done."""
    workers: tuple[str, ...] = ()
    t0: float = 0.0
    stage: str = NOT_STARTED
    """Where set-up is (starting the run, creating tables, seeding tables, running), for an interrupt's record."""
    setup_error: str = ""
    """Why set-up failed ("" while it has not), for the web UI and the interrupt's record."""
    ending: gevent.Greenlet | None = None
    """The teardown of this run, once begun (it runs once; later callers wait for it)."""
    outcome: RunOutcome | None = None
    """How the run ended, once its teardown has decided it."""

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
    endpoint: LocalEndpoint | None = None
    """The embedded local endpoint this process started, if any."""
    run: RunContext | None = None
    """The current (or last) run."""
    metrics: Any = None
    """The installed Prometheus metrics (`dynlocust.plugin.metrics_wiring`), if any."""
    role: Role | None = None
    """What this process plays (`dynlocust.plugin.roles`): standalone, master or worker; set at `init`."""
    quitting: gevent.Greenlet | None = None
    """The process's shutdown work, once begun."""
    shutdown_heard: bool = False
    """Locust's shutdown has fired `quitting` (before its runner's own listener quits the workers)."""
    outcomes: list[RunOutcome] = field(default_factory=list)
    """Every run this process ended, in order (a web UI process runs one per Start)."""

    def record(self, outcome: RunOutcome) -> int:
        """Keep `outcome` (once per run id) and return the process's exit code: the worst of its runs'."""
        self.outcomes = [o for o in self.outcomes if o.run_id != outcome.run_id] + [outcome]
        return worst(o.exit_code for o in self.outcomes)


_STATES: weakref.WeakKeyDictionary[Any, EnvironmentState] = weakref.WeakKeyDictionary()


def state_for(environment: Environment) -> EnvironmentState:
    """The environment's state, created (with settings validated from its parsed options) on first use."""
    state = _STATES.get(environment)
    if state is None:
        options = getattr(environment, "parsed_options", None)
        state = _STATES[environment] = EnvironmentState(settings_module.from_options(options))
    return state


def settings_for(environment: Environment) -> Settings:
    return state_for(environment).settings


def current(environment: Environment) -> RunContext | None:
    """The environment's current (or last) run, if any; never creates state."""
    state = _STATES.get(environment)
    return state.run if state is not None else None


def current_scenario(environment: Environment) -> Scenario | None:
    """The scenario this process runs (None without a scenario locustfile); never creates state."""
    state = _STATES.get(environment)
    return state.scenario if state is not None else None


def current_share(environment: Environment) -> LocalRun | None:
    """This process's share of the current run once it plays (for the users, the web UI and metrics)."""
    run = current(environment)
    return run.share if run is not None else None


def current_merge(environment: Environment) -> FleetMerge | None:
    """The fleet's merge of the current run (master or standalone), once it has started."""
    run = current(environment)
    return run.merge if run is not None else None


def keeps_running(environment: Environment) -> bool:
    """Whether the process outlives a run: the web UI's, where each Start begins another (not headless)."""
    options = getattr(environment, "parsed_options", None)
    return getattr(environment, "web_ui", None) is not None and not getattr(options, "headless", False)
