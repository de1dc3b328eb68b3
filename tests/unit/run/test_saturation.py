"""The client-side decision rules at their boundaries, and the monitor on real CPU load and real pacing."""

from __future__ import annotations

import time
from typing import Any

import gevent
import pytest

from dynlocust.observe.report.table import evidence_cells
from dynlocust.request.transport.pool_wait import PoolWaitCounter, pool_counter
from dynlocust.run.histogram import Histogram
from dynlocust.run.pacing import Pacer, PacingCounts, Segment
from dynlocust.run.saturation import (
    CPU_MIN_WALL_SECONDS,
    REASONS,
    THRESHOLD_FIELDS,
    Saturation,
    SaturationMonitor,
    Thresholds,
    assess,
    combine,
    count_at_or_above,
)

T = Thresholds()


def lags(on_time: int, late: int = 0, late_by: float = 0.2) -> Histogram:
    """Schedule lags of ``on_time`` sends at 1 ms and ``late`` sends at ``late_by`` seconds."""
    h = Histogram()
    if on_time:
        h.record(0.001, on_time)
    if late:
        h.record(late_by, late)
    return h


def window(sends: int, rate: float = 100.0, **kw: Any) -> Saturation:
    """A healthy window of ``sends`` due sends at ``rate``/s, with ``kw`` overriding its measurements."""
    args: dict[str, Any] = {
        "cpu": 0.2,
        "cpu_seconds": 10.0,
        "lag": lags(sends),
        "rate": rate,
        "due": sends,
        "sent": sends,
        "dropped": 0,
        "pool_waits": 0,
    }
    args.update(kw)
    return assess(**args)


@pytest.mark.parametrize(
    ("sends", "kw", "reasons"),
    [
        (1000, {}, ()),
        # cpu: at the threshold, over a long enough span
        (1000, {"cpu": 0.90}, ("cpu",)),
        (1000, {"cpu": 0.899}, ()),
        (1000, {"cpu": 0.99, "cpu_seconds": 1.99}, ()),  # measured over too short a span: not judged
        (1000, {"cpu": 0.99, "cpu_seconds": 2.0}, ("cpu",)),
        # lag: more than max(20, 5% of due sends) late by more than the bound
        (300, {"lag": lags(279, 21)}, ("lag",)),
        (300, {"lag": lags(280, 20)}, ()),  # exactly 20: not more
        (1000, {"lag": lags(950, 50)}, ()),  # 5% of 1,000 = 50
        (1000, {"lag": lags(949, 51)}, ("lag",)),
        (900, {"lag": lags(873, 27)}, ()),  # 3% late: one stall of a busy host, not a client limit
        (300, {"lag": lags(299, 1, 0.026)}, ()),  # the case: the worst of 300 sends at 26 ms
        (30, {"lag": lags(5, 25)}, ("lag",)),  # a tiny window: 25 of 30 late is more than the minimum
        (10, {"lag": lags(0, 10)}, ()),  # ... 10 of 10 is not: too few to tell a stall from a limit
        (1000, {"lag": lags(900, 100, 0.045)}, ()),  # late by less than the 50 ms bound
        (200, {"rate": 10.0, "lag": lags(150, 50, 0.080)}, ()),  # at 10/s the bound is one slot: 100 ms
        (200, {"rate": 10.0, "lag": lags(150, 50, 0.120)}, ("lag",)),
        # sends the process saw only once too late (it did not run) count as late
        (300, {"stalled": 21, "dropped": 21, "sent": 279, "lag": lags(279)}, ("lag", "dropped")),
        (300, {"stalled": 10, "dropped": 10, "sent": 290, "lag": lags(280, 10)}, ()),  # 20 late: not more than 20
        (300, {"stalled": 11, "dropped": 11, "sent": 289, "lag": lags(279, 10)}, ("lag", "dropped")),
        # dropped: more than max(10, 1% of due)
        (1000, {"dropped": 10, "sent": 990}, ()),
        (1000, {"dropped": 11, "sent": 989}, ("dropped",)),
        (100_000, {"dropped": 1000, "sent": 99_000}, ()),
        (100_000, {"dropped": 1001, "sent": 98_999}, ("dropped",)),
        (10, {"dropped": 10, "sent": 0}, ()),  # a tiny sample: every send dropped, too few to tell a stall
        (30, {"dropped": 11, "sent": 19}, ("dropped",)),
        # pool: more than max(5, 1% of sends)
        (1000, {"pool_waits": 10}, ()),
        (1000, {"pool_waits": 11}, ("pool",)),
        (100, {"pool_waits": 6}, ("pool",)),
        # offered-short: beyond max(10, 2% of due, 3 sqrt(due)) + 1 missing
        (1000, {"sent": 1000 - 95}, ()),  # 3 * sqrt(1000) + 1 = 95.9
        (1000, {"sent": 1000 - 96}, ("offered-short",)),
        (100, {"sent": 100 - 31}, ()),  # 3 * sqrt(100) + 1 = 31
        (100, {"sent": 100 - 32}, ("offered-short",)),
        (5, {"sent": 0}, ()),  # 5 missing is within the minimum of 10
        # several at once, in the vocabulary's order
        (1000, {"cpu": 0.97, "lag": lags(500, 500), "dropped": 300, "sent": 700},
         ("cpu", "lag", "dropped", "offered-short")),
    ],
)  # fmt: skip
def test_assess_boundaries(sends: int, kw: dict[str, Any], reasons: tuple[str, ...]) -> None:
    sat = window(sends, **kw)
    assert sat.reasons == reasons
    assert sat.client_bound == bool(reasons) and sat.judged


