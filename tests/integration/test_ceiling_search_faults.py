"""Ceiling searches meeting faults caused for real (127.0.0.1 only): an endpoint whose requests hang
(tests/support/faultserver.py), and a worker killed with SIGKILL in the middle of a fleet's search.

A search plans its undecided probes a day ahead, so the watchdog holds it to its longest course instead
(`dynlocust.run.search.longest_search`): a hung search ends within that bound, and says why with its exit code.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.plugin.safety import RUN_MARGIN_MIN
from dynlocust.run.results import read_results
from dynlocust.run.search import longest_search
from dynlocust.scenario import load_scenario
from dynlocust.scenario.plan import half_up
from tests.conftest import FaultServer
from tests.support.fleet import start_fleet, stop_all
from tests.support.runs import run_dynlocust
from tests.support.scenarios import scenario_yaml, write_scenario

HUNG_DEADLINE = 20.0


def test_a_search_whose_requests_hang_ends_within_its_bound(fault_server: FaultServer, tmp_path: Path) -> None:
    """Every call of the first probe hangs (the server holds it 30 s; the per-call deadline is 20 s): the watchdog
    stops the run, the search stops unjudged, no ceiling is claimed, and the run fails (exit 1) well within the
    bound the watchdog holds a search to (3 probes x (5 s + 20 s) + 20 s + 30 s = 125 s)."""
    text = scenario_yaml(
        "hung-search",
        "search: {from: 10, precision: 0.9, window: 5s, max_windows: 3}",
        target=f"{{endpoint: {fault_server.url}}}",
        transport=None,
        tables="[{name: t, partition_key: {name: pk, type: S}, use_existing: true, existing_table_name: stall}]",
        item_size=100,
        concurrency=20,
        deadline=f"{HUNG_DEADLINE:g}s",
        extra="limits: {max_requests: 1000, max_cost_dollars: 1}\n",
    )
    scenario = write_scenario(tmp_path, text, "hung-search.yaml")
    search = load_scenario(scenario).search
    assert search is not None
    bound = longest_search(search, HUNG_DEADLINE) + HUNG_DEADLINE + RUN_MARGIN_MIN
    started = time.monotonic()
    result = run_dynlocust(
        scenario, tmp_path, run_id="hung", env={"DYNLOCUST_STALL_SECONDS": "1.5"}, timeout=bound + 60
    )
    elapsed = time.monotonic() - started
    assert elapsed < bound, elapsed
    assert result.returncode == ExitCode.FAILED, result.stderr[-3000:]  # its requests hung: failed
    assert result.end["abort_reason"].startswith("worker 0: watchdog: stalled")
    (record,) = [r for r in result.records if r["type"] == "ceiling"]
    assert record["stopped"] == "unjudged" and record["limited_by"] is None and record["rate"] is None, record
    assert json.loads((tmp_path / "hung" / "watchdog.json").read_text())["kind"] == "stall"
    assert "No ceiling found" in result.end["conclusion"]["text"]


KILLED_SEARCH = scenario_yaml(
    "killed-search",
    "search: {from: 150, factor: 1.5, precision: 0.2, window: 5s, max_windows: 8, op: write}",
    target="{local: {capacity_scale: 0.05, time_scale: 4}}",
    transport="fast",
    item_size="1KB",
    concurrency=100,
    deadline="4s",
)
WRITE_CEILING = 4130.0 * 0.05  # the model's, as in test_ceiling_search.py


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity_scale=0.05, time_scale=4).start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.mark.slow
def test_a_worker_killed_mid_search_is_rebalanced_and_the_search_still_finds_the_ceiling(
    endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    """SIGKILL of one of two workers once the first probe has closed: the probe it was playing is partial and
    played again, the survivor takes the whole rate from the next probe on, and the search brackets the model's
    ceiling; the run's exit code says a worker was lost (5)."""
    scenario = write_scenario(tmp_path, KILLED_SEARCH, "killed-search.yaml")
    results = tmp_path / "killed" / "results.jsonl"
    master, workers = start_fleet(scenario, endpoint.url, tmp_path, "killed")
    try:
        deadline = time.monotonic() + 120
        while not (results.exists() and any(r["type"] == "window" for r in read_results(results))):
            assert time.monotonic() < deadline and master.poll() is None, "no probe closed"
            time.sleep(0.2)
        workers[1].send_signal(signal.SIGKILL)
        out, _ = master.communicate(timeout=300)
    finally:
        stop_all([master, *workers])
    records = read_results(results)
    windows = [r for r in records if r["type"] == "window"]
    end = records[-1]
    (record,) = [r for r in records if r["type"] == "ceiling"]
    assert master.returncode == ExitCode.WORKER_LOST, out[-4000:]
    assert record["limited_by"] == "dynamodb" and record["stopped"] == "precision", record
    assert record["low"] <= WRITE_CEILING <= record["high"], record
    (lost,) = end["lost_workers"]
    assert not windows[0]["missing_workers"] and not windows[0]["partial"]
    outcomes = [p["outcome"] for p in record["probes"]]
    gap = [i for i, w in enumerate(windows) if w["missing_workers"]]
    assert gap and all(windows[i]["missing_workers"] == [lost] and outcomes[i] == "partial" for i in gap), outcomes
    for i in gap:  # a partial probe is played again at the same rate, never judged
        assert record["probes"][i + 1]["rate"] == record["probes"][i]["rate"]
    last = windows[-1]  # the survivor carries the whole rate: whole probes again
    assert last["rebalanced"] == [lost] and not last["missing_workers"] and not last["partial"]
    (survivor,) = last["workers"].values()
    assert survivor["offered"] == half_up(last["target_rate"] * last["duration"])
    assert f"re-balanced worker {lost}'s share" in out
