"""The exit codes of dynlocust, in one table: each number means one thing, said once in words.

`ExitCode` is what a process exits with; `MEANINGS` is the text of its `exit code N: ...` line (and of the docs'
table), which `say` prints, the one place that line is written. A command that is not a run says 0 and 1 in its own
words (`COMMAND_MEANINGS`): "every SLO held" means nothing after `dynlocust validate`. A run that ends for several
reasons at once exits with the `worst` of them, by `SEVERITY`.
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

NOT_A_RUN_FAILED = "failed: the command could not finish (see the error above)"
COMMAND_MEANINGS: dict[str, dict[int, str]] = {
    command: {ExitCode.PASSED: passed, ExitCode.FAILED: NOT_A_RUN_FAILED}
    for command, passed in {
        "validate": "passed: every scenario is valid (summarised above)",
        "scenarios": "passed: the shipped scenarios are listed",
        "init": "passed: the starter project is written",
        "cleanup": "passed: the run's tables are listed, and deleted as asked",
        "report": "passed: the reports are written",
        "compare": "passed: every operation was timed both ways (and no regression against a baseline)",
        "diff": "passed: no significant change for the worse",
        "k8s": "passed: every manifest is written",
        "local": "passed: the endpoint served until it was stopped",
    }.items()
}
"""The words of 0 and 1 for each command that is not a run (`run`, `ui`, `ecs` and `locust -f` are runs)."""

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


def meaning(code: int, command: str | None = None) -> str:
    """The words for `code` (after `command`, when it is not a run); a code dynlocust never sets is Locust's own."""
    own = COMMAND_MEANINGS.get(command or "", {}).get(code)
    return own or MEANINGS.get(code, "not one of dynlocust's exit codes (set by Locust)")


def worst(codes: Iterable[int]) -> int:
    """The most severe of `codes`; a code outside the table (Locust's own) ranks just above PASSED."""
    seen = set(codes)
    for code in SEVERITY[:-1]:
        if code in seen:
            return int(code)
    return min((c for c in seen if c not in MEANINGS), default=int(ExitCode.PASSED))


_said: list[int] = []


def exit_line(code: int, command: str | None = None) -> str:
    """`exit code N: meaning`, the line a person (or CI log) reads last."""
    return f"exit code {code}: {meaning(code, command)}"


def say(code: int, out: TextIO, command: str | None = None) -> None:
    """Print `code`'s exit line on `out`, and remember it: the CLI adds its own only when the last said differs."""
    out.write(exit_line(code, command) + "\n")
    out.flush()
    _said.append(int(code))


def last_said() -> int | None:
    """The code of the last exit line this process printed, if any."""
    return _said[-1] if _said else None
