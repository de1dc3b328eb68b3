"""A real fleet of one scenario: a headless master on 127.0.0.1 and its workers, as separate Locust processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.runs import ROOT

LOCUSTFILE = ROOT / "locustfiles" / "scenario.py"


def start_fleet(
    scenario: Path, host: str, results_dir: Path, run_id: str, workers: int = 2
) -> tuple[subprocess.Popen[str], list[subprocess.Popen[Any]]]:
    """The master (its console piped, text) expecting `workers` workers (their output dropped), all started now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    common = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--scenario", str(scenario)]
    master = subprocess.Popen(
        [*common, "--master", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port), "--headless",
         "--expect-workers", str(workers), "-u", "10", "-r", "10", "--host", host, "--results-dir", str(results_dir),
         "--run-id", run_id, "--metrics-port", "0", "--only-summary"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    argv = [*common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]
    argv += ["--metrics-port", "0", "--results-dir", str(results_dir)]
    quiet = subprocess.DEVNULL
    return master, [subprocess.Popen(argv, cwd=ROOT, env=env, stdout=quiet, stderr=quiet) for _ in range(workers)]


def stop_all(procs: list[subprocess.Popen[Any]]) -> None:
    """Kill whichever of `procs` still runs, and reap them all."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
