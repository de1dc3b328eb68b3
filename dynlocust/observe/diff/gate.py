"""`--fail-on`: which changes fail the gate (`ExitCode.REGRESSION`), parsed once, checked against the diff's cells.

A term is `METRIC>BOUND` or `METRIC<BOUND` (`p99>+20%`, `throttle_ratio>+0.01`, `accepted<-5%`, or just
`verdict`: any window whose verdict got worse). `%` bounds are relative changes; plain numbers are absolute, in
the metric's unit (ms for latency, s for the first throttle, a fraction for ratios). A cell fails the gate when
its change passes the bound in the metric's bad direction *and* is significant; past the bound but not
significant is a warning (too little data to say), never a silent pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.cells import METRICS, Cell, Metric, change_text, percent, value_text
from dynlocust.observe.diff.errors import DiffError

DEFAULT_RUN_GATE = "p50>+20%,p99>+20%,accepted<-5%,throttle_ratio>+0.01,error_ratio>+0.01"
DEFAULT_MAPPER_GATE = "ratio>+5%"

_TERM = re.compile(r"^\s*([a-z_0-9]+)\s*([<>])\s*([+-]?\d+(?:\.\d+)?)\s*(%?)\s*$")


@dataclass(frozen=True)
class Bound:
    metric: Metric
    op: str
    value: float
    relative: bool

    def __str__(self) -> str:
        if self.metric.name == "verdict":
            return "verdict"
        unit = "%" if self.relative else (self.metric.unit if self.metric.unit not in ("", "/s", "x") else "")
        number = f"{self.value * 100:+g}" if self.relative else f"{self.value:+g}"
        return f"{self.metric.name}{self.op}{number}{unit}"

    def passed_by(self, cell: Cell) -> bool:
        """The cell's change is past this bound in the bad direction (a change with no number counts when worse)."""
        if not cell.worse:
            return False
        if self.metric.name == "verdict":
            return True
        if self.relative:
            # the change as printed (0.1%): "+5.0%" never passes "ratio>+5%", "+5.1%" always does
            value = None if cell.change is None else percent(cell.change)
            bound = round(self.value * 100, 6)
        elif isinstance(cell.base, int | float) and isinstance(cell.new, int | float):
            value, bound = (cell.new - cell.base) * self.metric.scale, self.value
        else:
            value = None
        if value is None:
            return True  # worse with no number (throttles appeared, a zero baseline grew): past any bound
        return value > bound if self.op == ">" else value < bound


def parse_fail_on(text: str, kind: str) -> list[Bound]:
    """Parse a `--fail-on` list for a diff of `kind` (`run` or `mapper`); `none` is an empty gate."""
    if text.strip().lower() == "none":
        return []
    names = sorted(n for n, m in METRICS.items() if m.kind == kind)
    bounds = []
    for term in text.split(","):
        where = f"--fail-on term {term.strip()!r}"
        if term.strip() == "verdict" and kind == "run":
            bounds.append(Bound(METRICS["verdict"], ">", 0.0, False))
            continue
        m = _TERM.match(term)
        if not m:
            raise DiffError(
                f"{where}: expected METRIC>BOUND or METRIC<BOUND (e.g. p99>+20%, throttle_ratio>+0.01), "
                f"found no such form"
            )
        name, op, number, percent = m.groups()
        metric = METRICS.get(name)
        if metric is None or metric.kind != kind or name == "verdict":
            raise DiffError(f"{where}: expected a metric of a {kind} diff, one of {names}, found {name!r}")
        bad = ">" if metric.higher_is_worse else "<"
        if op != bad:
            raise DiffError(
                f"{where}: expected {name}{bad}... ({'higher' if metric.higher_is_worse else 'lower'} is worse), "
                f"found {name}{op}..."
            )
        if percent and not metric.relative:
            raise DiffError(f"{where}: expected an absolute bound for {name} (it is a difference), found a %")
        value = float(number) / 100 if percent else float(number)
        bounds.append(Bound(metric, op, value, bool(percent)))
    return bounds


@dataclass
class GateResult:
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return ExitCode.REGRESSION if self.failures else ExitCode.PASSED


def describe(cell: Cell) -> str:
    """`p99 of 'ramp 100/s': 12.0 ms -> 15.1 ms (+25.8%, p=0.003)`."""
    p = "" if cell.p_value is None else f", p={cell.p_value:.3g}"
    return (
        f"{cell.metric.name} of {cell.row!r}: {value_text(cell.metric, cell.base)} -> "
        f"{value_text(cell.metric, cell.new)} ({change_text(cell)}{p}, test: {cell.test})"
    )


def check(cells: list[Cell], bounds: list[Bound]) -> GateResult:
    """Failures: significant changes past a bound. Warnings: past a bound but not significant."""
    result = GateResult()
    for bound in bounds:
        for cell in cells:
            if cell.metric is not bound.metric or not bound.passed_by(cell):
                continue
            line = f"{describe(cell)} passes {bound}"
            if cell.significant:
                result.failures.append(line)
            else:
                result.warnings.append(f"{line} but is not significant: too little data to say (run longer)")
    return result
