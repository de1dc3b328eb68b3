"""Every CLI command against what a user can cause, as a table: an endpoint that does not answer, credentials it
refuses, a port another process holds, a reader that closed stdout. Each ends with no traceback, one error line and
the code docs/verdicts.md gives it, and its last line is its exit line in the command's own words.

Where a mode does not apply it is not in the table: `report`, `diff`, `validate`, `scenarios`, `init` and `k8s` reach
no endpoint and bind no port; `ui` never exits on an endpoint (its form refuses one that does not answer, see
tests/integration/test_webui.py) and writes nothing to stdout once serving; `local` answers, it does not call.
A run whose stdout closed is not a failure: it goes on to its end and says once what it dropped (the last test).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode, exit_line
from dynlocust.local.embedded import LocalEndpoint
from tests.support.runs import ROOT, run_dynlocust
from tests.support.scenarios import put_scenario, write_scenario

ERROR_LINE = re.compile(r"^dynlocust( \w+)?: error: |/(ERROR|CRITICAL)/", re.MULTILINE)
"""A line that says something failed: dynlocust's own, or a Locust log record at ERROR or above."""
GOOD_KEYS = {"AKIDGOOD": "good-secret"}
BAD_KEYS = {"AWS_ACCESS_KEY_ID": "AKIDBAD", "AWS_SECRET_ACCESS_KEY": "bad-secret"}
ECS = ["ecs", "run", "write-ceiling", "--workers", "1", "--image", "r/dynlocust:1", "--vpc-id", "vpc-1"]

