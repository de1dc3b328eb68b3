"""The shipped ceiling searches, shrunk, against the embedded endpoint as a user runs them (`dynlocust run`).

`--local --rate-scale 0.05 --duration-scale 0.1` runs the endpoint at capacity_scale 0.05 and time scale 10: a new
on-demand table's write ceiling is 4,130 x 0.05 = 206.5 writes/s and its read ceiling 12,000 x 4,130/4,000 x
0.05 = 619.5 strongly consistent reads/s (docs/local-endpoint-capacity.md). The search must bracket the model's
ceiling within 3 % in fewer windows than a fixed ramp from the same start, stepping by that bracket, takes to cross
it; a fleet that cannot offer the probes must end with exit 8 and no ceiling set by DynamoDB.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode
from tests.support.runs import ROOT, RunResult, run_dynlocust

SHRINK = ("--local", "--rate-scale", "0.05", "--duration-scale", "0.1")
WRITE_CEILING = 4130.0 * 0.05
READ_CEILING = 12000.0 * 4130.0 / 4000.0 * 0.05


def ceiling_record(result: RunResult) -> dict[str, Any]:
    found = [r for r in result.records if r["type"] == "ceiling"]
    assert len(found) == 1, result.stdout[-3000:] + result.stderr[-3000:]
    return found[0]


def fixed_ramp_windows(start: float, ceiling: float, step: float) -> int:
    """Windows a ramp from `start` in steps of `step` runs to cross `ceiling`: up to its last clean step, then one."""
    return math.floor((ceiling - start) / step) + 2


def check_search(result: RunResult, ceiling: float, start: float) -> dict[str, Any]:
    record = ceiling_record(result)
    assert result.returncode == ExitCode.PASSED, result.stdout[-3000:] + result.stderr[-3000:]
    assert record["limited_by"] == "dynamodb" and record["stopped"] == "precision"
    assert record["low"] <= ceiling <= record["high"], record
    assert (record["high"] - record["low"]) / record["low"] <= 0.03, record
    width = record["high"] - record["low"]
    ramp = fixed_ramp_windows(start, ceiling, width)
    assert record["windows"] == len(result.windows) < ramp, (record["windows"], ramp)
    assert result.end["conclusion"]["text"].startswith("DynamoDB's ")
    return record


@pytest.mark.slow
def test_a_write_search_brackets_the_models_ceiling(tmp_path: Path) -> None:
    result = run_dynlocust("find-write-ceiling", tmp_path, *SHRINK, timeout=420)
    record = check_search(result, WRITE_CEILING, 1000 * 0.05)
    assert record["operation"] == "write" and record["reasons"] == ["TableWriteKeyRangeThroughputExceeded"]
    assert "DynamoDB's write ceiling for ceiling is " in result.stdout


@pytest.mark.slow
def test_a_read_search_brackets_the_models_read_ceiling(tmp_path: Path) -> None:
    result = run_dynlocust("find-read-ceiling", tmp_path, *SHRINK, timeout=420)
    record = check_search(result, READ_CEILING, 4000 * 0.05)
    assert record["operation"] == "read" and record["reasons"] == ["TableReadKeyRangeThroughputExceeded"]


@pytest.mark.slow
def test_a_starved_fleet_ends_inconclusive_and_names_the_rate_it_could_not_offer(tmp_path: Path) -> None:
    """One user against a table far above it: a client limit, never the table's ceiling."""
    scenario = tmp_path / "starved.yaml"
    text = (ROOT / "scenarios" / "find-write-ceiling.yaml").read_text()
    scenario.write_text(text.replace("concurrency: 200", "concurrency: 1").replace("from: 1000", "from: 4000"))
    result = run_dynlocust(scenario, tmp_path, "--local", "--duration-scale", "0.1", timeout=300)
    assert result.returncode == ExitCode.INCONCLUSIVE, result.stdout[-3000:] + result.stderr[-3000:]
    record = ceiling_record(result)
    assert record["limited_by"] == "client" and record["stopped"] == "client-bound", record
    assert record["rate"] == record["probes"][-1]["rate"]
    assert "could not offer" in result.stdout
