"""Run `dynlocust run` (or `locust -f`) as a real process and read what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.run.results import read_results

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
    def end(self) -> dict[str, Any]:
        """The run's `end` record; a run that wrote none fails the test here, with the tail of its stderr."""
        found = next((r for r in self.records if r["type"] == "end"), None)
        if found is None:
            raise AssertionError(f"the run wrote no end record (exit {self.returncode}): {self.stderr[-2000:]}")
        return found


def run_dynlocust(
    scenario: Path | str,
    results_dir: Path,
    *args: str,
    run_id: str = "test-run",
    locustfile: Path | None = None,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
) -> RunResult:
    """`dynlocust run SCENARIO` (or `locust -f LOCUSTFILE --scenario SCENARIO --headless` when given a locustfile),
    after `prefix` (a command that runs it, such as `taskset -c 0`)."""
    if locustfile is None:
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario)]
    else:
        argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--scenario", str(scenario)]
    argv += ["--results-dir", str(results_dir), "--run-id", run_id, "--metrics-port", "0", *args]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([*prefix, *argv], cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)
    path = results_dir / run_id / "results.jsonl"
    records = read_results(path) if path.exists() else []
    return RunResult(proc.returncode, proc.stdout, proc.stderr, records)


def without_exit_line(stderr: str, code: int = 2) -> str:
    """`stderr` less its last line, which must be `code`'s `exit code N: meaning` line (the CLI's last word)."""
    from dynlocust.exit_codes import exit_line

    head, _, last = stderr.rstrip("\n").rpartition("\n")
    assert last == exit_line(code), stderr
    return head + "\n" if head else ""


def start_up_seconds() -> float:
    """Wall seconds a fresh interpreter takes to import what a run imports (Locust, botocore, dynlocust's plugin):
    the baseline, taken in the same test, that an 'it ended on time' bound scales with on a busy machine."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import locust, botocore.session, dynlocust.plugin.listeners"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True, timeout=300,
    )  # fmt: skip
    return time.monotonic() - started
