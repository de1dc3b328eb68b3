"""FleetMerge: windows from several workers merge exactly, in order, and gaps are reported."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet.merge import FleetMerge
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.pacing import PacingCounts, split_segment
from dynlocust.run.results import ResultsWriter, read_results
from dynlocust.run.saturation import Saturation
from dynlocust.run.table_state import TableStatePoller
from dynlocust.run.tally import WindowStats
from dynlocust.run.verdict import Verdict
from dynlocust.scenario import load_scenario_text
from dynlocust.scenario.plan import build_plan
from tests.support.tally import count_outcome

SCENARIO = """\
name: unit
target: {local: {capacity_scale: 0.1}}
tables:
  - {name: t, partition_key: {name: pk, type: S}}
workload:
  item_size: 100
  operations: [{op: put, weight: 1}]
phases:
  - steps: [{rate: 10, window: 2s}, {rate: 20, window: 2s}]
concurrency: 2
deadline: 1s
bin: 1s
SLOS
"""

IDLE = Saturation(False, (), 0.1, 0.001, 0, 0)


def make_report(tmp_path: Path, workers: int, slos: str = "") -> FleetMerge:
    scenario = load_scenario_text(SCENARIO.replace("SLOS", slos), "unit.yaml")
    report = FleetMerge(
        scenario, build_plan(scenario, t0=1000.0), ResultsWriter(tmp_path / "r.jsonl"), workers, out=io.StringIO()
    )
    report.start(run_id="unit")
    return report


def worker_window(
    report: FleetMerge, index: int, worker: int, kinds: dict[str, int], shares: int | None = None
) -> ClosedWindow:
    """Worker ``worker``'s record of a window, its share one of ``shares`` (default: one per worker)."""
    window = report.plan.windows[index]
    weights = [1.0] * (shares or report.worker_count)
    segment = split_segment(index, window.start, window.duration, window.rate, weights)[worker]
    stats = WindowStats.for_segment(segment, bin_seconds=1.0)
    for kind, n in kinds.items():
        for i in range(n):
            count_outcome(
                stats,
                at=window.start + i * 0.01, kind=kind, code="ThrottlingException" if kind == "throttled" else None,
                reasons=["TableWriteKeyRangeThroughputExceeded"] if kind == "throttled" else [],
                latency=0.002 * (i + 1), latency_from_intended=0.003 * (i + 1), write_units=1.0,
            )  # fmt: skip
    stats.apply_pacing(PacingCounts(index, segment.count, handed=segment.count))  # every send came due
    return ClosedWindow.of_part(stats, phase=window.phase, saturation=IDLE, worker_index=worker)


def detail(window: ClosedWindow) -> Verdict:
    assert window.verdict_detail is not None, window
    return window.verdict_detail


def totals(worker: int, sent: int, abort: str | None = None) -> dict[str, Any]:
    return {"worker_index": worker, "sent": sent, "read_units": 0.0, "write_units": float(sent), "abort_reason": abort}


def test_windows_merge_exactly_and_in_order_whatever_the_arrival_order(tmp_path: Path) -> None:
    report = make_report(tmp_path, 2)
    report.add_window(1, worker_window(report, 1, 1, {"ok": 15, "throttled": 5}))  # window 1 before window 0
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    assert report.closed == []
    report.add_window(1, worker_window(report, 0, 1, {"ok": 9, "condition_failed": 1}))
    assert [w.index for w in report.closed] == [0]
    report.add_window(0, worker_window(report, 1, 0, {"ok": 20}))
    assert [w.index for w in report.closed] == [0, 1]
    assert report.closed[0].summary["sent"] == 20 and report.closed[0].summary["accepted"] == 19
    assert report.closed[1].summary["throttled"] == 5 and report.closed[1].verdict == "throttled"
    assert report.closed[0].summary["offered"] == 20 and report.closed[1].summary["offered"] == 40
    report.worker_done(0, totals(0, 30))
    assert report.exit_code is None
    report.worker_done(1, totals(1, 30))
    assert report.exit_code == ExitCode.PASSED
    records = read_results(tmp_path / "r.jsonl")
    assert [r["type"] for r in records] == ["run", "window", "window", "end"]
    assert records[1]["workers"]["0"]["sent"] == 10 and records[1]["workers"]["1"]["sent"] == 10
    assert records[-1]["sent"] == 60 and records[-1]["write_units"] == 60


