"""CPU wait: how long this process was runnable but waiting for a CPU that other processes held.

Linux counts, per thread, the nanoseconds it spent on a run queue ready to run (field 2 of
`/proc/<pid>/task/<tid>/schedstat`, CONFIG_SCHED_INFO), and the time some task of the machine waited for a CPU
(`/proc/pressure/cpu`, the `some` line's `total` in microseconds: PSI, Linux 4.20+). The first summed over the
process's threads is its *CPU wait*: a window whose sends were late while its process waited seconds for a CPU was
limited by the machine, not by the users or by dynlocust's own CPU (`dynlocust.run.saturation`, `machine-busy`).
Where a file is missing (not Linux, an older kernel, a container that hides /proc/pressure) the figure is None and
every view says it was not measured. Both are read once per window, never per send.
"""

from __future__ import annotations

import os

SCHEDSTAT_RUN_DELAY = 1
"""Index of the run-queue delay (ns) among schedstat's three fields: on-CPU time, run delay, timeslices."""


def run_queue_wait(pid: int | str = "self") -> float | None:
    """Seconds the live threads of `pid` have waited on a run queue since each started; None where unknown."""
    base = f"/proc/{pid}/task"
    try:
        threads = os.listdir(base)
    except OSError:
        return None
    total, found = 0, False
    for tid in threads:
        try:
            with open(f"{base}/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[SCHEDSTAT_RUN_DELAY])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile, or a kernel without schedstat
        found = True
    return total / 1e9 if found else None


def cpu_pressure() -> float | None:
    """Seconds since boot during which some runnable task of the machine waited for a CPU (PSI); None where
    unavailable."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as f:
            for line in f:
                kind, *fields = line.split()
                if kind == "some":
                    return int(dict(kv.split("=", 1) for kv in fields)["total"]) / 1e6
    except (OSError, KeyError, ValueError):
        return None
    return None
