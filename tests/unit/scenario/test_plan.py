"""Plan: windows laid end to end from T0, exact per-worker shares, window lookup."""

from __future__ import annotations

import itertools

import pytest

from dynlocust.scenario import build_plan, load_scenario_text, split_requests
from tests.unit.scenario._base import BASE, variant

T0 = 1_800_000_000.0


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_scenario_text(BASE, "base.yaml"), t0=T0)


def test_windows_are_contiguous_and_absolute(plan) -> None:
    w = plan.windows
    assert [x.index for x in w] == [0, 1, 2, 3, 4]
    assert [x.rate for x in w] == [100, 200, 300, 400, 500]
    assert [x.start - T0 for x in w] == [0, 15, 30, 45, 60]
    assert [x.phase for x in w] == ["ramp-0"] * 4 + ["steps-1"]
    assert all(a.end == b.start for a, b in itertools.pairwise(w))
    assert plan.total_duration == 90 and plan.end == T0 + 90
    assert plan.total_requests == 15 * (100 + 200 + 300 + 400) + 30 * 500


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 64])
def test_shares_sum_exactly_to_each_window(plan, workers: int) -> None:
    shares = [plan.share(i, workers) for i in range(workers)]
    for k, window in enumerate(plan.windows):
        parts = [s[k] for s in shares]
        assert sum(p.requests for p in parts) == window.requests
        assert sum(p.rate for p in parts) == pytest.approx(window.rate, rel=1e-12)
        assert max(p.requests for p in parts) - min(p.requests for p in parts) <= 1
        assert all(p.start == window.start and p.duration == window.duration for p in parts)


def test_remainders_rotate_across_windows() -> None:
    # 10 requests over 3 workers: one extra request, handed to a different worker each window.
    extra = [[split_requests(10, w, i, 3) for i in range(3)] for w in range(3)]
    assert extra == [[4, 3, 3], [3, 4, 3], [3, 3, 4]]
    with pytest.raises(ValueError):
        split_requests(10, 0, 3, 3)


def test_fractional_rates_round_per_window() -> None:
    plan = build_plan(load_scenario_text(variant("{rate: 500, window: 30s}", "{rate: 0.5, window: 3s}"), "x"), t0=0)
    assert plan.windows[-1].requests == 2  # round(1.5) -> banker's rounding, documented as round()
    assert sum(s[-1].requests for s in (plan.share(i, 4) for i in range(4))) == 2


@pytest.mark.parametrize(
    ("offset", "index"), [(-0.001, None), (0, 0), (14.999, 0), (15, 1), (59.9, 3), (60, 4), (89.99, 4), (90, None)]
)
def test_window_at(plan, offset: float, index: int | None) -> None:
    w = plan.window_at(T0 + offset)
    assert (w.index if w else None) == index


def test_plan_is_pure(plan) -> None:
    again = build_plan(load_scenario_text(BASE, "base.yaml"), t0=T0)
    assert again == plan
    assert build_plan(load_scenario_text(BASE, "base.yaml"), t0=0).windows[1].start == 15
