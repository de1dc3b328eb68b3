"""Was the client the limit? The evidence of one window, and the decision rules applied to it.

A load generator that cannot keep up produces numbers that look like a service ceiling (a measured fleet once
reported its own saturation as DynamoDB's limit); a false alarm is as harmful, because it hides the service's
ceiling behind a flag the reader learns to ignore. So a window is *client-bound* only when the client measurably
failed to deliver the offered load on schedule, or to measure it, and each criterion needs both a minimum sample
and a bound that scales with the window's sends (`Thresholds` holds every value and why it was chosen):

- `cpu`: this process used at least `cpu` of one core, measured over at least `cpu_min_seconds` of the
  window (a gevent process runs its Python on one core: near it, timers and sends wait behind other work);
- `lag`: sends that left later than `max(late_seconds, 1 / rate)` after their slot, plus sends the process did
  not even look at before they were too late to send (it did not run: `stalled`), number more than both
  `late_min` and `late_fraction` of the window's due sends;
- `dropped`: sends that came due and were never sent (no user was free within the pacer's lateness limit: the
  concurrency cap, or the process stalled) number more than both `dropped_min` and `dropped_fraction` of the
  window's due sends;
- `pool`: requests that found every pooled HTTP connection busy (they waited for an extra connection to be
  opened) number more than both `pool_min` and `pool_fraction` of the window's sends;
- `offered-short`: fewer requests went out than came due, short by more than ``max(offered_short_min,
  offered_short_fraction * due, 3 * sqrt(due)) + 1`` (a Poisson 3-sigma band plus the schedule's rounding);
- `machine-busy`: the cause of a window late or short by the counts above, when the process spent at least
  `busy_wait` of the window runnable but waiting for a CPU that other processes held (its *CPU wait*,
  `dynlocust.run.cpu_wait`), and at least as long as it ran: more users or more workers on the same machine
  would not help.

A window that ran only in part (stopped early, a late start) is not judged here: its verdict is `partial`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dynlocust.request.transport.pool_wait import PoolWaitCounter
from dynlocust.run.cpu_wait import cpu_pressure, run_queue_wait
from dynlocust.run.histogram import Histogram, bucket_bounds

CPU_MIN_WALL_SECONDS = 0.1
"""Wall seconds a window must have run for its CPU figure to be shown (a shorter one shows none, "-").

