"""docker/k8s/locusttest.yaml's arguments as the Locust operator passes them, run as local processes.

No operator runs here, but what it starts is known (locustio/k8s-operator's objects.py): a master container with
``--master`` + the LocustTest's ``args`` and ``workers`` containers with ``--worker --master-host <its Service>`` +
the same ``args``, through the image's entrypoint (locust), with ``env`` set and the ConfigMap mounted at
/home/locust. Here the ConfigMap holds a short local scenario instead of the shipped remote one, /home/locust is a
test directory, and what a pod network gives is made local: the Service name and 0.0.0.0 become 127.0.0.1 and the
fixed ports free ones.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from dynlocust.exit_codes import ExitCode
from dynlocust.run.results import read_results
from tests.integration.launch.test_kubernetes_pod import throttled_total
from tests.integration.test_docker_compose import free_port, processes, wait_port  # noqa: F401 - a fixture
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

SCENARIO = put_scenario("operator", "ramp: {from: 40, to: 120, step: 80, window: 3s}", capacity_scale=0.01)
OPERATOR_MOUNT = "/home/locust"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_locusttest_arguments_run_a_fleet_that_ends_with_the_runs_exit_code(
    tmp_path: Path,
    processes: list[subprocess.Popen[bytes]],  # noqa: F811
) -> None:
    _, test, _ = yaml.safe_load_all((ROOT / "docker/k8s/locusttest.yaml").read_text())
    spec = test["spec"]
    mount = tmp_path / "home-locust"
    mount.mkdir()
    (mount / "scenario.yaml").write_text(SCENARIO)
    results = tmp_path / "results"
    args = [
        a.replace(OPERATOR_MOUNT, str(mount)).replace("/app/", f"{ROOT}/").replace("/tmp/results", str(results))
        for a in shlex.split(spec["args"])
    ]
    env = {**os.environ, **{e["name"]: e["value"] for e in spec["env"]}}
    metrics = free_port()
    env.update(DYNLOCUST_METRICS_HOST="127.0.0.1", DYNLOCUST_METRICS_PORT=str(metrics))  # the pod's 0.0.0.0:9646
    port = free_port()
    locust = str(Path(sys.executable).with_name("locust"))
    master_argv = [locust, "--master", *args, "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port)]
    with open(tmp_path / "master.log", "wb") as out:
        master = subprocess.Popen(master_argv, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    processes.append(master)
    wait_port(port, master)
    workers = []
    for i in range(spec["workers"]):
        worker_env = {**env, "DYNLOCUST_METRICS_PORT": "0"}  # each pod has its own port; here they would collide
        argv = [locust, "--worker", "--master-host", "127.0.0.1", *args, "--master-port", str(port)]
        with open(tmp_path / f"worker-{i}.log", "wb") as out:
            workers.append(subprocess.Popen(argv, cwd=tmp_path, env=worker_env, stdout=out, stderr=subprocess.STDOUT))
        processes.append(workers[-1])
    scraped = ""
    while master.poll() is None:
        url = f"http://127.0.0.1:{metrics}/metrics"
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:  # as Prometheus would
            scraped = response.read().decode()
        with contextlib.suppress(subprocess.TimeoutExpired):
            master.wait(0.5)
    log = (tmp_path / "master.log").read_text()
    (run,) = list(results.iterdir())
    records = read_results(run / "results.jsonl")
    end = records[-1]
    assert end["type"] == "end" and master.returncode == end["exit_code"], log[-3000:]
    assert end["exit_code"] in (ExitCode.PASSED, ExitCode.SLO_FAILED), log[-3000:]
    windows = [r for r in records if r["type"] == "window"]
    assert all(sorted(w["workers"]) == [str(i) for i in range(spec["workers"])] for w in windows) and windows
    throttled = sum(w["summary"]["throttled"] for w in windows)
    total = throttled_total(scraped)
    bound = [w["index"] for w in windows if w["saturation"]["client_bound"]]
    assert throttled > 0, f"no throttle; client-bound windows {bound} (a busy machine?)"
    assert total == throttled, scraped[-2000:]  # the master's last scrape, before it quit
    assert [w.wait(30) for w in workers] == [0] * spec["workers"]  # the operator's worker Job then completes
