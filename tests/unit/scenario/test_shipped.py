"""Every shipped scenario loads, matches the JSON Schema, and plans what its description promises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dynlocust.scenario import SCHEMA_PATH, LocalTarget, build_plan, load_scenario, validate_file

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))


def test_the_shipped_set_is_there() -> None:
    names = {p.stem for p in SHIPPED}
    assert {"quickstart", "write-ceiling", "read-ceiling", "growth-soak", "hot-key", "sharded-reads"} <= names
    assert "gsi-back-pressure" in names
    assert "warm-throughput" in names


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_validates(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.name == path.stem
    summary = validate_file(path)
    assert sc.name in summary and "requests planned" in summary
    plan = build_plan(sc, t0=0)
    if sc.limits.max_requests is not None:
        assert sc.limits.max_requests >= plan.total_requests
    if not sc.is_local:
        assert sc.limits.max_cost_dollars is not None


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenario_matches_schema(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text())))
    assert not errors, [e.message for e in errors]


def test_quickstart_ramps_past_the_local_ceiling_in_about_a_minute() -> None:
    sc = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    plan = build_plan(sc, t0=0)
    assert sc.is_local and isinstance(sc.target, LocalTarget)
    ceiling = sc.target.capacity_scale * 4000
    assert ceiling == pytest.approx(100)
    assert [w.rate for w in plan.windows] == [50, 100, 150, 200]
    assert plan.windows[0].rate < ceiling < plan.windows[-1].rate
    assert plan.total_duration == 60


def test_write_ceiling_and_soak_shapes() -> None:
    wc = build_plan(load_scenario(ROOT / "scenarios" / "write-ceiling.yaml"), t0=0)
    assert [w.rate for w in wc.windows] == [1000 * k for k in range(1, 9)]
    assert {w.duration for w in wc.windows} == {60}
    soak = build_plan(load_scenario(ROOT / "scenarios" / "growth-soak.yaml"), t0=0)
    assert soak.total_duration == 34 * 60 and {w.rate for w in soak.windows} == {8000}


def test_warm_throughput_offers_its_claim_from_the_first_window_on_a_pre_warmed_table() -> None:
    sc = load_scenario(ROOT / "scenarios" / "warm-throughput.yaml")
    (table,) = sc.tables
    assert table.billing == "on_demand" and table.warm_throughput is not None and not table.gsis
    assert table.warm_throughput.write > 4000  # above a new on-demand table's own: the claim says something
    plan = build_plan(sc, t0=0)
    assert sc.workload.item_size <= 1024  # one write unit per put: writes/s are write units/s
    assert plan.windows[0].rate == table.warm_throughput.write  # at once, on the fresh table