def test_a_window_that_ran_in_part_is_not_judged() -> None:
    sat = window(1000, cpu=0.99, dropped=500, sent=500, whole=False)
    assert not sat.client_bound and sat.reasons == () and not sat.judged
    assert (sat.cpu, sat.dropped, sat.short) == (0.99, 500, 500)  # the figures are kept


def test_late_count_only_counts_surely_late_sends() -> None:
    h = lags(10, 5, 0.030)
    assert count_at_or_above(h, 0.025) == 5
    assert count_at_or_above(h, 0.0305) == 0
    assert count_at_or_above(Histogram(), 0.025) == 0


def test_shortfall_is_the_clients_strongest_evidence() -> None:
    sat = window(1000, dropped=300, sent=650, lag=lags(600, 100))
    assert sat.short == 350 and sat.shortfall == pytest.approx(0.35)
    assert window(0).shortfall == 0.0


def test_every_threshold_has_a_range_and_a_reason() -> None:
    assert {f.name for f in THRESHOLD_FIELDS} == set(Thresholds().__dataclass_fields__)
    for f in THRESHOLD_FIELDS:
        assert f.metadata["low"] <= f.default <= f.metadata["high"], f.name
        assert len(f.metadata["why"]) > 20, f.name
    assert T.late_bound(100.0) == 0.05 and T.late_bound(10.0) == 0.1 and T.late_bound(0.0) == 0.05


def test_custom_thresholds_apply() -> None:
    assert window(1000, dropped=2, sent=998, thresholds=Thresholds(dropped_min=1, dropped_fraction=0)).reasons == (
        "dropped",
    )
    assert window(1000, cpu=0.6, thresholds=Thresholds(cpu=0.5)).reasons == ("cpu",)


def test_round_trip_reads_old_records_and_combine_names_the_workers() -> None:
    a = window(500)
    b = window(500, cpu=0.97)
    assert Saturation.from_dict(b.to_dict()) == b
    old = {"client_bound": True, "reasons": ["lag"], "cpu": 0.6, "lag_p99": 0.04, "dropped": 3, "pool_waits": 1}
    assert Saturation.from_dict(old) == Saturation(True, ("lag",), 0.6, 0.04, 3, 1)
    fleet = combine({0: a, 1: b})
    assert fleet.client_bound and fleet.reasons == ("cpu",) and fleet.workers == (1,)
    assert (fleet.cpu, fleet.due, fleet.sent) == (0.97, 1000, 1000)
    assert not combine({0: a, 1: a}).client_bound
    assert combine([b]).workers == ()  # a single process names no worker
    assert not combine([]).judged
    assert set(REASONS) == {"cpu", "machine-busy", "lag", "dropped", "pool", "offered-short"}


def test_the_fleets_summed_counts_are_judged_too() -> None:
    part = window(100, dropped=8, sent=92)  # under a worker's minimum of 10
    assert not part.client_bound
    fleet = combine({0: part, 1: part}, T)
    assert fleet.client_bound and fleet.reasons == ("dropped",) and fleet.workers == ()  # no one worker is to blame
    assert (fleet.dropped, fleet.due, fleet.sent) == (16, 200, 184)
    assert not combine({0: part, 1: part}).client_bound  # without thresholds: the workers' verdicts only
    assert not combine({0: window(100), 1: window(100)}, T).client_bound
    assert not combine([part], T).client_bound  # one process: its own verdict stands
    unjudged = window(100, dropped=8, sent=92, whole=False)
    assert not combine({0: part, 1: unjudged}, T).client_bound  # a part that ran in part judges nothing


