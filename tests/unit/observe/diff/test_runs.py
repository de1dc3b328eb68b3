"""Run diffs from results files of known numbers: matching, the tests' verdicts, and every refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.cells import Cell
from dynlocust.observe.diff.errors import DiffError, DiffInconclusive
from dynlocust.observe.diff.load import RunSide, load_side
from dynlocust.observe.diff.runs import QUANTILES, diff_runs
from tests.support.results_files import SHAPE, Window, write_results


def _side(tmp_path: Path, name: str, windows: list[Window], **kw: object) -> RunSide:
    path = write_results(tmp_path / name / "results.jsonl", windows, **kw)  # type: ignore[arg-type]
    side = load_side(path, {"a": "baseline", "b": "new"}[name])
    assert isinstance(side, RunSide)
    return side


def _cell(cells: list[Cell], row: str, metric: str) -> Cell:
    return next(c for c in cells if c.row == row and c.metric.name == metric)


RAMP = [Window("ramp", 100), Window("ramp", 200)]


def test_same_distribution_has_no_significant_change(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 100, seed=1), Window("ramp", 200, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 100, seed=2), Window("ramp", 200, seed=2)])
    diff = diff_runs(base, new)
    assert [p.label for p in diff.matched.pairs] == ["ramp 100/s", "ramp 200/s"]
    assert not [c for c in diff.cells if c.significant], [c for c in diff.cells if c.significant]


def test_slower_latency_is_significant_and_worse(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 200, latency=0.002, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 200, latency=0.004, seed=2)])
    cells = diff_runs(base, new).cells
    p50 = _cell(cells, "ramp 200/s", "p50")
    assert p50.significant and p50.worse
    assert p50.change == pytest.approx(1.0, abs=0.15)


def test_units_per_request_that_grew_are_significant(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 100, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 100, units=2.0, seed=2)])
    cells = diff_runs(base, new).cells
    units, cost = _cell(cells, "ramp 100/s", "units"), _cell(cells, "ramp 100/s", "cost")
    assert units.significant and units.worse and units.change == pytest.approx(1.0)
    assert cost.significant and cost.worse and cost.change == pytest.approx(1.0)


def test_throttles_that_appear_are_significant_and_earlier(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 200, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 200, throttled=100, verdict="throttled", seed=2)])
    cells = diff_runs(base, new).cells
    ratio = _cell(cells, "ramp 200/s", "throttle_ratio")
    assert ratio.significant and ratio.worse and ratio.change == pytest.approx(0.1)
    accepted = _cell(cells, "ramp 200/s", "accepted")
    assert accepted.significant and accepted.worse and accepted.change == pytest.approx(-0.1)
    first = _cell(cells, "ramp 200/s", "first_throttle")
    assert first.base is None and first.new is not None and first.worse and not first.significant
    verdict = _cell(cells, "ramp 200/s", "verdict")
    assert (verdict.base, verdict.new, verdict.worse) == ("ok", "throttled", True)


def test_windows_match_by_phase_and_rate_not_index(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", RAMP)
    new = _side(tmp_path, "b", [Window("ramp", 50), *RAMP, Window("hold", 200)])  # gained two windows
    diff = diff_runs(base, new)
    assert [(p.label, p.base.index, p.new.index) for p in diff.matched.pairs] == [
        ("ramp 100/s", 0, 1),
        ("ramp 200/s", 1, 2),
    ]
    assert diff.matched.only_new == ["ramp 50/s", "hold 200/s"]


@pytest.mark.parametrize("verdict", ["client-bound", "partial", "not-run"])
def test_a_window_that_is_not_the_services_is_skipped_with_its_cause(tmp_path: Path, verdict: str) -> None:
    base = _side(tmp_path, "a", RAMP)
    new = _side(tmp_path, "b", [Window("ramp", 100), Window("ramp", 200, verdict=verdict)])
    diff = diff_runs(base, new)
    assert [p.label for p in diff.matched.pairs] == ["ramp 100/s"]
    assert len(diff.matched.skipped) == 1
    assert diff.matched.skipped[0].startswith(f"ramp 200/s: {verdict} in the new (")
    assert {c.row.split(" · ")[0] for c in diff.cells} == {"ramp 100/s"}


def test_a_throttled_window_that_is_also_client_bound_is_skipped(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", RAMP)
    new = _side(tmp_path, "b", [Window("ramp", 100), Window("ramp", 200, verdict="throttled", also=("client-bound",))])
    assert "client-bound in the new" in diff_runs(base, new).matched.skipped[0]


def test_nothing_comparable_is_inconclusive_not_bad_input(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 100, verdict="client-bound"), *RAMP[1:]])
    new = _side(tmp_path, "b", [Window("ramp", 100), Window("ramp", 200, verdict="client-bound")])
    with pytest.raises(DiffInconclusive, match="nothing comparable: every matched window was skipped") as caught:
        diff_runs(base, new)
    assert caught.value.exit_code == ExitCode.INCONCLUSIVE
    assert "ramp 100/s: client-bound in the baseline" in str(caught.value)
    assert "ramp 200/s: client-bound in the new" in str(caught.value)


def test_other_tables_or_mix_are_refused(tmp_path: Path) -> None:
    other = {**SHAPE, "workload": {**SHAPE["workload"], "operations": [{"op": "get", "weight": 1.0, "table": "t"}]}}
    base = _side(tmp_path, "a", RAMP)
    new = _side(tmp_path, "b", RAMP, shape=other)
    with pytest.raises(DiffError, match=r"operation mix at workload\.operations\[0\]\.op: baseline 'put', new 'get'"):
        diff_runs(base, new)


def test_results_without_a_shape_compare_by_scenario_name(tmp_path: Path) -> None:
    assert diff_runs(_side(tmp_path, "a", RAMP, shape=None), _side(tmp_path, "b", RAMP, shape=None)).cells


def test_no_window_in_common_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DiffError, match="found none in common"):
        diff_runs(_side(tmp_path, "a", RAMP), _side(tmp_path, "b", [Window("hold", 300)]))


def test_a_run_without_its_end_is_refused_as_partial(tmp_path: Path) -> None:
    path = write_results(tmp_path / "a" / "results.jsonl", RAMP, end=False)
    with pytest.raises(DiffError, match=r"expected a complete run, found a partial one .*no end record"):
        load_side(path, "baseline")


def test_each_operation_gets_its_rows_and_only_the_slower_one_is_flagged(tmp_path: Path) -> None:
    ops = ("get t", "put t")
    base = _side(tmp_path, "a", [Window("ramp", 400, operations=ops, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 400, operations=ops, slower={"get t": 2.0}, seed=2)])
    cells = diff_runs(base, new).cells
    assert {c.row for c in cells} == {"ramp 400/s", "ramp 400/s · get t", "ramp 400/s · put t"}
    get, put = _cell(cells, "ramp 400/s · get t", "p50"), _cell(cells, "ramp 400/s · put t", "p50")
    assert get.significant and get.worse and get.change == pytest.approx(1.0, abs=0.15)
    assert not put.significant and abs(put.change or 0) < 0.1
    assert _cell(cells, "ramp 400/s · get t", "accepted").base == pytest.approx(200)  # half the requests, per s


def test_one_operation_has_no_rows_of_its_own(tmp_path: Path) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 100, operations=("put t",), seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 100, operations=("put t",), seed=2)])
    assert {c.row for c in diff_runs(base, new).cells} == {"ramp 100/s"}


def test_a_shift_inside_the_run_noise_is_not_significant_unless_the_noise_is_said_to_be_smaller(
    tmp_path: Path,
) -> None:
    base = _side(tmp_path, "a", [Window("ramp", 400, seconds=10, seed=1)])
    new = _side(tmp_path, "b", [Window("ramp", 400, seconds=10, latency=0.0022, seed=2)])  # +10%
    assert not _cell(diff_runs(base, new).cells, "ramp 400/s", "p50").significant
    assert _cell(diff_runs(base, new, run_noise=dict.fromkeys(QUANTILES, 0.0)).cells, "ramp 400/s", "p50").significant
