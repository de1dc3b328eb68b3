"""The rows of the web UI's DynamoDB tabs, from a recorded run or a real merge (the live page is tested in the
browser)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import gevent
import pytest

from dynlocust.dynamodb import CAUSE_WRITES
from dynlocust.exit_codes import meaning
from dynlocust.fleet.merge import FleetMerge
from dynlocust.observe.conclusion import window_number
from dynlocust.observe.report import build, csvout
from dynlocust.observe.report.table import format_progress, verdict_cell
from dynlocust.plugin import webui
from dynlocust.plugin.context import RunContext, RunOutcome
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.local_run import LocalRun
from dynlocust.run.results import ResultsWriter
from dynlocust.run.saturation import Saturation
from dynlocust.run.table_state import TableStatePoller
from dynlocust.scenario import Scenario, load_scenario, load_scenario_text
from dynlocust.scenario.plan import build_plan
from tests.support.scenarios import put_scenario

DATA = Path(__file__).parents[1] / "observe" / "report" / "data"
IDLE = Saturation(False, (), 0.1, 0.001, 0, 0)


def test_window_rows_have_every_column_and_pending_windows() -> None:
    report = build.load_report(DATA / "killed.jsonl")
    rows = webui.window_rows(report)
    keys = [k for k, _ in webui.WINDOW_COLUMNS]
    assert all(list(r) == keys for r in rows)
    assert [r["window"] for r in rows] == ["1", "2", "3", "4"]  # counted from 1, as the progress lines count
    assert [r["verdict"] for r in rows[2:]] == ["pending", "pending"]
    assert rows[3]["target"] == "200" and rows[3]["offered"] == "-"
    closed = report.windows[0].summary
    assert rows[0]["offered"] == f"{closed['offered']:,}"
    assert rows[0]["verdict"] == report.windows[0].verdict


def test_throttle_rows_per_window_then_all() -> None:
    report = build.load_report(DATA / "complete.jsonl")
    rows = webui.throttle_rows(report)
    per_window = [r for r in rows if r["window"] != "all"]
    total = [r for r in rows if r["window"] == "all"]
    assert per_window and total
    assert sum(int(r["requests"].replace(",", "")) for r in per_window) == sum(
        int(r["requests"].replace(",", "")) for r in total
    )
    assert {r["code"] for r in rows} == {"ThrottlingException"}
    assert all("|" not in r["reason"] for r in rows)


def test_throttle_rows_end_with_why_the_requests_were_throttled() -> None:
    report = build.load_report(DATA / "complete.jsonl")
    assert not [r for r in webui.throttle_rows(report) if r["code"] == "why"]  # nothing known, nothing said
    for w in report.windows[-2:]:
        w.summary = {
            **w.summary,
            "throttle_causes": {CAUSE_WRITES: 600},
            "throttled_index": {"by_owner|IndexWriteKeyRangeThroughputExceeded": 4},
        }
    why = [r for r in webui.throttle_rows(report) if r["code"] == "why"]
    numbers = [str(window_number(w.index)) for w in report.windows[-2:]]
    assert why == [
        {"window": f"windows {', '.join(numbers)}", "code": "why", "reason": e.text, "requests": f"{e.requests:,}"}
        for e in report.explanations()
    ]
    assert [r["requests"] for r in why] == ["1,200", "8"]
    assert why[0]["reason"].startswith("reads throttled: writes over the ceiling")
    assert "GSI by_owner" in why[1]["reason"]


def test_throttle_ratio_is_of_sent_requests() -> None:
    report = build.load_report(DATA / "complete.jsonl")
    last = report.windows[-1].summary
    expected = (last["throttled"] + last["unprocessed_requests"]) / last["sent"]
    assert webui.window_rows(report)[-1]["ratio"] == f"{expected:.1%}"


def test_windows_are_numbered_as_the_progress_lines_number_them() -> None:
    report = build.load_report(DATA / "complete.jsonl")
    total = len(report.windows)
    progress = [format_progress(w, total).split("/")[0] for w in report.windows]
    assert progress == [f"window {r['window']}" for r in webui.window_rows(report)]
    assert [r[0] for r in csv.reader(io.StringIO(csvout.render(report)["windows.csv"]))][1:] == [
        r["window"] for r in webui.window_rows(report)
    ]


def test_no_run_no_window_rows_and_no_throttles_said() -> None:
    assert webui.window_rows(None) == []
    assert webui.throttle_rows(None) == [webui.NO_THROTTLES]


def test_a_run_without_throttles_says_so() -> None:
    report = build.load_report(DATA / "complete.jsonl")
    for w in report.windows:
        w.summary = {**w.summary, "throttled_by": {}}
    assert report.throttles() == {}
    rows = webui.throttle_rows(report)
    assert rows == [webui.NO_THROTTLES] and rows[0]["code"] == "no throttles yet"


def _scenario(tmp_path: Path) -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(put_scenario("rows", "steps: [{rate: 10, window: 2s}, {rate: 30, window: 3s}]"))
    return load_scenario(str(path))


def test_before_a_start_the_tab_shows_the_plan(tmp_path: Path) -> None:
    rows = webui.tab_rows(None, RunContext("r"), _scenario(tmp_path))
    assert [(r["window"], r["target"], r["verdict"]) for r in rows] == [
        ("1", "10", "not started"),
        ("2", "30", "not started"),
    ]
    assert all(list(r) == [k for k, _ in webui.WINDOW_COLUMNS] for r in rows)


def test_before_a_start_a_search_shows_its_first_probe_only(tmp_path: Path) -> None:
    """Its later probes are not decided until the one before has closed: never shown as windows at 0/s."""
    path = tmp_path / "search.yaml"
    path.write_text(put_scenario("rows", "search: {from: 10, precision: 0.5, window: 8s, max_windows: 4}"))
    rows = webui.tab_rows(None, RunContext("r"), load_scenario(str(path)))
    assert [(r["window"], r["target"], r["verdict"]) for r in rows] == [("1", "10", "not started")]


def test_set_up_under_way_or_failed_is_said_instead_of_zeros(tmp_path: Path) -> None:
    state, scenario = RunContext("r"), _scenario(tmp_path)
    state.stage = "creating tables"
    rows = webui.tab_rows(None, state, scenario)
    assert len(rows) == 1 and rows[0]["verdict"] == "creating tables"
    assert rows[0]["offered"] == "" and rows[0]["throttled"] == ""  # no zeros
    state.stage = "seeding tables"
    assert webui.tab_rows(None, state, scenario)[0]["verdict"] == "seeding tables"
    state.setup_error = "table 'x': expected an existing table (use_existing: true), found none"
    row = webui.tab_rows(None, state, scenario)[0]
    assert (row["verdict"], row["reasons"]) == ("set-up failed", state.setup_error)
    assert webui.setup_status(state) == f"set-up failed: {state.setup_error}"
    assert webui.tab_rows(None, None, None) == []  # no scenario locustfile: nothing to say


def test_window_rows_show_the_verdicts_evidence_and_worker(tmp_path: Path) -> None:
    from tests.unit.observe.report.test_build import _fleet_results

    rows = webui.window_rows(build.load_report(_fleet_results(tmp_path)))
    assert [(r["verdict"], r["reasons"]) for r in rows] == [
        ("throttled", "-"),
        ("throttled + client-bound", "cpu (worker 1)"),
    ]
    assert (rows[1]["cpu"], rows[1]["sent"], rows[1]["dropped"], rows[1]["pool"]) == ("0.97", "20/20", "0", "0")
    assert rows[1]["late"] == "0 over 25 ms"
    assert rows[1]["wait"] == "1.50 s (75%)"  # the CPU wait beside the CPU, the worst worker's in a fleet


@pytest.mark.parametrize(
    ("outcome", "line"),
    [
        (RunOutcome("r", 0), "SLOs: none set"),
        (RunOutcome("r", 0, slos=2), "SLOs: none failed (2 set)"),
        (RunOutcome("r", 4, slos=1), "SLOs: none failed (1 set)"),  # an aborted run: not "held", none failed
        (RunOutcome("r", 3, slo_failures=("a", "b"), slos=2), "SLO failed: a; b"),
    ],
    ids=["none-set", "none-failed", "aborted", "failed"],
)
def test_the_slo_line_says_which_failed_or_that_none_did(outcome: RunOutcome, line: str) -> None:
    assert webui.slo_line(outcome) == line


def test_the_run_panel_follows_a_run_from_set_up_to_its_report(tmp_path: Path) -> None:
    assert webui.run_panel(None, None) is None
    run = RunContext("r1")
    assert webui.run_panel(run, None) is None  # not begun: nothing to follow yet
    run.stage = "seeding tables"
    assert webui.run_panel(run, None) == {
        "run_id": "r1",
        "stage": "set-up",
        "status": "run r1 seeding tables: the windows start once set-up is done",
    }
    run.ending = gevent.spawn(lambda: None)
    assert webui.run_panel(run, None) == {
        "run_id": "r1",
        "stage": "ending",
        "status": "run r1 ending: deleting its tables, then its report",
    }
    report = tmp_path / "report.html"
    run.outcome = RunOutcome("r1", 3, conclusion="it throttled", slo_failures=("p99",), slos=1, report=report)
    fleet: Any = object()  # the run began: it has windows, so SLOs to say
    assert webui.run_panel(run, fleet) == {
        "run_id": "r1",
        "stage": "finished",
        "status": f"run r1 finished: exit code 3: {meaning(3)}",
        "exit_code": 3,
        "conclusion": "it throttled",
        "slo": "SLO failed: p99",
        "report_url": "./dynamodb/report/r1",
        "report_path": str(report),
        "report_error": None,
    }


def test_a_run_that_failed_set_up_ends_with_its_code_and_no_slos() -> None:
    run = RunContext("r2", setup_error="table 't': expected an existing table, found none")
    run.outcome = RunOutcome("r2", 2)
    panel = webui.run_panel(run, None)
    assert panel is not None
    assert (panel["stage"], panel["exit_code"], panel["slo"], panel["report_url"]) == ("finished", 2, None, None)
    assert panel["status"] == f"run r2 finished: exit code 2: {meaning(2)}"


def test_a_window_closed_here_and_waiting_for_its_merge_shows_as_closing_beside_the_running_one(
    tmp_path: Path,
) -> None:
    """The merge waits for the tables' state at a window's end; meanwhile the tab still shows that window and the
    one now running, not two pending rows (the page looked idle for as long as the poll took)."""
    scenario = load_scenario_text(
        put_scenario("closing", "steps: [{rate: 10, window: 2s}, {rate: 20, window: 2s}]"), "closing.yaml"
    )
    now = [1002.5]  # window 1 (1000-1002 s) has ended and closed here; its tables' state is not in
    fleet = FleetMerge(
        scenario, build_plan(scenario, t0=1000.0), ResultsWriter(tmp_path / "r.jsonl"), 1, out=io.StringIO()
    )
    fleet.start(run_id="unit")
    fleet.table_states = poller = TableStatePoller(None, {"t": "t-unit"}, deadline=1.0, clock=lambda: now[0])
    poller.boundaries = [w.end for w in fleet.plan.windows]
    run = LocalRun(
        scenario, {"t": "t-unit"}, "unit", t0=1000.0, deadline=1.0, on_window=lambda r: fleet.add_window(0, r),
        on_done=lambda totals: None, clock=lambda: now[0],
    )  # fmt: skip
    first = run.book.hand_on(0)
    first.apply_pacing(run.pacer.window_counts(0))
    run.on_window(ClosedWindow.of_part(first, phase="steps", saturation=IDLE, worker_index=0))
    assert fleet.closed == []

    rows = webui.window_rows(webui.live_report(fleet, run, now=now[0]))
    assert [(r["window"], r["verdict"]) for r in rows] == [("1", "closing"), ("2", "running")]

    poller.states[0] = {"at": 1002.0, "tables": {"t": {"status": "ACTIVE", "billing": "PAY_PER_REQUEST", "items": 0}}}
    fleet.table_state_polled(0)
    rows = webui.window_rows(webui.live_report(fleet, run, now=now[0]))
    assert [r["window"] for r in rows] == ["1", "2"]
    assert rows[0]["verdict"] == verdict_cell(fleet.closed[0]) and rows[1]["verdict"] == "running"
