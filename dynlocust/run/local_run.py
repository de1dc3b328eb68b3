"""One process's part of a scenario run: the open-model schedule and its windows as they close.

The pacer hands out send times; `ScenarioUser`s (the concurrency cap) take them and call `execute`; a closer
greenlet follows the plan, measures each window's client saturation while it runs, and once the window's last
request has answered (or the deadline has passed) hands the window's `ClosedWindow` to `on_window` — the local
`FleetMerge` in a standalone run, a message to the master on a worker. `on_done` gets the process's totals.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gevent

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.request.operations import Mix, OperationBuilder
from dynlocust.request.transport.pool_wait import pool_counter
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.gcpause import freeze_survivors, thaw
from dynlocust.run.pacing import Pacer, Segment, Ticket, split_segment
from dynlocust.run.progress import OpenWindow, Progress
from dynlocust.run.saturation import Saturation, SaturationMonitor, Thresholds, Usage, assess
from dynlocust.run.search import plan_end
from dynlocust.run.tally import WindowBook, WindowStats
from dynlocust.scenario.model import Scenario
from dynlocust.scenario.plan import Plan, build_plan, worst_case_plan

if TYPE_CHECKING:
    from dynlocust.request.client import DynamoDBClient
    from dynlocust.request.record import RequestRecord

log = logging.getLogger(__name__)

DEFAULT_CEILING_MARGIN = 1.1


@dataclass
class LocalRun:
    """Paces, measures and reports one scenario in one process (`worker_index` of `worker_count`)."""

    scenario: Scenario
    physical_names: dict[str, str]
    run_id: str
    t0: float
    deadline: float
    on_window: Callable[[ClosedWindow], None]
    on_done: Callable[[dict[str, Any]], None]
    worker_index: int = 0
    worker_count: int = 1
    prices: Prices = US_EAST_1
    clock: Callable[[], float] = time.time
    first_window: int = 0
    """A worker that joined mid-run sends nothing before this window."""
    thresholds: Thresholds = field(default_factory=Thresholds)
    """When a window of this process is client-bound (`--client-*` options)."""

    def __post_init__(self) -> None:
        self.plan: Plan = build_plan(self.scenario, t0=self.t0)
        self.searching = self.scenario.search is not None
        """A ceiling search: each window after the first is decided (`set_probe`) once the one before has closed."""
        self.decided = len(self.plan.windows) if not self.searching else 1
        """Windows whose rate and start are known (all of a fixed plan)."""
        self.logical_names = {physical: logical for logical, physical in self.physical_names.items()}
        """Physical table name -> the scenario's name: what request names and metric labels show."""
        self.share_count = self.worker_count
        self.share_index = self.worker_index
        self.segments: list[Segment] = [
            Segment(w.index, w.start, w.duration, 0.0)
            if w.index < self.first_window
            else split_segment(w.index, w.start, w.duration, w.rate, [1.0] * self.worker_count)[self.worker_index]
            for w in self.plan.windows
        ]
        self.pacer = Pacer(self.segments, clock=self.clock, open_ended=self.searching)
        self.book = WindowBook.from_segments(self.segments, bin_seconds=self.scenario.bin)
        self.mix = Mix.for_scenario(
            self.scenario, self.physical_names, worker_index=self.worker_index, worker_count=self.worker_count
        )
        self.monitor = SaturationMonitor()
        self._watched: set[DynamoDBClient] = set()
        """Clients whose transport's pool waits the monitor counts (each looked at once, not per send)."""
        self.request_ceiling = self.scenario.limits.max_requests or math.ceil(
            DEFAULT_CEILING_MARGIN * worst_case_plan(self.scenario, t0=self.t0).total_requests + 100
        )
        """Without `limits.max_requests`, the plan plus a margin: a pacing bug aborts instead of running away."""
        self._take_share()
        self.inflight: Counter[int] = Counter()
        self.sent = 0
        self.read_units = 0.0
        self.write_units = 0.0
        self.closed: list[Saturation] = []
        """The client's evidence on each window this process has closed and reported, in order (live views)."""
        self.abort_reason: str | None = None
        self.finished = False
        self._closer: gevent.Greenlet | None = None

    # -- life cycle ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        freeze_survivors()
        self.pacer.start()
        self._closer = gevent.spawn(self._close_windows)

    def stop(self, reason: str | None = None) -> None:
        """End the schedule early (ceiling, signal); the closer still writes what was observed."""
        if reason and self.abort_reason is None:
            self.abort_reason = reason
            log.error("stopping the run: %s", reason)
        self.pacer.stop()

    def replan(self, from_window: int, share_index: int, share_count: int) -> bool:
        """Take share `share_index` of `share_count` of every window from `from_window` on (the fleet lost a worker).

        False when that window has already started here: the master then sees its share missing, as before.
        """
        windows = [w for w in self.plan.windows if w.index >= from_window]
        weights = [1.0] * share_count
        segments = [split_segment(w.index, w.start, w.duration, w.rate, weights)[share_index] for w in windows]
        if not self._reschedule(segments):
            log.error("could not take a new share from window %d: it has already started", from_window)
            return False
        self.share_count, self.share_index = share_count, share_index
        self._take_share()  # ceilings follow the new share
        return True

    def set_probe(self, index: int, start: float, rate: float) -> bool:
        """A search decided its next probe: window `index` from `start` at `rate` (the fleet's), this process's
        share of it by its share index. False when that window has already started here (too late)."""
        plan = self.plan.with_probe(index, start, rate)
        weights = [1.0] * self.share_count
        segments = [
            split_segment(w.index, w.start, w.duration, w.rate, weights)[self.share_index] for w in plan.windows[index:]
        ]
        if not self._reschedule(segments):
            log.error("could not take probe window %d: it has already started", index + 1)
            return False
        self.plan = plan
        self.decided = max(self.decided, index + 1)
        return True

    def _reschedule(self, segments: list[Segment]) -> bool:
        """Pace and count `segments` from the first of them on; False, changing nothing, when it has started."""
        if not self.pacer.replan(segments):
            return False
        for segment in segments:
            self.segments[segment.index] = segment
            self.book.replace(WindowStats.for_segment(segment, bin_seconds=self.scenario.bin))
        return True

    def end_search(self, windows: int) -> None:
        """The search stopped after `windows` probes: the plan ends there, and so does the schedule."""
        self.plan = self.plan.truncated(windows)
        self.segments = self.segments[:windows]
        self.decided = min(self.decided, windows)
        self.pacer.close()

    def _take_share(self) -> None:
        """This process's share of the run's ceilings, and the request limit it gives (once per share, not per send);
        a search plans for its highest rates, so its share is its part of the fleet."""
        if self.searching:
            self._ceiling_share = 1.0 / self.share_count
        else:
            self._ceiling_share = sum(seg.count for seg in self.segments) / max(1, self.plan.total_requests)
        self._request_limit = math.ceil(self.request_ceiling * self._ceiling_share)

    def wait(self, timeout: float | None = None) -> None:
        if self._closer is not None:
            self._closer.join(timeout)

    # -- progress ------------------------------------------------------------------------------------------------

    def progress(self, now: float | None = None, *, figures_from: int | None = None) -> Progress:
        """This share's progress at `now` (the run's clock by default); with `figures_from`, copies of the tallies
        of its windows from that index on that have started (the web UI's live rows, from the first window the
        merge has not closed; the sampler and the watchdog need none)."""
        now = self.clock() if now is None else now
        window, phase, rate = -1, "", 0.0
        for segment, planned in zip(self.segments, self.plan.windows, strict=True):
            if segment.start <= now < segment.end:
                window, phase, rate = segment.index, planned.phase, segment.rate
                break
            if now >= segment.end:
                window, phase = segment.index, planned.phase
        windows = self.plan.windows
        open_windows: dict[int, OpenWindow] = {}
        if figures_from is not None:
            for planned in windows[figures_from:]:
                if planned.start > now:
                    break
                stats, closing = self.book.get(planned.index), False
                if stats is None:
                    stats, closing = self.book.handed_on(planned.index), True
                if stats is None:
                    continue
                counts = self.pacer.window_counts(planned.index)
                open_windows[planned.index] = OpenWindow(
                    planned.index, stats.copy(), counts.handed, counts.dropped, closing
                )
        return Progress(
            run_id=self.run_id,
            at=now,
            sent=self.sent,
            in_flight={w: n for w, n in self.inflight.items() if n},
            dropped=sum(self.pacer.window_counts(w.index).dropped for w in windows),
            window=window,
            phase=phase,
            rate=rate,
            saturation=self.closed[-1] if self.closed else None,
            read_units=self.read_units,
            write_units=self.write_units,
            windows_closed=len(self.closed),
            windows_planned=len(windows),
            plan_end=plan_end(windows[-1].end if windows else self.t0, self.t0, self.scenario.search, self.deadline),
            finished=self.finished,
            tables=dict(self.logical_names),
            open_windows=open_windows,
        )

    # -- the request path ------------------------------------------------------------------------------------------

    def next_ticket(self) -> Ticket | None:
        return self.pacer.acquire()

    def execute(self, client: DynamoDBClient, ticket: Ticket) -> RequestRecord:
        """Send one request for `ticket` through `client` and count its record in this run's window and totals."""
        if client not in self._watched:
            self._watched.add(client)
            counter = pool_counter(client.raw)
            if counter is not None:
                self.monitor.watch(counter)
        builder: OperationBuilder = self.mix.pick()
        method, kwargs = builder.build()
        self.inflight[ticket.window] += 1
        self.sent += 1
        try:
            record = client.send(method, kwargs, ticket=ticket, label=builder.label)
        finally:
            self.inflight[ticket.window] -= 1
        self.read_units += record.read_units
        self.write_units += record.write_units
        self.book.add(record)
        self._check_ceilings()
        return record

    def _check_ceilings(self) -> None:
        """Each process holds its planned part of the run's ceilings, so the fleet as a whole never passes them."""
        if self.pacer.done:
            return
        limits = self.scenario.limits
        share = self._ceiling_share
        if self.sent >= self._request_limit:
            self.stop(f"request ceiling reached: {self.sent} sent, this process's share of {self.request_ceiling}")
        if limits.max_cost_dollars is not None:
            spent = dollars(self.read_units, self.write_units, self.prices)
            if spent >= limits.max_cost_dollars * share:
                limit = limits.max_cost_dollars
                self.stop(f"cost ceiling reached: ${spent:.4f} estimated, this process's share of ${limit:.4f}")

    # -- windows ---------------------------------------------------------------------------------------------------

    def _close_windows(self) -> None:
        try:
            index = 0
            while self._decided(index):
                window = self.plan.windows[index]
                index += 1
                self._sleep_until(window.start)
                self.monitor.begin_window()
                self._sleep_until(window.end)
                usage = self.monitor.end_window()
                # its last sends may still be parked for a user (handed or dropped within max_lateness) while
                # nothing is in flight: closing then would call a fully run window partial
                counts = self.pacer.window_counts(window.index)
                grace_end = window.end + self.deadline + 0.1
                while (self.inflight[window.index] > 0 or not counts.settled) and self.clock() < grace_end:
                    gevent.sleep(0.02)
                self._close(window.index, window.phase, self.book.hand_on(window.index), usage)
            self._finish()
        except Exception:
            log.exception("closing windows failed")
            self._finish(failed=True)

    def _decided(self, index: int) -> bool:
        """Whether window `index` will run: wait, during a search, until it is decided or the search has ended."""
        while self.searching and index >= self.decided and index < len(self.plan.windows):
            if self.abort_reason is not None:
                return False
            gevent.sleep(0.02)
        return index < len(self.plan.windows)

    def _sleep_until(self, when: float) -> None:
        while (delay := when - self.clock()) > 0:
            if self.abort_reason is not None:  # stopped early: later windows will see nothing
                return
            gevent.sleep(min(delay, 0.25))

    def _close(self, index: int, phase: str, stats: WindowStats, usage: Usage) -> None:
        counts = self.pacer.window_counts(index)
        stats.apply_pacing(counts)
        if self.abort_reason is not None and self.clock() < stats.end:  # stopped before the window's end
            stats.mark_partial()
        saturation = assess(
            cpu=usage.cpu,
            cpu_seconds=usage.seconds,
            lag=counts.lag,
            rate=self.segments[index].rate,
            due=counts.handed + counts.dropped,
            sent=stats.total().sent,
            dropped=counts.dropped,
            pool_waits=usage.pool_waits,
            stalled=counts.stalled,
            cpu_wait=usage.cpu_wait,
            cpu_pressure=usage.cpu_pressure,
            whole=not stats.partial,
            thresholds=self.thresholds,
        )
        self.closed.append(saturation)
        self.on_window(ClosedWindow.of_part(stats, phase=phase, saturation=saturation, worker_index=self.worker_index))

    def _finish(self, *, failed: bool = False) -> None:
        if failed and self.abort_reason is None:
            self.abort_reason = "the window closer failed (see the log)"
        self.finished = True
        thaw()
        self.on_done(
            {
                "worker_index": self.worker_index,
                "sent": self.sent,
                "read_units": self.read_units,
                "write_units": self.write_units,
                "abort_reason": self.abort_reason,
                "windows_closed": len(self.closed),
            }
        )
