"""Open-model arrivals: hand out send times on a fixed schedule, whatever the latency.

Locust is closed-model (a user sends again only when its last request returned), so a slow or throttling
service would lower the offered load by itself. Here a dispatcher greenlet follows a schedule fixed in advance
from the shared T0 and hands each send to a free user; the users are only the concurrency cap. A send that
comes due while no user is free waits at most `max_lateness` and is then counted as *dropped*: never silently
skipped, and never sent late in a catch-up burst.

Schedule rule (exact, and additive across workers): a window's total rate R is split into contiguous slices,
worker i owning `[offset_i, offset_i + rate_i)` with `offset_{i+1} = offset_i + rate_i`. Worker i sends
`count = rnd((offset + rate) * duration) - rnd(offset * duration)` times in the window, where
`rnd(x) = floor(x + 0.5)`; the sum over workers telescopes to `rnd(R * duration)`. A worker's sends are
spread evenly: send j is due at `start + duration * (j + phase) / count`, `phase` in [0, 1) staggering
workers. `split_segment` builds the per-worker segments.

Usage in a user loop::

    while (ticket := pacer.acquire()) is not None:
        sent_at = time.time()
        ...one request...; record latency from `sent_at` and from `ticket.intended`
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import gevent
from gevent.hub import Waiter, get_hub

from dynlocust.errors import DynlocustError
from dynlocust.run.histogram import Histogram
from dynlocust.scenario.plan import half_up

DEFAULT_MAX_LATENESS = 0.1
"""Seconds a due send may wait for a free user before it is dropped; bounds any catch-up burst to
`max_lateness * rate` sends."""


class PacingError(DynlocustError):
    """A schedule that cannot be paced (overlapping or malformed segments)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """This worker's share of one planned window: a distinct thing from the window itself.

    The plan's `dynlocust.scenario.plan.Window` is the fleet's offered load (its total rate, its phase);
    `split_segment` cuts it into one segment per worker, each with its own rate, offset and phase, and the pacer
    and the window's tally (`WindowStats.for_segment`) follow this worker's segment alone. `index`, `start`
    and `duration` are the window's; `start` is absolute epoch seconds, `rate` this worker's share
    (sends/s); `offset` is the sum of the rates of the workers before this one in the same window (see the
    module's schedule rule) and `phase` in [0, 1) shifts this worker's sends within their slots.
    """

    index: int
    start: float
    duration: float
    rate: float
    offset: float = 0.0
    phase: float = 0.0

    @property
    def end(self) -> float:
        return self.start + self.duration

    @property
    def count(self) -> int:
        """Exact number of sends this worker makes in the window."""
        return half_up((self.offset + self.rate) * self.duration) - half_up(self.offset * self.duration)

    def intended(self, j: int) -> float:
        """Intended send time of this worker's `j`-th send in the window."""
        return self.start + self.duration * (j + self.phase) / self.count

    def count_between(self, t0: float, t1: float) -> int:
        """Number of this worker's sends due in `[t0, t1)` (e.g. one statistics bin)."""
        n = self.count
        if n == 0 or t1 <= t0:
            return 0

        def first_at_or_after(t: float) -> int:
            j = max(0, math.ceil((t - self.start) * n / self.duration - self.phase))
            # float rounding: step to the exact boundary using the same formula as intended()
            while j > 0 and self.intended(j - 1) >= t:
                j -= 1
            while j < n and self.intended(j) < t:
                j += 1
            return min(j, n)

        return first_at_or_after(t1) - first_at_or_after(t0)


def split_segment(
    index: int, start: float, duration: float, total_rate: float, weights: Sequence[float]
) -> list[Segment]:
    """Split one window's `total_rate` over workers in proportion to `weights`.

    The returned segments' counts sum exactly to `round(total_rate * duration)` (half up), and their phases
    interleave the workers' sends evenly.
    """
    if not weights or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise PacingError(f"split_segment: expected non-negative weights with a positive sum, found {weights!r}")
    total_weight = sum(weights)
    segments = []
    offset = 0.0
    for i, w in enumerate(weights):
        rate = total_rate * w / total_weight if i < len(weights) - 1 else max(0.0, total_rate - offset)
        # equal shares get phases 0, 1/n, 2/n, ...: the union of the workers' sends is evenly spaced
        phase = min(offset / total_rate, math.nextafter(1.0, 0.0)) if total_rate > 0 else 0.0
        segments.append(Segment(index, start, duration, rate, offset=offset, phase=phase))
        offset += rate
    return segments


class Ticket(NamedTuple):
    """Permission to send one request: `intended` is its scheduled send time (epoch seconds).

    A named tuple, not a frozen dataclass: the schedule makes one for every due send, dropped ones included, and
    a tuple is built in half the time (0.36 against 0.70 us by timeit), which an overloaded generator pays per send."""

    seq: int
    window: int
    intended: float


