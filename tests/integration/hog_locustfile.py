"""The scenario locustfile plus a CPU hog in the same process: its windows must be reported as client-bound."""

from __future__ import annotations

import time
from typing import Any

from locust import events

import gevent

from dynlocust.user_classes.scenario_user import ScenarioUser

__all__ = ["ScenarioUser"]


def _hog() -> None:
    # 50 ms of CPU at a time, then a 2 ms sleep: the process stays near a core and sends wait behind the hog, yet
    # the hub still polls its sockets (with sleep(0) a worker misses the master's heartbeats and quits)
    while True:
        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass
        gevent.sleep(0.002)


@events.test_start.add_listener
def _start_hog(environment: Any, **_kwargs: Any) -> None:
    gevent.spawn(_hog)
