"""The embedded endpoint's lifetime: it outlives its run's teardown, also on a terminal's Ctrl-C, and dies with its
parent however the parent ends; so does a worker forked by `--processes`, and a SIGTERM at any phase exits 4.

A terminal's Ctrl-C sends SIGINT to its whole foreground process group: to the run's process and to the endpoint
it started. The endpoint then died before teardown could delete the run's tables ("could not delete table ...
Could not connect"). Here each run starts in a session of its own, as a shell starts a job, and the signal goes to
its process group (`os.killpg`), as the terminal sends it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode, exit_line
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.results import read_results
from tests.support.processes import ServerProcess
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario, scenario_yaml, write_scenario

SCENARIO = put_scenario("lifetime", "steps: [{rate: 20, window: 2s}, {rate: 20, window: 30s}]", concurrency=4)
PHASED = scenario_yaml(
    "phased",
    "steps: [{rate: 20, window: 2s}, {rate: 20, window: 2s}]",
    tables="[{name: a, partition_key: {name: pk, type: S}, seed: {items: 2000, item_size: 1KB}},"
    " {name: b, partition_key: {name: pk, type: S}}]",
    item_size=100,
    operations="[{op: put, weight: 1, table: b}]",
    concurrency=4,
    deadline="1s",
)
"""Every phase reachable in seconds: the embedded endpoint's start, seeding, two windows, teardown."""
PHASES = {
    "start-up": "starting the embedded local endpoint",
    "set-up": "seeding 2000 items into",
    "running": "window 1/",
    "teardown": "deleting tables",
}
"""Each phase of a run, by the first line the run prints in it."""


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited: only its parent's wait is missing


def _descendants(pid: int) -> list[int]:
    """`pid`'s children, theirs, and so on: the endpoint and the forked workers of a run."""
    found, todo = [], [pid]
    while todo:
        children = _children(todo.pop())
        found += children
        todo += children
    return found


