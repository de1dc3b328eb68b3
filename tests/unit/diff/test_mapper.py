"""Saved mapper-vs-raw tables: the file round-trips, and a slower mapper is told from the runs' spread."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dynlocust.diff.errors import DiffError
from dynlocust.diff.load import MapperSide, load_side
from dynlocust.diff.mapper import finish, mapper_cells, mapper_document


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
    assert finish(args, base, [Row("get", [r * 1.2 for r in STEADY])], endpoint="local") == 3
    out = capsys.readouterr().out
    assert "REGRESSION: ratio of 'get'" in out and (tmp_path / "new.json").exists()
    assert finish(args, base, [Row("get", STEADY)], endpoint="local") == 0
