"""The plan: a scenario's phases laid out as absolute windows on a shared T0 (the fleet's planned windows).

Pure functions, no I/O, no clock: the master picks T0 and sends it; every worker rebuilds the same plan from the
same scenario and T0, so windows line up by index across the fleet. A window plans `half_up(rate * duration)`
requests, the pacer's own rounding; each worker's share of a window is `dynlocust.run.pacing.split_segment`'s.
A ceiling search's plan knows its first probe only: the others are *undecided* (rate 0, a day ahead) until the
merge decides each from the last merged window (`Plan.with_probe`) and hands every process the same start and
rate, so the windows still line up by index.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from dynlocust.scenario.model import Scenario


def window_number(index: int) -> int:
    """How people count windows (from 1) in the console, SLO messages, the reports, diffs and a scenario's
    `slos: window:`; records and files keep the 0-based index."""
    return index + 1


def window_list(indexes: Sequence[int]) -> str:
    """`window 4` (index 3), `windows 2, 5`, `windows 2-5`: numbered from 1, consecutive windows collapsed."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    numbers = [[window_number(i) for i in r] for r in runs]
    parts = [f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in numbers]
    return ("window " if len(indexes) == 1 else "windows ") + ", ".join(parts)


def half_up(x: float) -> int:
    """The one rounding rule of planned counts (the plan's totals, the pacer's sends): half up, never half to even."""
    return math.floor(x + 0.5)


def empty_window(number: int, rate: float, duration: float) -> str | None:
    """Why window `number` cannot be run, or None: at `rate` its `duration` plans not one request (by `half_up`), so
    it would read `ok` having sent nothing, and the conclusion would claim a load never offered."""
    if half_up(rate * duration) >= 1:
        return None
    return (
        f"window {number} ({duration:g} s at {rate:g}/s) plans no request ({rate * duration:.3g} of one); expected a "
        f"window that holds at least one request at its rate: at least {0.5 / rate:.3g} s at {rate:g}/s"
    )


@dataclass(frozen=True)
class Window:
    """A planned window: one step of offered load for the whole fleet. `start` is absolute (epoch seconds, T0 +
    offset). Each worker paces its share of it, a `dynlocust.run.pacing.Segment`; its tally is a
    `dynlocust.run.tally.WindowStats` and, once closed, its record a `dynlocust.run.closed_window.ClosedWindow`."""

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
        """Requests the fleet is planned to send in this window (the pacer's rounding, half up)."""
        return half_up(self.rate * self.duration)


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
        """The window containing absolute time `t` (start inclusive, end exclusive), or `None` outside the plan."""
        i = bisect.bisect_right(self._starts, t) - 1
        # Only the last window's end is checked: windows are contiguous by construction, and comparing with the
        # next start (not start + duration) leaves no float gap between them.
        if i < 0 or (i == len(self.windows) - 1 and t >= self.windows[i].end):
            return None
        return self.windows[i]

    def with_probe(self, index: int, start: float, rate: float) -> Plan:
        """A search's next probe decided: window `index` at `start` and `rate`; the windows after it, still
        undecided, move to `UNDECIDED_AFTER` seconds past its end at rate 0."""
        probe = dataclasses.replace(self.windows[index], start=start, rate=rate)
        later = _undecided(self.windows[index + 1 :], probe.end + UNDECIDED_AFTER)
        return Plan(self.t0, (*self.windows[:index], probe, *later))

    def truncated(self, count: int) -> Plan:
        """The plan's first `count` windows: a search stopped after its `count`-th probe."""
        return Plan(self.t0, self.windows[:count])


UNDECIDED_AFTER = 86_400.0
"""Seconds between a search's last decided window and its undecided ones: nothing waits for an undecided window's
start or end, whatever the clock says, until the search decides it."""


def _undecided(windows: tuple[Window, ...], start: float) -> list[Window]:
    out = []
    for w in windows:
        out.append(dataclasses.replace(w, start=start, rate=0.0))
        start += w.duration
    return out


def worst_case_plan(scenario: Scenario, *, t0: float) -> Plan:
    """Every step end to end from `t0`: a fixed plan, or each probe of a search at the highest rate it could offer
    (what the request ceiling and the estimate plan for)."""
    windows: list[Window] = []
    offset = 0.0
    for phase in scenario.phases:
        for step in phase.steps:
            windows.append(Window(len(windows), t0 + offset, step.duration, step.rate, phase.name))
            offset += step.duration
    return Plan(t0, tuple(windows))


def build_plan(scenario: Scenario, *, t0: float) -> Plan:
    """Lay the scenario's steps end to end from `t0`; of a search, the first probe only, the others undecided."""
    plan = worst_case_plan(scenario, t0=t0)
    if scenario.search is None or not plan.windows:
        return plan
    first = plan.windows[0]
    return Plan(t0, (first, *_undecided(plan.windows[1:], first.end + UNDECIDED_AFTER)))
