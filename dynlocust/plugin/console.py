"""Locust's console lines that mislead in a scenario run, left out.

Registered for scenario runs only (`dynlocust.plugin.listeners`): there the plan sets the duration, and Locust's
"No run time limit set, use CTRL+C to interrupt" would say the opposite.
"""

from __future__ import annotations

import logging
from typing import Any

LOCUST_MAIN = "locust.main"
RUN_TIME_HINT = "No run time limit set"


class _DropRunTimeHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(RUN_TIME_HINT)


_FILTER = _DropRunTimeHint()


def drop_run_time_hint(**_kwargs: Any) -> None:
    logging.getLogger(LOCUST_MAIN).addFilter(_FILTER)  # the same filter twice is one filter