def test_monitor_counts_pool_waits_of_watched_transports_only_within_the_window() -> None:
    pool = PoolWaitCounter()
    monitor = SaturationMonitor(cpu_clock=lambda: 0.0)
    pool.increment(5)  # before the window: not counted
    monitor.begin_window()
    monitor.watch(pool)  # first seen mid-window: its earlier count is not this window's
    monitor.watch(pool)  # watched once
    pool.increment()
    assert monitor.end_window().pool_waits == 1
    assert monitor.end_window().pool_waits == 0  # no window open
    assert pool_counter(type("T", (), {"pool_waits": pool})()) is pool
    assert pool_counter(object()) is None


def paced_window(hog: bool, seconds: float = 0.5) -> tuple[Saturation, PacingCounts]:
    """Run one window at 200 sends/s with 10 idle users, optionally with a CPU hog greenlet."""
    t0 = time.time() + 0.05
    pacer = Pacer([Segment(0, t0, seconds, 200.0)], max_lateness=0.05)
    monitor = SaturationMonitor()

    def user() -> None:
        while pacer.acquire() is not None:
            gevent.sleep(0.001)

    def cpu_hog() -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            sum(i * i for i in range(2000))
            if time.monotonic() > deadline - seconds / 2:
                gevent.sleep(0)  # let the pacer see it is late in the second half

    users = [gevent.spawn(user) for _ in range(10)]
    gevent.sleep(max(0.0, t0 - time.time()))
    monitor.begin_window()
    pacer.start()
    hog_g = gevent.spawn(cpu_hog) if hog else None
    gevent.sleep(seconds)
    if hog_g is not None:
        hog_g.join()
    usage = monitor.end_window()
    try:
        gevent.joinall(users, timeout=2)
    finally:
        pacer.stop()
        gevent.killall(users)
    counts = pacer.window_counts(0)
    sat = assess(
        cpu=usage.cpu,
        cpu_seconds=usage.seconds,
        lag=counts.lag,
        rate=200.0,
        due=counts.handed + counts.dropped,
        sent=counts.handed,
        dropped=counts.dropped,
        stalled=counts.stalled,
        cpu_wait=usage.cpu_wait,
        thresholds=Thresholds(cpu_min_seconds=0.4, late_min=5, dropped_min=2),  # a window of 100 sends
    )
    return sat, counts


def test_cpu_hog_makes_the_window_client_bound() -> None:
    """The hog holds the event loop for half the window whatever the machine: the pacer cannot hand those sends out
    on time, so lag or drops hold on a loaded machine too. Its CPU is checked against what the machine gave: a
    busy loop is runnable all along, so CPU used plus CPU waited for covers most of the window, whether it ran
    (an idle machine) or waited behind other processes (a loaded one: CI saw 0.07 of a core for it)."""
    sat, counts = paced_window(hog=True)
    assert sat.client_bound
    assert {"dropped", "lag"} & set(sat.reasons)
    assert sat.dropped == counts.dropped
    assert sat.wait_fraction is not None, "no run-queue delay on this kernel (/proc/self/task/*/schedstat)"
    assert sat.cpu + sat.wait_fraction > 0.7, sat


def test_idle_window_is_not_client_bound() -> None:
    # a shared box can freeze the process long enough to make a few sends late: then that is retried
    for _attempt in range(3):
        sat, counts = paced_window(hog=False)
        assert "cpu" not in sat.reasons and sat.cpu < 0.9
        assert counts.settled and counts.scheduled == 100
        if not sat.client_bound:
            assert sat.reasons == () and counts.handed == 100
            return
    pytest.fail(f"an idle window was client-bound three times: {sat}")


@pytest.mark.parametrize(
    ("cpu", "cpu_seconds", "shown"),
    [
        (1.4, 0.0, None),  # a window that never ran: nothing measured
        (1.4, 0.0003, None),  # microseconds of CPU over microseconds of wall: 1.2-1.5 "cores" of noise
        (0.9, 0.099, None),  # just under the span a figure needs
        (0.9, CPU_MIN_WALL_SECONDS, 0.9),  # at it: shown
        (0.05, 2.0, 0.05),
        (0.0, 6.0, 0.0),  # an idle, full window shows its 0.00, not "-"
    ],
)
def test_a_window_too_brief_to_measure_has_no_cpu_figure(cpu: float, cpu_seconds: float, shown: float | None) -> None:
    sat = window(100, cpu=cpu, cpu_seconds=cpu_seconds)
    assert sat.measured_cpu == shown
    record = sat.to_dict()
    assert record["cpu"] == shown  # null in the results file, not a made-up figure
    assert Saturation.from_dict(record).measured_cpu == shown  # read back the same
    assert evidence_cells(sat)[1] == ("-" if shown is None else f"{shown:.2f}")  # console table, HTML, web tab


