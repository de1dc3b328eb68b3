"""The estimate `dynlocust validate` prints: units from item sizes, money through `dynlocust.cost`."""

from __future__ import annotations

import pytest

from dynlocust.cost import US_EAST_1, dollars, provisioned_dollars
from dynlocust.scenario import describe, load_scenario, load_scenario_text
from dynlocust.scenario.catalog import SHIPPED_DIR
from dynlocust.scenario.estimate import estimate
from tests.unit.scenario._base import BASE


def test_write_ceiling_plans_one_write_unit_per_1kb_put() -> None:
    est = estimate(load_scenario(SHIPPED_DIR / "write-ceiling.yaml"))
    requests = sum(rate * 60 for rate in range(1000, 8001, 1000))
    assert (est.requests, est.read_units, est.write_units, est.seed_write_units) == (requests, 0, requests, 0)
    assert est.on_demand_dollars == pytest.approx(requests * 0.625 / 1e6)  # the scenario's own comment: ~$1.35
    assert est.duration == 480
    assert (est.peak_read_per_second, est.peak_write_per_second) == (0, 8000)
    assert est.provisioned_dollars == pytest.approx(8000 * US_EAST_1.write_unit_hour)  # one started hour


def test_reads_gsis_and_seeding_count_as_the_service_charges_them() -> None:
    # BASE: 9 puts of 1 KB into a table with one GSI (2 WRU each), 1 eventually consistent get of a 512 B item
    # (0.5 RRU); 100 seeded 512 B items (2 WRU each with the GSI)
    scenario = load_scenario_text(BASE)
    est = estimate(scenario)
    assert est.write_units == pytest.approx(est.requests * 0.9 * 2)
    assert est.read_units == pytest.approx(est.requests * 0.1 * 0.5)
    assert est.seed_write_units == 200
    assert est.on_demand_dollars == dollars(est.read_units, est.write_units + 200)


def test_provisioned_capacity_is_billed_by_the_started_hour() -> None:
    assert provisioned_dollars(100, 10, 1) == provisioned_dollars(100, 10, 3600)
    assert provisioned_dollars(100, 10, 3601) == pytest.approx(2 * provisioned_dollars(100, 10, 3600))
    assert provisioned_dollars(100, 10, 0) == 0


def test_validate_prints_the_estimate() -> None:
    text = describe(load_scenario(SHIPPED_DIR / "write-ceiling.yaml"))
    assert "  estimate: 2,160,000 requests, 0 read units, 2,160,000 write units; 8m of windows plus set-up" in text
    assert "  cost on AWS: $1.3500 on demand; provisioned for the peak (0 RCU, 8,000 WCU): $5.2000" in text
