"""Exit codes as CI meets them: every way a run ends prints its `exit code N: meaning` line and exits with that N,
measured with a second process keeping a core busy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode, exit_line
from tests.support.busy import busy_core
from tests.support.runs import ROOT, run_dynlocust
from tests.support.scenarios import put_scenario, write_scenario

RUN = ["--results-dir", "{results}", "--metrics-port", "0"]


@pytest.mark.slow  # 14-20 s with other work on 2 cores (make test-quick stays under 5 minutes)
def test_a_run_whose_windows_were_all_client_bound_exits_8_not_0(tmp_path: Path) -> None:
    # one user cannot send 2,000 puts/s: every window drops most of its schedule, so none measured the table
    text = put_scenario("clientbound", "steps: [{rate: 2000, window: 2s}, {rate: 2000, window: 2s}]", concurrency=1)
    with busy_core():
        run = run_dynlocust(write_scenario(tmp_path, text), tmp_path / "results")
    labels = [w["verdict"] for w in run.windows]
    assert labels == ["client-bound", "client-bound"], run.stderr[-2000:]
    assert run.returncode == ExitCode.INCONCLUSIVE, run.stderr[-2000:]
    assert run.end["exit_code"] == ExitCode.INCONCLUSIVE
    assert exit_line(ExitCode.INCONCLUSIVE) in run.stdout + run.stderr


def test_a_wrong_host_exits_2_with_its_exit_line(tmp_path: Path) -> None:
    # nothing listens on port 9 (discard) of 127.0.0.1: set-up cannot create the table
    text = put_scenario("wronghost", "steps: [{rate: 10, window: 2s}]")
    with busy_core():
        run = run_dynlocust(write_scenario(tmp_path, text), tmp_path / "results", "--host", "http://127.0.0.1:9")
    assert run.returncode == ExitCode.BAD_INPUT, run.stderr[-2000:]
    assert "set-up failed: Could not connect" in run.stderr
    assert run.stdout.rstrip().splitlines()[-1] == exit_line(ExitCode.BAD_INPUT)
    assert "Traceback" not in run.stderr


MISSING_TABLE = put_scenario("missingtable", "steps: [{rate: 10, window: 2s}]").replace(
    "partition_key: {name: pk, type: S}}",
    "partition_key: {name: pk, type: S}, use_existing: true, existing_table_name: no-such-table}",
)

# (what a user did, argv after `dynlocust` with {placeholders}, the exit code); each ends with exactly one exit line
PATHS: list[tuple[str, list[str], int]] = [
    ("bad scenario file", ["run", "{bad}", *RUN], ExitCode.BAD_INPUT),
    ("missing scenario file", ["run", "{tmp}/nope.yaml", *RUN], ExitCode.BAD_INPUT),
    ("bad dynlocust option", ["run", "{puts}", "--client-cpu", "2", *RUN], ExitCode.BAD_INPUT),
    ("bad Locust option", ["run", "{puts}", "--no-such-option", *RUN], ExitCode.BAD_INPUT),
    ("unsafe run id", ["run", "{puts}", "--run-id", "../x", *RUN], ExitCode.BAD_INPUT),
    ("missing table", ["run", "{missing_table}", *RUN], ExitCode.BAD_INPUT),
    ("ui of a bad scenario", ["ui", "{bad}"], ExitCode.BAD_INPUT),
    ("unknown command", ["nosuch"], ExitCode.BAD_INPUT),
    ("validate a bad scenario", ["validate", "{bad}"], ExitCode.BAD_INPUT),
    ("validate a good scenario", ["validate", "{puts}"], ExitCode.PASSED),
    ("scenarios", ["scenarios"], ExitCode.PASSED),
    ("init", ["init", "{tmp}/starter"], ExitCode.PASSED),
    ("init over a starter", ["init", "{tmp}/existing"], ExitCode.BAD_INPUT),
    ("cleanup with a bad run id", ["cleanup", "--run-id", "a b", "--host", "http://127.0.0.1:9"], ExitCode.BAD_INPUT),
    ("compare with a bad baseline", ["compare", "--endpoint", "http://127.0.0.1:9", "--baseline", "{bad}"], 2),
    ("compare with bad runs", ["compare", "--runs", "0"], ExitCode.BAD_INPUT),
    ("compare with an unknown option", ["compare", "--nope"], ExitCode.BAD_INPUT),
    ("report of a missing results file", ["report", "{tmp}/missing/results.jsonl"], ExitCode.BAD_INPUT),
    ("report of a real run", ["report", "{run}"], ExitCode.PASSED),
    ("diff of incompatible runs", ["diff", "{run}", "{other_mix}"], ExitCode.BAD_INPUT),
    ("diff of a run with itself", ["diff", "{run}", "{run}"], ExitCode.PASSED),
    ("k8s of a missing scenario", ["k8s", "render", "{tmp}/nope.yaml", "--workers", "2"], ExitCode.BAD_INPUT),
    ("ecs without a command", ["ecs"], ExitCode.BAD_INPUT),
]


@pytest.fixture(scope="module")
def real_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("exitpaths")
    scenario = write_scenario(directory, put_scenario("puts", "steps: [{rate: 10, window: 2s}]"))
    run = run_dynlocust(scenario, directory / "results", run_id="real")
    assert run.returncode == ExitCode.PASSED, run.stderr[-2000:]
    return directory / "results" / "real" / "results.jsonl"


@pytest.mark.parametrize(("path", "argv", "code"), PATHS, ids=[p[0] for p in PATHS])
def test_every_exit_path_ends_with_its_exit_line(
    real_results: Path, tmp_path: Path, path: str, argv: list[str], code: int
) -> None:
    records = [json.loads(line) for line in real_results.read_text().splitlines()]
    records[0]["shape"]["workload"]["operations"][0]["op"] = "get"
    other_mix = tmp_path / "other.jsonl"
    other_mix.write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "bad.yaml").write_text("name: bad\ntarget: {local: {}}\nfoo: 1\n")
    (tmp_path / "existing").mkdir()
    (tmp_path / "existing" / "scenario.yaml").write_text("name: mine\n")
    values = {
        "tmp": str(tmp_path),
        "bad": str(tmp_path / "bad.yaml"),
        "puts": str(write_scenario(tmp_path, put_scenario("puts", "steps: [{rate: 10, window: 2s}]"), "puts.yaml")),
        "missing_table": str(write_scenario(tmp_path, MISSING_TABLE, "missing_table.yaml")),
        "run": str(real_results),
        "other_mix": str(other_mix),
        "results": str(tmp_path / "results"),
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "dynlocust.cli", *(a.format(**values) for a in argv)]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("exit code ")]
    assert said == [exit_line(code, argv[0])], proc.stdout[-2000:] + proc.stderr[-2000:]  # in the command's words
    stream = proc.stdout if proc.stdout.rstrip().endswith(said[0]) else proc.stderr
    assert stream.rstrip().splitlines()[-1] == said[0]  # the last word of its stream
    assert "Traceback" not in proc.stderr
