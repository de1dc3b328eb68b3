"""The endpoint killed mid-run, for real: a SIGKILL of the embedded endpoint in the run's second window.

The run goes on sending to a closed port until its plan ends (every later request refused at once); it exits 1, its
conclusion names when the endpoint stopped answering and how, and its report calls it complete and failed, not
"did not complete" (all its windows closed).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario, write_scenario


def _endpoint_of(pid: int) -> int | None:
    """The embedded endpoint's process: the run's child running `dynlocust.local`."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1].split()[1])
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and "dynlocust.local" in command:
            return int(entry)
    return None


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_killed_endpoint_is_named_in_the_conclusion(tmp_path: Path) -> None:
    steps = "steps: [{rate: 20, window: 3s}, {rate: 20, window: 3s}, {rate: 20, window: 3s}, {rate: 20, window: 3s}]"
    scenario = write_scenario(tmp_path, put_scenario("killed", steps, concurrency=4))
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", str(tmp_path / "runs")]
    argv += ["--run-id", "killed", "--metrics-port", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = tmp_path / "runs" / "killed" / "results.jsonl"
    deadline = time.monotonic() + 60
    while not (results.exists() and '"type":"window"' in results.read_text().replace(" ", "")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    endpoint = _endpoint_of(proc.pid)
    assert endpoint is not None
    os.kill(endpoint, signal.SIGKILL)  # in window 2: window 1 closed
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == ExitCode.FAILED, out[-3000:] + err[-3000:]
    (line,) = [x for x in out.splitlines() if x.startswith("conclusion: ")]
    how = r"connection (refused|closed|reset)( / connection (refused|closed|reset))*"  # the commonest first
    said = re.search(rf"The endpoint stopped answering (in window (\d)|from window (\d) on) \({how}: ", line)
    assert said and int(said[2] or said[3]) >= 2, line
    report = (tmp_path / "runs" / "killed" / "report" / "report.html").read_text()
    status = report.split('id="status"', 1)[1].split("</div>", 1)[0]
    assert 'data-status="complete"' in status and "exit code 1: failed" in status and "did not complete" not in report
