"""A real Prometheus scrapes a real throttled run, standalone (`dynlocust run`) and as a fleet (master + 2 workers,
the master serving the merged view): counters rise, end equal to the run's own totals, and every dashboard panel's
PromQL returns data."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import wait_http_ok
from tests.support.runs import ROOT

DASHBOARD = ROOT / "docker" / "grafana" / "dashboards" / "dynlocust.json"
PROMETHEUS = shutil.which("prometheus")

# capacity_scale 0.01: a new on-demand table takes ~40 writes/s, so 20 -> 60 -> 100/s crosses the ceiling.
SCENARIO = """\
name: prometheus-e2e
target:
  local: {capacity_scale: 0.01, time_scale: 1.0}
transport: boto3
tables:
  - name: items
    partition_key: {name: pk, type: S}
    billing: on_demand
workload:
  item_size: 1KB
  keys: {distribution: uniform}
  operations:
    - {op: put, weight: 1}
phases:
  - name: ramp
    ramp: {from: 20, to: 100, step: 40, window: 5s}
concurrency: 10
deadline: 4s
bin: 5s
"""

PROMETHEUS_CONFIG = """\
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dynlocust
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def scalar(self, expr: str, at: float) -> float:
        result = self.get("/api/v1/query", query=expr, time=at)["result"]
        assert len(result) == 1, f"{expr}: expected one series, found {result}"
        return float(result[0]["value"][1])

    def range(self, expr: str, start: float, end: float) -> list[dict[str, Any]]:
        return self.get("/api/v1/query_range", query=expr, start=start, end=end, step=1)["result"]


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[Prometheus, int]]:
    if PROMETHEUS is None:
        pytest.skip("needs the prometheus binary (Debian package `prometheus`)")
    metrics_port, web_port = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(PROMETHEUS_CONFIG.replace("{port}", str(metrics_port)))
    log = open(tmp_path / "prometheus.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [
            PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{web_port}", "--storage.tsdb.retention.time=1h",
        ],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{web_port}"
        wait_http_ok(url + "/-/ready", proc, tmp_path / "prometheus.log")
        yield Prometheus(url), metrics_port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def run_totals(results: Path) -> dict[str, float]:
    totals: dict[str, float] = {"throttled": 0, "requests": 0, "dropped": 0, "units": 0.0, "cost": 0.0}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "window":
            totals["dropped"] += record["pacing"]["dropped"]
            for b in record["bins"]:
                totals["throttled"] += b["by_kind"].get("throttled", 0)
                totals["requests"] += sum(b["by_kind"].values())
        elif record["type"] == "end":
            totals["units"] = record["read_units"] + record["write_units"]
            totals["cost"] = record["cost_dollars"]
    return totals


def dashboard_queries(variables: dict[str, str]) -> list[tuple[str, str]]:
    """Every panel's and annotation's PromQL, with the dashboard's variables set to ``variables``."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [(f"{p['title']} / {t['refId']}", t["expr"]) for p in dashboard["panels"] for t in p["targets"]]
    queries += [(f"annotation {a['name']}", a["expr"]) for a in dashboard["annotations"]["list"] if "expr" in a]
    values = {"$__rate_interval": "5s", "$__interval": "2s", **{f"${k}": v for k, v in variables.items()}}
    out = []
    for name, expr in queries:
        for variable, value in values.items():
            expr = expr.replace(variable, value)
        assert "$" not in expr, f"{name}: a variable the test does not set: {expr}"
        out.append((name, expr))
    return out


def stop_group(proc: subprocess.Popen[Any], grace: float = 15.0) -> None:
    """End a child started with `start_new_session` and everything it started (the embedded endpoint)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # Locust quits cleanly and stops its endpoint
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def run_bounded(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> tuple[int, str]:
    """Run to completion; on timeout stop the whole process group rather than orphan its children."""
    with open(cwd / f"output-{time.monotonic_ns()}.txt", "w+") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout)
        finally:
            stop_group(proc)
        out.seek(0)
        return proc.returncode, out.read()


