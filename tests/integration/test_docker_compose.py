"""docker/compose.yaml without a Docker engine: its structure, then each service's command as a local process.

The processes get the compose file's own arguments and environment, with the mapping a container network would
give: service names and 0.0.0.0 become 127.0.0.1, every container port becomes a free local port (the same one
wherever that port appears), and paths inside the image (/app/...) become the repository's (or a test directory).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dynlocust.exit_codes import ExitCode
from dynlocust.run.results import read_results
from dynlocust.scenario import load_scenario
from dynlocust.scenario.catalog import SHIPPED_DIR, shipped_scenarios
from tests.support.compose import DOCKER, compose, interpolate, option, replicas
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

PROMETHEUS = Path("/usr/bin/prometheus")
SHORT = put_scenario("short", "ramp: {from: 20, to: 40, step: 20, window: 2s}", capacity_scale=0.025)
CONTAINER_PORTS = (5557, 8000, 8089, 9646, 9090)


# -- structure -------------------------------------------------------------------------------------------------


def test_the_compose_file_has_every_service_of_the_fleet() -> None:
    services = compose()["services"]
    assert set(services) == {"endpoint", "master", "worker", "prometheus", "grafana"}
    for name in ("endpoint", "master", "worker"):
        assert services[name]["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
        assert services[name]["environment"]["AWS_ACCESS_KEY_ID"] == "local"  # dummy credentials only
    assert "--master" in services["master"]["command"] and "--worker" in services["worker"]["command"]
    assert option(services["worker"]["command"], "--master-host") == "master"
    master = services["master"]["command"]
    assert option(master, "--host") == "http://endpoint:8000"
    assert option(master, "--metrics-host") == "0.0.0.0"  # reachable by Prometheus on the network
    assert option(master, "--web-host") == "0.0.0.0" and "127.0.0.1:8089:8089" in services["master"]["ports"]
    # the endpoint's capacity is the scenario's own (target.local), the same file the master and workers run
    endpoint = services["endpoint"]["command"]
    assert (
        option(endpoint, "--scenario")
        == option(master, "--scenario")
        == option(services["worker"]["command"], "--scenario")
    )
    assert "--capacity-scale" not in endpoint and "--time-scale" not in endpoint


def test_workers_scale_and_the_master_waits_for_as_many() -> None:
    worker, master = compose()["services"]["worker"], compose()["services"]["master"]["command"]
    assert "container_name" not in worker and "ports" not in worker  # --scale worker=N needs both absent
    expected = option(master, "--expect-workers")
    assert interpolate(str(worker["deploy"]["replicas"]), {"WORKERS": "7"}) == interpolate(expected, {"WORKERS": "7"})


@pytest.mark.parametrize("service", ["endpoint", "master", "prometheus", "grafana"])
def test_published_ports_bind_to_loopback_only(service: str) -> None:
    ports = compose()["services"][service]["ports"]
    assert ports and all(str(p).startswith("127.0.0.1:") for p in ports)


def test_prometheus_scrapes_the_master_and_grafana_is_provisioned() -> None:
    prometheus = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
    targets = [t for job in prometheus["scrape_configs"] for s in job["static_configs"] for t in s["targets"]]
    assert targets == ["master:9646"] and "master" in compose()["services"]
    master = compose()["services"]["master"]["command"]
    assert option(master, "--metrics-port") == "9646"
    datasource = yaml.safe_load((DOCKER / "grafana/provisioning/datasources/prometheus.yml").read_text())
    assert datasource["datasources"][0]["url"] == "http://prometheus:9090" and "prometheus" in compose()["services"]
    json.loads((DOCKER / "grafana/dashboards/dynlocust.json").read_text())


def test_every_bind_mount_points_at_something_that_exists() -> None:
    named = set(compose().get("volumes", {}))
    mounts = [str(v) for s in compose()["services"].values() for v in s.get("volumes", [])]
    assert mounts
    for mount in mounts:
        source = mount.split(":", 1)[0]
        if source in named:
            continue
        assert (DOCKER / source).resolve().exists(), mount


def test_the_dockerfile_runs_as_a_non_root_user_with_the_package_installed() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1] not in ("root", "0")
    assert "pip install" in text and "COPY locustfiles" in text
    # the report extra (PNG plots): `dynlocust report` works inside the image
    assert re.search(r'pip wheel .*"\.\[report\]"', text) and re.search(r'pip install .*"dynlocust\[report\]"', text)
    for source in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
        assert (ROOT / source).exists(), source


# -- the services as local processes ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def localize(args: list[str], env: dict[str, str], ports: dict[int, int], paths: dict[str, str]) -> list[str]:
    out = []
    hosts = set(compose()["services"]) | {"0.0.0.0"}
    for raw in args:
        arg = interpolate(str(raw), env)
        if paths:
            alternatives = "|".join(re.escape(p) for p in sorted(paths, key=len, reverse=True))
            arg = re.sub(rf"(?<![\w/])({alternatives})", lambda m: paths[m.group(1)], arg)
        for host in hosts:
            arg = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w.-])", "127.0.0.1", arg)
        arg = re.sub(r"\b(\d{4})\b", lambda m: str(ports.get(int(m.group(1)), m.group(1))), arg)
        out.append(arg)
    if out[0] in ("locust", "dynlocust"):
        out[0] = str(Path(sys.executable).with_name(out[0]))
    return out


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(f"{proc.args!r} exited with {proc.returncode} before listening") from None
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port} after {timeout} s")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.terminate()
        for proc in started:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


class Services:
    """compose.yaml's services started as local processes: its arguments and environment, ports made free, paths
    inside the image mapped to the checkout (scenarios to ``scenarios``, results to ``tmp_path/results``)."""

    def __init__(
        self, tmp_path: Path, scenarios: Path, settings: dict[str, str], processes: list[subprocess.Popen[bytes]]
    ) -> None:
        self.tmp_path, self.settings, self.processes = tmp_path, settings, processes
        self.ports = {port: free_port() for port in CONTAINER_PORTS}
        self.paths = {"/app/scenarios": str(scenarios), "/app/results": str(tmp_path / "results"), "/app/": f"{ROOT}/"}

    def start(self, name: str, log: str, extra: list[str] | None = None) -> subprocess.Popen[bytes]:
        service = compose()["services"][name]
        env = {**os.environ, **{k: str(v) for k, v in service.get("environment", {}).items()}}
        args = localize(service["command"], self.settings, self.ports, self.paths) + (extra or [])
        with open(self.tmp_path / log, "wb") as out:
            proc = subprocess.Popen(args, cwd=self.tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(proc)
        return proc

    def start_endpoint_and_master(self, run_id: str) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
        endpoint = self.start("endpoint", "endpoint.log")
        wait_port(self.ports[8000], endpoint)
        # the master binds its worker port to all interfaces by default; on this machine, loopback only
        master = self.start("master", "master.log", ["--master-bind-host", "127.0.0.1", "--run-id", run_id])
        wait_port(self.ports[5557], master)
        return endpoint, master

    def start_workers(self) -> list[subprocess.Popen[bytes]]:
        count = replicas(compose()["services"]["worker"], self.settings)
        return [self.start("worker", f"worker-{i}.log") for i in range(count)]


@pytest.mark.slow
def test_the_services_run_as_local_processes_with_the_compose_arguments(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "short.yaml").write_text(SHORT)
    settings = {"SCENARIO": "short.yaml", "WORKERS": "2", "USERS": "8"}
    fleet = Services(tmp_path, scenarios, settings, processes)
    ports, services = fleet.ports, compose()["services"]
    _, master = fleet.start_endpoint_and_master("compose")
    prometheus = None
    if PROMETHEUS.exists():
        config = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
        config["scrape_configs"][0]["static_configs"][0]["targets"] = [f"127.0.0.1:{ports[9646]}"]
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
        paths_prom = {"/etc/prometheus/prometheus.yml": str(tmp_path / "prometheus.yml"), "/prometheus": str(tmp_path)}
        args = localize(services["prometheus"]["command"], settings, ports, paths_prom)
        with open(tmp_path / "prometheus.log", "wb") as out:
            prometheus = subprocess.Popen([str(PROMETHEUS), *args], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
        processes.append(prometheus)
        wait_port(ports[9090], prometheus)
    workers = fleet.start_workers()
    try:
        master.wait(90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"master did not finish: {(tmp_path / 'master.log').read_text()[-3000:]}")
    log = (tmp_path / "master.log").read_text()
    assert master.returncode in (0, 3), log[-3000:]  # 3: the scenario's SLOs may fail; the run itself completed
    records = read_results(tmp_path / "results" / "compose" / "results.jsonl")
    windows = [r for r in records if r["type"] == "window"]
    assert [w["target_rate"] for w in windows] == [20, 40]
    assert all(sorted(w["workers"]) == ["0", "1"] for w in windows)
    assert records[-1]["type"] == "end" and records[-1]["sent"] == sum(w["summary"]["sent"] for w in windows) > 0
    for worker in workers:
        worker.wait(20)
    if prometheus is not None:
        query = f"http://127.0.0.1:{ports[9090]}/api/v1/query?query=max_over_time(up%5B5m%5D)"
        with urllib.request.urlopen(query, timeout=5) as response:
            result = json.load(response)["data"]["result"]
        # the master is gone by now; Prometheus scraped it successfully while it ran (a scrape every second)
        assert [(r["metric"]["job"], r["value"][1]) for r in result] == [("dynlocust", "1")]


# -- shipped local scenarios: the compose fleet against `dynlocust run` --------------------------------------------

SHIPPED_LOCAL = [s.name for s in shipped_scenarios() if s.target == "local"]
ON_THE_FLEET = ["quickstart", "gsi-back-pressure"]
"""The shipped local scenarios played on the compose fleet here. What this proves is compose's: the endpoint service
builds each table from the scenario's `target.local` as `dynlocust run` does, and the master and two workers play
the same plan whole. Each scenario's own promise (hot key, sharded reads...) is test_shipped_scenarios', under
`dynlocust run`, and does not pass through compose. These two cover what compose's path does differ in: seeding and
time_scale given (quickstart, the default), and a GSI and another capacity_scale (gsi-back-pressure, the shortest
with an index). All four took 268 s on this machine; hot-key (70 s) and sharded-reads (98 s) added nothing else."""
CAPACITY_FIELDS = (
    "billing_mode", "read_ceiling", "write_ceiling", "read_burst", "write_burst", "max_read", "max_write",
)  # fmt: skip
"""What a table's emulated capacity is at creation (the endpoint's capacity_scale and time_scale applied)."""
WINDOW = "6s"


def test_the_scenarios_played_on_the_fleet_are_shipped_local_ones() -> None:
    assert set(ON_THE_FLEET) < set(SHIPPED_LOCAL), SHIPPED_LOCAL


def shrunk(name: str) -> str:
    """The shipped scenario with every window 6 s (a hold two of them) and 2 s bins: the same tables, workload,
    rates, capacity and SLOs, in a bounded time."""
    scenario = yaml.safe_load((SHIPPED_DIR / f"{name}.yaml").read_text())
    for phase in scenario["phases"]:
        for kind in ("ramp", "hold"):
            if kind in phase:
                phase[kind]["window"] = WINDOW
        if "hold" in phase:
            phase["hold"]["duration"] = "12s"
        for step in phase.get("steps", []):
            step["window"] = WINDOW
    scenario["bin"] = "2s"
    return yaml.safe_dump(scenario, sort_keys=False)


def capacity_at_creation(url: str, table: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> dict[str, Any]:
    """The endpoint's capacity figures of ``table`` as soon as it exists (before growth could change them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"{url}/_dynlocust/stats", timeout=5) as response:
                capacity = json.load(response).get("capacity", {})
            if table in capacity:
                return {k: capacity[table].get(k) for k in CAPACITY_FIELDS}
        time.sleep(0.1)
    raise AssertionError(f"table {table} not seen on {url} within {timeout} s (process exit code {proc.poll()})")


