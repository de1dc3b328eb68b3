"""Fargate's task sizes: which memory (MiB) goes with which CPU (units of 1/1024 vCPU).

RunTask refuses any other pair only once the stack exists and the fleet is starting, so the launcher checks the
pair first (`check_size`), and docker/ecs/template.yaml's Rules section enforces the same table for a stack created
by hand (tests/unit/launch/test_fargate.py holds the two to each other).
"""

from __future__ import annotations

import itertools

from dynlocust.errors import DynlocustError

GIB = 1024


def _steps(low: int, high: int, step: int) -> tuple[int, ...]:
    return tuple(range(low * GIB, high * GIB + 1, step * GIB))


SIZES: dict[int, tuple[int, ...]] = {
    256: (512, 1024, 2048),
    512: _steps(1, 4, 1),
    1024: _steps(2, 8, 1),
    2048: _steps(4, 16, 1),
    4096: _steps(8, 30, 1),
    8192: _steps(16, 60, 4),
    16384: _steps(32, 120, 8),
}
"""CPU units -> the memory sizes (MiB) Fargate accepts with it (Linux tasks, platform 1.4.0)."""


class SizeError(DynlocustError):
    """A CPU and memory pair that Fargate does not offer."""


def describe(cpu: int) -> str:
    """The memory sizes of one CPU size in words, e.g. "4096 to 16384 MiB in steps of 1024"."""
    sizes = SIZES[cpu]
    steps = {b - a for a, b in itertools.pairwise(sizes)}
    if len(steps) == 1:
        return f"{sizes[0]} to {sizes[-1]} MiB in steps of {steps.pop()}"
    return ", ".join(str(s) for s in sizes) + " MiB"


def default_memory(cpu: int) -> int:
    """The smallest memory Fargate offers with `cpu` (what the launcher asks for when not told)."""
    check_cpu(cpu)
    return SIZES[cpu][0]


def check_cpu(cpu: int, option: str = "--worker-cpu") -> None:
    if cpu not in SIZES:
        raise SizeError(f"{option}: expected a Fargate CPU size ({', '.join(map(str, SIZES))}), found {cpu}")


def check_size(cpu: int, memory: int, options: tuple[str, str] = ("--worker-cpu", "--worker-memory")) -> None:
    """Raise `SizeError` (one line naming both options) unless Fargate offers `memory` MiB with `cpu`."""
    check_cpu(cpu, options[0])
    if memory not in SIZES[cpu]:
        raise SizeError(
            f"{options[1]}: expected a Fargate memory size for {options[0]} {cpu} ({describe(cpu)}), found {memory}"
        )
