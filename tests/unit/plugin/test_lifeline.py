"""The first SIGTERM, before Locust's handlers exist: it ends the process with exit code 4 wherever it lands."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dynlocust.exit_codes import ExitCode, exit_line

# A real process patches itself as Locust's import does, and signals itself at the start of one module's patching
# (gevent announces each one): the moment the CI's fresh clone once hit by chance.
MID_PATCH = """
import os, signal, sys
from dynlocust.plugin import lifeline
lifeline.install_early()
import gevent.events
def signal_at(event):
    if isinstance(event, gevent.events.GeventWillPatchModuleEvent) and event.module_name == sys.argv[1]:
        os.kill(os.getpid(), signal.SIGTERM)
gevent.events.subscribers.append(signal_at)
from gevent import monkey
monkey.patch_all()
print("not stopped")
"""


@pytest.mark.parametrize("module", ["os", "signal", "threading", "socket", "subprocess"])
def test_a_sigterm_in_the_middle_of_gevent_s_patching_exits_4_with_its_line(module: str) -> None:
    # SystemExit raised there left `threading` half patched, and the interpreter's exit waited on it forever
    done = subprocess.run(
        [sys.executable, "-c", MID_PATCH, module], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not stopped" not in done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert "dynlocust: stopped by SIGTERM before the run began; no table was created" in done.stderr
    assert done.stdout.splitlines()[-1] == exit_line(ExitCode.ABORTED)
