"""A real `locust -f ... --headless` run against the fault server: throttles are failures named by their code."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from tests.conftest import FaultServer
from tests.support.scenarios import put_scenario, write_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_headless_run_reports_throttles_by_code(fault_server: FaultServer, tmp_path: Path) -> None:
    env = {**os.environ, "DYNLOCUST_EXAMPLE_TABLE": "throttle", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [
            sys.executable, "-m", "locust", "-f", str(ROOT / "locustfiles" / "example.py"),
            "--headless", "-u", "10", "-r", "10", "-t", "10s", "--host", fault_server.url,
            "--csv", str(tmp_path / "run"), "--only-summary", "--json", "--loglevel", "WARNING",
        ],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-3000:]
    with open(tmp_path / "run_failures.csv", newline="") as f:
        failures = list(csv.DictReader(f))
    assert failures, "no failures recorded"
    assert {row["Error"] for row in failures} == {"ThrottlingException (TableWriteKeyRangeThroughputExceeded)"}
    assert {row["Name"] for row in failures} == {"PutItem throttle", "GetItem throttle"}
    final = json.loads(result.stdout[result.stdout.index("[") :])  # --json: Locust's final stats
    total = sum(entry["num_requests"] for entry in final)
    failed = sum(entry["num_failures"] for entry in final)
    assert total > 100 and failed == total
    # Every call Locust counted reached the server once (no retries); the only calls the server saw that Locust did
    # not count are those in flight when the time limit killed the 10 users.
    assert 0 <= len(fault_server.requests()) - total <= 10
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", "ftp://x"], "--host: expected a DynamoDB endpoint URL"),
        (["--host", "http://127.0.0.1:1", "--deadline", "-1"], "--deadline: expected a positive number of seconds"),
        (["--host", "http://127.0.0.1:1", "--pool-size", "many"], "--pool-size: expected a whole number >= 0"),
        (["--host", "http://127.0.0.1:1", "--region", "us east"], "--region: expected an AWS region name"),
        (["--host", "http://127.0.0.1:1", "--rate-scale", "x"], "--rate-scale: expected a positive scale factor"),
        (["--scenario", "quickstrat"], "--scenario: quickstrat: expected a scenario file or a shipped scenario"),
    ],
)
def test_bad_options_get_one_clear_line_and_exit_code_2(args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(ROOT / "locustfiles" / "example.py"), "--headless", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert f"dynlocust: error: {message}" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_shipped_scenario_by_bare_name_shrunk_ends_with_its_window_table_once_after_locusts_own(
    tmp_path: Path,
) -> None:
    """`locust -f` takes a shipped scenario's name and the scale options, and ends as `dynlocust run` does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DYNLOCUST_DURATION_SCALE": "0.25"}
    result = subprocess.run(
        [
            sys.executable, "-m", "locust", "-f", str(ROOT / "locustfiles" / "scenario.py"), "--scenario", "quickstart",
            "--headless", "-u", "10", "-r", "10", "--results-dir", str(tmp_path), "--metrics-port", "0",
            "--rate-scale", "0.5",
        ],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180,
    )  # fmt: skip
    out = result.stdout  # Locust logs its tables to stderr, dynlocust prints to stdout: one stream, in order
    # 3: the quickstart's p99 SLO can fail on a loaded machine; either way the run completed and said so
    assert result.returncode in (0, 3), out[-3000:]
    table = out.index("| window | target/s | offered (req) | accepted/s |")
    assert out.index("Response time percentiles") < table  # Locust's tables first, the window table last
    assert out.count("| window |") == 1 and out.count("conclusion: ") == 1
    rows = [line for line in out[table:].splitlines() if line.startswith("| ")][1:]
    assert [row.split("|")[2].strip() for row in rows] == ["25", "50", "75", "100"]  # quickstart's ramp x0.5
    assert "No run time limit set" not in out
    (results,) = tmp_path.glob("*/results.jsonl")
    assert f"report: {results.parent / 'report' / 'report.html'} (" in out


@pytest.mark.parametrize(
    ("users", "spawned"),
    [([], 7), (["-u", "3", "-r", "3"], 3)],
    ids=["the-scenarios-concurrency", "the-command-lines"],
)
def test_headless_takes_the_scenarios_concurrency_unless_u_is_given(
    users: list[str], spawned: int, tmp_path: Path
) -> None:
    """Locust's own default is one user: one request in flight, whatever the scenario's concurrency."""
    scenario = write_scenario(tmp_path, put_scenario("users", "steps: [{rate: 10, window: 2s}]", concurrency=7))
    result = subprocess.run(
        [
            sys.executable, "-m", "locust", "-f", str(ROOT / "locustfiles" / "scenario.py"), "--scenario",
            str(scenario), "--headless", *users, "--results-dir", str(tmp_path / "runs"), "--metrics-port", "0",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=120,
    )  # fmt: skip
    # 8: a starved process (under stress-ng, 93% of the window waiting for a CPU) drops its late sends, and says so
    assert result.returncode in (ExitCode.PASSED, ExitCode.INCONCLUSIVE), result.stdout[-3000:]
    assert result.returncode == ExitCode.PASSED or "client-bound" in result.stdout.rpartition("conclusion: ")[2]
    assert f'All users spawned: {{"ScenarioUser": {spawned}}} ({spawned} total users)' in result.stdout
