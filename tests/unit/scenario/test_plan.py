"""Plan: windows laid end to end from T0, the pacer's rounding, window lookup."""

from __future__ import annotations

import itertools

import pytest

from dynlocust.run.pacing import split_segment
from dynlocust.scenario import build_plan, load_scenario_text
from dynlocust.scenario.plan import Plan
from tests.unit.scenario._base import BASE, variant

T0 = 1_800_000_000.0


@pytest.fixture(scope="module")
def plan() -> Plan:
    return build_plan(load_scenario_text(BASE, "base.yaml"), t0=T0)


def test_windows_are_contiguous_and_absolute(plan: Plan) -> None:
    w = plan.windows
    assert [x.index for x in w] == [0, 1, 2, 3, 4]
    assert [x.rate for x in w] == [100, 200, 300, 400, 500]
    assert [x.start - T0 for x in w] == [0, 15, 30, 45, 60]
    assert [x.phase for x in w] == ["ramp-0"] * 4 + ["steps-1"]
    assert all(a.end == b.start for a, b in itertools.pairwise(w))
    assert plan.total_duration == 90 and plan.end == T0 + 90
    assert plan.total_requests == 15 * (100 + 200 + 300 + 400) + 30 * 500


def test_fractional_rates_round_per_window() -> None:
    plan = build_plan(load_scenario_text(variant("{rate: 500, window: 30s}", "{rate: 0.5, window: 3s}"), "x"), t0=0)
    assert plan.windows[-1].requests == 2  # 1.5 rounds half up, as the pacer does
    half = build_plan(load_scenario_text(variant("{rate: 500, window: 30s}", "{rate: 2.5, window: 1s}"), "x"), t0=0)
    assert half.windows[-1].requests == 3  # round() would say 2 (half to even): the pacer sends 3
    segments = split_segment(4, 0.0, 1.0, 2.5, [1.0] * 4)
    assert sum(segment.count for segment in segments) == half.windows[-1].requests


@pytest.mark.parametrize(
    ("offset", "index"), [(-0.001, None), (0, 0), (14.999, 0), (15, 1), (59.9, 3), (60, 4), (89.99, 4), (90, None)]
)
def test_window_at(plan: Plan, offset: float, index: int | None) -> None:
    w = plan.window_at(T0 + offset)
    assert (w.index if w else None) == index


def test_plan_is_pure(plan: Plan) -> None:
    again = build_plan(load_scenario_text(BASE, "base.yaml"), t0=T0)
    assert again == plan
    assert build_plan(load_scenario_text(BASE, "base.yaml"), t0=0).windows[1].start == 15
