"""`dynlocust k8s render`'s containers run for real: `podman kube play` of one pod (tests/support/kube.py).

The rendered endpoint, master and two workers run as containers of one pod with only loopback, the image built
from docker/Dockerfile as tests/integration/test_containers.py builds it. Checked as the compose test checks:
every window merged from both workers, the throttle counter the master serves on /metrics (scraped from inside the
pod the way the ServiceMonitor's endpoint names it) equal to the run's own count, and the exit codes.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.launch import kubernetes
from dynlocust.run.results import read_results
from tests.integration.test_containers import BASE_IMAGE, IMAGE_USER, PROBE, podman_runs  # noqa: F401 - a fixture
from tests.support import kube, podman
from tests.support.scenarios import put_scenario

# ~40 writes/s of emulated capacity: the second window is over it, so the run throttles
SCENARIO = put_scenario("k8s-pod", "ramp: {from: 30, to: 150, step: 120, window: 4s}", capacity_scale=0.01)
WORKERS = 2
THROTTLED = re.compile(r"^dynlocust_throttled_requests_total(\{[^}]*\})? (\S+)$", re.M)


def throttled_total(exposition: str) -> float:
    return sum(float(value) for _, value in THROTTLED.findall(exposition))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_rendered_fleet_runs_as_one_pod_under_podman_kube_play(podman_runs: None, tmp_path: Path) -> None:  # noqa: F811
    name = f"dynlocust-kube-{os.getpid()}-{secrets.token_hex(3)}"
    app_image = f"localhost/dynlocust:{name}"
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    documents = kubernetes.render(
        kubernetes.RenderOptions(scenario, workers=WORKERS, image=app_image, namespace="dynlocust-test", name="dl")
    )
    master = next(d for d in documents if d["kind"] == "Job")["spec"]["template"]["spec"]["containers"][0]
    metrics_port = next(p["containerPort"] for p in master["ports"] if p["name"] == "metrics")
    monitor = next(d for d in documents if d["kind"] == "ServiceMonitor")["spec"]["endpoints"][0]
    metrics_url = f"http://127.0.0.1:{metrics_port}{monitor['path']}"
    timings: dict[str, float] = {}
    started = time.monotonic()
    podman.ensure_base_image(BASE_IMAGE)
    try:
        podman.build_app_image(app_image, BASE_IMAGE, podman.wheelhouse(), tmp_path)
        timings["images"] = time.monotonic() - started
        pod_documents = kube.one_pod(documents, name, tmp_path)
        for results in tmp_path.glob("results-*"):
            os.chown(results, IMAGE_USER, IMAGE_USER)
        started = time.monotonic()
        with kube.KubePod(pod_documents, tmp_path) as pod:
            timings["kube play"] = time.monotonic() - started
            started = time.monotonic()
            scraped = ""
            deadline = time.monotonic() + 240
            while pod.state("master") != "exited" and time.monotonic() < deadline:
                with contextlib.suppress(RuntimeError):  # as Prometheus would, from beside the master, while it serves
                    scraped = pod.exec("endpoint", "python3", "-c", PROBE, metrics_url, timeout=20)
                time.sleep(0.5)
            code = pod.wait("master", timeout=60)
            timings["run"] = time.monotonic() - started
            started = time.monotonic()
            log = pod.logs("master")
            workers = [pod.wait(f"worker-{i + 1}", timeout=60) for i in range(WORKERS)]
            endpoint_state = pod.state("endpoint")
        timings["workers, kube down"] = time.monotonic() - started
        # the Locust operator passes only arguments: the image's entrypoint hands them to locust
        version = podman.podman("run", "--rm", "--network", "none", app_image, "--version")
    finally:
        started = time.monotonic()
        podman.remove_image(app_image)
        timings["image removal"] = time.monotonic() - started
        print("\n" + ", ".join(f"{k}: {v:.0f} s" for k, v in timings.items()))

    runs = list((tmp_path / "results-master").iterdir())
    assert len(runs) == 1, (runs, log[-3000:])
    records = read_results(runs[0] / "results.jsonl")
    end = records[-1]
    assert end["type"] == "end", log[-3000:]
    passed = code == ExitCode.PASSED or (code == ExitCode.SLO_FAILED and end["slo_failures"])
    assert code == end["exit_code"] and passed, log[-3000:]
    windows = [r for r in records if r["type"] == "window"]
    assert [w["target_rate"] for w in windows] == [30, 150]
    assert all(sorted(w["workers"]) == [str(i) for i in range(WORKERS)] for w in windows)  # merged from both
    throttled = sum(w["summary"]["throttled"] for w in windows)
    assert end["sent"] == sum(w["summary"]["sent"] for w in windows) > 0
    bound = [w["index"] for w in windows if w["saturation"]["client_bound"]]
    assert throttled > 0, f"no throttle; client-bound windows {bound} (a busy machine?): {log[-2000:]}"
    assert throttled_total(scraped) == throttled, scraped[-2000:]  # the master's last scrape, before it quit
    assert workers == [0] * WORKERS  # the master's quit ends the workers cleanly
    assert endpoint_state == "running"  # the endpoint outlives the run, as its Deployment would keep it
    assert version.startswith("locust "), version
