"""The scenario locustfile plus a CPU hog in the same process: its windows must be reported as client-bound."""

from __future__ import annotations

import time
from typing import Any

from locust import events

import gevent

from dynlocust.hooks import ScenarioUser

__all__ = ["ScenarioUser"]


def _hog() -> None:
    while True:
        end = time.process_time() + 0.02
        while time.process_time() < end:
            pass
        gevent.sleep(0)


@events.test_start.add_listener
def _start_hog(environment: Any, **_kwargs: Any) -> None:
    gevent.spawn(_hog)
