"""Ceiling searches meeting faults caused for real (127.0.0.1 only): an endpoint whose requests hang
(tests/support/faultserver.py), and a worker killed with SIGKILL in the middle of a fleet's search.

A search plans its undecided probes a day ahead, so the watchdog holds it to its longest course instead
(`dynlocust.run.search.longest_search`): a hung search ends within that bound, and says why with its exit code.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from dynlocust.exit_codes import ExitCode
from dynlocust.plugin.safety import RUN_MARGIN_MIN
from dynlocust.run.search import longest_search
from dynlocust.scenario import load_scenario
from tests.conftest import FaultServer
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
