"""`compare`'s measurement: what a `--pairs` module's context gives each repetition, and the table it prints."""

from __future__ import annotations

import re

import pytest

from dynlocust.compare.measure import PairContext, Row, format_table
from dynlocust.observe.diff.stats import median_run


def test_context_tags_are_unique() -> None:
    context = PairContext(client=None, endpoint="http://127.0.0.1:1", region="us-east-1", prefix="p")
    assert len({context.tag() for _ in range(100)}) == 100


ROW_LINE = re.compile(r"^(?P<name>.+?)\s+(?P<raw>\d+\.\d\d)\s+(?P<mapper>\d+\.\d\d)\s+(?P<ratio>\d+\.\d\d)x  ")


@pytest.mark.parametrize(
    ("raw_ms", "mapper_ms", "shown"),
    [
        # as in issue 33: each column's median (2.37, 3.24) comes from another run than the ratio
        ([2.37, 1.00, 3.10, 0.95, 2.50], [2.46, 3.27, 3.24, 3.40, 2.60], ("3.10", "3.24", "1.05")),
        ([1.0, 3.0, 2.0], [3.3, 3.1, 2.1], ("2.00", "2.10", "1.05")),  # drift: ratio of medians would say 1.55x
        ([2.0, 1.0], [2.2, 1.3], ("2.00", "2.20", "1.10")),  # an even count: the lower median run
        ([4.0], [2.0], ("4.00", "2.00", "0.50")),
    ],
)
def test_the_ratio_is_the_quotient_of_the_printed_columns(
    raw_ms: list[float], mapper_ms: list[float], shown: tuple[str, str, str]
) -> None:
    row = Row("get", raw_ms, mapper_ms, [m / r for r, m in zip(raw_ms, mapper_ms, strict=True)], 1.0)
    line = format_table([row], len(raw_ms), 1, "local").splitlines()[2]
    match = ROW_LINE.match(line)
    assert match, line
    assert (match["raw"], match["mapper"], match["ratio"]) == shown
    assert float(match["ratio"]) == pytest.approx(float(match["mapper"]) / float(match["raw"]), abs=0.006)


@pytest.mark.parametrize(
    ("ratios", "index"), [([1.0], 0), ([3.0, 1.0, 2.0], 2), ([2.0, 1.0], 1), ([5.0, 1.0, 4.0, 2.0], 3)]
)
def test_the_median_run_is_the_run_at_the_median_ratio(ratios: list[float], index: int) -> None:
    assert median_run(ratios) == index