def test_a_window_closed_as_it_opened_has_no_cpu_figure() -> None:
    monitor = SaturationMonitor()  # the real clocks
    monitor.begin_window()
    usage = monitor.end_window()  # stopped at once: the run was interrupted as this window began
    sat = window(0, cpu=usage.cpu, cpu_seconds=usage.seconds, whole=False)
    assert sat.measured_cpu is None and evidence_cells(sat)[1] == "-"
    assert combine({0: sat, 1: window(100, cpu=0.3)}).measured_cpu == 0.3  # it hides no other worker's figure
    assert combine({0: sat, 1: sat}).measured_cpu is None


@pytest.mark.parametrize(
    ("kw", "reasons"),
    [
        # late while the process waited 10% of the window for a CPU, twice as long as it ran: the machine's doing
        ({"cpu": 0.05, "lag": lags(900, 100), "cpu_wait": 1.0}, ("machine-busy", "lag")),
        ({"cpu": 0.02, "dropped": 20, "stalled": 20, "sent": 980, "lag": lags(980), "cpu_wait": 0.5},
         ("machine-busy", "dropped")),
        ({"cpu": 0.02, "lag": lags(900, 100), "cpu_wait": 0.49}, ("lag",)),  # under 5% of the 10 s window
        # waited 1 s but ran 2 s: the machine gave it most of what it asked for (a starved generator on a loaded box)
        ({"cpu": 0.2, "lag": lags(900, 100), "cpu_wait": 1.0}, ("lag",)),
        ({"cpu": 0.05, "lag": lags(900, 100), "cpu_wait": None}, ("lag",)),  # not measured (not Linux): never assumed
        ({"cpu": 0.05, "cpu_wait": 9.0}, ()),  # waited, yet sent everything on time: nothing to explain
        ({"cpu": 0.05, "pool_waits": 50, "cpu_wait": 5.0}, ("pool",)),  # pool waits are no stall of the machine
        ({"cpu": 0.95, "lag": lags(900, 100), "cpu_wait": 9.6}, ("cpu", "machine-busy", "lag")),
        ({"cpu": 0.95, "lag": lags(900, 100), "cpu_wait": 2.0}, ("cpu", "lag")),  # it used its core
        ({"cpu": 0.05, "lag": lags(900, 100), "cpu_wait": 5.0, "cpu_seconds": 1.0}, ("lag",)),  # too brief to judge
    ],
)  # fmt: skip
def test_a_late_or_short_window_that_waited_for_a_cpu_is_machine_busy(
    kw: dict[str, Any], reasons: tuple[str, ...]
) -> None:
    sat = window(1000, **kw)
    assert sat.reasons == reasons
    assert Saturation.from_dict(sat.to_dict()) == sat


def test_the_fleet_takes_the_worst_workers_cpu_wait() -> None:
    a, b = window(1000, cpu_wait=0.2, cpu_pressure=3.0), window(1000, cpu_wait=1.5, cpu_pressure=1.0)
    fleet = combine({0: a, 1: b})
    assert (fleet.cpu_wait, fleet.cpu_pressure, fleet.wait_fraction) == (1.5, 3.0, 0.15)
    assert combine({0: window(1000), 1: window(1000)}).cpu_wait is None  # nobody measured it
    assert evidence_cells(fleet)[2] == "1.50 s (15%)" and evidence_cells(window(1000))[2] == "n/a"


def test_the_monitor_measures_the_cpu_wait_of_the_window() -> None:
    waits, pressures = iter([10.0, 12.5]), iter([100.0, 104.0])
    wall = iter([0.0, 10.0, 10.0])
    monitor = SaturationMonitor(
        cpu_clock=lambda: 0.0,
        wall_clock=lambda: next(wall),
        wait_clock=lambda: next(waits),
        pressure_clock=lambda: next(pressures),
    )
    monitor.begin_window()
    usage = monitor.end_window()
    assert (usage.cpu_wait, usage.cpu_pressure) == (2.5, 4.0)
    unmeasured = SaturationMonitor(wait_clock=lambda: None, pressure_clock=lambda: None)
    unmeasured.begin_window()
    assert (unmeasured.end_window().cpu_wait, unmeasured.end_window().cpu_pressure) == (None, None)