# (mode, argv after `dynlocust` with {placeholders}, the exit code, what the error line must say)
TABLE: list[tuple[str, list[str], int, str]] = [
    ("unreachable", ["run", "{puts}", "--host", "{closed}", "--results-dir", "{tmp}/r"], 2, "Could not connect"),
    ("unreachable", ["cleanup", "--run-id", "r1", "--host", "{closed}"], 2, "found none at {closed}"),
    ("unreachable", ["compare", "--endpoint", "{closed}", "--runs", "1"], 2, "--endpoint: expected a DynamoDB"),
    ("unreachable", [*ECS, "--subnets", "s-1", "--endpoint-url", "{closed}"], 2, "Could not connect"),
    ("bad credentials", ["run", "{puts}", "--host", "{strict}", "--results-dir", "{tmp}/r"], 2, "security token"),
    ("bad credentials", ["cleanup", "--run-id", "r1", "--host", "{strict}"], 2, "UnrecognizedClientException"),
    ("bad credentials", ["compare", "--endpoint", "{strict}", "--runs", "1"], 2, "UnrecognizedClientException"),
    ("port in use", ["ui", "{puts}", "--web-port", "{busy}"], 2, "--web-port: expected a port free"),
    ("port in use", ["run", "{puts}", "--metrics-port", "{busy}", "--results-dir", "{tmp}/r"], 2, "--metrics-port"),
    ("port in use", ["local", "--port", "{busy}"], 2, "cannot listen on 127.0.0.1:{busy}"),
    ("closed stdout", ["validate", "{puts}"], 1, "stdout"),
    ("closed stdout", ["scenarios"], 1, "stdout"),
    ("closed stdout", ["init", "{tmp}/starter"], 1, "stdout"),
    ("closed stdout", ["k8s", "render", "quickstart", "--workers", "1", "--image", "r/dynlocust:1"], 1, "stdout"),
    ("closed stdout", ["report", "{results}"], 1, "stdout"),
    ("closed stdout", ["diff", "{results}", "{results}"], 1, "stdout"),
    ("closed stdout", ["cleanup", "--run-id", "r1", "--host", "{open}"], 1, "stdout"),
    ("closed stdout", ["compare", "--runs", "1", "--repeat", "1", "--only", "GetItem"], 1, "stdout"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The placeholders' values: endpoints (one that checks signatures), a port held, a real run's results."""
    work = tmp_path_factory.mktemp("failures")
    puts = write_scenario(work, put_scenario("puts", "steps: [{rate: 10, window: 2s}]"), "puts.yaml")
    run = run_dynlocust(puts, work / "runs", run_id="real")
    assert run.returncode == ExitCode.PASSED, run.stderr[-2000:]
    strict = LocalEndpoint(verify_signatures=True, credentials=GOOD_KEYS).start()
    plain = LocalEndpoint(capacity=False).start()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        yield {
            "puts": str(puts),
            "results": str(work / "runs" / "real" / "results.jsonl"),
            "closed": f"http://127.0.0.1:{_free_port()}",
            "strict": strict.url,
            "open": plain.url,
            "busy": str(busy.getsockname()[1]),
        }
    finally:
        busy.close()
        strict.stop()
        plain.stop()


def _closed_pipe() -> int:
    """The writing end of a pipe whose reader is already gone (as after `| head -1` read its line)."""
    read, write = os.pipe()
    os.close(read)
    return write


def _dynlocust(argv: list[str], cwd: Path, *, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DYNLOCUST_"))}
    env.update(PYTHONPATH=str(ROOT), DYNLOCUST_METRICS_PORT="0", AWS_EC2_METADATA_DISABLED="true", **BAD_KEYS)
    return subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", *argv], cwd=cwd, env=env, text=True, timeout=180,
        stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "argv", "code", "says"), TABLE, ids=[f"{argv[0]}-{mode.replace(' ', '-')}" for mode, argv, *_ in TABLE]
)
def test_each_command_fails_in_one_line_with_its_code(
    places: dict[str, str], tmp_path: Path, mode: str, argv: list[str], code: int, says: str
) -> None:
    values = {**places, "tmp": str(tmp_path)}
    args = [a.format(**values) for a in argv]
    if mode == "closed stdout":
        pipe = _closed_pipe()
        try:
            proc = _dynlocust(args, tmp_path, stdout=pipe)
        finally:
            os.close(pipe)
        out = ""
    else:
        proc = _dynlocust(args, tmp_path)
        out = proc.stdout
    both = out + proc.stderr
    assert "Traceback" not in both, both[-3000:]
    assert proc.returncode == code, both[-3000:]
    errors = ERROR_LINE.findall(both)
    assert len(errors) == 1, both[-3000:]
    (line,) = [x for x in both.splitlines() if ERROR_LINE.search(x)]
    assert says.format(**values) in line, line
    said = [x for x in both.splitlines() if x.startswith("exit code ")]
    assert said == [exit_line(code, argv[0])], both[-3000:]  # one exit line, in the command's words
    assert any(stream.rstrip().endswith(said[0]) for stream in (out, proc.stderr))  # the last line of its stream
    if argv[0] == "run":
        assert not (tmp_path / "r").exists()  # refused before anything started
        assert "Response time percentiles" not in both and "Aggregated" not in both  # no empty Locust tables


def test_a_run_whose_stdout_closed_goes_on_to_its_end(places: dict[str, str], tmp_path: Path) -> None:
    """It waited forever: the window's line raised BrokenPipeError inside the greenlet that closed the window."""
    pipe = _closed_pipe()
    try:
        proc = _dynlocust(["run", places["puts"], "--results-dir", str(tmp_path), "--run-id", "cut"], ROOT, stdout=pipe)
    finally:
        os.close(pipe)
    assert "Traceback" not in proc.stderr and not ERROR_LINE.search(proc.stderr), proc.stderr[-3000:]
    assert proc.returncode == ExitCode.PASSED, proc.stderr[-3000:]
    assert proc.stderr.count("dynlocust: warning: stdout closed early") == 1
    assert proc.stderr.rstrip().splitlines()[-1] == exit_line(ExitCode.PASSED, "run")
    assert (tmp_path / "cut" / "report" / "report.html").is_file()


def test_the_default_metrics_port_taken_is_named_at_the_start_and_the_end(
    places: dict[str, str], tmp_path: Path
) -> None:
    """Held here, or by another process already: either way the run cannot have it."""
    from dynlocust.plugin.settings import DEFAULT_METRICS_PORT

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", DEFAULT_METRICS_PORT))
        holder.listen()
    except OSError:
        pass  # someone else's: as taken
    try:
        env_free = {k: v for k, v in os.environ.items() if k != "DYNLOCUST_METRICS_PORT"}
        argv = [sys.executable, "-m", "dynlocust.cli", "run", places["puts"], "--results-dir", str(tmp_path)]
        proc = subprocess.run(argv, cwd=ROOT, env={**env_free, "PYTHONPATH": str(ROOT)}, capture_output=True,
                              text=True, timeout=180)  # fmt: skip
    finally:
        holder.close()
    assert proc.returncode == ExitCode.PASSED, proc.stderr[-3000:]
    warning = f"Prometheus /metrics not served: the default port 127.0.0.1:{DEFAULT_METRICS_PORT} is taken"
    assert warning in proc.stderr.split("embedded local endpoint")[0]  # at the start, before anything runs
    tail = proc.stdout.rstrip().splitlines()[-2:]
    assert tail[0].startswith(f"warning: {warning}") and tail[1] == exit_line(ExitCode.PASSED), tail
