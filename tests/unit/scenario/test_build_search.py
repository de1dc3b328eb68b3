"""A `search` phase: its settings, and the impossible ones refused with the file, line and key path."""

from __future__ import annotations

import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.scenario.loader import load_scenario_text
from dynlocust.scenario.model import ScenarioError
from dynlocust.scenario.scale import Scaling, apply

BASE = """\
name: s
target: {local: {capacity_scale: 0.05, time_scale: 4}}
tables: [{name: t, partition_key: pk, seed: {items: 100}}]
workload: {operations: [{op: put}, {op: get}]}
phases:
  - search: %s
"""


def test_a_search_with_its_defaults_and_op() -> None:
    sc = load_scenario_text(BASE % "{from: 50, precision: 0.03, op: write}", "s.yaml")
    search = sc.search
    assert search is not None and (search.factor, search.max_windows, search.cooldown) == (1.5, 15, 0.0)
    assert search.window == 50.0  # 1.5 x the shortest, 4 x 0.25 s / 0.03 = 33.3 s, rounded up
    assert [o.op for o in sc.workload.operations] == ["put"]  # op: write keeps the writes
    assert len(sc.steps) == 15 and sc.steps[2].rate == pytest.approx(50 * 1.5**2)  # planned at their highest


@pytest.mark.parametrize(
    ("search", "message"),
    [
        ("{from: 50, factor: 1}", "s.yaml:6: phases[0].search.factor: expected a growth factor above 1"),
        ("{from: 50, factor: 0.5}", "phases[0].search.factor: expected a growth factor above 1"),
        ("{from: 50, precision: 0}", "phases[0].search.precision: expected a fraction above 0"),
        ("{from: 50, precision: 1.5}", "phases[0].search.precision: expected a fraction above 0 and below 1"),
        ("{from: 50, window: 10s}", "phases[0].search.window: expected a probe window of at least 50 s"),
        ("{from: 50, op: scan}", "phases[0].search.op: unknown value 'scan'"),
        ("{from: 50, max_windows: 1}", "phases[0].search.max_windows: expected at least 2 probes"),
        ("{factor: 2}", "phases[0].search"),
    ],
)
def test_impossible_settings_are_refused_with_the_key_path(search: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_scenario_text(BASE % search, "s.yaml")


def test_a_search_is_a_scenarios_only_phase() -> None:
    text = BASE % "{from: 50}" + "  - hold: {rate: 10, duration: 10s}\n"
    with pytest.raises(ScenarioError, match="a search is a scenario's only phase"):
        load_scenario_text(text, "s.yaml")


def test_a_workload_without_the_probed_kind_is_refused() -> None:
    text = (BASE % "{from: 50, op: read}").replace("[{op: put}, {op: get}]", "[{op: put}]")
    with pytest.raises(ScenarioError, match="expected a workload with read operations to probe"):
        load_scenario_text(text, "s.yaml")


def test_scaling_a_search_scales_it_and_refuses_a_window_the_burst_would_fill() -> None:
    sc = load_scenario_text(BASE % "{from: 100, window: 200s, cooldown: 10s, precision: 0.03}", "s.yaml")
    scaled = apply(sc, Scaling(rate=0.5, duration=0.5))  # the clock follows the windows: time scale x2
    assert scaled.search is not None and (scaled.search.start, scaled.search.window) == (50.0, 100.0)
    assert scaled.search.cooldown == 5.0
    with pytest.raises(ConfigurationError, match="--duration-scale: expected probe windows of at least"):
        apply(sc, Scaling(duration=0.01, time=1.0))
