"""Scaling a loaded scenario from the command line: rates, windows, the local endpoint, ceilings and SLO bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.scenario import LocalTarget, RemoteTarget, build_plan, load_scenario, load_scenario_text
from dynlocust.scenario.catalog import SHIPPED_DIR
from dynlocust.scenario.scale import Scaling, apply, digest, factor, load
from tests.unit.scenario._base import BASE

WRITE_CEILING = SHIPPED_DIR / "write-ceiling.yaml"


def test_no_factor_is_the_scenario_itself() -> None:
    scenario = load_scenario_text(BASE)
    assert apply(scenario, Scaling()) is scenario


def test_the_issue_command_shrinks_write_ceiling_to_a_laptop_with_the_same_shape() -> None:
    original = load_scenario(WRITE_CEILING)
    scaled = load(WRITE_CEILING, Scaling(local=True, rate=0.025, duration=0.25))
    assert isinstance(original.target, RemoteTarget)
    assert scaled.target == LocalTarget(capacity_scale=0.025, time_scale=4.0)  # capacity follows rates, clock windows
    assert [s.rate for s in scaled.steps] == [r * 0.025 for r in range(1000, 8001, 1000)]
    assert [s.duration for s in scaled.steps] == [15.0] * 8
    assert scaled.bin == original.bin * 0.25
    assert [slo.applies_below_rate for slo in scaled.slos] == [100.0, None]
    planned = build_plan(scaled, t0=0).total_requests
    assert planned == 13_500
    assert scaled.limits.max_requests is not None and planned <= scaled.limits.max_requests
    assert scaled.limits.max_cost_dollars == pytest.approx(2.00 * 0.025 * 0.25)
    assert (scaled.name, scaled.tables, scaled.workload) == (original.name, original.tables, original.workload)


def test_given_capacity_and_time_factors_multiply_a_local_targets_own() -> None:
    scaled = apply(load_scenario_text(BASE), Scaling(rate=0.5, capacity=2.0, time=3.0))
    assert scaled.target == LocalTarget(capacity_scale=0.05 * 2.0, time_scale=3.0)


def test_the_console_line_names_a_given_capacity_factor() -> None:
    """`--capacity-scale 0.02` on the quickstart multiplies its own 0.025: the line must say a factor was given."""
    assert Scaling(capacity=0.02).describe() == "rates x1, windows x1, capacity x0.02"
    assert Scaling(local=True, rate=0.5, time=3.0).describe() == "--local, rates x0.5, windows x1, clock x3"


@pytest.mark.parametrize(
    ("scaling", "message"),
    [
        (Scaling(capacity=0.5), "--capacity-scale: applies to the embedded endpoint only"),
        (Scaling(time=2.0), "--time-scale: applies to the embedded endpoint only"),
        (Scaling(local=True, duration=0.01), "--duration-scale: expected windows of at least 1 s, found 0.6 s"),
        (
            Scaling(local=True, rate=0.000001),
            f"--rate-scale, --duration-scale: {WRITE_CEILING}: scaled, window 1 (60 s at 0.001/s) plans no request",
        ),
    ],
)
def test_what_cannot_apply_is_one_line_naming_the_option(scaling: Scaling, message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        load(WRITE_CEILING, scaling)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_local_refuses_a_scenario_that_writes_into_an_existing_table() -> None:
    existing = WRITE_CEILING.read_text().replace(
        "    billing: on_demand", "    billing: on_demand\n    use_existing: true\n    existing_table_name: prod"
    )
    scenario = load_scenario_text(existing, "existing.yaml")
    assert scenario.tables[0].use_existing
    with pytest.raises(ConfigurationError, match=r"^--local: expected tables the run creates, found use_existing"):
        apply(scenario, Scaling(local=True))


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan", "inf", "1001", ""])
def test_a_factor_is_a_positive_finite_number(raw: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^--rate-scale: expected a"):
        factor("--rate-scale", raw)


def test_master_and_workers_agree_on_file_and_factors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BASE)
    assert digest(path, Scaling()) == digest(path, Scaling())
    assert digest(path, Scaling(rate=0.5)) != digest(path, Scaling())
    assert digest(path, Scaling(rate=0.5)) != digest(path, Scaling(duration=0.5))
