"""The exit codes of dynlocust, in one table: each number means one thing, said once in words.

`ExitCode` is what a process exits with; `MEANINGS` is the text of its `exit code N: ...` line (and of the docs'
table), which `say` prints, the one place that line is written. A run that ends for several reasons at once exits
with the `worst` of them, by `SEVERITY`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import TextIO


class ExitCode(IntEnum):
    PASSED = 0
    FAILED = 1
    BAD_INPUT = 2
    SLO_FAILED = 3
    ABORTED = 4
    WORKER_LOST = 5
    REGRESSION = 6
    MASTER_LOST = 7
    INCONCLUSIVE = 8


MEANINGS: dict[int, str] = {
    ExitCode.PASSED: "passed: the command did what it was asked (a run: every window closed and every SLO held)",
    ExitCode.FAILED: "failed: the run's requests or its results did not hold up (see the cause above)",
    ExitCode.BAD_INPUT: "bad input: a scenario, option, file or set-up that could not be used (see the error above)",
    ExitCode.SLO_FAILED: "an SLO failed (see 'SLO failed' above)",
    ExitCode.ABORTED: "aborted: stopped by a ceiling or a signal before the plan's end",
    ExitCode.WORKER_LOST: "a worker was lost: its windows are partial",
    ExitCode.REGRESSION: "a regression: the diff gate found a change for the worse",
    ExitCode.MASTER_LOST: "this worker lost its master: the run's numbers are the master's, and incomplete",
    ExitCode.INCONCLUSIVE: "inconclusive: too few windows could be judged to say where the limit is",
}

SEVERITY: tuple[ExitCode, ...] = (
    ExitCode.BAD_INPUT,
    ExitCode.FAILED,
    ExitCode.MASTER_LOST,
    ExitCode.ABORTED,
    ExitCode.WORKER_LOST,
    ExitCode.INCONCLUSIVE,
    ExitCode.SLO_FAILED,
    ExitCode.REGRESSION,
    ExitCode.PASSED,
)
"""Most severe first: what made the numbers unusable outranks what the numbers say."""


def meaning(code: int) -> str:
    """The words for `code`; a code dynlocust never sets is Locust's own."""
    return MEANINGS.get(code, "not one of dynlocust's exit codes (set by Locust)")


def worst(codes: Iterable[int]) -> int:
    """The most severe of `codes`; a code outside the table (Locust's own) ranks just above PASSED."""
    seen = set(codes)
    for code in SEVERITY[:-1]:
        if code in seen:
            return int(code)
    return min((c for c in seen if c not in MEANINGS), default=int(ExitCode.PASSED))


_said: list[int] = []


def exit_line(code: int) -> str:
    """`exit code N: meaning`, the line a person (or CI log) reads last."""
    return f"exit code {code}: {meaning(code)}"


def say(code: int, out: TextIO) -> None:
    """Print `code`'s exit line on `out`, and remember it: the CLI adds its own only when the last said differs."""
    out.write(exit_line(code) + "\n")
    out.flush()
    _said.append(int(code))


def last_said() -> int | None:
    """The code of the last exit line this process printed, if any."""
    return _said[-1] if _said else None
