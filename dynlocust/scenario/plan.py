"""The plan: a scenario's phases laid out as absolute windows on a shared T0, and each worker's share.

Pure functions, no I/O, no clock: the master picks T0 and sends it; every worker rebuilds the same plan from the
same scenario and T0, so windows line up by index across the fleet.

Splitting a window across workers is done in whole requests, not in float rates: window ``i`` plans
``round(rate * duration)`` requests; each worker gets ``requests // count`` and the ``requests % count`` leftover
requests go to workers ``(i + 0) % count, (i + 1) % count, ...`` (rotating with the window index so no worker is
always the one sending more). The worker's rate is its request count divided by the window's duration. So the
shares add up *exactly* to the window's planned requests, and their rates to the window's rate up to float rounding.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property

from dynlocust.scenario.model import Scenario


@dataclass(frozen=True)
class Window:
    """One step of offered load for the whole fleet. ``start`` is absolute (epoch seconds, T0 + offset)."""

    index: int
    start: float
    duration: float
    rate: float
    phase: str

    @property
    def end(self) -> float:
        return self.start + self.duration

    @property
    def requests(self) -> int:
        """Requests the fleet is planned to send in this window."""
        return round(self.rate * self.duration)


@dataclass(frozen=True)
class WorkerWindow:
    """One worker's share of a window: same index and times, its own request count and rate."""

    index: int
    start: float
    duration: float
    rate: float
    requests: int
    phase: str

    @property
    def end(self) -> float:
        return self.start + self.duration


def split_requests(total: int, window_index: int, worker_index: int, worker_count: int) -> int:
    """Whole requests of ``total`` that worker ``worker_index`` sends; the shares of all workers sum to ``total``."""
    if worker_count < 1 or not 0 <= worker_index < worker_count:
        raise ValueError(f"expected 0 <= worker_index < worker_count, found {worker_index} of {worker_count}")
    base, rest = divmod(total, worker_count)
    return base + (1 if (worker_index - window_index) % worker_count < rest else 0)


@dataclass(frozen=True)
class Plan:
    t0: float
    windows: tuple[Window, ...]

    @property
    def total_duration(self) -> float:
        return sum(w.duration for w in self.windows)

    @property
    def end(self) -> float:
        return self.windows[-1].end if self.windows else self.t0

    @property
    def total_requests(self) -> int:
        return sum(w.requests for w in self.windows)

    @cached_property
    def _starts(self) -> list[float]:
        return [w.start for w in self.windows]

    def window_at(self, t: float) -> Window | None:
        """The window containing absolute time ``t`` (start inclusive, end exclusive), or ``None`` outside the plan."""
        i = bisect.bisect_right(self._starts, t) - 1
        # Only the last window's end is checked: windows are contiguous by construction, and comparing with the
        # next start (not start + duration) leaves no float gap between them.
        if i < 0 or (i == len(self.windows) - 1 and t >= self.windows[i].end):
            return None
        return self.windows[i]

    def share(self, worker_index: int, worker_count: int) -> tuple[WorkerWindow, ...]:
        """This worker's windows; for every window the ``requests`` of all workers add up to the window's."""
        out = []
        for w in self.windows:
            n = split_requests(w.requests, w.index, worker_index, worker_count)
            out.append(WorkerWindow(w.index, w.start, w.duration, n / w.duration, n, w.phase))
        return tuple(out)


def build_plan(scenario: Scenario, *, t0: float) -> Plan:
    """Lay the scenario's steps end to end from ``t0``."""
    windows: list[Window] = []
    offset = 0.0
    for phase in scenario.phases:
        for step in phase.steps:
            windows.append(Window(len(windows), t0 + offset, step.duration, step.rate, phase.name))
            offset += step.duration
    return Plan(t0, tuple(windows))