def embedded_url(log: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"embedded local endpoint at (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        time.sleep(0.1)
    raise AssertionError(f"no embedded endpoint in the log: {log.read_text(errors='replace')[-3000:]}")


def played(results: Path) -> tuple[list[tuple[Any, ...]], dict[str, str], list[dict[str, Any]]]:
    """(the plan's windows, the tables, the closed windows) of a finished run."""
    records = read_results(results)
    run = records[0]
    plan = [(w["index"], w["duration"], w["rate"], w["phase"]) for w in run["windows"]]
    assert records[-1]["type"] == "end", records[-1]
    return plan, run["tables"], [r for r in records if r["type"] == "window"]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ON_THE_FLEET)
def test_a_shipped_local_scenario_runs_on_the_compose_fleet_as_under_dynlocust_run(
    name: str, tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / f"{name}.yaml").write_text(shrunk(name))
    concurrency = load_scenario(scenarios / f"{name}.yaml").concurrency

    # `dynlocust run`: one process, the embedded endpoint it starts from the scenario's target.local
    alone_log = tmp_path / "alone.log"
    with open(alone_log, "wb") as out:
        alone = subprocess.Popen(
            [str(Path(sys.executable).with_name("dynlocust")), "run", str(scenarios / f"{name}.yaml"),
             "--run-id", "alone", "--results-dir", str(tmp_path / "alone"), "--loglevel", "INFO"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    processes.append(alone)
    url = embedded_url(alone_log, alone)
    tables = [t["name"] for t in yaml.safe_load((scenarios / f"{name}.yaml").read_text())["tables"]]
    alone_capacity = {t: capacity_at_creation(url, f"{t}-alone", alone) for t in tables}
    assert alone.wait(300) in (ExitCode.PASSED, ExitCode.SLO_FAILED), alone_log.read_text()[
        -3000:
    ]  # 3: an SLO, on a busy machine

    # compose: the endpoint service, the master, WORKERS workers; USERS gives each worker the scenario's concurrency
    settings = {"SCENARIO": f"{name}.yaml", "WORKERS": "2", "USERS": str(2 * concurrency)}
    fleet = Services(tmp_path, scenarios, settings, processes)
    endpoint, master = fleet.start_endpoint_and_master("compose")
    workers = fleet.start_workers()
    endpoint_url = f"http://127.0.0.1:{fleet.ports[8000]}"
    fleet_capacity = {t: capacity_at_creation(endpoint_url, f"{t}-compose", master) for t in tables}
    assert master.wait(300) in (ExitCode.PASSED, ExitCode.SLO_FAILED), (tmp_path / "master.log").read_text()[-3000:]
    for worker in workers:
        worker.wait(30)

    # the same capacity: the endpoint service took capacity_scale and time_scale from the scenario, as run does
    assert fleet_capacity == alone_capacity
    assert all(c["write_ceiling"] < 4000 for c in fleet_capacity.values())  # scaled, not a full-size table
    # the same plan, played whole by each: every window closed, in compose by both workers
    alone_plan, alone_tables, alone_windows = played(tmp_path / "alone" / "alone" / "results.jsonl")
    fleet_plan, fleet_tables, fleet_windows = played(tmp_path / "results" / "compose" / "results.jsonl")
    assert fleet_plan == alone_plan and sorted(fleet_tables) == sorted(alone_tables) == sorted(tables)
    assert [w["index"] for w in fleet_windows] == [w["index"] for w in alone_windows] == [p[0] for p in alone_plan]
    assert not any(w["partial"] for w in alone_windows + fleet_windows)
    assert all(sorted(w["workers"]) == ["0", "1"] for w in fleet_windows)
    assert endpoint.poll() is None  # the endpoint service outlives the run, as a compose service does
