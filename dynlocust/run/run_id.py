"""A run id: what names a run's tables, tags and results directory, made here when none is given."""

from __future__ import annotations

import secrets
import time


def new_run_id() -> str:
    """A fresh id, sortable by start time (UTC) with a random suffix against two starts in the same second."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)
