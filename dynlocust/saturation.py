"""Was the client the limit? Per window: CPU of this process, schedule lag, dropped sends, pool waits.

A load generator that cannot keep up produces numbers that look like a service ceiling (a measured fleet once
reported its own saturation as DynamoDB's limit). A window is *client-bound* when any of these holds (defaults
in ``Thresholds``):

- ``cpu``: this process used >= 0.90 of one core over the window (a gevent process runs on one core);
- ``lag``: schedule lag p99 (ticket taken - intended send time) > 20 ms: sends left late;
- ``dropped``: more than 0.1% of scheduled sends came due with no free user;
- ``pool``: more than 1% of scheduled sends waited for a pooled connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from dynlocust.pacing import PacingCounts


class PoolWaitCounter:
    """A counter the transport bumps each time a request had to wait for a connection from its pool."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def increment(self, n: int = 1) -> None:
        self.value += n


@dataclass(frozen=True)
class Thresholds:
    """Limits beyond which a window is client-bound (see the module docstring)."""

    cpu: float = 0.90
    lag_p99: float = 0.020
    dropped_fraction: float = 0.001
    pool_wait_fraction: float = 0.01


@dataclass(frozen=True)
class Saturation:
    """The client-side measurements of one window and the verdict on them."""

    client_bound: bool
    reasons: tuple[str, ...]
    cpu: float
    lag_p99: float
    dropped: int
    pool_waits: int

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reasons"] = list(self.reasons)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Saturation:
        return cls(
            client_bound=bool(d["client_bound"]),
            reasons=tuple(d["reasons"]),
            cpu=float(d["cpu"]),
            lag_p99=float(d["lag_p99"]),
            dropped=int(d["dropped"]),
            pool_waits=int(d["pool_waits"]),
        )


def assess(
    *,
    cpu: float,
    lag_p99: float,
    dropped: int,
    scheduled: int,
    pool_waits: int = 0,
    thresholds: Thresholds = Thresholds(),
) -> Saturation:
    """Apply ``thresholds`` to one window's measurements."""
    reasons = []
    if cpu >= thresholds.cpu:
        reasons.append("cpu")
    if lag_p99 > thresholds.lag_p99:
        reasons.append("lag")
    if dropped > thresholds.dropped_fraction * scheduled:
        reasons.append("dropped")
    if pool_waits > thresholds.pool_wait_fraction * scheduled:
        reasons.append("pool")
    return Saturation(bool(reasons), tuple(reasons), cpu, lag_p99, dropped, pool_waits)


class SaturationMonitor:
    """Measures one window at a time: call ``begin_window`` when it opens and ``end_window`` when it closes."""

    def __init__(
        self,
        *,
        thresholds: Thresholds = Thresholds(),
        pool_waits: PoolWaitCounter | None = None,
        cpu_clock: Callable[[], float] = time.process_time,
        wall_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.thresholds = thresholds
        self._pool = pool_waits
        self._cpu_clock = cpu_clock
        self._wall_clock = wall_clock
        self._cpu0: float | None = None
        self._wall0 = 0.0
        self._pool0 = 0

    def begin_window(self) -> None:
        self._cpu0 = self._cpu_clock()
        self._wall0 = self._wall_clock()
        self._pool0 = self._pool.value if self._pool is not None else 0

    def cpu_so_far(self) -> float:
        """CPU used since ``begin_window`` as a fraction of one core."""
        if self._cpu0 is None:
            return 0.0
        wall = self._wall_clock() - self._wall0
        return (self._cpu_clock() - self._cpu0) / wall if wall > 0 else 0.0

    def end_window(self, pacing: PacingCounts, *, pool_waits: int | None = None) -> Saturation:
        """Assess the window that ``begin_window`` opened, with the pacer's counters for it.

        ``pool_waits`` overrides the counter given at construction (pass an int if the transport counts itself).
        """
        cpu = self.cpu_so_far()
        if pool_waits is None:
            pool_waits = (self._pool.value - self._pool0) if self._pool is not None else 0
        lag = pacing.lag_p99
        self._cpu0 = None
        return assess(
            cpu=cpu,
            lag_p99=lag if lag is not None else 0.0,
            dropped=pacing.dropped,
            scheduled=pacing.scheduled,
            pool_waits=pool_waits,
            thresholds=self.thresholds,
        )


def combine(saturations: list[Saturation]) -> Saturation:
    """Fleet view of one window: client-bound if any worker was (max CPU and lag, summed drops and waits)."""
    if not saturations:
        return Saturation(False, (), 0.0, 0.0, 0, 0)
    reasons = tuple(sorted({r for s in saturations for r in s.reasons}))
    return Saturation(
        any(s.client_bound for s in saturations),
        reasons,
        max(s.cpu for s in saturations),
        max(s.lag_p99 for s in saturations),
        sum(s.dropped for s in saturations),
        sum(s.pool_waits for s in saturations),
    )
