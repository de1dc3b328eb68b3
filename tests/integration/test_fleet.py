"""A real master and two workers (separate Locust processes) on 127.0.0.1 against the real local endpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.results import read_results
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

SCENARIO = put_scenario(
    "fleet", "ramp: {from: 40, to: 160, step: 40, window: 5s}", capacity_scale=0.025, concurrency=5, item_size=500
)
LOCUSTFILE = ROOT / "locustfiles" / "scenario.py"


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity_scale=0.025).start()
    try:
        yield ep
    finally:
        ep.stop()


def start_fleet(tmp_path: Path, host: str, run_id: str) -> tuple[subprocess.Popen[str], list[subprocess.Popen[str]]]:
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(SCENARIO)
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--scenario", str(scenario), "--loglevel", "INFO"]
    master = subprocess.Popen(
        [*common, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port), "--headless",
         "--expect-workers", "2", "-u", "10", "-r", "10", "--host", host, "--results-dir", str(tmp_path),
         "--run-id", run_id, "--metrics-port", "0", "--only-summary"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    workers = [
        subprocess.Popen(
            [
                *common,
                "--worker",
                "--master-host",
                "127.0.0.1",
                "--master-port",
                str(port),
                "--metrics-port",
                "0",
                "--results-dir",
                str(tmp_path),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(2)
    ]
    return master, workers


def finish(master: subprocess.Popen[str], workers: list[subprocess.Popen[str]], timeout: float = 120) -> str:
    try:
        out, _ = master.communicate(timeout=timeout)
    finally:
        for proc in [master, *workers]:
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
    return out


@pytest.mark.slow
def test_master_and_two_workers_add_up_exactly(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    master, workers = start_fleet(tmp_path, endpoint.url, "fleet")
    out = finish(master, workers)
    assert master.returncode == 0, out[-4000:]
    records = read_results(tmp_path / "fleet" / "results.jsonl")
    windows = [r for r in records if r["type"] == "window"]
    end = records[-1]
    assert [w["target_rate"] for w in windows] == [40, 80, 120, 160]
    for window in windows:
        shares = window["workers"]
        assert sorted(shares) == ["0", "1"] and not window["missing_workers"]
        planned = round(window["target_rate"] * window["duration"])
        assert sum(s["offered"] for s in shares.values()) == window["summary"]["offered"] == planned
        for share in shares.values():  # each worker sends its half within 1%, on the shared schedule
            assert abs(share["sent"] - planned / 2) <= 0.01 * planned / 2 + 1
            assert share["lag_p50"] < 0.02  # the median send is within 20 ms of T0 + k / rate
        assert sum(s["sent"] for s in shares.values()) == window["summary"]["sent"]
    sent = sum(w["summary"]["sent"] for w in windows)
    accepted = sum(w["summary"]["accepted"] for w in windows)
    throttled = sum(w["summary"]["throttled"] for w in windows)
    assert end["sent"] == sent
    server = endpoint.stats()["tables"]["t-fleet"]["PutItem"]
    assert (server["ok"], server["throttled"], server["error"]) == (accepted, throttled, sent - accepted - throttled)
    assert throttled > 0  # the ramp crossed the ~103 writes/s ceiling
    assert set(end["clock_offsets"]) == {"0", "1"} and not end["clock_skew"]


@pytest.mark.slow
def test_a_worker_killed_mid_run_leaves_a_visible_gap(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    master, workers = start_fleet(tmp_path, endpoint.url, "killed")
    results = tmp_path / "killed" / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill after the first window has closed
        if results.exists() and any(r["type"] == "window" for r in read_results(results)):
            break
        time.sleep(0.2)
    workers[1].send_signal(signal.SIGKILL)
    out = finish(master, workers)
    assert master.returncode == 5, out[-4000:]
    records = read_results(results)
    windows = [r for r in records if r["type"] == "window"]
    end = records[-1]
    # worker indexes follow Locust's sorted client ids, not start order: whichever it was, exactly one is lost
    assert len(windows) == 4 and len(end["lost_workers"]) == 1
    (lost,) = end["lost_workers"]
    assert windows[0]["missing_workers"] == [] and not windows[0]["partial"]
    assert windows[-1]["missing_workers"] == [lost] and windows[-1]["partial"]
    assert windows[-1]["verdict"] == "partial"
    # nothing is counted twice: the master never claims more than the server saw
    server = endpoint.stats()["tables"]["t-killed"]["PutItem"]
    assert sum(w["summary"]["accepted"] for w in windows) <= server["ok"]
    assert sum(w["summary"]["sent"] for w in windows) <= server["ok"] + server["throttled"] + server["error"]
    assert f"incomplete: workers [{lost}] were lost" in out
