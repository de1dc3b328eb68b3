"""One compared figure (a cell of the diff table), the metrics a diff knows with their direction and unit, and how a
cell reads (its values, change and significance in words: what every format and the gate's messages show)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Metric:
    """A compared figure: `relative` changes are new/base - 1; absolute ones are new - base in `unit`."""

    name: str
    title: str
    relative: bool
    higher_is_worse: bool
    unit: str
    scale: float = 1.0
    """Stored value x scale = the value in `unit` (seconds to ms)."""
    kind: str = "run"
    """`run` (a `dynlocust run` diff) or `mapper` (a `dynlocust compare` diff)."""


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("accepted", "accepted/s", True, False, "/s"),
        Metric("throttle_ratio", "throttle ratio", False, True, ""),
        Metric("error_ratio", "error ratio", False, True, ""),
        Metric("first_throttle", "first throttle", True, False, "s"),
        Metric("p50", "p50", True, True, "ms", 1000.0),
        Metric("p90", "p90", True, True, "ms", 1000.0),
        Metric("p99", "p99", True, True, "ms", 1000.0),
        Metric("units", "units per accepted", True, True, ""),
        Metric("cost", "cost per 1M accepted", True, True, "$"),
        Metric("verdict", "verdict", False, True, ""),
        Metric("ceiling", "ceiling found", True, False, "/s"),
        Metric("ratio", "mapper/raw", True, True, "x", kind="mapper"),
    )
}


def percent(change: float) -> float:
    """A relative change as the percent every format prints (one decimal): what a gate's bound is checked on."""
    return round(change * 100, 1)


@dataclass
class Cell:
    """One metric of one matched window (or one mapper operation), baseline against new."""

    row: str
    """The matched window's label, or the mapper operation's name."""
    metric: Metric
    base: float | str | None
    new: float | str | None
    change: float | None
    """new/base - 1 for relative metrics, new - base otherwise; None when it has no number (a verdict, a
    first throttle that only one side had)."""
    worse: bool
    """The change goes in this metric's bad direction (said even when it has no number)."""
    test: str
    """How significance was decided: `quantile`, `binomial`, `welch-t`, `mann-whitney`, `exact` or
    `none`."""
    p_value: float | None = None
    significant: bool = False
    detail: str = ""
    """Counts behind the test, or a confidence interval."""
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.change != 0 if self.change is not None else self.base != self.new


def value_text(metric: Metric, value: float | str | None) -> str:
    if value is None:
        return "never" if metric.name == "first_throttle" else "-"
    if isinstance(value, str):
        return value
    if metric.unit == "ms":
        return f"{value * metric.scale:,.2f} ms"
    if metric.unit == "s":
        return f"{value:,.1f} s"
    if metric.unit == "/s":
        return f"{value:,.1f}/s"
    if metric.unit == "$":
        return f"${value:,.4f}"
    if metric.unit == "x":
        return f"{value:.3f}x"
    return f"{value:.4f}"


def change_text(cell: Cell) -> str:
    if cell.change is None:
        if not cell.changed:
            return "="
        return "worse" if cell.worse else "better"
    if cell.metric.kind == "mapper":
        return mapper_change_text(cell.change)
    if cell.metric.relative:
        return f"{percent(cell.change):+.1f}%"
    return f"{cell.change * cell.metric.scale:+.4f}"


def mapper_change_text(change: float) -> str:
    """A mapper/raw ratio's change in words: a higher ratio means the mapper is slower against the raw client."""
    shown = percent(change)
    if shown == 0:
        return "mapper level with baseline"
    return f"mapper {abs(shown):.1f}% {'slower' if shown > 0 else 'faster'} than baseline"


def significance_text(cell: Cell) -> str:
    if cell.test == "exact":
        return "exact" if cell.changed else "-"
    if cell.test == "none":
        return "not tested"
    if cell.p_value is None:
        return "no data"
    # the p of this row's own test; "significant" is decided after Holm's correction over every tested row
    return f"{'YES' if cell.significant else 'no'} (p={cell.p_value:.2g} before Holm's correction)"
