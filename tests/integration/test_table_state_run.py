"""The table's state beside each window, in a real run against the real endpoint: an UpdateTable issued mid-run
shows next to the window in which it happened (results, report), and a warm throughput the table cannot take at
once is said not to hold, with DescribeTable's WarmThroughput printed before and after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from tests.support.runs import ROOT
from tests.support.scenarios import scenario_yaml, write_scenario

# A provisioned table of 5 write units/s claims a warm throughput of 100: offered 30 writes/s from the first
# second, it throttles in window 1 (its provisioned capacity, not its warm throughput, is what it serves). The
# test raises it to 60 write units/s once window 1 has closed: the later windows take the load.
SCENARIO = scenario_yaml(
    "state",
    "steps: [{rate: 30, window: 3s}, {rate: 30, window: 3s}, {rate: 30, window: 8s}]",
    tables="[{name: t, partition_key: {name: pk, type: S}, billing: {provisioned: {read: 5, write: 5}}, "
    "warm_throughput: {read: 100, write: 100}}]",
    concurrency=8,
)


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint().start()
    try:
        yield ep
    finally:
        ep.stop()


def _records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def _provisioned(window: dict[str, Any]) -> dict[str, int]:
    return dict(window["table_state"]["tables"]["t"]["provisioned"])


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_an_update_table_mid_run_shows_beside_its_window_and_a_warm_claim_not_taken_fails(
    endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    scenario = write_scenario(tmp_path, SCENARIO)
    results = tmp_path / "runs" / "mid" / "results.jsonl"
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--host", endpoint.url,
            "--results-dir", str(tmp_path / "runs"), "--run-id", "mid", "--metrics-port", "0"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        until = time.monotonic() + 120
        while not any(r["type"] == "window" for r in _records(results)):
            assert proc.poll() is None and time.monotonic() < until, "window 1 never closed"
            time.sleep(0.05)
        client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=1)
        raised = {"ReadCapacityUnits": 60, "WriteCapacityUnits": 60}
        client.update_table(TableName="t-mid", ProvisionedThroughput=raised)
        stdout, stderr = proc.communicate(timeout=120)
    records = _records(results)
    run, windows, end = records[0], [r for r in records if r["type"] == "window"], records[-1]
    assert end["type"] == "end" and proc.returncode == ExitCode.SLO_FAILED, stderr[-3000:]

    # every window records the state at its end; the change shows at the first window after the UpdateTable
    assert run["table_state"]["tables"]["t"]["provisioned"] == {"read": 5, "write": 5}
    assert _provisioned(windows[0]) == {"read": 5, "write": 5}
    assert _provisioned(windows[-1]) == {"read": 60, "write": 60}
    changed = next(w["index"] for w in windows if _provisioned(w) == {"read": 60, "write": 60})
    assert changed >= 1
    state = windows[changed]["table_state"]["tables"]["t"]
    assert state["billing"] == "PROVISIONED" and state["status"] == "ACTIVE" and state["items"] > 0
    assert state["warm"] == {"read": 100, "write": 100, "status": "ACTIVE"}
    summary = (tmp_path / "runs" / "mid" / "report" / "summary.md").read_text()
    (row,) = [line for line in summary.splitlines() if line.startswith(f"| {changed + 1} | t | ")]
    assert row.startswith(f"| {changed + 1} | t | provisioned 60/60, warm 100/100 r/w, ACTIVE, ")
    assert row.endswith(" | provisioned 5/5 -> 60/60 |") and summary.count("5/5 -> 60/60") == 1
    html = (tmp_path / "runs" / "mid" / "report" / "report.html").read_text()
    assert 'id="table-state"' in html and "provisioned 5/5 -&gt; 60/60" in html

    # the warm claim: throttled at the provisioned rate in window 1, said so, failing the run like an SLO
    (finding,) = end["warm_throughput"]
    assert finding["outcome"] == "did not hold" and windows[0]["summary"]["throttled"] > 0
    assert finding["took_units_per_s"] < 0.5 * finding["claimed_units_per_s"]
    assert "the warm throughput claim of 100 write units/s did not hold" in end["conclusion"]["text"]
    assert f"SLO failed: warm throughput: {finding['text']}" in stdout
    assert (
        "warm throughput of table t (DescribeTable): before the run 100/100 read/write units/s (ACTIVE); "
        "after it 100/100 read/write units/s (ACTIVE)"
    ) in stdout
