"""Locust's console lines that mislead in a scenario run, left out.

Registered for scenario runs only (`dynlocust.plugin.listeners`): there the plan sets the duration, and Locust's
"No run time limit set, use CTRL+C to interrupt" would say the opposite. A run that sent nothing (its set-up
failed) ends without Locust's statistics tables: empty, they would bury its one error line. A reader that closed
stdout early (`dynlocust run x | head -3`) loses the rest of the console, not the run: the run goes on to its end,
its results and report are written, and stderr says once what was dropped.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, TextIO

LOCUST_MAIN = "locust.main"
STATS_LOGGER = "locust.stats_logger"
"""The logger Locust prints its final statistics tables with."""
RUN_TIME_HINT = "No run time limit set"


class _DropRunTimeHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(RUN_TIME_HINT)


_FILTER = _DropRunTimeHint()


def drop_run_time_hint(**_kwargs: Any) -> None:
    logging.getLogger(LOCUST_MAIN).addFilter(_FILTER)  # the same filter twice is one filter


def hide_empty_tables(environment: Any, **_kwargs: Any) -> None:
    """At `quitting`, before Locust prints its final tables: none when not one request was made."""
    runner = getattr(environment, "runner", None)
    if runner is not None and runner.stats.total.num_requests == 0 and not runner.stats.errors:
        logging.getLogger(STATS_LOGGER).disabled = True


class _ClosedStdoutTolerated:
    """stdout for a run: a write to a reader that went away is dropped (and said once on stderr), not raised into
    whichever greenlet printed a window's line, which would leave the run waiting forever."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.lost = False

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lose()

    def _lose(self) -> None:
        self.lost = True
        devnull = os.open(os.devnull, os.O_WRONLY)  # what is still buffered goes nowhere, at exit too
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)
        sys.stderr.write(
            "dynlocust: warning: stdout closed early: the rest of the run's console is dropped; the run goes on, "
            "and its results and report are written in full\n"
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def tolerate_closed_stdout(**_kwargs: Any) -> None:
    """For a run's process (`dynlocust run`, and `locust -f` at `init`): stdout's reader may go away (`| head`)
    without stopping the run."""
    if not isinstance(sys.stdout, _ClosedStdoutTolerated):
        sys.stdout = _ClosedStdoutTolerated(sys.stdout)


def stdout_lost() -> bool:
    """Whether the run's stdout reader went away (its exit line then goes to stderr too)."""
    return isinstance(sys.stdout, _ClosedStdoutTolerated) and sys.stdout.lost
