"""The warm-throughput check: took it at once, throttled below it, or not tested, judged on the first window."""

from __future__ import annotations

import pytest

from dynlocust.observe.warm_check import check, claims, described, sentence
from dynlocust.run.tally import WindowStats
from dynlocust.scenario import load_scenario_text
from dynlocust.scenario.model import Scenario
from tests.support.tally import count_outcome


def _scenario(target: str = "remote", extra_ops: str = "") -> Scenario:
    return load_scenario_text(
        f"""\
name: warm
target: {target}
tables:
  - {{name: w, partition_key: {{name: pk, type: S}}, warm_throughput: {{read: 12000, write: 8000}}}}
  - {{name: cold, partition_key: {{name: pk, type: S}}}}
workload:
  item_size: 1KB
  operations: [{{op: put, table: w, label: puts}}, {{op: put, table: cold, label: cold puts}}{extra_ops}]
phases: [{{hold: {{rate: 8000, duration: 20s, window: 10s}}}}]
limits: {{max_requests: 200000, max_cost_dollars: 1}}
""",
        "warm.yaml",
    )


def _first_window(accepted: int, throttled: int = 0, *, label: str = "puts", at: float = 3.0) -> WindowStats:
    """Window 1 (10 s from t=100) with `accepted` 1-unit writes of `label`, then `throttled` refused at `at` s."""
    stats = WindowStats(0, 100.0, 10.0, target_rate=8000, bin_seconds=5.0)
    for i in range(accepted):
        count_outcome(stats, at=100.0 + 10.0 * i / max(accepted, 1), kind="ok", latency=0.001,
                      latency_from_intended=0.001, write_units=1.0, operation=label)  # fmt: skip
    for _ in range(throttled):
        count_outcome(stats, at=100.0 + at, kind="throttled", code="ThrottlingException", latency=0.001,
                      latency_from_intended=0.001, operation=label)  # fmt: skip
    return stats


def test_claims_are_the_tables_warm_throughput_for_each_kind_its_operations_spend() -> None:
    (claim,) = claims(_scenario())
    assert (claim.table, claim.kind, claim.units, claim.scale, claim.labels) == ("w", "write", 8000.0, 1.0, ("puts",))
    gets = ", {op: get, table: w, label: gets, keys: {keyspace: 100}}"
    local = claims(_scenario("{local: {capacity_scale: 0.01}}", gets))
    assert [(c.kind, c.effective, c.labels) for c in local] == [("write", 80.0, ("puts",)), ("read", 120.0, ("gets",))]


def test_a_table_that_took_its_claim_at_once_holds() -> None:
    (found,) = check(_scenario(), _first_window(80_000))
    assert found.outcome == "holds" and found.failure is None
    assert found.text == "table w took 8,000 write units/s at once: warm throughput holds (its claim: 8,000 write " \
                         "units/s)"  # fmt: skip


def test_a_table_throttled_below_its_claim_did_not_hold_and_fails_the_run() -> None:
    (found,) = check(_scenario(), _first_window(41_300, throttled=38_700, at=0.9))
    assert found.outcome == "did not hold"
    assert found.took == pytest.approx(4130) and found.throttled_after_s == pytest.approx(0.9)
    assert found.text == (
        "table w throttled at 4,130 write units/s after 0.9 s: the warm throughput claim of 8,000 write units/s "
        "did not hold"
    )
    assert found.failure == f"warm throughput: {found.text}"
    assert sentence([found]) == f"Warm throughput: {found.text}."


def test_throttles_of_another_table_do_not_count_against_the_claim() -> None:
    merged = _first_window(80_000)
    merged.merge(_first_window(0, throttled=500, label="cold puts"))
    (found,) = check(_scenario(), merged)
    assert found.outcome == "holds"


def test_a_first_window_that_offered_less_than_the_claim_did_not_test_it() -> None:
    (found,) = check(_scenario(), _first_window(20_000))
    assert found.outcome == "not tested" and found.failure is None
    assert "first window offered 2,000 write units/s, under its warm throughput of 8,000" in found.text
    assert check(_scenario(), None)[0].outcome == "not tested"  # no first window at all


def test_a_scaled_run_is_judged_at_the_claim_times_the_capacity_scale() -> None:
    (found,) = check(_scenario("{local: {capacity_scale: 0.01}}"), _first_window(800))
    assert found.outcome == "holds"
    assert found.text.endswith("(its claim: 8,000/s x0.01 capacity scale = 80 write units/s)")


def test_a_scenario_without_a_claim_has_no_check() -> None:
    scenario = load_scenario_text(
        "name: c\ntables: [{name: t, partition_key: pk}]\nworkload: {operations: [{op: put}]}\n"
        "phases: [{steps: [{rate: 1, window: 1s}]}]\n",
        "c.yaml",
    )
    assert claims(scenario) == [] and check(scenario, _first_window(10)) == []
    assert described(scenario, None, None) == []


def test_describe_table_warm_throughput_before_and_after_in_words() -> None:
    warm = {"read": 12000, "write": 8000, "status": "ACTIVE"}
    before = {"at": 1.0, "tables": {"w": {"warm": warm}}}
    after = {"at": 2.0, "tables": {"w": {"error": "no answer within the deadline of 8 s"}}}
    (line,) = described(_scenario(), before, after)
    assert line == (
        "warm throughput of table w (DescribeTable): before the run 12,000/8,000 read/write units/s (ACTIVE); "
        "after it not read (no answer within the deadline of 8 s)"
    )
