"""The pool-wait counter: requests that found every pooled HTTP connection busy, bumped by the transports."""

from __future__ import annotations


class PoolWaitCounter:
    """A counter a transport bumps each time a request found every pooled connection busy."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def increment(self, n: int = 1) -> None:
        self.value += n


def pool_counter(transport: object) -> PoolWaitCounter | None:
    """The pool-wait counter of a transport client (both transports expose `pool_waits`), or None."""
    counter = getattr(transport, "pool_waits", None)
    return counter if isinstance(counter, PoolWaitCounter) else None
