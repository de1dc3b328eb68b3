"""The watchdog, the master-lost guard, the window spool and the shielded teardown, on a real `LocalRun`.

The endpoint is replaced by a raw client whose method blocks: a hang the per-call deadline is set too long to cut,
which is exactly what the watchdog exists for (the real hanging server is in tests/integration/test_faults.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from locust.env import Environment
from locust.event import EventHook

import gevent
import pytest

from dynlocust.plugin import safety
from dynlocust.request.client import DynamoDBClient
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.local_run import LocalRun
from dynlocust.run.results import read_results
from dynlocust.run.saturation import Saturation
from dynlocust.scenario import load_scenario_text
from tests.support.scenarios import scenario_yaml

SCENARIO = scenario_yaml(
    "unit", "steps: [{rate: 20, window: 1s}]", transport=None, item_size=100, concurrency=2, deadline="30s"
)


class HangingRaw:
    """A raw client whose put_item never answers (until killed)."""

    meta = SimpleNamespace(method_to_api_mapping={"put_item": "PutItem"})

    def put_item(self, **_kwargs: Any) -> dict[str, Any]:
        gevent.sleep(60)
        return {}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


HANGING = scenario_yaml(
    "unit", "steps: [{rate: 20, window: 30s}]", transport=None, item_size=100, concurrency=2, deadline="30s"
)
"""For a call left hanging: a window that is still open however long `run.start()` takes (its `gc.collect()` grows
with the heap the tests before left; a 1 s window could be over, every send dropped, before the first was taken)."""


def make_run(t0: float | None = None, text: str = SCENARIO) -> LocalRun:
    scenario = load_scenario_text(text, "unit.yaml")
    return LocalRun(
        scenario,
        {"t": "t-run"},
        "run",
        t0=time.time() if t0 is None else t0,
        deadline=scenario.deadline,
        on_window=lambda record: None,
        on_done=lambda totals: None,
    )


def start_hanging_call(run: LocalRun, events: list[dict[str, Any]]) -> tuple[gevent.Greenlet, DynamoDBClient]:
    hook = EventHook()
    hook.add_listener(lambda **kw: events.append(kw))
    client = DynamoDBClient(HangingRaw(), hook, deadline=30.0)
    ticket = run.next_ticket()  # waits for the first due send
    assert ticket is not None, "the schedule ended before its first send was taken"
    g = gevent.spawn(run.execute, client, ticket)
    gevent.sleep(0.05)
    return g, client


def test_in_flight_calls_names_operation_table_and_age() -> None:
    run = make_run(text=HANGING)
    run.start()
    events: list[dict[str, Any]] = []
    g, _ = start_hanging_call(run, events)
    try:
        gevent.sleep(0.2)
        calls = safety.in_flight_calls()
        assert [(c.operation, c.table) for c in calls] == [("PutItem", "t-run")]
        assert 0.15 <= calls[0].age < 5
        stacks = safety.greenlet_stacks()
        assert any(any("put_item" in line for line in s["stack"]) for s in stacks)
    finally:
        g.kill()
        run.stop("test over")


def test_stall_trips_writes_the_snapshot_and_every_stuck_call_still_gets_an_outcome(tmp_path: Path) -> None:
    run = make_run(text=HANGING)
    run.start()
    events: list[dict[str, Any]] = []
    g, _ = start_hanging_call(run, events)
    mono = Clock()
    dog = safety.Watchdog(
        run, deadline_at=time.time() + 3600, stall_after=5.0, snapshot_path=tmp_path / "wd.json", monotonic=mono
    )
    try:
        assert dog.check() is None
        mono.now += 4.9
        assert dog.check() is None  # under the threshold
        mono.now += 0.2
        trip = dog.check()
        assert trip is not None and trip.kind == safety.STALL
        assert "1 requests in flight" in trip.reason
        assert run.abort_reason == trip.reason and run.pacer.done
        saved = json.loads((tmp_path / "wd.json").read_text())
        assert saved["kind"] == "stall"
        assert saved["counts"]["sent"] == 1 and saved["counts"]["completed"] == 0
        assert saved["counts"]["in_flight"] == {"0": 1}
        assert [(r["operation"], r["table"]) for r in saved["requests"]] == [("PutItem", "t-run")]
        assert saved["greenlets"]
        g.join(2)
        assert g.ready()
        # the aborted call is accounted for: one request event, recorded as an error outcome
        assert len(events) == 1 and events[0]["context"]["outcome"].code == "WatchdogAbort"
        assert run.inflight[0] == 0
        assert run.book[0].total().by_kind == {"error": 1}
    finally:
        g.kill()
        run.stop("test over")


def test_completions_are_progress_and_idle_is_not_a_stall() -> None:
    run = make_run()
    mono = Clock()
    dog = safety.Watchdog(run, deadline_at=time.time() + 3600, stall_after=1.0, monotonic=mono)
    for step in range(5):  # nothing in flight: never a stall, however long
        mono.now += 10
        assert dog.check() is None, step
    run.inflight[0] = 2
    run.sent = 10
    for step in range(5):  # requests complete between looks: progress
        mono.now += 0.9
        run.sent += 1
        assert dog.check() is None, step
    mono.now += 1.0
    assert dog.check() is not None


def test_a_stall_is_timed_from_the_first_look_that_saw_requests_in_flight() -> None:
    run = make_run()
    mono = Clock()
    dog = safety.Watchdog(run, deadline_at=time.time() + 3600, stall_after=1.0, monotonic=mono)
    assert dog.check() is None  # nothing in flight
    mono.now += 0.9  # a starved process looks late: the requests began somewhere in between
    run.inflight[0] = 2
    run.sent = 2
    assert dog.check() is None
    mono.now += 0.9
    assert dog.check() is None  # 1.8 s since the idle look, 0.9 s since requests were seen in flight
    mono.now += 0.2
    trip = dog.check()
    assert trip is not None and trip.kind == safety.STALL


def test_deadline_trips_with_the_reason() -> None:
    wall = Clock()
    run = make_run(t0=wall.now)
    run.clock = wall
    dog = safety.Watchdog(run, deadline_at=safety.run_deadline(run, margin=2.0), stall_after=100.0)
    assert dog.deadline_at == pytest.approx(wall.now + 1.0 + 30.0 + 2.0)
    wall.now += 33.0
    assert dog.check() is None
    wall.now += 0.5
    trip = dog.check()
    assert trip is not None and trip.kind == safety.DEADLINE
    assert run.abort_reason is not None and "deadline" in run.abort_reason


def test_run_deadline_margin_defaults_and_option() -> None:
    run = make_run(t0=0.0)
    assert safety.run_deadline(run) == pytest.approx(1.0 + 30.0 + safety.RUN_MARGIN_MIN)
    assert safety.run_deadline(run, margin=4.0) == pytest.approx(35.0)


def test_a_search_is_held_to_its_longest_course_not_its_undecided_probes() -> None:
    """A search's probes after the first are planned a day ahead until decided: the deadline is its worst case,
    3 probes x (5 s window + 30 s for the last calls + 2 s cool-down), then the deadline and the margin."""
    text = SCENARIO.replace(
        "steps: [{rate: 20, window: 1s}]",
        "search: {from: 20, precision: 0.9, window: 5s, max_windows: 3, cooldown: 2s}",
    )
    scenario = load_scenario_text(text, "search.yaml")
    run = LocalRun(scenario, {"t": "t-run"}, "run", t0=0.0, deadline=scenario.deadline, on_window=lambda _w: None,
                   on_done=lambda _t: None)  # fmt: skip
    assert run.plan.windows[-1].end > 86_400  # undecided
    assert safety.run_deadline(run, margin=5.0) == pytest.approx(3 * (5 + 30 + 2) + 30 + 5)


@pytest.mark.parametrize(
    ("option", "value"), [("stall_seconds", "-1"), ("run_margin_seconds", "x"), ("master_timeout", "0")]
)
def test_watchdog_options_are_validated(option: str, value: str) -> None:
    from argparse import Namespace

    from dynlocust.errors import ConfigurationError
    from dynlocust.plugin.settings import from_options

    with pytest.raises(ConfigurationError, match="expected a positive number of seconds"):
        from_options(Namespace(**{option: value}))


def test_a_stopped_run_that_never_finishes_is_escalated() -> None:
    run = make_run()
    stuck: list[safety.Trip] = []
    run.deadline = 0.1  # the escalation waits the per-call deadline plus 5 s
    dog = safety.Watchdog(run, deadline_at=0.0, stall_after=100.0, on_stuck=stuck.append, interval=0.01)
    mono = Clock()
    dog.monotonic = mono

    def advance() -> None:
        while not stuck:
            mono.now += 1.0
            gevent.sleep(0.01)

    ticker = gevent.spawn(advance)
    dog.start()
    ticker.join(5)
    assert stuck and stuck[0].kind == safety.DEADLINE


@pytest.mark.parametrize(
    ("last", "now", "expected"),
    [(None, 100.0, None), (95.0, 100.0, None), (80.0, 100.0, 20.0)],
)
def test_master_silent(last: float | None, now: float, expected: float | None) -> None:
    assert safety.master_silent(last, 10.0, now=now) == expected


def test_guard_worker_stops_the_run_and_quits_once_the_master_is_silent() -> None:
    quits: list[bool] = []
    run = make_run(text=HANGING)  # still open when the guard fires: a 1 s window had ended first under stress-ng
    run.start()  # its collection of a test session's heap took 4 s under stress-ng: the heartbeat comes after it
    runner = SimpleNamespace(last_heartbeat_timestamp=time.time(), quit=lambda: quits.append(True))
    # 3 s: under stress-ng a 0.1 s sleep returned after more than 0.3 s, and the guard had already fired
    guard = safety.guard_worker(SimpleNamespace(runner=runner), runner, lambda: run, timeout=3.0)  # type: ignore[arg-type]
    gevent.sleep(0.1)
    assert not quits  # heartbeats are recent
    runner.last_heartbeat_timestamp = time.time() - 10.0
    guard.join(10)
    assert quits == [True]
    assert run.abort_reason is not None and run.abort_reason.startswith("master lost")


def test_spool_windows_writes_before_sending(tmp_path: Path) -> None:
    sent: list[int] = []
    run = make_run()
    run.on_window = lambda record: sent.append(record.index)
    path = tmp_path / "r" / "worker-0.jsonl"
    writer = safety.spool_windows(run, path)
    assert writer is not None
    record = ClosedWindow.of_part(
        run.book[0], phase="p", saturation=Saturation(False, (), 0.1, 0.001, 0, 0), worker_index=0
    )
    run.on_window(record)
    writer.close()
    assert sent == [0]
    assert read_results(path) == [{"type": "window", **record.to_dict()}]
    assert ClosedWindow.from_dict(read_results(path)[0]).to_dict() == record.to_dict()  # read back as written
    assert safety.spool_windows(make_run(), path) is None  # never appends to existing results


def test_shielded_work_survives_interrupts_and_returns_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    done: list[str] = []

    def work() -> str:
        gevent.sleep(0.3)
        done.append("deleted")
        return "ok"

    waiter = gevent.spawn(safety.shielded, work)
    gevent.sleep(0.05)
    waiter.kill(KeyboardInterrupt(), block=False)
    gevent.sleep(0.05)
    waiter.kill(SystemExit(143), block=False)
    waiter.join(5)
    assert waiter.successful() and waiter.value == "ok"
    assert done == ["deleted"]
    assert capsys.readouterr().err.count("teardown in progress, not interrupting it") == 2


def test_shielded_failure_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    def work() -> None:
        raise RuntimeError("boom")

    assert safety.shielded(work) is None
    assert "teardown failed: boom" in caplog.text


def test_quit_once_runs_the_work_once_and_a_second_caller_waits_for_it() -> None:
    environment = Environment()
    calls: list[str] = []
    seen_done_by_second: list[bool] = []

    def work() -> None:
        calls.append("start")
        gevent.sleep(0.3)
        calls.append("done")

    first = gevent.spawn(safety.quit_once, environment, work)
    gevent.sleep(0.05)
    safety.quit_once(environment, work)  # Locust's main loop ending while the signal's shutdown runs
    seen_done_by_second.append(calls[-1] == "done")
    first.join(5)
    assert calls == ["start", "done"]
    assert seen_done_by_second == [True]
