"""Every Start in Locust's web UI begins a fresh run, and its Stop tears that run's tables down at once.

Driven over Locust's own HTTP API (`POST /swarm`, `POST /stop`, `/stats/requests`) against a real Locust process
and a real local endpoint; the browser view of the same is `test_webui.py`'s.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode, exit_line
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from tests.support import webui
from tests.support.processes import wait_http_ok
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

LOCUSTFILE = "from dynlocust.user_classes.scenario_user import ScenarioUser  # noqa: F401\n"
SCENARIO = put_scenario("runs", "steps: [{rate: 20, window: 2s}, {rate: 20, window: 60s}]", concurrency=4)
SHORT = put_scenario("short", "steps: [{rate: 20, window: 2s}, {rate: 20, window: 2s}]", concurrency=4)
WAIT = 60.0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body.strip().startswith(b"{") else body


def _swarm(url: str, host: str) -> Any:
    form = urllib.parse.urlencode({"user_count": 4, "spawn_rate": 4, "host": host}).encode()
    with urllib.request.urlopen(urllib.request.Request(url + "/swarm", data=form), timeout=60) as response:
        return json.loads(response.read())


def _until(what: str, check: Callable[[], Any], log: Path) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}; log:\n{log.read_text()[-3000:]}")


@pytest.fixture
def web_locust(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, LocalEndpoint, Path]]:
    endpoint = LocalEndpoint().start()
    (tmp_path / "lf.py").write_text(LOCUSTFILE)
    scenario = tmp_path / "runs.yaml"
    scenario.write_text(getattr(request, "param", SCENARIO))
    port = _free_port()
    argv = [sys.executable, "-m", "locust", "-f", str(tmp_path / "lf.py"), "--scenario", str(scenario)]
    argv += ["--web-host", "127.0.0.1", "--web-port", str(port), "--host", endpoint.url]
    argv += ["--results-dir", str(tmp_path / "runs"), "--run-id", "first", "--metrics-port", "0"]
    log = open(tmp_path / "locust.log", "w+b")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http_ok(url + "/", proc, tmp_path / "locust.log")
        yield url, endpoint, tmp_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        log.close()
        endpoint.stop()


@pytest.mark.slow
def test_each_start_begins_a_fresh_run_and_each_stop_deletes_its_tables(
    web_locust: tuple[str, LocalEndpoint, Path],
) -> None:
    url, endpoint, tmp_path = web_locust
    log = tmp_path / "locust.log"
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)

    def tables() -> list[str]:
        return list(client.list_tables()["TableNames"])

    def requests() -> dict[str, int]:
        stats = _get(url + "/stats/requests")["stats"]
        return {s["name"]: s["num_requests"] for s in stats if s["name"] != "Aggregated" and s["num_requests"]}

    run_ids: list[str] = []
    for attempt in range(2):
        assert _swarm(url, endpoint.url)["success"]
        live = _until(f"run {attempt + 1}'s table", lambda: [t for t in tables() if t[2:] not in run_ids], log)
        assert len(live) == 1 and live == tables(), live  # the last run's table went with its Stop
        run_ids.append(live[0].removeprefix("t-"))
        seen = _until(f"requests of run {attempt + 1}", requests, log)
        assert list(seen) == ["PutItem t"], seen  # the logical table: names compare across runs
        with urllib.request.urlopen(urllib.request.Request(url + "/stop", data=b""), timeout=60):
            pass
        _until(f"run {attempt + 1}'s tables deleted", lambda: not tables(), log)
    assert run_ids[0] == "first"
    for run_id in run_ids:
        records = [json.loads(line) for line in (tmp_path / "runs" / run_id / "results.jsonl").read_text().splitlines()]
        assert records[0]["type"] == "run" and records[0]["run_id"] == run_id
        assert records[-1]["type"] == "end", records[-1]


@pytest.mark.slow
@pytest.mark.parametrize("web_locust", [SHORT], indirect=True, ids=["short-plan"])
def test_the_plans_end_deletes_the_tables_and_the_web_ui_stays_up(web_locust: tuple[str, LocalEndpoint, Path]) -> None:
    url, endpoint, tmp_path = web_locust
    log = tmp_path / "locust.log"
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
    assert _swarm(url, endpoint.url)["success"]
    _until("the run's table", lambda: client.list_tables()["TableNames"], log)
    results = tmp_path / "runs" / "first" / "results.jsonl"

    def ended() -> bool:
        lines = results.read_text().splitlines() if results.exists() else []
        return bool(lines) and json.loads(lines[-1])["type"] == "end"

    _until("the run's end record", ended, log)
    _until("the run's table deleted", lambda: not client.list_tables()["TableNames"], log)
    assert _get(url + "/stats/requests")["state"] == "stopped"  # the process outlives its run: Start again works


AUTOQUIT = 3


@pytest.mark.slow
def test_autostart_with_autoquit_quits_that_many_seconds_after_the_plans_end(tmp_path: Path) -> None:
    """Locust autoquits only after --run-time; a scenario's plan ends the run itself, and the process must follow."""
    with webui.web_locust(tmp_path, SHORT, "--autostart", "--autoquit", str(AUTOQUIT)) as web:
        code = web.proc.wait(WAIT)  # by itself: nobody stops it
        quit_at = time.time()
    out = web.output()
    assert f"the plan has ended: quitting in {AUTOQUIT} s (--autoquit)" in out
    (results,) = (tmp_path / "runs").glob("*/results.jsonl")
    end = json.loads(results.read_text().splitlines()[-1])
    assert end["type"] == "end" and code == end["exit_code"] == 0, out[-3000:]
    assert quit_at - results.stat().st_mtime >= AUTOQUIT  # it waited for the N seconds first
    assert out.strip().splitlines()[-1] == exit_line(ExitCode.PASSED)
