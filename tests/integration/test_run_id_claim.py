"""Two `dynlocust run` processes given the same `--run-id` at once (127.0.0.1 only): the second is refused with one
line and exit 2, and the first finishes as it would alone, its tables its own until its own teardown.

- on one endpoint (two CI jobs of one account and region): the table check refuses the second before it creates
  anything;
- each with an embedded endpoint of its own, one results directory (two jobs on one machine): the results file is
  claimed by an exclusive create, so the loser stops instead of running on with no results writer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.claim import CLAIM_TAG, RUN_TAG, tags_of
from dynlocust.run.results import read_results
from tests.support.runs import ROOT
from tests.support.scenarios import scenario_yaml, write_scenario

WINDOWS = 3
SCENARIO = scenario_yaml(
    "claim",
    "steps: [" + ", ".join(["{rate: 10, window: 2s}"] * WINDOWS) + "]",
    transport=None,
    item_size=100,
    concurrency=4,
    deadline="1s",
)


def start(scenario: Path, results: Path, run_id: str, host: str | None) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), *(["--host", host] if host else [])]
    argv += ["--results-dir", str(results), "--run-id", run_id, "--metrics-port", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str], timeout: float = 90) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate(timeout=10)
        pytest.fail(f"the run did not end within {timeout} s (it hung): {err[-3000:]}")
    return proc.returncode, out, err


def wait_until(condition: Any, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            code, _, err = finish(proc, 10)
            pytest.fail(f"condition not reached (exit {code}): {err[-3000:]}")
        time.sleep(0.05)


def refusal_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "set-up failed: --run-id" in line]


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    with LocalEndpoint() as started:
        yield started


@pytest.mark.slow
def test_a_second_run_with_the_same_id_on_one_endpoint_is_refused_and_the_first_keeps_its_table(
    endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
    scenario = write_scenario(tmp_path, SCENARIO, "claim.yaml")
    first = start(scenario, tmp_path / "first", "same", endpoint.url)
    results = tmp_path / "first" / "same" / "results.jsonl"
    wait_until(lambda: results.exists() and any(r["type"] == "window" for r in read_results(results)), first)
    arn = client.describe_table(TableName="t-same")["Table"]["TableArn"]
    claim = tags_of(client, arn).get(CLAIM_TAG)

    # another job of the same account and region, with results of its own
    code, out, err = finish(start(scenario, tmp_path / "second", "same", endpoint.url))
    assert code == ExitCode.BAD_INPUT, err[-3000:]
    assert client.list_tables()["TableNames"] == ["t-same"]  # the first run's table, intact and still its own
    assert tags_of(client, arn) == {RUN_TAG: "same", CLAIM_TAG: claim}
    (line,) = refusal_lines(err)
    assert line.endswith(
        "set-up failed: --run-id same: expected a run id no table on the target uses, found table t-same of another "
        "run with this id (running, or left behind); choose another --run-id, or `dynlocust cleanup --run-id same`"
    )
    assert "exit code 2: bad input" in out and "Traceback" not in err
    assert "deleted tables" not in err and "Ramping to" not in err  # it created nothing, spawned nobody
    assert not (tmp_path / "second" / "same" / "results.jsonl").exists()
    assert first.poll() is None, "the first run should still be running"

    code, out, err = finish(first)
    assert code == ExitCode.PASSED, err[-3000:]
    records = read_results(results)
    assert len([r for r in records if r["type"] == "window"]) == WINDOWS and records[-1]["type"] == "end"
    assert "deleted tables t-same" in err  # by its own teardown
    assert client.list_tables()["TableNames"] == []


@pytest.mark.slow
def test_two_runs_with_the_same_id_and_their_own_embedded_endpoints_end_one_refused(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, SCENARIO, "claim.yaml")
    # the first's tables take 4 s to become ACTIVE: it opens its results only after them, so the second, on an
    # embedded endpoint of its own, gets past the start-up check (no results yet) and races it to the results file
    with LocalEndpoint(create_delay=4.0) as slow:
        client = make_client(slow.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
        first = start(scenario, tmp_path, "same", slow.url)
        wait_until(lambda: "t-same" in client.list_tables()["TableNames"], first)
        second = start(scenario, tmp_path, "same", None)
        ended = {"first": finish(first), "second": finish(second)}
        assert client.list_tables()["TableNames"] == []  # whichever lost, the first deleted its own table
    codes = sorted(code for code, _, _ in ended.values())
    assert codes == [ExitCode.PASSED, ExitCode.BAD_INPUT], {k: (c, e[-2000:]) for k, (c, _, e) in ended.items()}
    (loser,) = [err for code, _, err in ended.values() if code == ExitCode.BAD_INPUT]
    said = [line for line in loser.splitlines() if "--run-id" in line]
    assert len(said) == 1 and "choose another" in said[0] and str(tmp_path / "same" / "results.jsonl") in said[0]
    assert "Traceback" not in loser
    records = read_results(tmp_path / "same" / "results.jsonl")  # one run's, whole
    assert [r["type"] for r in records] == ["run"] + ["window"] * WINDOWS + ["end"]
    assert records[-1]["exit_code"] == ExitCode.PASSED