The figure is CPU seconds over wall seconds, and the CPU clock counts every thread of the process: over a window
that never ran (stopped as it opened) a few hundred microseconds of CPU, some of it another thread's, over fewer
of wall time read 1.2-1.5 cores. Over 0.1 s, one scheduler tick of CPU accounting (1-10 ms, CONFIG_HZ 100-1000)
moves the figure by at most 0.1 of a core; the figure judged (`Thresholds.cpu_min_seconds`) needs 2 s."""

REASONS = ("cpu", "machine-busy", "lag", "dropped", "pool", "offered-short")
"""Why a window is client-bound; one vocabulary for records, tables, the web tab and metrics."""


def _threshold(default: float, low: float, high: float, why: str) -> Any:
    return field(default=default, metadata={"low": low, "high": high, "why": why})


@dataclass(frozen=True)
class Thresholds:
    """Limits beyond which a window is client-bound; each field's `why` (metadata) is its option's help."""

    cpu: float = _threshold(
        0.90, 0.05, 1.0, "CPU of one core at or above which the process is saturated (a gevent process uses one core; "
        "0.90 leaves room for the process_time/wall rounding of a busy loop, which reads 0.93-1.0)"
    )  # fmt: skip
    cpu_min_seconds: float = _threshold(
        2.0, 0.1, 3600.0, "seconds of a window CPU must be measured over before it is judged (a GC or start-up "
        "burst of 0.1 s moves a 2 s average by at most 5%)"
    )  # fmt: skip
    late_seconds: float = _threshold(
        0.05, 0.001, 10.0, "a send is late beyond this many seconds after its slot (and after the next slot, "
        "1/rate): half the pacer's 0.1 s lateness limit; an idle process hands sends out within ~1 ms, and a "
        "shift of 50 ms moves a send across a 1 s rate measurement for at most 5% of its sends"
    )  # fmt: skip
    late_min: int = _threshold(
        20, 1, 10**9, "late sends needed at least, whatever the rate (a single scheduler stall delays a handful)"
    )  # fmt: skip
    late_fraction: float = _threshold(
        0.05, 0.0, 1.0, "fraction of a window's due sends that must be late (one 0.3 s stall of a busy host makes "
        "up to 5% of a 6 s window late; a starved process makes most of them late)"
    )  # fmt: skip
    dropped_min: int = _threshold(
        10, 1, 10**9, "dropped sends needed at least (a 0.3 s freeze of a busy host drops ~10 at 50 sends/s)"
    )  # fmt: skip
    dropped_fraction: float = _threshold(
        0.01, 0.0, 1.0, "fraction of a window's due sends that must be dropped (1%: a shortfall the reader would "
        "otherwise take for the service's answer)"
    )  # fmt: skip
    pool_min: int = _threshold(
        5, 1, 10**9, "pool waits needed at least (a few extra connections at a window's start are harmless)"
    )  # fmt: skip
    pool_fraction: float = _threshold(
        0.01, 0.0, 1.0, "fraction of a window's sends that must wait for a connection (1%: their latency "
        "includes a TCP handshake)"
    )  # fmt: skip
    offered_short_min: int = _threshold(
        10, 1, 10**9, "sends short of the due count needed at least, beyond the Poisson band and rounding"
    )  # fmt: skip
    offered_short_fraction: float = _threshold(
        0.02, 0.0, 1.0, "fraction of the due sends that must be missing (2%: below, the offered rate is intact)"
    )  # fmt: skip
    busy_wait: float = _threshold(
        0.05, 0.0, 1.0, "fraction of a window's wall time the process waited for a CPU, runnable, at or above which "
        "a window already late or short is the machine's doing (machine-busy), if it also waited at least as long as "
        "it ran (it got at most half the CPU it was ready to use); the wait alone never makes a window "
        "client-bound: with other work on 2 cores the quickstart waited 10-49% of windows sent on time, and 83-97% "
        "pinned to a core beside three busy loops of higher priority"
    )  # fmt: skip

    def late_bound(self, rate: float) -> float:
        """Seconds after its slot beyond which a send at `rate` sends/s counts as late."""
        return max(self.late_seconds, 1.0 / rate) if rate > 0 else self.late_seconds

    def short_tolerance(self, due: int) -> float:
        """Sends a window may fall short of `due` by without being flagged."""
        return max(self.offered_short_min, self.offered_short_fraction * due, 3.0 * math.sqrt(due)) + 1.0


THRESHOLD_FIELDS = tuple(fields(Thresholds))
"""Every threshold with its range and reason (`metadata`): settings turns them into options."""


def count_at_or_above(hist: Histogram, bound: float) -> int:
    """Values of `hist` at or above `bound`, counting only buckets wholly above it (an undercount of at most
    one 1.6%-wide bucket: a send is called late only when it surely was)."""
    return sum(n for key, n in hist.buckets().items() if bucket_bounds(key)[0] >= bound)


@dataclass(frozen=True)
class Saturation:
    """The client-side evidence of one window (one worker, or the fleet merged) and the verdict on it.

    `judged` is False for a window that ran only in part: no reason is given for it. `workers` lists the
    client-bound workers of a fleet (empty for one process).
    """

    client_bound: bool
    reasons: tuple[str, ...]
    cpu: float
    lag_p99: float
    dropped: int
    pool_waits: int
    cpu_seconds: float = 0.0
    late: int = 0
    late_bound: float = 0.0
    due: int = 0
    sent: int = 0
    judged: bool = True
    workers: tuple[int, ...] = ()
    stalled: int = 0
    cpu_wait: float | None = None
    """Seconds the process was runnable but waiting for a CPU over the window (`dynlocust.run.cpu_wait`; in a
    fleet the worst worker's); None where the kernel does not say."""
    cpu_pressure: float | None = None
    """Seconds of the window during which some task of the machine waited for a CPU (PSI; a fleet: the busiest
    worker's machine); None where unavailable."""

    @property
    def wait_fraction(self) -> float | None:
        """`cpu_wait` as a fraction of the window's measured wall time, None when not measured."""
        if self.cpu_wait is None or self.cpu_seconds < CPU_MIN_WALL_SECONDS:
            return None
        return self.cpu_wait / self.cpu_seconds

    @property
    def users_busy(self) -> bool:
        """Most dropped sends waited in vain for a free user (the concurrency cap), rather than coming due while
        the process did not run (`stalled`): only then would more users have sent them."""
        return self.dropped > 0 and self.dropped - self.stalled > self.stalled

    @property
    def measured_cpu(self) -> float | None:
        """The CPU figure (of one core), or None when the window ran too briefly to measure it
        (`CPU_MIN_WALL_SECONDS`)."""
        return self.cpu if self.cpu_seconds >= CPU_MIN_WALL_SECONDS else None

    @property
    def short(self) -> int:
        """Sends that came due and did not go out."""
        return max(0, self.due - self.sent)

    @property
    def shortfall(self) -> float:
        """Fraction of due sends that never went out: the weight of the client's evidence against the service's.

        Late sends and pool waits still reached the service, so they make a window client-bound without
        outweighing the service's refusals."""
        if not self.due:
            return 0.0
        return max(self.dropped, self.short) / self.due

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cpu"] = self.measured_cpu  # null in the record when not measured: no figure to read back as one
        d["reasons"] = list(self.reasons)
        d["workers"] = list(self.workers)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Saturation:
        """Read back `to_dict`; records written before the late/due figures existed read them as 0."""
        return cls(
            client_bound=bool(d["client_bound"]),
            reasons=tuple(d["reasons"]),
            cpu=float(d["cpu"] or 0.0),
            lag_p99=float(d["lag_p99"]),
            dropped=int(d["dropped"]),
            pool_waits=int(d["pool_waits"]),
            cpu_seconds=float(d.get("cpu_seconds", 0.0)),
            late=int(d.get("late", 0)),
            late_bound=float(d.get("late_bound", 0.0)),
            due=int(d.get("due", 0)),
            sent=int(d.get("sent", 0)),
            judged=bool(d.get("judged", True)),
            workers=tuple(int(w) for w in d.get("workers", ())),
            stalled=int(d.get("stalled", 0)),
            cpu_wait=_optional(d.get("cpu_wait")),
            cpu_pressure=_optional(d.get("cpu_pressure")),
        )


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def assess(
    *,
    cpu: float,
    cpu_seconds: float,
    lag: Histogram,
    rate: float,
    due: int,
    sent: int,
    dropped: int,
    pool_waits: int = 0,
    stalled: int = 0,
    cpu_wait: float | None = None,
    cpu_pressure: float | None = None,
    whole: bool = True,
    thresholds: Thresholds = Thresholds(),
) -> Saturation:
    """Apply `thresholds` to one worker's window: `due` sends came due (handed or dropped), `sent` went out
    and were answered, `lag` holds the schedule lag of every handed send, `rate` is the worker's sends/s,
    `stalled` the dropped sends the process saw only once they were too late (they count as late), `cpu_wait`
    the seconds of `cpu_seconds` it waited for a CPU and `cpu_pressure` the machine's (None: not measured).

    `whole` False (the window ran in part) records the figures and judges nothing.
    """
    t = thresholds
    bound = t.late_bound(rate)
    late = count_at_or_above(lag, bound) + stalled
    handed = lag.count
    reasons = []
    if whole:
        if cpu_seconds >= t.cpu_min_seconds and cpu >= t.cpu:
            reasons.append("cpu")
        reasons += _count_reasons(late, dropped, pool_waits, due, handed, sent, t)
        if _machine_busy(reasons, cpu, cpu_wait, cpu_seconds, t):
            reasons.insert(1 if "cpu" in reasons else 0, "machine-busy")
    return Saturation(
        client_bound=bool(reasons),
        reasons=tuple(reasons),
        cpu=cpu,
        lag_p99=lag.percentile(0.99) or 0.0,
        dropped=dropped,
        pool_waits=pool_waits,
        cpu_seconds=cpu_seconds,
        late=late,
        late_bound=bound,
        due=due,
        sent=sent,
        judged=whole,
        stalled=stalled,
        cpu_wait=cpu_wait,
        cpu_pressure=cpu_pressure,
    )


LATE_OR_SHORT = ("lag", "dropped", "offered-short")
"""The reasons a machine that kept the process from its CPU explains: sends late, dropped or never sent."""


def _machine_busy(reasons: Sequence[str], cpu: float, cpu_wait: float | None, seconds: float, t: Thresholds) -> bool:
    """The window is late or short while the process waited at least `busy_wait` of it for a CPU, and at least as
    long as it ran: the machine gave it at most half the CPU it was ready to use.

    The second condition keeps a generator that is its own limit from being blamed on the machine: concurrency 1
    offering 3,000/s on a loaded 2-core machine waited 0.3 s of a 3 s window (10%) while running 0.8 s; its one
    user was the limit. Pinned beside three busier loops, the quickstart waited 11.6 s and ran 0.5 s."""
    if cpu_wait is None or seconds < t.cpu_min_seconds or not any(r in LATE_OR_SHORT for r in reasons):
        return False
    return cpu_wait >= t.busy_wait * seconds and cpu_wait >= cpu * seconds


def _count_reasons(
    late: int, dropped: int, pool_waits: int, due: int, handed: int, sent: int, t: Thresholds
) -> list[str]:
    """The reasons decided by counts (every one but `cpu`), for one worker or the fleet's sums."""
    reasons = []
    if late > max(t.late_min, t.late_fraction * due):
        reasons.append("lag")
    if dropped > max(t.dropped_min, t.dropped_fraction * due):
        reasons.append("dropped")
    if pool_waits > max(t.pool_min, t.pool_fraction * handed):
        reasons.append("pool")
    if due - sent > t.short_tolerance(due):
        reasons.append("offered-short")
    return reasons


@dataclass(frozen=True)
class Usage:
    """What the monitor measured over a window: CPU (fraction of a core) over `seconds`, pool waits, and the
    seconds the process and the machine waited for a CPU (None: not measured here)."""

    cpu: float
    seconds: float
    pool_waits: int
    cpu_wait: float | None = None
    cpu_pressure: float | None = None


def _since(now: float | None, then: float | None) -> float | None:
    """A counter's growth, None when either reading is missing (a thread that ended takes its part away: >= 0)."""
    return None if now is None or then is None else max(0.0, now - then)


class SaturationMonitor:
    """Measures one window at a time: call `begin_window` when it opens and `end_window` when it closes.

    Pool-wait counters are those of the transports the process sends through (`watch` each one once).
    """

    def __init__(
        self,
        *,
        pool_waits: Iterable[PoolWaitCounter] = (),
        cpu_clock: Callable[[], float] = time.process_time,
        wall_clock: Callable[[], float] = time.monotonic,
        wait_clock: Callable[[], float | None] = run_queue_wait,
        pressure_clock: Callable[[], float | None] = cpu_pressure,
    ) -> None:
        self._pools: list[PoolWaitCounter] = list(pool_waits)
        self._cpu_clock = cpu_clock
        self._wall_clock = wall_clock
        self._wait_clock = wait_clock
        self._pressure_clock = pressure_clock
        self._cpu0: float | None = None
        self._wall0 = 0.0
        self._pool0 = 0
        self._wait0: float | None = None
        self._pressure0: float | None = None

    def watch(self, counter: PoolWaitCounter) -> None:
        """Count `counter`'s pool waits from now on (a transport seen for the first time)."""
        if all(c is not counter for c in self._pools):
            self._pools.append(counter)
            if self._cpu0 is not None:
                self._pool0 += counter.value  # what it counted before it was watched is not this window's

    def _pool_total(self) -> int:
        return sum(c.value for c in self._pools)

    def begin_window(self) -> None:
        self._cpu0 = self._cpu_clock()
        self._wall0 = self._wall_clock()
        self._pool0 = self._pool_total()
        self._wait0 = self._wait_clock()
        self._pressure0 = self._pressure_clock()

    def cpu_so_far(self) -> float:
        """CPU used since `begin_window` as a fraction of one core."""
        if self._cpu0 is None:
            return 0.0
        wall = self._wall_clock() - self._wall0
        return (self._cpu_clock() - self._cpu0) / wall if wall > 0 else 0.0

    def end_window(self) -> Usage:
        """What the window that `begin_window` opened used (zero if none was opened)."""
        if self._cpu0 is None:
            return Usage(0.0, 0.0, 0)
        usage = Usage(
            self.cpu_so_far(),
            self._wall_clock() - self._wall0,
            self._pool_total() - self._pool0,
            _since(self._wait_clock(), self._wait0),
            _since(self._pressure_clock(), self._pressure0),
        )
        self._cpu0 = None
        return usage


def combine(
    saturations: Mapping[int, Saturation] | Sequence[Saturation], thresholds: Thresholds | None = None
) -> Saturation:
    """Fleet view of one window (worker index -> its view): client-bound if any worker was, naming which.

    CPU, CPU wait, the machine's CPU pressure and lag take the worst worker, counts add, CPU's measured span is
    the shortest (of the workers whose CPU was measured: one too brief to measure hides nobody's figure); judged
    only if every worker judged its part. With `thresholds`, the fleet's summed counts are judged too: ten
    workers that each drop 9 of 100 sends stay under a worker's minimum, yet the fleet's window is 9% short (no
    worker is named).
    """
    by_worker = dict(saturations) if isinstance(saturations, Mapping) else dict(enumerate(saturations))
    parts = list(by_worker.values())
    if not parts:
        return Saturation(False, (), 0.0, 0.0, 0, 0, judged=False)
    measured = [s for s in parts if s.measured_cpu is not None]  # a worker too brief to measure has no figure
    bound = tuple(sorted(w for w, s in by_worker.items() if s.client_bound))
    found = {r for s in parts for r in s.reasons}
    judged = all(s.judged for s in parts)
    late, dropped, pool_waits = (
        sum(s.late for s in parts),
        sum(s.dropped for s in parts),
        sum(s.pool_waits for s in parts),
    )
    due, sent = sum(s.due for s in parts), sum(s.sent for s in parts)
    if thresholds is not None and judged and len(parts) > 1:
        found.update(_count_reasons(late, dropped, pool_waits, due, due - dropped, sent, thresholds))
    reasons = tuple(r for r in REASONS if r in found)
    return Saturation(
        client_bound=bool(reasons),
        reasons=reasons,
        cpu=max((s.cpu for s in measured), default=0.0),
        lag_p99=max(s.lag_p99 for s in parts),
        dropped=dropped,
        pool_waits=pool_waits,
        cpu_seconds=min(s.cpu_seconds for s in measured or parts),
        late=late,
        late_bound=max(s.late_bound for s in parts),
        due=due,
        sent=sent,
        judged=judged,
        workers=bound if len(by_worker) > 1 else (),
        stalled=sum(s.stalled for s in parts),
        cpu_wait=_worst(s.cpu_wait for s in measured),
        cpu_pressure=_worst(s.cpu_pressure for s in measured),
    )


def _worst(values: Iterable[float | None]) -> float | None:
    """The largest measured value, None when no worker measured one."""
    return max((v for v in values if v is not None), default=None)
