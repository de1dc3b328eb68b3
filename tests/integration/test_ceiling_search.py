"""The shipped ceiling searches, shrunk, against the embedded endpoint as a user runs them (`dynlocust run`).

`--local --rate-scale 0.05 --duration-scale 0.25` runs the endpoint at capacity_scale 0.05 and time scale 4: a new
on-demand table's write ceiling is 4,130 x 0.05 = 206.5 writes/s and its read ceiling 12,000 x 4,130/4,000 x
0.05 = 619.5 strongly consistent reads/s (docs/local-endpoint-capacity.md). The search must bracket the model's
ceiling within 3 % in fewer windows than a fixed ramp from the same start, stepping by that bracket, takes to cross
it; a fleet that cannot offer the probes must end with exit 8 and no ceiling set by DynamoDB.

Why time scale 4 and not 10: at 10 the endpoint's table burst is 0.085 s of the ceiling, less than the pacer's
0.1 s of allowed lateness, so one hiccup of this shared machine's scheduler bunches enough sends to throttle well
below the ceiling (measured: probes at 180-190/s throttled). At 4 the burst (0.21 s) outlasts any such bunch.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.cost import US_EAST_1
from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.plugin.webui import WINDOW_COLUMNS
from dynlocust.run.results import read_results
from dynlocust.scenario.plan import half_up
from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.integration.test_webui_live import PANEL
from tests.support import webui
from tests.support.fleet import start_fleet, stop_all
from tests.support.runs import ROOT, RunResult, run_dynlocust, start_dynlocust
from tests.support.scenarios import scenario_yaml

LOCUSTFILE = ROOT / "locustfiles" / "scenario.py"

SHRINK = ("--local", "--rate-scale", "0.05", "--duration-scale", "0.25")
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
@pytest.mark.timeout(720)
def test_a_write_and_a_read_search_bracket_the_models_ceilings(tmp_path: Path) -> None:
    """The two searches side by side, each with its own endpoint, as two users on one machine would run them: they
    need about 0.2 and 0.3 of a core, and each is checked as if alone. The write search starts once the read search
    has seeded its table: all its windows, the first one at 50/s included, run beside the read search's steady
    load, never beside its set-up (a window of 37.5 s is client-bound by 1 % of dropped sends, 0.375 s of stall)."""
    read_run = start_dynlocust("find-read-ceiling", tmp_path / "read", *SHRINK)
    runs = [read_run]
    deadline = time.monotonic() + 420
    try:
        read_run.wait_set_up(timeout=120)
        runs.append(start_dynlocust("find-write-ceiling", tmp_path / "write", *SHRINK))
        read, write = (run.result(max(deadline - time.monotonic(), 1)) for run in runs)
    finally:
        stop_all([run.proc for run in runs])
    record = check_search(write, WRITE_CEILING, 1000 * 0.05)
    assert record["operation"] == "write" and record["reasons"] == ["TableWriteKeyRangeThroughputExceeded"]
    assert "DynamoDB's write ceiling for table ceiling is " in write.stdout
    record = check_search(read, READ_CEILING, 4000 * 0.05)
    assert record["operation"] == "read" and record["reasons"] == ["TableReadKeyRangeThroughputExceeded"]
    check_plan_and_report(tmp_path / "read" / "test-run")


def check_plan_and_report(run_dir: Path) -> None:
    """`dynlocust plan` on the read search's results, its figures computed here by hand from the price table: a
    strongly consistent read of a 1 KB item is 1 read unit; at 8,000 reads/s the on-demand maximum is +25 %, the
    provisioned units are over a 70 % target, a month is 30 days."""
    proc = subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", "plan", str(run_dir), "--target", "8000/s"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "units per request: 1.000 read, 0.000 write" in out, out
    provisioned = math.ceil(8000 / 0.7)  # 11,429
    assert "OnDemandThroughput maximum 10,000 read / 0 write units/s" in out
    assert "WarmThroughput before launch 12,000 read / 4,000 write units/s" in out  # a new table's own suffice
    assert f"provisioned: {provisioned:,} read / 0 write units/s" in out
    month = 8000 * 30 * 86400 * US_EAST_1.read_per_million / 1e6  # $2,592.00
    provisioned_month = provisioned * US_EAST_1.read_unit_hour * 720  # $1,069.75
    assert f"${US_EAST_1.read_per_million:,.4f} per million requests on demand" in out
    assert f"${month:,.2f} on demand, ${provisioned_month:,.2f} provisioned" in out
    assert f"prices as of {US_EAST_1.as_of}" in out
    assert "capacity_scale 0.05" in out  # the caveat: these are the embedded endpoint's figures
    html = (run_dir / "report" / "report.html").read_text()
    assert '<table id="probes">' in html and '<ul id="capacity-plan">' in html
    assert "ceiling low/s" in html and "ceiling high/s" in html  # the bracket on the throughput chart


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


FLEET_SEARCH = scenario_yaml(
    "fleet-search",
    "search: {from: 50, factor: 1.5, precision: 0.03, window: 37.5s, op: write}",
    target="{local: {capacity_scale: 0.05, time_scale: 4}}",
    transport="fast",
    item_size="1KB",
    concurrency=100,
    deadline="8s",
)


NEAR_THE_CEILING = "from: 180, factor: 1.2"
"""The fleet's search starts 13 % under the model's ceiling, at the same precision and window as one process's: one
clean probe, one throttled (216/s), then three bisections to 3 %, 5 windows instead of about 10 from 50/s (394 s to
about 200 s). What it proves is the fleet's: each probe is decided from the merged window and played half by each
worker; the climb from far below the ceiling is the one-process tests'."""


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity_scale=0.05, time_scale=4).start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.mark.slow
@pytest.mark.timeout(720)
def test_a_master_and_two_workers_find_the_same_ceiling(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    """The master's search decides each probe from the merged window and hands each worker half of it."""
    scenario = tmp_path / "fleet-search.yaml"
    scenario.write_text(FLEET_SEARCH.replace("from: 50, factor: 1.5", NEAR_THE_CEILING))
    master, workers = start_fleet(scenario, endpoint.url, tmp_path, "fleet")
    try:
        out, _ = master.communicate(timeout=600)
    finally:
        stop_all([master, *workers])
    records = read_results(tmp_path / "fleet" / "results.jsonl")
    (record,) = [r for r in records if r["type"] == "ceiling"]
    assert master.returncode == ExitCode.PASSED, out[-4000:]
    assert record["limited_by"] == "dynamodb" and record["stopped"] == "precision", record
    assert record["low"] <= WRITE_CEILING <= record["high"], record
    assert abs(record["rate"] - WRITE_CEILING) / WRITE_CEILING < 0.03
    windows = [r for r in records if r["type"] == "window"]
    assert len(windows) == record["windows"]
    for window in windows:  # every probe was played by both workers, half each
        assert sorted(window["workers"]) == ["0", "1"] and not window["missing_workers"]
        offered = [share["offered"] for share in window["workers"].values()]
        assert abs(offered[0] - offered[1]) <= 1 and sum(offered) == half_up(window["target_rate"] * 37.5)


WEB_SEARCH = FLEET_SEARCH.replace(
    "from: 50, factor: 1.5, precision: 0.03, window: 37.5s", "from: 150, precision: 0.2, window: 5s"
)
"""Five-second probes from 150/s: 225/s is throttled, and the bracket closes to 20 % around 206.5/s in 4-6 probes."""
SEARCH_SHOT = f"() => ({{header: {webui.HEADER_STATUS}, panel: {PANEL}, rows: {webui.TABLE_ROWS}}})"
TARGET = [key for key, _ in WINDOW_COLUMNS].index("target")


def _follow_search(page: Any, runs: Path, previous: set[str]) -> tuple[str, list[dict[str, Any]]]:
    """Watch the DynamoDB tab, never reloading, until a new run's search has finished: what it showed meanwhile."""
    shots: list[dict[str, Any]] = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        shot = page.evaluate(SEARCH_SHOT)
        panel = shot["panel"] or {}
        if panel.get("run") and panel["run"] not in previous:
            shots.append(shot)
            if shot["header"] == "STOPPED" and panel.get("stage") == "finished":
                return str(panel["run"]), shots
        page.wait_for_timeout(250)
    raise AssertionError(f"the search did not finish on the page: {shots[-3:]}")


def _check_followed(run_id: str, shots: list[dict[str, Any]], runs: Path) -> None:
    """The bracket and the probed rate changed on the page as the search ran, in the order the probes were taken;
    its rows show decided probes only; the tab's last word is the ceiling found."""
    records = [json.loads(line) for line in (runs / run_id / "results.jsonl").read_text().splitlines()]
    (ceiling,) = [r for r in records if r["type"] == "ceiling"]
    end = records[-1]
    statuses = [s["panel"]["status"] for s in shots if "search: ceiling in [" in s["panel"].get("status", "")]
    brackets = list(dict.fromkeys(s.split("search: ")[1].split(", probing")[0].split(", stopped")[0] for s in statuses))
    probing = list(dict.fromkeys(s.split("probing ")[1] for s in statuses if "probing " in s))
    rates = [f"{p['rate']:,.1f}/s" for p in ceiling["probes"]]
    assert len(brackets) >= 3 and len(probing) >= 3, statuses  # it moved at least twice, live
    assert probing == [r for r in rates if r in probing], (probing, rates)  # in the order the probes ran
    assert brackets[0] == "ceiling in [?, ?]" and any("?" not in b for b in brackets), brackets
    for shot in shots:  # no undecided probe shown as a window at a rate of 0
        assert not any(len(r) > TARGET and r[TARGET] == "0" for r in shot["rows"]), (shot["panel"], shot["rows"])
    last = shots[-1]
    assert ceiling["limited_by"] == "dynamodb", ceiling
    assert last["panel"]["conclusion"] == f"conclusion: {end['conclusion']['text']}"
    assert last["panel"]["conclusion"].startswith("conclusion: DynamoDB's write ceiling for table t is ")
    assert [r[0] for r in last["rows"]] == [str(i + 1) for i in range(ceiling["windows"])], last["rows"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_web_uis_dynamodb_tab_follows_the_search_live(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """In a real Chromium, two searches in a row in one page: the tab's bracket and probed rate change while each
    runs, without a reload, and each ends with the ceiling it found."""
    runs = tmp_path / "runs"
    with webui.web_locust(tmp_path, WEB_SEARCH) as web:
        page = browser.new_page()
        try:
            page.goto(web.url + "/")
            ids: set[str] = set()
            for attempt in range(2):
                if attempt:
                    page.get_by_role("button", name="New").click()
                page.get_by_role("button", name="Start", exact=True).click()
                if not attempt:
                    page.get_by_role("tab", name="DynamoDB", exact=True).click()
                run_id, shots = _follow_search(page, runs, ids)
                _check_followed(run_id, shots, runs)
                ids.add(run_id)
        finally:
            page.close()