MERGED_KEYS = [
    "index", "start", "duration", "target_rate", "bin_seconds", "partial", "pacing", "bins", "summary", "phase",
    "verdict", "verdict_detail", "saturation", "slo_failures", "workers", "missing_workers", "rebalanced",
]  # fmt: skip
"""The fleet's window line of results.jsonl, in the order it has always been written."""


def test_the_merged_window_is_the_results_line_and_reads_back_as_written(tmp_path: Path) -> None:
    report = make_report(tmp_path, 2)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    report.add_window(1, worker_window(report, 0, 1, {"ok": 8, "throttled": 2}))
    closed = report.closed[0]
    line = read_results(tmp_path / "r.jsonl")[1]
    assert list(line) == ["type", *MERGED_KEYS]
    back = ClosedWindow.from_dict(line)
    assert back.merged and {"type": "window", **back.to_dict()} == line
    # what the run keeps for its conclusion is the same line less its histograms: bins and pacing (its lag)
    assert report.records[0] == {k: v for k, v in line.items() if k not in ("bins", "pacing")}
    assert line["bins"] and "lag" in line["pacing"]
    assert not report.parts  # the workers' parts are merged and let go
    # and the window itself settled: its figures and per-bin figures, its histograms only in the file
    assert closed.stats.bins == [] and closed.bin_summaries == back.stats.bin_summaries()
    assert closed.summary == line["summary"] and closed.stats.handed == line["pacing"]["handed"] == 20
    assert (back.verdict_detail, back.saturation) == (closed.verdict_detail, closed.saturation)
    assert closed.verdict == "throttled" and closed.workers is not None and closed.workers["1"]["throttled"] == 2


def test_a_lost_worker_leaves_partial_windows_and_an_incomplete_run(tmp_path: Path) -> None:
    report = make_report(tmp_path, 2)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    report.add_window(1, worker_window(report, 0, 1, {"ok": 10}))
    report.add_window(0, worker_window(report, 1, 0, {"ok": 20}))
    report.worker_lost(1)
    report.worker_done(0, totals(0, 30))
    assert [w.missing_workers for w in report.closed] == [[], [1]]
    assert report.closed[1].verdict == "partial"
    assert report.exit_code == ExitCode.WORKER_LOST
    assert "worker 1 lost" in report.out.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("slos", "abort", "expected"),
    [
        ("slos: [{window: all, max_throttle_ratio: 0.0}]", None, ExitCode.SLO_FAILED),
        ("slos: [{window: all, max_throttle_ratio: 0.5}]", None, ExitCode.PASSED),
        ("", "request ceiling reached", ExitCode.ABORTED),
    ],
)
def test_exit_code_from_slos_and_aborts(tmp_path: Path, slos: str, abort: str | None, expected: int) -> None:
    report = make_report(tmp_path, 1, slos)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 18, "throttled": 2}))
    report.add_window(0, worker_window(report, 1, 0, {"ok": 40}))
    report.worker_done(0, totals(0, 60, abort))
    assert report.exit_code == expected


@pytest.mark.parametrize(
    ("second", "abort", "expected"),
    [
        ({"ok": 40}, None, ExitCode.PASSED),
        ({"ok": 39, "connection": 1}, None, ExitCode.FAILED),  # 1 of 40 is above the 1% error fraction
        ({"connection": 40}, None, ExitCode.FAILED),
        ({"ok": 20, "server_error": 20}, None, ExitCode.FAILED),
        ({"connection": 40}, "interrupted", ExitCode.FAILED),  # failed outranks aborted
        ({"ok": 36, "throttled": 3, "timeout": 1}, None, ExitCode.PASSED),  # errors under the throttles
    ],
)
def test_a_window_of_errors_fails_the_run_and_the_end_names_the_cause(
    tmp_path: Path, second: dict[str, int], abort: str | None, expected: int
) -> None:
    report = make_report(tmp_path, 1)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 20}))
    report.add_window(0, worker_window(report, 1, 0, second))
    report.worker_done(0, totals(0, 60, abort))
    assert report.exit_code == expected
    end = read_results(tmp_path / "r.jsonl")[-1]
    assert end["exit_code"] == expected
    out = report.out.getvalue()  # type: ignore[attr-defined]
    if expected == ExitCode.FAILED:
        assert end["failed"].startswith("window 2: ") and "requests failed" in end["failed"]
        assert f"run failed: {end['failed']}" in out
    else:
        assert end["failed"] is None and "run failed" not in out


