"""The order in which Locust's listeners hear dynlocust's: shutdown is heard before a master's runner quits."""

from __future__ import annotations

import locust  # noqa: F401 - first, for gevent patching
from locust.env import Environment
from locust.event import Events
from locust.runners import STATE_SPAWNING

from dynlocust.plugin import listeners, safety


def test_a_master_hears_shutdown_before_its_runner_quits_the_workers() -> None:
    """Locust fires `quitting` in reverse order of registration, and a master's runner quits its workers (stopping
    the test first) in its own listener. Set-up still running meanwhile must already see the shutdown, or it starts
    a run whose workers are gone: exit 5 (a worker lost) after a SIGTERM, instead of 4."""
    environment = Environment(events=Events())
    runner = environment.create_master_runner("127.0.0.1", 0)
    seen: list[bool] = []
    environment.events.test_stopping.add_listener(lambda **_kw: seen.append(safety.is_quitting(environment)))
    try:
        listeners._create_role(environment)
        runner.update_state(STATE_SPAWNING)  # set-up under way in `test_start`
        assert not safety.is_quitting(environment)
        environment.events.quitting.fire(environment=environment, reverse=True)  # as Locust's shutdown does
    finally:
        runner.quit()
    assert seen == [True]
