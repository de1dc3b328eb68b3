"""The capacity plan's figures, checked against a hand computation from the dated price table."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.cost import US_EAST_1
from dynlocust.errors import ConfigurationError
from dynlocust.observe.plan import build_plan, parse_rate


def records(*, limited_by: str = "dynamodb", reasons: tuple[str, ...] = ("TableWriteKeyRangeThroughputExceeded",),
            keys: dict[str, Any] | None = None, write_units: float = 2000.0) -> list[dict[str, Any]]:  # fmt: skip
    """A search's results: two windows of 1,000 accepted ~1.2 KB puts (2 write units each) and a table state."""
    state = {"tables": {"orders": {"billing": "PAY_PER_REQUEST", "warm": {"read": 12000, "write": 4000}}}}
    window = {"type": "window", "summary": {"accepted": 1000, "read_units": 0.0, "write_units": write_units}}
    return [
        {"type": "run", "shape": {"workload": {"keys": keys or {"keyspace": None}, "operations": []}}},
        {**window, "table_state": state},
        {**window, "table_state": state},
        {"type": "ceiling", "operation": "write", "low": 2040.0, "high": 2090.0, "rate": 2065.0,
         "limited_by": limited_by, "reasons": list(reasons), "resource": "orders", "windows": 9,
         "stopped": "precision", "window_s": 150.0, "capacity_scale": None},
    ]  # fmt: skip


def test_the_plan_at_a_target_is_what_the_price_table_gives_by_hand() -> None:
    plan = build_plan(records(), parse_rate("8,000/s"))
    # 2 write units per request (4,000 units / 2,000 accepted) at 8,000 requests/s
    assert plan.per_request.write == 2.0 and plan.per_request.read == 0.0
    assert plan.at_ceiling is not None and plan.at_ceiling.write == 2 * 2065.0
    assert plan.at_target.write == 16_000.0
    assert plan.on_demand_max.write == 20_000  # + 25 %
    assert (plan.warm.read, plan.warm.write) == (12_000, 16_000)  # the table's own 12,000 reads stay
    assert plan.provisioned.write == 22_858  # ceil(16,000 / 0.7)
    assert plan.cost_per_million == pytest.approx(2 * 0.625)
    assert plan.on_demand_month == pytest.approx(8000 * 30 * 86400 * 2 * 0.625 / 1e6)  # $25,920.00
    assert plan.provisioned_month == pytest.approx(22_858 * 0.00065 * 720)  # $10,697.54
    assert (US_EAST_1.write_per_million, US_EAST_1.write_unit_hour) == (0.625, 0.00065)  # what the figures used
    text = "\n".join(plan.lines())
    assert "OnDemandThroughput maximum 0 read / 20,000 write units/s" in text
    assert "$25,920.00 on demand, $10,697.54 provisioned" in text
    assert f"prices as of {US_EAST_1.as_of}" in text and plan.caveats == []


def test_the_caveats_the_run_can_see() -> None:
    client = build_plan(records(limited_by="client"), 100.0)
    assert any("the client, not DynamoDB" in c for c in client.caveats)
    hot = build_plan(records(keys={"fraction": 0.01, "traffic": 0.9, "keyspace": 100}), None)
    assert any(c.startswith("hot keys") for c in hot.caveats)
    gsi = build_plan(records(reasons=("IndexWriteKeyRangeThroughputExceeded",)), None)
    assert any(c.startswith("GSI back-pressure") for c in gsi.caveats)


def test_bad_targets_and_results_say_what_was_expected() -> None:
    with pytest.raises(ConfigurationError, match="--target: expected a rate such as 8000/s, found 'fast'"):
        parse_rate("fast")
    with pytest.raises(ConfigurationError, match="a `ceiling` record"):
        build_plan([{"type": "run"}], 10.0)


def test_the_units_each_table_and_gsi_sustained_at_the_ceiling_by_hand() -> None:
    """Per window, 800 puts of 2 write units on table orders (TOTAL: its GSI's share within) and 200 queries of
    0.5 read units through its GSI by_customer: per accepted request that is 1,600 / 1,000 = 1.6 write units on
    the table and 100 / 1,000 = 0.1 read units on the index, so at the 2,065/s ceiling 3,304 and 206.5 units/s."""
    base = records()
    operations = [
        {"op": "put", "label": "put", "table": "orders", "index": None},
        {"op": "query", "label": "by-customer", "table": "orders", "index": "by_customer"},
    ]
    base[0]["shape"]["workload"]["operations"] = operations
    state = {"tables": {"orders": {"billing": "PAY_PER_REQUEST", "indexes": {"by_customer": {"status": "ACTIVE"}}}}}
    bins = [
        {"operations": {"put": {"read_units": 0.0, "write_units": 960.0}, "by-customer": {"read_units": 60.0}}},
        {"operations": {"put": {"read_units": 0.0, "write_units": 640.0}, "by-customer": {"read_units": 40.0}}},
    ]
    for window in base[1:3]:
        window.update(summary={"accepted": 1000, "read_units": 100.0, "write_units": 1600.0}, bins=bins,
                      table_state=state)  # fmt: skip
    plan = build_plan(base, None)
    figures = {name: (u.read, u.write) for name, u in plan.by_resource.items()}
    assert figures == {
        "index by_customer of orders": pytest.approx((206.5, 0.0)),
        "table orders": pytest.approx((0.0, 3304.0)),
    }
    assert plan.gsis == ("index by_customer of orders",)
    text = "\n".join(plan.lines())
    assert "sustained at the ceiling by table orders: 0.0 read / 3,304.0 write units/s" in text
    assert "sustained at the ceiling by index by_customer of orders: 206.5 read / 0.0 write units/s" in text
    assert "index by_customer of orders: its write units are within its table's" in text
