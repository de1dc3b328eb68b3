"""One process's part of a scenario run: tables, the open-model schedule, windows as they close, the verdicts.

The pacer hands out send times; `ScenarioUser`s (the concurrency cap) take them and call `execute`; a closer
greenlet follows the plan, measures each window's client saturation while it runs, and once the window's last
request has answered (or the deadline has passed) writes it to the results file and prints a progress line. When
the last window closes the run reports, checks its SLOs and asks Locust to quit; teardown is the caller's `finally`.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import gevent

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.operations import Mix, OperationBuilder, consumed_units
from dynlocust.outcomes import Outcome
from dynlocust.pacing import Pacer, Segment, Ticket, split_segment
from dynlocust.report.table import format_progress, format_window_table
from dynlocust.results import ResultsWriter
from dynlocust.saturation import Saturation, SaturationMonitor
from dynlocust.scenario.model import Scenario
from dynlocust.scenario.plan import Plan, build_plan
from dynlocust.slo import check_window
from dynlocust.windows import ERROR_KINDS, WindowBook, WindowStats, verdict

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_SLO = 3
EXIT_CEILING = 4

WRITE_OPS = frozenset({"put", "conditional_put", "update", "delete", "transact_write", "batch_write"})


@dataclass
class ClosedWindow:
    index: int
    phase: str
    summary: dict[str, Any]
    saturation: Saturation
    verdict: str
    slo_failures: list[str]


@dataclass
class ScenarioRun:
    """Paces, measures and reports one scenario in one process (`worker_index` of `worker_count`)."""

    scenario: Scenario
    physical_names: dict[str, str]
    results: ResultsWriter
    run_id: str
    t0: float
    deadline: float
    worker_index: int = 0
    worker_count: int = 1
    prices: Prices = US_EAST_1
    out: TextIO = field(default_factory=lambda: sys.stdout)
    on_finished: Callable[[int], None] = lambda code: None
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        self.plan: Plan = build_plan(self.scenario, t0=self.t0)
        weights = [1.0] * self.worker_count
        self.segments: list[Segment] = [
            split_segment(w.index, w.start, w.duration, w.rate, weights)[self.worker_index] for w in self.plan.windows
        ]
        self.pacer = Pacer(self.segments, clock=self.clock)
        self.book = WindowBook.from_segments(self.segments, bin_seconds=self.scenario.bin)
        self.mix = Mix.for_scenario(
            self.scenario, self.physical_names, worker_index=self.worker_index, worker_count=self.worker_count
        )
        self.monitor = SaturationMonitor()
        self.inflight: Counter[int] = Counter()
        self.sent = 0
        self.read_units = 0.0
        self.write_units = 0.0
        self.closed: list[ClosedWindow] = []
        self.abort_reason: str | None = None
        self.exit_code: int | None = None
        self._closer: gevent.Greenlet | None = None

    # -- life cycle ----------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.results.write_run(
            run_id=self.run_id,
            scenario=self.scenario.name,
            source=self.scenario.source,
            t0=self.t0,
            worker_index=self.worker_index,
            worker_count=self.worker_count,
            windows=[
                {"index": w.index, "start": w.start, "duration": w.duration, "rate": w.rate, "phase": w.phase}
                for w in self.plan.windows
            ],
            tables=self.physical_names,
        )
        self.pacer.start()
        self._closer = gevent.spawn(self._close_windows)

    def stop(self, reason: str | None = None) -> None:
        """End the schedule early (ceiling, signal); the closer still writes what was observed."""
        if reason and self.abort_reason is None:
            self.abort_reason = reason
            log.error("stopping the run: %s", reason)
        self.pacer.stop()

    def wait(self, timeout: float | None = None) -> None:
        if self._closer is not None:
            self._closer.join(timeout)

    # -- the request path ------------------------------------------------------------------------------------------

    def next_ticket(self) -> Ticket | None:
        return self.pacer.acquire()

    def execute(self, client: Any, ticket: Ticket) -> Outcome | None:
        """Send one request for `ticket` through `client` (a `DynamoDBClient`) and record what happened."""
        builder: OperationBuilder = self.mix.pick()
        method_name, kwargs = builder.build()
        self.inflight[ticket.window] += 1
        self.sent += 1
        sent_at = self.clock()
        try:
            response = client.call(
                _api_name(client, method_name),
                getattr(client.raw, method_name),
                kwargs,
                context={"ticket": ticket, "operation_label": builder.label},
            )
        finally:
            self.inflight[ticket.window] -= 1
        done_at = self.clock()
        outcome = client.last_outcome
        units = consumed_units(response)
        is_write = builder.operation.op in WRITE_OPS
        read_units, write_units = (0.0, units) if is_write else (units, 0.0)
        self.read_units += read_units
        self.write_units += write_units
        self.book.record(
            at=ticket.intended,
            window=ticket.window,
            kind=outcome.kind,
            code=outcome.code,
            reasons=[r.reason for r in outcome.reasons],
            unprocessed=outcome.unprocessed,
            latency=done_at - sent_at,
            latency_from_intended=done_at - ticket.intended,
            read_units=read_units,
            write_units=write_units,
        )
        self._check_ceilings()
        return outcome

    def _check_ceilings(self) -> None:
        limits = self.scenario.limits
        if limits.max_requests is not None and self.sent >= limits.max_requests and not self.pacer.done:
            per_worker = limits.max_requests
            self.stop(f"request ceiling reached: {self.sent} requests sent, limit {per_worker}")
        if limits.max_cost_dollars is not None and not self.pacer.done:
            spent = dollars(self.read_units, self.write_units, self.prices)
            if spent >= limits.max_cost_dollars:
                self.stop(f"cost ceiling reached: ${spent:.4f} estimated, limit ${limits.max_cost_dollars:.4f}")

    # -- windows ---------------------------------------------------------------------------------------------------

    def _close_windows(self) -> None:
        try:
            for window, stats in zip(self.plan.windows, self.book, strict=True):
                self._sleep_until(window.start)
                self.monitor.begin_window()
                self._sleep_until(window.end)
                saturation = self.monitor.end_window(self.pacer.window_counts(window.index))
                grace_end = window.end + self.deadline + 0.1
                while self.inflight[window.index] > 0 and self.clock() < grace_end:
                    gevent.sleep(0.02)
                self._close(window.index, window.phase, stats, saturation)
            self._finish()
        except Exception:
            log.exception("closing windows failed")
            self._finish(failed=True)

    def _sleep_until(self, when: float) -> None:
        while (delay := when - self.clock()) > 0:
            if self.abort_reason is not None:  # stopped early: later windows will see nothing
                return
            gevent.sleep(min(delay, 0.25))

    def _close(self, index: int, phase: str, stats: WindowStats, saturation: Saturation) -> None:
        stats.apply_pacing(self.pacer.window_counts(index))
        summary = stats.summary()
        total = stats.total()
        summary["errors"] = sum(v for k, v in total.by_kind.items() if k in ERROR_KINDS)
        summary["unprocessed_requests"] = total.by_kind.get("unprocessed", 0)
        summary["cost_dollars"] = dollars(summary["read_units"], summary["write_units"], self.prices)
        window_verdict = verdict(stats, saturation)
        failures = check_window(self.scenario.slos, index, phase, summary)
        closed = ClosedWindow(index, phase, summary, saturation, window_verdict, failures)
        self.closed.append(closed)
        record = stats.to_dict()
        record.update(
            phase=phase,
            verdict=window_verdict,
            saturation=saturation.to_dict(),
            slo_failures=failures,
            worker_index=self.worker_index,
        )
        self.results.write_window(**record)
        self.out.write(format_progress(closed, len(self.plan.windows)) + "\n")
        self.out.flush()

    def _finish(self, *, failed: bool = False) -> None:
        failures = [f for w in self.closed for f in w.slo_failures]
        if self.abort_reason or failed:
            code = EXIT_CEILING
        elif failures:
            code = EXIT_SLO
        else:
            code = EXIT_OK
        self.exit_code = code
        self.results.write_end(
            run_id=self.run_id,
            exit_code=code,
            abort_reason=self.abort_reason,
            slo_failures=failures,
            sent=self.sent,
            read_units=self.read_units,
            write_units=self.write_units,
            cost_dollars=dollars(self.read_units, self.write_units, self.prices),
            windows_closed=len(self.closed),
            windows_planned=len(self.plan.windows),
        )
        self.out.write("\n" + format_window_table(self.closed) + "\n")
        if self.abort_reason:
            self.out.write(f"\nrun stopped early: {self.abort_reason}\n")
        for failure in failures:
            self.out.write(f"SLO failed: {failure}\n")
        self.out.flush()
        self.on_finished(code)


def _api_name(client: Any, method_name: str) -> str:
    return client.raw.meta.method_to_api_mapping[method_name]
