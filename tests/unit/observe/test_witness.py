"""observe.witness: the client's per-minute ranges from a results file's bins, seeding's minutes, the tolerance, and
the one line a refused GetMetricData gets."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from dynlocust.observe import witness as w

MINUTE = 1_800_000_000  # a whole minute (divisible by 60)


def records(t0: float, bins: list[dict[str, Any]], *, seed: int = 0, width: float = 5.0) -> list[dict[str, Any]]:
    table: dict[str, Any] = {"name": "items", "gsis": []}
    if seed:
        table["seed"] = {"items": seed, "item_size": 1024}
    duration = width * len(bins)
    return [
        {
            "type": "run",
            "run_id": "r1",
            "t0": t0,
            "tables": {"items": "items-r1"},
            "shape": {"tables": [table]},
            "windows": [{"index": 0, "start": t0, "duration": duration, "rate": 1, "phase": "p"}],
        },
        {"type": "window", "index": 0, "start": t0, "duration": duration, "bin_seconds": width, "bins": bins},
    ]


def a_bin(write: float, throttled: int = 0) -> dict[str, Any]:
    throttled_by = {"ThrottlingException|TableWriteKeyRangeThroughputExceeded": throttled} if throttled else {}
    return {"write_units": write, "read_units": 0.0, "throttled_by": throttled_by}


def test_a_bin_across_a_minutes_edge_makes_a_range_in_both_minutes() -> None:
    recs = records(MINUTE + 50, [a_bin(10), a_bin(20, throttled=3), a_bin(40)])  # 50-55, 55-60, 60-65: none straddles
    run = w.run_tables(recs)
    minutes = w.client_minutes(recs, run)
    assert minutes[MINUTE].client["ConsumedWriteCapacityUnits"] == w.Range(30, 30)
    assert minutes[MINUTE].client["WriteKeyRangeThroughputThrottleEvents"] == w.Range(3, 3)
    assert minutes[MINUTE + 60].client["ConsumedWriteCapacityUnits"] == w.Range(40, 40)

    straddling = records(MINUTE + 57, [a_bin(10), a_bin(20)])  # 57-62 straddles, 62-67 does not
    minutes = w.client_minutes(straddling, w.run_tables(straddling))
    assert minutes[MINUTE].client["ConsumedWriteCapacityUnits"] == w.Range(0, 10)
    assert minutes[MINUTE + 60].client["ConsumedWriteCapacityUnits"] == w.Range(20, 30)


def test_seeding_minutes_are_shown_not_compared_and_the_first_windows_minute_allows_for_seeding() -> None:
    recs = records(MINUTE + 50, [a_bin(10, throttled=1), a_bin(10), a_bin(10)], seed=100)
    run = w.run_tables(recs)
    assert run.seed_units == 100
    cloudwatch = {
        MINUTE - 60: {"ConsumedWriteCapacityUnits": 70.0, "WriteThrottleEvents": 40.0},  # seeding only
        MINUTE: {"ConsumedWriteCapacityUnits": 50.0, "WriteThrottleEvents": 9.0},  # 20 + 30 of seeding, its throttles
        MINUTE + 60: {"ConsumedWriteCapacityUnits": 10.0},
    }
    minutes = w.compare(w.client_minutes(recs, run), cloudwatch, run)
    assert [m.phase for m in minutes] == ["seeding", "windows + seeding", "windows"]
    assert minutes[1].client["ConsumedWriteCapacityUnits"] == w.Range(20, 120)
    assert math.isinf(minutes[1].client["WriteThrottleEvents"].high)
    assert w.disagreements(minutes) == []
    text = w.render(run, minutes, [])
    assert "agree within the tolerance in all 2 minutes" in text and "1 or more | 9" in text


@pytest.mark.parametrize(("seen", "disagrees"), [(100.0, False), (102.0, False), (103.0, True), (97.0, True)])
def test_the_tolerance_is_two_units_or_two_percent(seen: float, disagrees: bool) -> None:
    recs = records(MINUTE, [a_bin(50), a_bin(50)])
    run = w.run_tables(recs)
    minutes = w.compare(w.client_minutes(recs, run), {MINUTE: {"ConsumedWriteCapacityUnits": seen}}, run)
    found = w.disagreements(minutes)
    assert bool(found) is disagrees
    if found:
        assert found[0].line().endswith(f"({seen - 100:+g})")


def test_a_refused_get_metric_data_is_one_line() -> None:
    recs = records(MINUTE, [a_bin(1)])
    client = boto3.client(
        "cloudwatch", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )  # the refusal needs AWS's IAM: stubbed
    with Stubber(client) as stub:
        stub.add_client_error("get_metric_data", "AccessDenied", "User is not authorized", 403)
        with pytest.raises(w.WitnessError) as exc:
            w.read_cloudwatch(client, w.run_tables(recs))
    assert str(exc.value) == (
        "CloudWatch refused GetMetricData (AccessDenied): these credentials need the cloudwatch:GetMetricData "
        "permission"
    )


def test_queries_cover_each_table_and_gsi_with_every_metric() -> None:
    recs = records(MINUTE, [a_bin(1)])
    recs[0]["shape"]["tables"][0]["gsis"] = [{"name": "by-owner"}]
    queries = w.queries(w.run_tables(recs))
    assert len(queries) == 2 * len(w.METRICS) and len({q["Id"] for q in queries}) == len(queries)
    assert {tuple(d["Value"] for d in q["MetricStat"]["Metric"]["Dimensions"]) for q in queries} == {
        ("items-r1",),
        ("items-r1", "by-owner"),
    }


def test_the_report_has_a_witness_section_and_chart_when_a_witness_ran(tmp_path: Path) -> None:
    from dynlocust.observe.report.build import build_reports
    from tests.support.results_files import Window, write_results

    results = write_results(tmp_path / "r1" / "results.jsonl", [Window("p", rate=10, throttled=2)])
    built = build_reports(results)
    assert "CloudWatch witness" not in built.files["html"][0].read_text()  # no witness ran

    recs = records(MINUTE + 50, [a_bin(10), a_bin(20), a_bin(40)])
    run = w.run_tables(recs)
    minutes = w.compare(w.client_minutes(recs, run), {MINUTE: {"ConsumedWriteCapacityUnits": 80.0}}, run)
    minutes.append(w.totals(recs, run, minutes))
    found = w.disagreements(minutes)
    (results.parent / w.WITNESS_FILE).write_text(json.dumps(w.to_dict(run, minutes, found)))
    page = build_reports(results).files["html"][0].read_text()
    section = page[page.index("<h2>CloudWatch witness</h2>") :]
    assert '<svg id="witness-chart"' in section and section.count("<rect") == 2 * 3 * len(w.CLIENT_FIGURE)
    assert '<td class="text">total</td>' in section
    assert next(d for d in found if d.minute == MINUTE).line() in section.replace("&#x27;", "'")
    assert 'id="witness-disagreements"' in section
