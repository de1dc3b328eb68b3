"""The run's survivors are kept out of the collector's walks, and handed back when it ends."""

from __future__ import annotations

import gc

from dynlocust.run.gcpause import freeze_survivors, thaw


def test_survivors_are_frozen_during_a_run_and_thawed_after() -> None:
    survivor = [object() for _ in range(1000)]
    try:
        freeze_survivors()
        assert gc.get_freeze_count() >= len(survivor)
    finally:
        thaw()
    assert gc.get_freeze_count() == 0
