"""Run `dynlocust run` (or `locust -f`) as a real process and read what it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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


@dataclass
class StartedRun:
    """A `dynlocust run` started and not waited for. Its console goes to unnamed temporary files, not pipes: a run
    whose output nobody reads while another is waited for must never block on a full pipe."""

    proc: subprocess.Popen[str]
    path: Path
    stdout: IO[str]
    stderr: IO[str]

    def wait_set_up(self, timeout: float) -> None:
        """Wait up to `timeout` s until the run has written its run record (its tables created and seeded, its
        windows about to begin) or has ended."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            if self.path.exists() and "\n" in self.path.read_text():
                return
            time.sleep(0.2)

    def result(self, timeout: float) -> RunResult:
        """Wait up to `timeout` s (then kill it and raise TimeoutExpired, as subprocess.run does) and read it."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            outputs = []
            for stream in (self.stdout, self.stderr):
                stream.seek(0)
                outputs.append(stream.read())
                stream.close()
        records = read_results(self.path) if self.path.exists() else []
        return RunResult(self.proc.returncode, outputs[0], outputs[1], records)


def start_dynlocust(
    scenario: Path | str,
    results_dir: Path,
    *args: str,
    run_id: str = "test-run",
    locustfile: Path | None = None,
    env: dict[str, str] | None = None,
    prefix: Sequence[str] = (),
) -> StartedRun:
    """`dynlocust run SCENARIO` (or `locust -f LOCUSTFILE --scenario SCENARIO --headless` when given a locustfile),
    after `prefix` (a command that runs it, such as `taskset -c 0`), started now."""
    if locustfile is None:
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario)]
    else:
        argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--scenario", str(scenario)]
    argv += ["--results-dir", str(results_dir), "--run-id", run_id, "--metrics-port", "0", *args]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    stdout, stderr = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed by result
    proc = subprocess.Popen([*prefix, *argv], cwd=ROOT, env=full_env, stdout=stdout, stderr=stderr, text=True)
    return StartedRun(proc, results_dir / run_id / "results.jsonl", stdout, stderr)


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
    """`start_dynlocust`, waited for up to `timeout` s."""
    started = start_dynlocust(
        scenario, results_dir, *args, run_id=run_id, locustfile=locustfile, env=env, prefix=prefix
    )
    return started.result(timeout)


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