@dataclass(slots=True)
class PacingCounts:
    """What the pacer did in one window.

    `scheduled` is the window's planned count (the offered load); once the window is over
    `scheduled == handed + dropped + cancelled`, `cancelled` being sends not yet due when the pacer
    stopped. `lag` holds the schedule lag (time a user got the ticket - intended time) of every handed send.
    """

    index: int
    scheduled: int
    handed: int = 0
    dropped: int = 0
    cancelled: int = 0
    stalled: int = 0
    """Dropped sends the process itself did not run in time to hand out (CPU starvation): already past
    `max_lateness` when the pacer first saw them, or expired while a user was free; the rest of `dropped` waited
    in vain for a free user (the concurrency cap)."""
    lag: Histogram = field(default_factory=Histogram)

    @property
    def lag_p50(self) -> float | None:
        return self.lag.percentile(0.5)

    @property
    def lag_p99(self) -> float | None:
        return self.lag.percentile(0.99)

    @property
    def lag_max(self) -> float | None:
        return self.lag.max if self.lag.count else None

    @property
    def settled(self) -> bool:
        """True once every scheduled send was handed, dropped or cancelled."""
        return self.scheduled == self.handed + self.dropped + self.cancelled


class Pacer:
    """Hands out tickets on the schedule of `segments` to user greenlets calling `acquire`.

    One dispatcher greenlet wakes when the next send is due (or a parked send expires), hands every due
    send to a waiting user in one pass, and parks the rest for at most `max_lateness`. A user coming back
    from a request takes a due send at once, without the dispatcher: when all users are busy the schedule
    does not depend on the dispatcher's timer. Lag is measured when the user has the ticket in hand.
    With gevent on libev/epoll, timers fire up to ~1 ms late: expect a lag p50 around 0.5 ms on an idle
    process. One pacer belongs to one gevent hub (thread); it is not thread-safe.

    `clock` gives epoch seconds (the schedule's time base, shared with other workers through T0); the
    dispatcher sleeps real seconds computed from it. `max_lateness`: see `DEFAULT_MAX_LATENESS`.
    """

    def __init__(
        self,
        segments: Sequence[Segment],
        *,
        clock: Callable[[], float] = time.time,
        max_lateness: float = DEFAULT_MAX_LATENESS,
        open_ended: bool = False,
    ) -> None:
        ordered = sorted(segments, key=lambda s: s.start)
        for seg in ordered:
            if seg.duration <= 0 or seg.rate < 0 or not 0.0 <= seg.phase < 1.0:
                raise PacingError(
                    f"segment {seg.index}: expected duration > 0, rate >= 0 and phase in [0, 1), found {seg!r}"
                )
        for a, b in itertools.pairwise(ordered):
            if b.start < a.end - 1e-9:
                raise PacingError(
                    f"segments {a.index} and {b.index}: expected no overlap, found {a.index} ending at {a.end} "
                    f"after {b.index} starts at {b.start}"
                )
        if len({s.index for s in ordered}) != len(ordered):
            raise PacingError(f"segments: expected unique indexes, found {[s.index for s in ordered]}")
        if max_lateness < 0:
            raise PacingError(f"max_lateness: expected >= 0 seconds, found {max_lateness!r}")
        self._segments = ordered
        self._clock = clock
        self._max_lateness = max_lateness
        self._counts = {s.index: PacingCounts(s.index, s.count) for s in ordered}
        self._schedule: Iterator[Ticket] = self._tickets()
        self._next: Ticket | None = next(self._schedule, None)
        self._pending: deque[Ticket] = deque()  # due, not yet taken, oldest first
        self._waiters: deque[Waiter] = deque()
        self._done = False
        self._open = open_ended
        """More windows may come (a ceiling search decides each after the last): users wait past the schedule's
        end until `close`."""
        self._dispatcher: gevent.Greenlet | None = None

    def _tickets(self, first_seq: int = 0, from_window: int | None = None) -> Iterator[Ticket]:
        seq = first_seq
        for seg in self._segments:
            if from_window is not None and seg.index < from_window:
                continue
            count, index, start, duration, phase = seg.count, seg.index, seg.start, seg.duration, seg.phase
            for j in range(count):  # seg.intended(j), without recounting the segment per send
                yield Ticket(seq, index, start + duration * (j + phase) / count)
                seq += 1

    def replan(self, segments: Sequence[Segment]) -> bool:
        """Replace the schedule of windows that have not started sending (a fleet re-balanced after a worker left).

        `segments` must cover every window from the first one given to the end of the plan. Returns False, and
        changes nothing, when the first of them already handed out or dropped a send: it is too late for it.
        """
        if self._done or not segments:
            return False
        first = min(seg.index for seg in segments)
        started = self._counts.get(first)
        if started is None or started.handed or started.dropped or any(t.window >= first for t in self._pending):
            return False
        nxt = self._next
        kept = [seg for seg in self._segments if seg.index < first]
        seq = sum(seg.count for seg in kept)  # tickets are numbered in schedule order
        self._segments = kept + sorted(segments, key=lambda seg: seg.start)
        for seg in segments:
            self._counts[seg.index] = PacingCounts(seg.index, seg.count)
        if nxt is None or nxt.window >= first:
            self._schedule = self._tickets(seq, first)
            self._next = next(self._schedule, None)
        else:  # still inside earlier windows: their remaining tickets first, then the new segments
            earlier = itertools.takewhile(lambda t: t.window < first, self._schedule)
            self._schedule = itertools.chain(earlier, self._tickets(seq, first))
        if self._dispatcher is not None:  # it may be asleep until a send of the old schedule
            self._dispatcher.kill(block=False)
            self._dispatcher = gevent.spawn(self._run)
        return True

    def close(self) -> None:
        """No further windows will come (an open-ended schedule's last one is planned): end once it is over."""
        self._open = False
        if not self._done and self._next is None and not self._pending:
            self._finish()

    @property
    def done(self) -> bool:
        """True once the schedule is over or the pacer stopped."""
        return self._done

    def start(self) -> None:
        """Spawn the dispatcher greenlet (idempotent)."""
        if self._dispatcher is None and not self._done:
            self._dispatcher = gevent.spawn(self._run)

    def stop(self) -> None:
        """End the schedule now: not-yet-taken sends are counted as cancelled, waiting users get None."""
        if self._done:
            return
        if self._dispatcher is not None and self._dispatcher is not gevent.getcurrent():
            self._dispatcher.kill(block=False)
        for ticket in self._pending:
            self._counts[ticket.window].cancelled += 1
        self._pending.clear()
        if self._next is not None:
            self._counts[self._next.window].cancelled += 1
            for ticket in self._schedule:
                self._counts[ticket.window].cancelled += 1
            self._next = None
        self._finish()

    def acquire(self) -> Ticket | None:
        """Block until a send comes due and return its ticket; None once the schedule is over or stopped."""
        while True:
            if self._done:
                return None
            now = self._clock()
            # a user coming back while sends are due takes one at once: when every user is busy the
            # dispatcher's timer can fire late, and the schedule must not depend on it
            self._advance(now)
            if self._pending:
                due = self._pending.popleft()
                self._hand(due, now)
                return due
            if self._next is None and not self._open:
                self._finish()
                return None
            waiter: Waiter = Waiter()
            self._waiters.append(waiter)
            try:
                ticket: Ticket | None = waiter.get()
            except BaseException:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
                raise
            if ticket is None:
                return None
            self._hand(ticket, self._clock())
            return ticket

    def window_counts(self, index: int) -> PacingCounts:
        """Return the live counters of window `index`."""
        try:
            return self._counts[index]
        except KeyError:
            raise PacingError(
                f"window_counts: expected one of windows {sorted(self._counts)}, found {index!r}"
            ) from None

    @property
    def waiting_users(self) -> int:
        """Users currently blocked in `acquire` (free capacity)."""
        return len(self._waiters)

    # -- internals -------------------------------------------------------------------------------------------

    def _hand(self, ticket: Ticket, now: float) -> None:
        counts = self._counts[ticket.window]
        counts.handed += 1
        counts.lag.record(now - ticket.intended)

    def _advance(self, now: float) -> None:
        """Move every send due by `now` to the pending queue; count those already too late as dropped."""
        limit = now - self._max_lateness
        nxt = self._next
        if nxt is not None and nxt.intended <= now:
            counts = self._counts
            pending = self._pending
            schedule = self._schedule
            while nxt is not None and nxt.intended <= now:
                if nxt.intended < limit:
                    counts[nxt.window].dropped += 1
                    counts[nxt.window].stalled += 1
                else:
                    pending.append(nxt)
                nxt = next(schedule, None)
            self._next = nxt
        self._expire(now)

    def _expire(self, now: float) -> None:
        limit = now - self._max_lateness
        pending = self._pending
        while pending and pending[0].intended < limit:
            counts = self._counts[pending.popleft().window]
            counts.dropped += 1
            if self._waiters:  # a user was free all along: the process did not run to hand it over
                counts.stalled += 1

    def _deliver(self, waiter: Waiter, ticket: Ticket) -> None:
        # runs in the hub; the waiting user may have been killed since it was chosen
        if waiter.greenlet is None:
            if self._done:
                self._counts[ticket.window].cancelled += 1
            else:
                self._pending.appendleft(ticket)
                self._match()
        else:
            waiter.switch(ticket)

    def _match(self) -> None:
        run_callback = get_hub().loop.run_callback
        while self._pending and self._waiters:
            run_callback(self._deliver, self._waiters.popleft(), self._pending.popleft())

    def _finish(self) -> None:
        self._done = True
        run_callback = get_hub().loop.run_callback
        while self._waiters:
            waiter = self._waiters.popleft()
            run_callback(waiter.switch, None)

    def _run(self) -> None:
        clock = self._clock
        lateness = self._max_lateness
        while not self._done:
            self._advance(clock())
            self._match()
            nxt = self._next
            if nxt is None and not self._pending:
                if not self._open:
                    self._finish()
                return
            wake = nxt.intended if nxt is not None else math.inf
            if self._pending:
                wake = min(wake, self._pending[0].intended + lateness)
            gevent.sleep(max(0.0, wake - clock()))
