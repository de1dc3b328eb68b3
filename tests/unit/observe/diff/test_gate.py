"""`--fail-on`: parsing (every mistake is one clear error) and what fails, warns or passes."""

from __future__ import annotations

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.cells import METRICS, Cell
from dynlocust.observe.diff.errors import DiffError
from dynlocust.observe.diff.gate import DEFAULT_MAPPER_GATE, DEFAULT_RUN_GATE, check, parse_fail_on


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("p99>+20%", "run", ["p99>+20%"]),
        ("p99>+20%,throttle_ratio>+0.01,accepted<-5%", "run", ["p99>+20%", "throttle_ratio>+0.01", "accepted<-5%"]),
        (" p50 > 2 , verdict ", "run", ["p50>+2ms", "verdict"]),
        ("first_throttle<-1", "run", ["first_throttle<-1s"]),
        ("ratio>+10%", "mapper", ["ratio>+10%"]),
        ("none", "run", []),
        (DEFAULT_RUN_GATE, "run", DEFAULT_RUN_GATE.split(",")),
        (DEFAULT_MAPPER_GATE, "mapper", [DEFAULT_MAPPER_GATE]),
    ],
)
def test_parse(text: str, kind: str, expected: list[str]) -> None:
    assert [str(b) for b in parse_fail_on(text, kind)] == expected


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("p99", "run", r"term 'p99': expected METRIC>BOUND or METRIC<BOUND"),
        ("p99>>20%", "run", r"term 'p99>>20%': expected METRIC>BOUND"),
        ("p99>twenty", "run", r"term 'p99>twenty': expected METRIC>BOUND"),
        ("p98>+20%", "run", r"term 'p98>\+20%': expected a metric of a run diff, one of \[.*'p99'.*\], found 'p98'"),
        ("ratio>+5%", "run", r"expected a metric of a run diff, .* found 'ratio'"),
        ("p99>+20%", "mapper", r"expected a metric of a mapper diff, one of \['ratio'\], found 'p99'"),
        ("p99<-20%", "run", r"term 'p99<-20%': expected p99>\.\.\. \(higher is worse\), found p99<\.\.\."),
        ("accepted>+5%", "run", r"expected accepted<\.\.\. \(lower is worse\)"),
        ("throttle_ratio>+1%", "run", r"expected an absolute bound for throttle_ratio .* found a %"),
        ("p99>+20%,", "run", r"term '': expected METRIC>BOUND"),
        ("verdict", "mapper", r"term 'verdict': expected METRIC>BOUND"),
    ],
)
def test_parse_errors(text: str, kind: str, message: str) -> None:
    with pytest.raises(DiffError, match=message) as info:
        parse_fail_on(text, kind)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("--fail-on term ")


def _p99(base: float, new: float, significant: bool) -> Cell:
    change = new / base - 1
    return Cell(
        "w", METRICS["p99"], base, new, change, change > 0, "quantile", 0.001 if significant else 0.4, significant
    )


@pytest.mark.parametrize(
    ("cell", "failures", "warnings"),
    [
        (_p99(0.010, 0.013, True), 1, 0),  # +30%, significant: fails
        (_p99(0.010, 0.013, False), 0, 1),  # +30%, too little data: a warning, not a silent pass
        (_p99(0.010, 0.011, True), 0, 0),  # +10%, significant but within the bound
        (_p99(0.010, 0.007, True), 0, 0),  # faster
    ],
)
def test_check(cell: Cell, failures: int, warnings: int) -> None:
    result = check([cell], parse_fail_on("p99>+20%", "run"))
    assert (len(result.failures), len(result.warnings)) == (failures, warnings)
    assert result.exit_code == (ExitCode.REGRESSION if failures else ExitCode.PASSED)


def test_absolute_bounds_are_in_the_metrics_unit() -> None:
    cell = _p99(0.010, 0.0125, True)  # +2.5 ms
    assert check([cell], parse_fail_on("p99>+2", "run")).failures
    assert not check([cell], parse_fail_on("p99>+3", "run")).failures


def test_a_change_with_no_number_counts_when_worse() -> None:
    appeared = Cell("w", METRICS["first_throttle"], None, 3.0, None, True, "none")
    result = check([appeared], parse_fail_on("first_throttle<-10%", "run"))
    assert not result.failures and "first_throttle of 'w': never -> 3.0 s" in result.warnings[0]
    verdict = Cell("w", METRICS["verdict"], "ok", "throttled", None, True, "exact", significant=True)
    assert check([verdict], parse_fail_on("verdict", "run")).failures


def test_a_gate_fails_when_the_ceiling_fell_past_the_bound() -> None:
    from dynlocust.observe.diff.runs import _ceiling

    def found(low: float, high: float) -> dict[str, object]:
        return {"limited_by": "dynamodb", "low": low, "high": high, "rate": (low + high) / 2, "operation": "write"}

    bounds = parse_fail_on("ceiling<-5%", "run")
    fell = _ceiling(found(4090, 4170), found(3800, 3870))  # -7.1 %, brackets apart
    assert fell is not None and check([fell], bounds).failures
    same = _ceiling(found(4090, 4170), found(4060, 4140))  # -0.7 %, brackets overlap
    assert same is not None and not check([same], bounds).failures and not check([same], bounds).warnings
    near = _ceiling(found(4090, 4170), found(3700, 4130))  # -5.2 %, but the brackets overlap: a warning
    assert near is not None and not check([near], bounds).failures and check([near], bounds).warnings
    client = {"limited_by": "client", "low": None, "high": None, "rate": 3000.0}
    assert _ceiling(found(4090, 4170), client) is None  # a client limit is no ceiling to compare