def _until(what: str, check: Callable[[], bool], seconds: float = 60, every: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(every)


class Job:
    """`dynlocust run` of the scenario on its embedded endpoint, in a session of its own (a shell's job)."""

    def __init__(self, tmp_path: Path, scenario_text: str = SCENARIO, extra: tuple[str, ...] = ()) -> None:
        self.log = tmp_path / "run.log"
        self.results = tmp_path / "runs" / "job" / "results.jsonl"
        scenario = write_scenario(tmp_path, scenario_text)
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", str(tmp_path / "runs")]
        argv += ["--run-id", "job", "--metrics-port", "0", *extra]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def endpoint(self) -> int:
        """The embedded endpoint's pid, once it listens and the first window has closed."""
        _until("the first window", lambda: self.results.exists() and any(
            r["type"] == "window" for r in read_results(self.results)))  # fmt: skip
        (pid,) = [p for p in _children(self.proc.pid) if b"dynlocust.local" in Path(f"/proc/{p}/cmdline").read_bytes()]
        return pid

    def reach(self, line: str) -> None:
        """Wait until the run has printed `line` (the run must still be going)."""
        _until(f"the line {line!r}", lambda: line in self.output() or self.proc.poll() is not None, every=0.02)
        assert line in self.output(), f"exit {self.proc.returncode} before {line!r}: {self.output()[-3000:]}"

    def reach_end_record(self) -> None:
        """Wait until the run has written its end record: its plan is over, and its process ends by itself."""
        _until("the end record", lambda: self.results.exists() and any(
            r["type"] == "end" for r in read_results(self.results)), every=0.02)  # fmt: skip

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    started = Job(tmp_path)
    try:
        yield started
    finally:
        started.close()


@pytest.mark.slow
def test_ctrl_c_in_a_terminal_leaves_the_endpoint_up_until_the_tables_are_deleted(job: Job) -> None:
    endpoint = job.endpoint()
    os.killpg(job.proc.pid, signal.SIGINT)  # what the terminal does: the whole foreground group
    code = job.proc.wait(60)
    out = job.output()
    assert code == 4, out[-3000:]
    assert "could not delete table" not in out and "Could not connect" not in out, out[-3000:]
    assert "deleted tables t-job" in out, out[-3000:]
    assert read_results(job.results)[-1]["abort_reason"] == "worker 0: interrupted"
    _until("the endpoint stopped with its run", lambda: not _alive(endpoint), 10)


@pytest.mark.slow
def test_the_endpoint_dies_with_its_parent_even_when_the_parent_is_killed(job: Job) -> None:
    endpoint = job.endpoint()
    job.proc.kill()  # SIGKILL to the run alone: no teardown, no signal handler, nothing said to the endpoint
    job.proc.wait(10)
    _until("the orphaned endpoint gone", lambda: not _alive(endpoint), 15)


def test_with_exit_with_parent_the_endpoint_stops_when_its_stdin_ends(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    argv = [sys.executable, "-m", "dynlocust.local", "--port", "0", "--ready-file", str(ready), "--exit-with-parent"]
    proc = subprocess.Popen(
        argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        _until("the endpoint listening", ready.exists, 30)
        assert proc.poll() is None
        assert proc.stdin is not None
        proc.stdin.close()  # what the parent's exit does to the pipe, however it exits
        out, _ = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, out
    assert out.splitlines()[-1] == "dynlocust local: stdin closed (--exit-with-parent): the parent has gone, stopping"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_a_signal_at_any_phase_leaves_no_process_and_a_sigterm_exits_4(tmp_path: Path, phase: str, signum: int) -> None:
    job = Job(tmp_path, PHASED, ("--processes", "1"))
    try:
        # the forked worker, and the endpoint once it is started; by teardown the worker may have quit already,
        # and teardown can be over in milliseconds: its processes are taken while the run still runs
        job.reach(PHASES["running" if phase == "teardown" else phase])
        left = _descendants(job.proc.pid)
        assert left, job.output()[-3000:]
        job.reach(PHASES[phase])
        job.proc.send_signal(signum)  # to the run's process alone: the others must go because it went
        code = job.proc.wait(60)
        out = job.output()
        _until(f"no process of the run left ({left})", lambda: not any(_alive(pid) for pid in left), 10)
    finally:
        job.close()
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
        return
    assert code == 4, out[-3000:]
    assert "exit code 4: aborted" in out and "Traceback" not in out, out[-3000:]
    assert out.count("exit code 4: aborted") == 1, out[-3000:]


def test_a_sigterm_before_locust_starts_exits_4_with_its_line(tmp_path: Path) -> None:
    job = Job(tmp_path, PHASED, ("--capacity-scale", "1"))
    try:
        job.reach("dynlocust: phased scaled")  # printed before Locust is even imported
        job.proc.send_signal(signal.SIGTERM)
        code = job.proc.wait(30)
        out = job.output()
    finally:
        job.close()
    assert code == 4, out[-3000:]  # not 143: killed by the signal
    assert "Traceback" not in out, out[-3000:]
    assert "dynlocust: stopped by SIGTERM before the run began; no table was created" in out
    assert out.splitlines()[-1] == "exit code 4: aborted: stopped by a ceiling or a signal before the plan's end"


@pytest.mark.slow
def test_processes_2_logs_no_unknown_message(tmp_path: Path) -> None:
    # the master starts its embedded endpoint in `init` while the forked workers connect and say hello
    job = Job(tmp_path, PHASED, ("--processes", "2"))
    try:
        code = job.proc.wait(120)
        out = job.output()
    finally:
        job.close()
    assert code == 0, out[-3000:]
    assert "workers connected" in out and "starting the embedded local endpoint" in out, out[-3000:]
    assert "Unknown message type" not in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


SIGNAL_PHASES = ("set-up", "running", "the run's end", "teardown")
"""Where a SIGTERM lands: seeding; a window; between the end record and shutdown (a master's runner waits 0.5 s
for its workers' last reports there, and Locust's own SIGTERM handler was in charge); deleting the tables, each
DeleteTable held 0.8 s by a proxy."""


@pytest.fixture
def held_teardown() -> Iterator[tuple[str, LocalEndpoint]]:
    """An endpoint outside the run (its tables can be listed after it), behind a proxy that holds each DeleteTable
    0.8 s (under the scenario's 1 s deadline): the run's teardown lasts long enough to be signalled."""
    endpoint = LocalEndpoint().start()
    proxy = ServerProcess(
        "tests.support.delayproxy", "--upstream", endpoint.url, "--operation", "DeleteTable", "--delay", "0.8",
        "--lifetime", "120",
    )  # fmt: skip
    try:
        yield proxy.url, endpoint
    finally:
        proxy.stop()
        endpoint.stop()


@pytest.mark.slow
@pytest.mark.parametrize("signals", [1, 2], ids=["once", "twice"])
@pytest.mark.parametrize("phase", SIGNAL_PHASES)
def test_sigterm_at_every_phase_exits_4_once_without_a_traceback_and_tears_down(
    tmp_path: Path, held_teardown: tuple[str, LocalEndpoint], phase: str, signals: int
) -> None:
    url, endpoint = held_teardown
    job = Job(tmp_path, PHASED, ("--host", url, "--processes", "1"))
    try:
        if phase == "the run's end":
            job.reach_end_record()
        else:
            job.reach(PHASES[phase])
        for _ in range(signals):  # a second one in quick succession, as a supervisor's or a user's repeat
            job.proc.send_signal(signal.SIGTERM)
            time.sleep(0.05)
        code = job.proc.wait(60)
        out = job.output()
    finally:
        job.close()
    assert code == ExitCode.ABORTED, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    said = [line for line in out.splitlines() if line.startswith("exit code ")]
    assert said == [exit_line(ExitCode.ABORTED)], out[-3000:]
    assert "deleted tables a-job, b-job" in out, out[-3000:]
    client = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=5, pool_size=2)
    assert client.list_tables()["TableNames"] == []
