"""Saved mapper-vs-raw tables: the file round-trips, and a slower mapper is told from the runs' spread."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.cells import change_text, value_text
from dynlocust.observe.diff.errors import DiffError
from dynlocust.observe.diff.load import MapperSide, load_side
from dynlocust.observe.diff.mapper import finish, mapper_cells, mapper_document, mapper_rendered
from dynlocust.observe.diff.render import console


@dataclass
class Row:
    name: str
    ratios: list[float]
    raw_ms: list[float] = field(default_factory=list)
    mapper_ms: list[float] = field(default_factory=list)
    alloc_ratio: float = float("nan")

    def __post_init__(self) -> None:
        self.raw_ms = [1.0] * len(self.ratios)
        self.mapper_ms = list(self.ratios)


STEADY = [1.10, 1.12, 1.09, 1.11, 1.10]


def _saved(tmp_path: Path, name: str, rows: list[Row]) -> MapperSide:
    path = tmp_path / name
    path.write_text(json.dumps(mapper_document(rows, runs=5, repeat=5, endpoint="local")))
    side = load_side(path, name)
    assert isinstance(side, MapperSide)
    return side


def test_saved_table_round_trips(tmp_path: Path) -> None:
    side = _saved(tmp_path, "a.json", [Row("get", STEADY)])
    assert side.rows[0].ratios == tuple(STEADY) and side.rows[0].alloc_ratio is None
    assert side.meta == {"runs": 5, "repeat": 5, "endpoint": "local"}


@pytest.mark.parametrize(
    ("new", "significant"),
    [
        (STEADY, False),
        ([r * 1.10 for r in STEADY], True),  # 10% slower, spread ~1%
        ([r * 1.10 for r in (1.0, 1.3, 0.8, 1.2, 0.9)], False),  # 10% slower within a +/-25% spread
    ],
)
def test_slower_beyond_the_spread_is_significant(tmp_path: Path, new: list[float], significant: bool) -> None:
    cells, left_out = mapper_cells(
        _saved(tmp_path, "a.json", [Row("get", STEADY), Row("scan", STEADY)]),
        _saved(tmp_path, "b.json", [Row("get", new), Row("put", STEADY)]),
    )
    assert [c.row for c in cells] == ["get"] and left_out == ["scan (baseline only)", "put (new only)"]
    assert cells[0].significant is significant
    assert "% confidence, 5 vs 5 runs" in cells[0].detail


def test_no_operation_in_common_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DiffError, match="expected operations in common, found none"):
        mapper_cells(_saved(tmp_path, "a.json", [Row("get", STEADY)]), _saved(tmp_path, "b.json", [Row("x", STEADY)]))


def test_finish_saves_and_gates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _saved(tmp_path, "a.json", [Row("get", STEADY)])
    args = argparse.Namespace(runs=5, repeat=5, save=str(tmp_path / "new.json"), baseline="a.json", fail_on="ratio>+5%")
    assert finish(args, base, [Row("get", [r * 1.2 for r in STEADY])], endpoint="local") == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "REGRESSION: ratio of 'get'" in out and (tmp_path / "new.json").exists()
    assert finish(args, base, [Row("get", STEADY)], endpoint="local") == 0


@pytest.mark.parametrize(
    ("base", "new", "change", "words"),
    [
        # issue 33: 0.991x -> 0.984x was printed "+8.8%" and flagged; the change is now that of the figures shown
        ([0.991] * 5, [0.984] * 5, "-0.7%", "mapper 0.7% faster than baseline"),
        ([1.000] * 5, [1.088] * 5, "+8.8%", "mapper 8.8% slower than baseline"),
        ([1.000] * 5, [0.979] * 5, "-2.1%", "mapper 2.1% faster than baseline"),
        ([1.000] * 5, [1.0004] * 5, "+0.0%", "mapper level with baseline"),
        ([1.0, 1.2, 0.9, 1.1, 1.0], [2.0, 1.1, 1.1, 1.0, 1.1], "+10.0%", "mapper 10.0% slower than baseline"),
    ],
)
def test_the_change_is_that_of_the_figures_shown_and_said_in_words(
    tmp_path: Path, base: list[float], new: list[float], change: str, words: str
) -> None:
    before, after = _saved(tmp_path, "a.json", [Row("get", base)]), _saved(tmp_path, "b.json", [Row("get", new)])
    cells, _ = mapper_cells(before, after)
    cell = cells[0]
    shown_base, shown_new = value_text(cell.metric, cell.base), value_text(cell.metric, cell.new)
    assert f"{float(shown_new[:-1]) / float(shown_base[:-1]) * 100 - 100:+.1f}%" == change
    assert change_text(cell) == words
    assert cell.worse is (words.endswith("slower than baseline"))


@pytest.mark.parametrize(
    ("fail_on", "change", "outcome"),
    [
        ("ratio>+5%", 0.088, "failure"),
        ("ratio>+5%", -0.088, "pass"),  # faster: never past a bound on slower
        ("ratio>+5%", 0.0504, "pass"),  # printed "+5.0%": not past "+5%"
        ("ratio>+5%", 0.051, "failure"),  # printed "+5.1%"
        ("ratio>+5%", 0.05, "pass"),
        ("ratio>+3%", 0.031, "failure"),
        ("ratio>+10%", 0.088, "pass"),
        ("none", 0.5, "pass"),
    ],
)
def test_the_flag_follows_exactly_the_bound_given(tmp_path: Path, fail_on: str, change: float, outcome: str) -> None:
    rendered = mapper_rendered(
        _saved(tmp_path, "a.json", [Row("get", STEADY)]),
        _saved(tmp_path, "b.json", [Row("get", [r * (1 + change) for r in STEADY])]),
        fail_on,
    )
    text = console(rendered)
    failed = [line for line in text.splitlines() if line.startswith("REGRESSION: ratio of")]
    assert ("failure" if failed else "pass") == outcome, text
    for line in failed:
        shown = re.search(r"mapper (\d+\.\d)% slower than baseline", line)
        assert shown and float(shown[1]) > float(fail_on.split("+")[1].rstrip("%")), line


def test_the_change_is_the_shift_the_test_measured(tmp_path: Path) -> None:
    """The two median runs' quotient (+30% here) printed beside the test's shift (x1.187) read as two answers."""
    base = [1.0, 1.3, 0.8, 1.2, 0.9]
    new = [0.85, 1.6, 1.3, 1.5, 0.95]
    (cell,), _ = mapper_cells(
        _saved(tmp_path, "a.json", [Row("get", base)]), _saved(tmp_path, "b.json", [Row("get", new)])
    )
    shift = float(re.search(r"shift x(\d+\.\d+)", cell.detail)[1])  # type: ignore[index]
    assert shift == pytest.approx(1.1875, abs=1e-3)
    assert change_text(cell) == f"mapper {(shift - 1) * 100:.1f}% slower than baseline"


def test_a_rows_p_is_said_to_be_before_holms_correction(tmp_path: Path) -> None:
    from dynlocust.observe.diff.cells import significance_text

    cells, _ = mapper_cells(
        _saved(tmp_path, "a.json", [Row("get", STEADY)]), _saved(tmp_path, "b.json", [Row("get", STEADY)])
    )
    assert re.fullmatch(r"(YES|no) \(p=[0-9.e-]+ before Holm's correction\)", significance_text(cells[0]))
