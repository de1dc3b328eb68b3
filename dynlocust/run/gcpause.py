"""Keep the garbage collector from stalling the schedule.

A full collection walks every tracked object: with botocore's service models, Locust and gevent loaded, that took
~90 ms in a generator process, long enough to make a window's sends late and the window client-bound by the
generator's own doing. What exists when sending starts lives for the whole run, so it is moved out of the
collector's sight (`gc.freeze`) and handed back when the run ends.
"""

from __future__ import annotations

import gc


def freeze_survivors() -> None:
    """Collect once, then exempt every surviving object from later collections (before the first send)."""
    gc.collect()
    gc.freeze()


def thaw() -> None:
    """Hand frozen objects back to the collector (the run is over; a web UI process starts others)."""
    gc.unfreeze()
