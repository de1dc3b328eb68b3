"""The image built and docker/compose.yaml's topology run for real, in one podman pod with only loopback.

The pod (tests/support/podman.py) starts what compose declares: the local endpoint, a master, 2 workers and
Prometheus, running the quickstart scenario headless. A fast test checks that the pod's containers are exactly
compose's services, commands, environment, mounts and ports, so the two cannot drift.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import urllib.parse
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.conclusion import window_number
from dynlocust.observe.report.build import load_report
from dynlocust.observe.report.table import COLUMNS, verdict_cell
from dynlocust.run.results import read_results
from tests.integration.test_scenario_run import server_counts
from tests.support import podman
from tests.support.compose import command, compose, container_ports, environment, mounts, option, replicas

SETTINGS = {"SCENARIO": "quickstart.yaml", "WORKERS": "2"}  # compose's other variables keep their defaults
BASE_IMAGE = "dynlocust-base:bookworm"
IMAGE_USER = 10001  # docker/Dockerfile's USER: it writes the results
PROBE = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
LIST_TABLES = """import json, sys
import boto3
client = boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name="us-east-1")
print(json.dumps(client.list_tables()["TableNames"]))"""


def plan(tmp_path: Path, app_image: str = "app") -> list[podman.Container]:
    return podman.pod_plan(
        SETTINGS, app_image=app_image, base_image=BASE_IMAGE, results=tmp_path / "results", scratch=tmp_path
    )


def test_the_pod_starts_exactly_what_compose_declares(tmp_path: Path) -> None:
    services = compose()["services"]
    containers = plan(tmp_path)
    started = {c.service for c in containers}
    assert started == set(services) - set(podman.NOT_IN_POD) and set(podman.NOT_IN_POD) <= set(services)
    for name in started:
        service = services[name]
        replica = [c for c in containers if c.service == name]
        assert len(replica) == replicas(service, SETTINGS)
        for container in replica:
            argv = podman.run_argv("pod", tmp_path / "hosts", container)
            declared = command(service, SETTINGS)
            assert argv[-len(declared) :] == declared  # compose's command, word for word, at the end of `podman run`
            image = "app" if "build" in service else BASE_IMAGE
            assert argv[-len(declared) - (1 if "build" in service else 2)] == image
            for key, value in environment(service, SETTINGS).items():
                assert f"{key}={value}" in argv
            assert sum(a == "--env" for a in argv) == len(environment(service, SETTINGS))
            for source, target, mode in mounts(service):
                assert f"{tmp_path / 'results' if source == 'results' else source}:{target}:{mode}" in argv
            assert "--publish" not in argv and "--network" not in argv  # the pod's loopback only
            assert list(container.ports) == container_ports(service)
    assert sum(c.service == "worker" for c in containers) == int(
        option(command(services["master"], SETTINGS), "--expect-workers")
    )

    # the containers share one loopback: every published port is distinct and is where its service listens
    ports = [p for c in containers for p in c.ports]
    assert len(ports) == len(set(ports))
    listening = {
        "endpoint": [option(command(services["endpoint"], SETTINGS), "--port")],
        "master": [
            option(command(services["master"], SETTINGS), name)
            for name in ("--metrics-port", "--web-port", "--master-bind-port")
        ],
        "prometheus": [option(command(services["prometheus"], SETTINGS), "--web.listen-address").rsplit(":", 1)[1]],
    }
    for name, listens in listening.items():
        assert set(map(int, listens)) >= set(container_ports(services[name])), name
    assert {int(p) for ps in listening.values() for p in ps} >= set(ports)
    # every service name an argument uses as an address resolves to the pod's loopback
    hosts = podman.hosts_file().split("\n")[0].split()
    assert hosts[0] == "127.0.0.1" and set(hosts[2:]) == started


@pytest.fixture(scope="module")
def podman_runs() -> None:
    reason = podman.unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"podman cannot run containers here, and CI must run this test: {reason}")
    print(f"\nskipped: podman cannot run containers on this machine: {reason}")
    pytest.skip(f"podman cannot run containers on this machine: {reason}")


class InPod:
    """Requests from inside the pod (its loopback is nobody else's), run by python in the endpoint's container."""

    def __init__(self, pod: podman.Pod, endpoint: str) -> None:
        self.pod = pod
        self.endpoint = endpoint

    def get(self, url: str) -> str:
        return self.pod.exec("endpoint", "python3", "-c", PROBE, url)

    def stats(self) -> dict:
        return json.loads(self.get(self.endpoint + "/_dynlocust/stats"))

    def tables(self) -> list[str]:
        return json.loads(self.pod.exec("endpoint", "python3", "-c", LIST_TABLES, self.endpoint))

    def wait_ready(self, url: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.get(url)
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_compose_topology_runs_in_a_podman_pod(podman_runs: None, tmp_path: Path) -> None:
    name = f"dynlocust-test-{os.getpid()}-{secrets.token_hex(3)}"
    app_image = f"localhost/dynlocust:{name}"
    services = compose()["services"]
    timings: dict[str, float] = {}
    started = time.monotonic()
    podman.ensure_base_image(BASE_IMAGE)
    timings["base image"] = time.monotonic() - started
    try:
        started = time.monotonic()
        podman.build_app_image(app_image, BASE_IMAGE, podman.wheelhouse(), tmp_path)
        timings["app image"] = time.monotonic() - started
        results = tmp_path / "results"
        results.mkdir()
        os.chown(results, IMAGE_USER, IMAGE_USER)
        (tmp_path / "prometheus").mkdir()
        containers = plan(tmp_path, app_image)
        endpoint = f"http://127.0.0.1:{option(command(services['endpoint'], SETTINGS), '--port')}"
        prometheus = "http://" + option(command(services["prometheus"], SETTINGS), "--web.listen-address").replace(
            "0.0.0.0", "127.0.0.1"
        )
        started = time.monotonic()
        with podman.Pod(name, tmp_path) as pod:
            probe = InPod(pod, endpoint)
            for container in containers:
                pod.run(container)
                if container.service == "endpoint":
                    probe.wait_ready(endpoint + "/_dynlocust/stats")
            assert pod.containers() == sorted(c.name for c in containers)
            try:
                code = pod.wait("master", timeout=300)
            finally:
                log = pod.logs("master")
            for worker in (c.name for c in containers if c.service == "worker"):
                pod.wait(worker, timeout=60)  # the master's quit ends them
            run_id = check_run(code, log, results, probe, prometheus)
        timings["topology run"] = time.monotonic() - started
        # the image carries the report extra: `dynlocust report` draws the PNG plots (matplotlib) in it
        report = podman.podman(
            "run", "--rm", "--network", "none", "--volume", f"{results}:/app/results:rw",
            app_image, "dynlocust", "report", "--quiet", f"/app/results/{run_id}",
        )  # fmt: skip
        assert (results / run_id / "report" / "timeline.png").is_file(), report
    finally:
        podman.remove_image(app_image)
        print("\n" + ", ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))


def check_run(code: int, log: str, results: Path, probe: InPod, prometheus: str) -> str:
    """Check the finished run against the endpoint and Prometheus; its run id."""
    runs = list(results.iterdir())
    assert len(runs) == 1, (runs, log[-3000:])
    run_id = runs[0].name
    records = read_results(runs[0] / "results.jsonl")
    end = records[-1]
    assert end["type"] == "end", log[-3000:]
    # the run completed: its exit code is the end record's, and only failed SLOs make it non-zero
    assert code == end["exit_code"] and (
        code == ExitCode.PASSED or (code == ExitCode.SLO_FAILED and end["slo_failures"])
    ), log[-3000:]
    windows = [r for r in records if r["type"] == "window"]
    assert [w["target_rate"] for w in windows] == [50, 100, 150, 200]
    assert all(sorted(w["workers"]) == ["0", "1"] for w in windows)

    # the window table the master printed is the results' windows
    table = [
        [cell.strip() for cell in line.strip().strip("|").split("|")] for line in log.splitlines() if line[:2] == "| "
    ]
    header = table.index(list(COLUMNS))
    rows = [dict(zip(COLUMNS, row, strict=True)) for row in table[header + 1 : header + 1 + len(windows)]]
    assert [r["window"] for r in rows] == [str(window_number(w["index"])) for w in windows]
    assert [r["throttled (req)"] for r in rows] == [f"{w['summary']['throttled']:,}" for w in windows]
    # the cell as the console renders it: every label, and the part that ran of a partial window
    assert [r["verdict"] for r in rows] == [verdict_cell(w) for w in load_report(runs[0] / "results.jsonl").windows]

    # the counts merged over both workers are the endpoint's own, request for request
    sent = sum(w["summary"]["sent"] for w in windows)
    accepted = sum(w["summary"]["accepted"] for w in windows)
    throttled = sum(w["summary"]["throttled"] for w in windows)
    stats = probe.stats()
    server = server_counts(stats, f"items-{run_id}", ("PutItem", "GetItem"))
    assert (accepted, throttled, sent - accepted - throttled) == (server["ok"], server["throttled"], server["error"])
    assert sent == end["sent"]
    bound = [w["index"] for w in windows if w["saturation"]["client_bound"]]
    assert throttled > 0, f"the quickstart never reached its ceiling; client-bound windows {bound} (a busy machine?)"

    # Prometheus scraped the master's throttle counter up to the run's own total
    query = "sum(last_over_time(dynlocust_throttled_requests_total[10m]))"
    answer = json.loads(probe.get(f"{prometheus}/api/v1/query?query={urllib.parse.quote(query)}"))
    assert float(answer["data"]["result"][0]["value"][1]) == throttled

    # teardown deleted the run's table and left none behind
    assert stats["tables"][f"items-{run_id}"]["DeleteTable"]["ok"] == 1
    assert probe.tables() == []
    return run_id
