"""A real master and two workers (separate Locust processes) on 127.0.0.1 against the real local endpoint."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet.judge import JUDGED_SHARE
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.run.results import read_results
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


def start_fleet(
    tmp_path: Path,
    host: str,
    run_id: str,
    *,
    expect: int = 2,
    workers: int = 2,
    extra: tuple[str, ...] = (),
    hog: bool = False,
) -> tuple[subprocess.Popen[str], list[subprocess.Popen[str]], Any]:
    """A master expecting `expect` workers, `workers` of them started now; the third value starts one more.

    With `hog`, the first worker runs a CPU hog beside its users and spools its windows under `tmp_path / "hog"`
    (so the test knows the fleet index it was given)."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(SCENARIO)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--scenario", str(scenario), "--loglevel", "INFO"]
    master = subprocess.Popen(
        [*common, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port), "--headless",
         "--expect-workers", str(expect), "-u", "10", "-r", "10", "--host", host, "--results-dir", str(tmp_path),
         "--run-id", run_id, "--metrics-port", "0", "--only-summary", *extra],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    worker_argv = [*common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]
    worker_argv += ["--metrics-port", "0", "--results-dir", str(tmp_path)]
    hog_argv = [*worker_argv, "--results-dir", str(tmp_path / "hog")]
    hog_argv[hog_argv.index(str(LOCUSTFILE))] = str(ROOT / "tests" / "integration" / "hog_locustfile.py")

    def start_worker(argv: list[str] = worker_argv) -> subprocess.Popen[str]:
        log = open(tmp_path / f"worker-{time.monotonic_ns()}.log", "w")  # noqa: SIM115 - kept by the process
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)

    started = [start_worker(hog_argv if hog and i == 0 else worker_argv) for i in range(workers)]
    return master, started, start_worker


