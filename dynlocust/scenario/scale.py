"""Shrink (or grow) a loaded scenario from the command line, as k6 and Artillery users override stages and phases.

`--rate-scale` multiplies every offered rate (and the SLOs' rate bounds), `--duration-scale` every window and the
bin, `--local` runs a remote scenario against the embedded endpoint, and for a local target `--capacity-scale`
and `--time-scale` multiply its emulated capacity and its clock. Unless given, the capacity follows the rates and
the endpoint's clock follows the windows (time scale = 1 / duration scale), so a shrunk scenario keeps the outcome
its description promises: `write-ceiling --local --rate-scale 0.025 --duration-scale 0.25` shows its ceiling at
1/40 of the load in a quarter of the time. The request and cost ceilings shrink with the planned requests.

Applied once, to the loaded scenario (`load`), by every process that loads one: `dynlocust run`, `validate`, and
Locust's `init` (master, workers, standalone). `digest` covers the file and the scaling, so a worker started with
other factors than its master's refuses the plan as it refuses another file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

from dynlocust.errors import ConfigurationError
from dynlocust.scenario.loader import load_scenario
from dynlocust.scenario.model import LocalTarget, Phase, Scenario, Search, Slo, Step, shortest_probe
from dynlocust.scenario.plan import empty_window, window_number

MIN_WINDOW = 1.0
"""Seconds: a scaled window shorter than this holds too few requests and bins to mean anything."""
MAX_FACTOR = 1000.0


@dataclass(frozen=True)
class Scaling:
    """Factors from the command line; `None` capacity/time mean "follow the rates" / "follow the windows"."""

    local: bool = False
    rate: float = 1.0
    duration: float = 1.0
    capacity: float | None = None
    time: float | None = None

    @property
    def capacity_factor(self) -> float:
        return self.capacity if self.capacity is not None else self.rate

    @property
    def time_factor(self) -> float:
        return self.time if self.time is not None else 1.0 / self.duration

    @property
    def is_identity(self) -> bool:
        return self == Scaling()

    def describe(self) -> str:
        """One line for the console: `--local, rates x0.025, windows x0.25`; a given capacity or clock factor too, since
        it multiplies the scenario's own `capacity_scale` / `time_scale` rather than replacing them."""
        line = ("--local, " if self.local else "") + f"rates x{self.rate:g}, windows x{self.duration:g}"
        if self.capacity is not None:
            line += f", capacity x{self.capacity:g}"
        if self.time is not None:
            line += f", clock x{self.time:g}"
        return line


def factor(option: str, raw: object) -> float:
    """A scale factor given as text: a positive finite number up to `MAX_FACTOR`, else a one-line error."""
    try:
        value = float(str(raw))
    except ValueError:
        raise ConfigurationError(f"{option}: expected a positive scale factor such as 0.25, found {raw!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_FACTOR):
        raise ConfigurationError(f"{option}: expected a scale factor above 0 and at most {MAX_FACTOR:g}, found {raw!r}")
    return value


def apply(scenario: Scenario, scaling: Scaling) -> Scenario:
    """The scenario as `scaling` says to run it; raises `ConfigurationError` naming the option that cannot apply."""
    if scaling.is_identity:
        return scenario
    target = scenario.target
    if scaling.local and not isinstance(target, LocalTarget):
        existing = [t.name for t in scenario.tables if t.use_existing]
        if existing:
            raise ConfigurationError(
                f"--local: expected tables the run creates, found use_existing on {', '.join(existing)} "
                f"in {scenario.source} (the embedded endpoint has no existing tables)"
            )
        target = LocalTarget()
    if isinstance(target, LocalTarget):
        target = LocalTarget(
            capacity_scale=target.capacity_scale * scaling.capacity_factor,
            time_scale=target.time_scale * scaling.time_factor,
        )
    else:
        for option, given in (("--capacity-scale", scaling.capacity), ("--time-scale", scaling.time)):
            if given is not None:
                raise ConfigurationError(
                    f"{option}: applies to the embedded endpoint only; expected a local scenario or --local, "
                    f"found the remote target of {scenario.source}"
                )
    phases = tuple(
        Phase(
            p.name,
            p.kind,
            tuple(Step(s.rate * scaling.rate, s.duration * scaling.duration) for s in p.steps),
            None if p.search is None else _scaled_search(p.search, scaling),
        )
        for p in scenario.phases
    )
    search = phases[0].search
    if search is not None and search.window < (shortest := shortest_probe(search.precision, target)):
        raise ConfigurationError(
            f"--duration-scale: expected probe windows of at least {shortest:g} s at the scaled clock, found "
            f"{search.window:g} s (x{scaling.duration:g} of {scenario.source}'s window)"
        )
    shortest = min(s.duration for p in phases for s in p.steps)
    if shortest < MIN_WINDOW:
        raise ConfigurationError(
            f"--duration-scale: expected windows of at least {MIN_WINDOW:g} s, found {shortest:g} s "
            f"(x{scaling.duration:g} of {scenario.source}'s shortest window)"
        )
    windows = [s for p in phases for s in p.steps]
    for i, step in enumerate(windows):
        if (problem := empty_window(window_number(i), step.rate, step.duration)) is not None:
            raise ConfigurationError(f"--rate-scale, --duration-scale: {scenario.source}: scaled, {problem}")
    load = scaling.rate * scaling.duration
    planned = sum(round(s.rate * s.duration) for p in phases for s in p.steps)
    limits = scenario.limits
    if limits.max_requests is not None:
        limits = dataclasses.replace(limits, max_requests=max(planned, math.ceil(limits.max_requests * load)))
    if limits.max_cost_dollars is not None:
        limits = dataclasses.replace(limits, max_cost_dollars=limits.max_cost_dollars * load)
    return dataclasses.replace(
        scenario,
        target=target,
        phases=phases,
        bin=scenario.bin * scaling.duration,
        limits=limits,
        slos=tuple(_scaled_slo(slo, scaling.rate) for slo in scenario.slos),
    )


def _scaled_search(search: Search, scaling: Scaling) -> Search:
    return dataclasses.replace(
        search,
        start=search.start * scaling.rate,
        window=search.window * scaling.duration,
        cooldown=search.cooldown * scaling.duration,
    )


def _scaled_slo(slo: Slo, rate: float) -> Slo:
    return dataclasses.replace(
        slo,
        applies_below_rate=None if slo.applies_below_rate is None else slo.applies_below_rate * rate,
        applies_from_rate=None if slo.applies_from_rate is None else slo.applies_from_rate * rate,
    )


def load(path: str | Path, scaling: Scaling) -> Scenario:
    """Load the scenario file at `path` and scale it: the one way a run gets its scenario."""
    return apply(load_scenario(path), scaling)


def digest(path: str | Path, scaling: Scaling) -> str:
    """What master and workers must agree on: the scenario text and the factors applied to it."""
    h = hashlib.sha256(Path(path).read_bytes())
    if not scaling.is_identity:
        h.update(repr(dataclasses.astuple(scaling)).encode())
    return h.hexdigest()