def test_a_results_line_that_cannot_be_written_stops_the_run_failed(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    ended: list[int] = []
    report.on_finished = ended.append
    report.results.close()  # the writer refuses every record from here on
    report.add_window(0, worker_window(report, 0, 0, {"ok": 20}))
    assert report.finished and ended == [ExitCode.FAILED]
    assert report.write_error is not None and str(tmp_path / "r.jsonl") in report.write_error
    assert "results not written" in report.out.getvalue()  # type: ignore[attr-defined]


def test_a_run_record_that_cannot_be_written_finishes_the_run_failed_at_once(tmp_path: Path) -> None:
    scenario = load_scenario_text(SCENARIO.replace("SLOS", ""), "unit.yaml")
    writer = ResultsWriter(tmp_path / "r.jsonl")
    writer.close()  # refuses every record, the first one included
    ended: list[int] = []
    report = FleetMerge(
        scenario, build_plan(scenario, t0=1000.0), writer, 1, out=io.StringIO(), on_finished=ended.append
    )
    report.start(run_id="unit")
    assert report.finished and ended == [ExitCode.FAILED]
    assert report.write_error is not None and str(tmp_path / "r.jsonl") in report.write_error
    assert "results not written" in report.out.getvalue()  # type: ignore[attr-defined]


def test_a_worker_that_stopped_early_does_not_hold_the_fleet(tmp_path: Path) -> None:
    report = make_report(tmp_path, 2)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    report.add_window(1, worker_window(report, 0, 1, {"ok": 10}))
    report.worker_done(1, totals(1, 10, "cost ceiling reached"))
    report.add_window(0, worker_window(report, 1, 0, {"ok": 20}))
    report.worker_done(0, totals(0, 30))
    assert [w.missing_workers for w in report.closed] == [[], [1]]
    assert report.exit_code == ExitCode.ABORTED


def test_clock_offset_is_estimated_from_one_round_trip(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    report.clock = lambda: 10.010
    report.record_clock(0, master_sent=10.000, worker_time=10.105)
    assert report.clock_offsets[0] == pytest.approx(0.100)


def test_a_rebalanced_share_makes_later_windows_whole_again(tmp_path: Path) -> None:
    report = make_report(tmp_path, 2)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    report.worker_lost(1)
    report.rebalance(1, from_window=1)
    survivor = worker_window(report, 1, 0, {"ok": 40}, shares=1)  # one worker now carries the whole window
    report.add_window(0, survivor)
    report.worker_done(0, totals(0, 50))
    assert [w.missing_workers for w in report.closed] == [[1], []]
    assert [w.verdict for w in report.closed] == ["partial", "ok"]
    records = read_results(tmp_path / "r.jsonl")
    assert records[2]["rebalanced"] == [1] and not records[2]["partial"]
    assert report.exit_code == ExitCode.WORKER_LOST  # a worker was still lost: the run says so


def test_a_worker_that_joins_is_expected_only_from_its_first_window(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    joined = report.add_worker()
    assert joined == 1
    report.add_window(0, worker_window(report, 0, 0, {"ok": 10}))
    assert [w.index for w in report.closed] == [0] and report.closed[0].missing_workers == []
    report.worker_joined(1, from_window=1)
    report.add_window(0, worker_window(report, 1, 0, {"ok": 20}))
    assert len(report.closed) == 1  # window 1 waits for the newcomer's share
    report.add_window(1, worker_window(report, 1, 1, {"ok": 20}))
    report.worker_done(0, totals(0, 30))
    report.worker_done(1, totals(1, 20))
    assert report.closed[1].summary["sent"] == 40 and report.exit_code == ExitCode.PASSED


def test_a_fleet_window_names_its_starved_worker_and_the_run_concludes(tmp_path: Path) -> None:
    starved = Saturation(True, ("cpu",), 0.97, 0.002, 0, 0, cpu_seconds=2.0, late_bound=0.025, due=20, sent=10)
    report = make_report(tmp_path, 2)
    for index in (0, 1):
        for worker in (0, 1):
            record = worker_window(report, index, worker, {"ok": 5 * (index + 1)})
            if worker == 1:
                record = dataclasses.replace(record, saturation=starved)
            report.add_window(worker, record)
    report.worker_done(0, totals(0, 15))
    report.worker_done(1, totals(1, 15))
    assert [(detail(w).labels, detail(w).workers) for w in report.closed] == [
        (("client-bound",), (1,)),
        (("client-bound",), (1,)),
    ]
    records = read_results(tmp_path / "r.jsonl")
    assert records[1]["workers"]["1"]["reasons"] == ["cpu"] and records[1]["workers"]["0"]["reasons"] == []
    assert records[1]["verdict_detail"]["workers"] == [1] and records[1]["saturation"]["workers"] == [1]
    out = report.out.getvalue()  # type: ignore[attr-defined]
    assert "| client-bound | cpu (worker 1) |" in out
    conclusion = records[-1]["conclusion"]
    assert conclusion["client_limited"] == [0, 1] and "on worker 1" in conclusion["text"]
    assert f"conclusion: {conclusion['text']}" in out


def test_a_window_nobody_reported_is_not_run(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    report.add_window(0, worker_window(report, 0, 0, {"ok": 20}))
    report.worker_done(0, totals(0, 20, "interrupted"))  # stopped: window 1 never reported
    assert [w.verdict for w in report.closed] == ["ok", "not-run"]
    assert detail(report.closed[1]).ran == 0.0
    records = read_results(tmp_path / "r.jsonl")
    assert records[-1]["conclusion"]["incomplete"] == [1]


def test_with_the_table_in_the_epilogue_the_end_prints_neither_table_nor_conclusion(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    report.table_in_epilogue = True  # headless: `plugin.epilogue` prints both, once, after Locust's tables
    for index in (0, 1):
        report.add_window(0, worker_window(report, index, 0, {"ok": 5}))
    report.worker_done(0, totals(0, 10))
    out = report.out.getvalue()  # type: ignore[attr-defined]
    assert report.finished and out.count("window 1/2") == 1  # the progress lines stay
    assert "| window |" not in out and "conclusion:" not in out
    assert read_results(tmp_path / "r.jsonl")[-1]["conclusion"]["text"]  # decided and recorded all the same


def test_a_window_waits_for_the_poll_at_its_end_and_records_the_tables_state(tmp_path: Path) -> None:
    """Driven by a clock: the poll's answer, not the time it took, decides when the window closes."""
    report = make_report(tmp_path, 1)
    now = [1002.5]  # window 1 (1000-1002 s) has ended; its poll is not in
    poller = TableStatePoller(None, {"t": "t-unit"}, deadline=1.0, clock=lambda: now[0])
    poller.boundaries = [w.end for w in report.plan.windows]
    report.table_states = poller
    report.add_window(0, worker_window(report, 0, 0, {"ok": 20}))
    assert report.closed == []
    state = {"at": 1002.0, "tables": {"t": {"status": "ACTIVE", "billing": "PAY_PER_REQUEST", "items": 20}}}
    poller.states[0] = state
    report.table_state_polled(0)
    assert [w.index for w in report.closed] == [0] and report.closed[0].table_state == state
    (written,) = [r for r in read_results(tmp_path / "r.jsonl") if r["type"] == "window"]
    assert written["table_state"] == state
    assert ClosedWindow.from_dict(written).table_state == state


def test_a_window_closed_before_its_end_or_after_the_poller_stopped_does_not_wait(tmp_path: Path) -> None:
    report = make_report(tmp_path, 1)
    now = [1001.0]  # a run stopped early: window 1 closes before its end, with no poll to wait for
    poller = TableStatePoller(None, {"t": "t-unit"}, deadline=1.0, clock=lambda: now[0])
    poller.boundaries = [w.end for w in report.plan.windows]
    report.table_states = poller
    report.add_window(0, worker_window(report, 0, 0, {"ok": 20}))
    assert [w.index for w in report.closed] == [0] and report.closed[0].table_state is None
    now[0] = 1004.5
    report.add_window(0, worker_window(report, 1, 0, {"ok": 40}))
    assert len(report.closed) == 1  # window 2's end has passed: it waits for its poll
    poller.stop()
    report.worker_done(0, totals(0, 60))
    assert len(report.closed) == 2 and report.closed[1].table_state is None and report.finished
