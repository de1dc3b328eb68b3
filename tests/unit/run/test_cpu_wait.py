"""The CPU wait read from the kernel: two busy processes pinned to one core wait for it, whatever else runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from dynlocust.run.cpu_wait import cpu_pressure, run_queue_wait

BUSY = "import time\nend = time.monotonic() + 5\nwhile time.monotonic() < end: pass\n"

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="Linux's /proc only")


def test_two_busy_loops_on_one_core_each_wait_for_it() -> None:
    """Two loops share CPU 0: each runs at most half the time and waits the rest, more on a loaded machine."""
    core = min(os.sched_getaffinity(0))
    loops = [
        subprocess.Popen([sys.executable, "-c", BUSY], preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        for _ in range(2)
    ]
    try:
        time.sleep(0.3)  # both started and pinned
        before = [run_queue_wait(p.pid) for p in loops]
        pressure0 = cpu_pressure()
        t0 = time.monotonic()
        time.sleep(1.0)
        after = [run_queue_wait(p.pid) for p in loops]
        wall = time.monotonic() - t0
        pressure1 = cpu_pressure()
    finally:
        for p in loops:
            p.kill()
            p.wait()
    waited = [b - a for a, b in zip(before, after, strict=True) if a is not None and b is not None]
    assert len(waited) == 2, "no run-queue delay in /proc/<pid>/task/*/schedstat"
    assert sum(waited) > 0.6 * wall, waited  # together they wait about one core's worth of the window
    if pressure0 is not None and pressure1 is not None:  # PSI: some task waited most of that second
        assert pressure1 - pressure0 > 0.3 * wall


def test_a_process_that_does_not_exist_has_no_wait() -> None:
    assert run_queue_wait(2**22 + 12345) is None
    assert run_queue_wait() is not None  # this process has threads, each with its figure
