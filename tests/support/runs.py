"""Run `dynlocust run` (or `locust -f`) as a real process and read what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.results import read_results

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class RunResult:
    returncode: int
    stdout: str
    stderr: str
    records: list[dict[str, Any]]

    @property
    def windows(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["type"] == "window"]

    @property
    def end(self) -> dict[str, Any] | None:
        return next((r for r in self.records if r["type"] == "end"), None)


def run_dynlocust(
    scenario: Path | str,
    results_dir: Path,
    *args: str,
    run_id: str = "test-run",
    locustfile: Path | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> RunResult:
    """`dynlocust run SCENARIO` (or `locust -f LOCUSTFILE --scenario SCENARIO --headless` when given a locustfile)."""
    if locustfile is None:
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario)]
    else:
        argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--scenario", str(scenario)]
    argv += ["--results-dir", str(results_dir), "--run-id", run_id, "--metrics-port", "0", *args]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run(argv, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)
    path = results_dir / run_id / "results.jsonl"
    records = read_results(path) if path.exists() else []
    return RunResult(proc.returncode, proc.stdout, proc.stderr, records)
