"""The one read model of a running share: a frozen `Progress`, taken by `LocalRun.progress()`.

Three observers follow a run while it runs: the metrics sampler (`dynlocust.observe.metrics`), the watchdog
(`dynlocust.plugin.safety`) and the web UI's live windows (`dynlocust.plugin.webui`). Each reads a `Progress` and
nothing inside the run (its pacer, window book, in-flight counter or segments), so the run may change how it
keeps its counts without its observers knowing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowStats


@dataclass(frozen=True)
class OpenWindow:
    """A window of this share that has started and that the fleet's merge has not closed yet: its figures so far."""

    index: int
    stats: WindowStats
    """A copy of the window's part as counted so far (or, once it closed here, as handed to the merge)."""
    handed: int
    """Sends the pacer handed to users so far."""
    dropped: int
    """Sends that fell due and could not be sent so far."""
    closing: bool
    """Closed here and handed to the merge, which still waits for it (for the tables' state at its end, say)."""


@dataclass(frozen=True)
class Progress:
    """Where one process's share of a run is at `at`: its sends, the current window and rate, the client's last
    saturation reading, and (when asked for) the figures of its open windows."""

    run_id: str
    at: float
    """The run's clock when this was taken."""
    sent: int
    in_flight: Mapping[int, int]
    """Window index -> requests sent in it and not answered yet (windows with none left out)."""
    dropped: int
    """Sends that fell due and could not be sent, over every window so far."""
    window: int
    """The window running at `at`, or the last one that has ended (-1 before the first)."""
    phase: str
    rate: float
    """This share's target rate at `at` (0 between windows and after the last)."""
    saturation: Saturation | None
    """The client's evidence on the last window this process closed (None before one closed)."""
    read_units: float
    write_units: float
    windows_closed: int
    windows_planned: int
    plan_end: float
    """When the plan's last window ends; for a search, its longest course (`LocalRun.plan_end`)."""
    finished: bool
    tables: Mapping[str, str]
    """Physical table name -> the scenario's (logical) name."""
    open_windows: Mapping[int, OpenWindow] = field(default_factory=dict)
    """The figures of the windows started and not yet merged, by index (only when asked for: they are copies)."""

    @property
    def in_flight_total(self) -> int:
        return sum(self.in_flight.values())