def run_standalone(scenario: Path, metrics_port: int, results_dir: Path) -> tuple[int, str]:
    return run_bounded(
        [
            sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--metrics-port", str(metrics_port),
            "--results-dir", str(results_dir), "--run-id", "prom-e2e", "--loglevel", "WARNING",
        ],
        scenario.parent, {**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def run_fleet(scenario: Path, metrics_port: int, results_dir: Path) -> tuple[int, str]:
    """A master and two workers (`locust -f dynlocust/user_classes/locustfile.py`); Prometheus scrapes only the
    master."""
    master_port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = [sys.executable, "-m", "locust", "-f", str(ROOT / "dynlocust" / "user_classes" / "locustfile.py")]
    common += ["--scenario", str(scenario), "--loglevel", "WARNING"]
    worker_args = ["--worker", "--master-host", "127.0.0.1", "--master-port", str(master_port)]
    workers = [
        subprocess.Popen(
            [*common, *worker_args], cwd=scenario.parent, env=env, stdout=subprocess.DEVNULL, start_new_session=True
        )
        for _ in range(2)
    ]
    try:
        return run_bounded(
            [
                *common, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master_port),
                "--headless", "--expect-workers", "2", "-u", "10", "-r", "10", "--metrics-port", str(metrics_port),
                "--results-dir", str(results_dir), "--run-id", "prom-e2e",
            ],
            scenario.parent, env,
        )  # fmt: skip
    finally:
        for worker in workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.wait(20)  # the master's quit ends them
            stop_group(worker)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["standalone", "fleet"])
def test_prometheus_scrapes_a_throttled_run(prometheus: tuple[Prometheus, int], tmp_path: Path, mode: str) -> None:
    prom, metrics_port = prometheus
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    started = time.time()
    run = run_standalone if mode == "standalone" else run_fleet
    code, output = run(scenario, metrics_port, tmp_path / "results")
    ended = time.time()
    assert code == 0, output[-4000:]
    totals = run_totals(tmp_path / "results" / "prom-e2e" / "results.jsonl")
    assert totals["throttled"] > 0, "the scenario did not throttle: nothing to compare"

    # Counters rose while the run went on ...
    series = prom.range("sum(dynlocust_throttled_requests_total)", started, ended)
    values = [float(v) for _, v in series[0]["values"]]
    assert values[0] < values[-1] and values == sorted(values)
    # ... and the last scrape holds exactly the run's own totals.
    last = "sum(last_over_time({}[5m]))"
    assert prom.scalar(last.format("dynlocust_throttled_requests_total"), ended) == totals["throttled"]
    assert prom.scalar(last.format('dynlocust_requests_total{outcome="throttled"}'), ended) == totals["throttled"]
    assert prom.scalar(last.format("dynlocust_requests_total"), ended) == totals["requests"]
    assert prom.scalar(last.format("dynlocust_request_duration_seconds_count"), ended) == totals["requests"]
    assert prom.scalar(last.format("dynlocust_dropped_sends_total"), ended) == totals["dropped"]
    assert prom.scalar(last.format("dynlocust_consumed_capacity_units_total"), ended) == totals["units"]
    assert prom.scalar(last.format("dynlocust_estimated_cost_dollars_total"), ended) == pytest.approx(totals["cost"])
    assert prom.scalar("max_over_time(dynlocust_workers[5m])", ended) == (2 if mode == "fleet" else 1)
    bound = prom.get("/api/v1/series", **{"match[]": "dynlocust_client_bound", "start": started, "end": ended})
    assert sorted(s["worker"] for s in bound) == (["0", "1"] if mode == "fleet" else ["0"])
    tables = prom.get("/api/v1/label/table/values", start=started, end=ended)
    assert tables == ["items"], "table labels must be the scenario's logical names"

    # the latency histogram carries the logical table name too
    latency = prom.get("/api/v1/series", **{"match[]": "dynlocust_request_duration_seconds_count", "start": started})
    assert latency and {s["table"] for s in latency} == {"items"}
    # dynlocust_window_info: a series for the run's one phase (and one before it begins), however many windows
    info = prom.get("/api/v1/series", **{"match[]": "dynlocust_window_info", "start": started, "end": ended})
    phases = sorted((s["run_id"], s.get("phase", "")) for s in info)
    assert phases in ([("prom-e2e", "ramp")], [("prom-e2e", ""), ("prom-e2e", "ramp")]), info
    assert prom.scalar("max_over_time(dynlocust_window_index[5m])", ended) == 2  # three windows: 0, 1, 2

    # every panel has data with the dashboard's variables set to this run, its instance and its table ...
    this_run = {"run_id": "prom-e2e", "instance": f"127.0.0.1:{metrics_port}", "table": "items"}
    empty = [name for name, expr in dashboard_queries(this_run) if not prom.range(expr, started, ended)]
    assert not empty, f"dashboard queries without data: {empty}"
    # ... and none with another run's id (the unprocessed-items panel shows 0 by design)
    another = dashboard_queries({**this_run, "run_id": "another-run"})
    leaked = [name for name, expr in another if "vector(0)" not in expr and prom.range(expr, started, ended)]
    assert not leaked, f"dashboard queries with data from a run not selected: {leaked}"