def wait_for_first_window(results: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if results.exists() and any(r["type"] == "window" for r in read_results(results)):
            return
        time.sleep(0.2)
    raise AssertionError(f"no window closed within {timeout} s")


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
    master, workers, _ = start_fleet(tmp_path, endpoint.url, "fleet")
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
    # only the master polls the table's state: once as set-up waits for ACTIVE, once before T0, once per window
    assert all(w["table_state"]["tables"]["t"]["status"] == "ACTIVE" for w in windows)
    assert endpoint.stats()["tables"]["t-fleet"]["DescribeTable"]["ok"] == 1 + 1 + len(windows)


@pytest.mark.slow
def test_a_worker_killed_mid_run_leaves_a_visible_gap(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    master, workers, _ = start_fleet(tmp_path, endpoint.url, "killed")
    results = tmp_path / "killed" / "results.jsonl"
    wait_for_first_window(results)
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
    gap = [w for w in windows if w["missing_workers"]]
    assert gap and all(w["missing_workers"] == [lost] and w["partial"] and w["verdict"] == "partial" for w in gap)
    for w in gap:  # shown with the part of the fleet's schedule that ran, never client-bound
        assert 0 < w["verdict_detail"]["ran"] < 1 and "client-bound" not in w["verdict_detail"]["labels"]
    # from the next window that had not started, the survivor carries the whole rate: whole windows again
    last = windows[-1]
    assert last["rebalanced"] == [lost] and last["missing_workers"] == [] and not last["partial"]
    (survivor,) = last["workers"].values()
    assert survivor["offered"] == round(last["target_rate"] * last["duration"])
    assert f"re-balanced worker {lost}'s share" in out
    # nothing is counted twice: the master never claims more than the server saw
    server = endpoint.stats()["tables"]["t-killed"]["PutItem"]
    assert sum(w["summary"]["accepted"] for w in windows) <= server["ok"]
    assert sum(w["summary"]["sent"] for w in windows) <= server["ok"] + server["throttled"] + server["error"]
    assert f"incomplete: workers [{lost}] were lost" in out


@pytest.mark.slow
def test_a_worker_that_joins_mid_run_takes_a_share_of_the_next_windows(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    master, workers, start_worker = start_fleet(
        tmp_path, endpoint.url, "joined", expect=1, workers=1, extra=("--enable-rebalancing",)
    )
    results = tmp_path / "joined" / "results.jsonl"
    wait_for_first_window(results)
    workers.append(start_worker())
    out = finish(master, workers)
    assert master.returncode == 0, out[-4000:]
    records = read_results(results)
    windows = [r for r in records if r["type"] == "window"]
    assert sorted(windows[0]["workers"]) == ["0"]
    assert sorted(windows[-1]["workers"]) == ["0", "1"]  # the newcomer carries half of the last window
    for window in windows:  # every window is whole: the fleet's shares add up to the plan
        assert not window["missing_workers"] and not window["partial"]
        planned = round(window["target_rate"] * window["duration"])
        assert sum(s["offered"] for s in window["workers"].values()) == planned
    shares = windows[-1]["workers"].values()
    assert all(abs(s["offered"] - windows[-1]["summary"]["offered"] / 2) <= 1 for s in shares)
    assert "worker 1 joined" in out


@pytest.mark.slow
def test_a_fleet_with_one_starved_worker_says_which(endpoint: LocalEndpoint, tmp_path: Path) -> None:
    master, workers, _ = start_fleet(tmp_path, endpoint.url, "starved", hog=True)
    out = finish(master, workers)
    (spool,) = (tmp_path / "hog" / "starved").glob("worker-*.jsonl")
    hog = int(spool.stem.removeprefix("worker-"))  # the fleet index the hog worker was given
    windows = [r for r in read_results(tmp_path / "starved" / "results.jsonl") if r["type"] == "window"]
    assert len(windows) == 4
    # a window the hog left short by at most 5% of the fleet's sends is still judged ("ok + client-bound": the
    # table took what was sent, docs/verdicts.md); the run is inconclusive when fewer than half of them are
    judged = [w["index"] for w in windows if w["verdict_detail"]["labels"][0] != "client-bound"]
    expected = ExitCode.INCONCLUSIVE if len(judged) < JUDGED_SHARE * len(windows) else ExitCode.PASSED
    assert master.returncode == expected, (judged, out[-4000:])
    for window in windows:
        detail = window["verdict_detail"]
        assert "client-bound" in detail["labels"], (window["index"], detail, window["saturation"])
        assert hog in detail["workers"] and {"cpu", "lag"} & set(window["workers"][str(hog)]["reasons"])
        # the merged window names exactly the workers whose own evidence made them client-bound (on a busy host
        # the other worker can be measurably late too: then it is named with its own figures)
        assert detail["workers"] == sorted(int(w) for w, share in window["workers"].items() if share["reasons"])
    assert f"on worker {hog}" in out or f"on worker {min(hog, 1 - hog)}, {max(hog, 1 - hog)}" in out
    assert "conclusion:" in out


@pytest.mark.slow
def test_a_worker_without_the_masters_scale_options_is_told_which_and_exits_2(
    endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    """Same file, other factors: it was told "its scenario file differs" and exited 0."""
    extra = ("--duration-scale", "0.5")
    master, workers, _ = start_fleet(tmp_path, endpoint.url, "scaled", expect=1, workers=1, extra=extra)
    out = finish(master, workers)
    (worker,) = workers
    (log,) = [p.read_text() for p in tmp_path.glob("worker-*.log")]
    why = (
        "scale options differ from the master's (same scenario file; master: rates x1, windows x0.5; this worker: "
        "rates x1, windows x1): start it with the master's --local, --rate-scale, --duration-scale"
    )
    assert why in log, log[-3000:]
    assert "scenario file differs" not in log
    assert worker.returncode == ExitCode.BAD_INPUT, log[-3000:]
    assert f"worker 0: {why}" in out, out[-3000:]
    assert master.returncode != ExitCode.PASSED, out[-3000:]
