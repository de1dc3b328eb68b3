"""The web UI follows each run live, with no reload, from Start to its report, three runs in a row in one page.

Issue 33's repro, in a real headless Chromium against a real Locust process: Start, then watch without reloading.
Locust's page polls its runner every 2 s and stops once the runner says neither spawning nor running; a set-up
longer than one poll (here: seeding a table at ~10 writes/s) used to read as "ready", and the page fell back to
its start form for good. Here the header must show the run's state through set-up, running and stopped; the
DynamoDB tab's window rows appear and close; the tab ends with the run's exit code, conclusion, SLOs and a link to
its report. The runs end by the plan's end, a Stop mid-run, and the plan's end again; when the process quits, it
prints one line per run with that run's own exit code and exits with the worst.
"""

from __future__ import annotations

import json
import math
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dynlocust.exit_codes import ExitCode, meaning, worst
from dynlocust.plugin.webui import WINDOW_COLUMNS
from dynlocust.run.table_state import describe
from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.support.scenarios import scenario_yaml
from tests.support.webui import HEADER_STATUS, TABLE_ROWS, header_status, web_locust

# ~10 writes/s of capacity: seeding 60 items of 1 KB takes seconds (longer than the page's 2 s poll), and 40/s
# offered throttles from the first second, so the SLO fails on every run that reaches the plan's end
SCENARIO = scenario_yaml(
    "live",
    "steps: [{rate: 40, window: 3s}, {rate: 40, window: 3s}, {rate: 40, window: 4s}]",
    target="{local: {capacity_scale: 0.0025}}",
    tables="[{name: t, partition_key: {name: pk, type: S}, seed: {items: 60, item_size: 1KB}}]",
    concurrency=6,
    extra="slos:\n  - {window: all, max_throttle_ratio: 0.0}\n",
)
VERDICT = [key for key, _ in WINDOW_COLUMNS].index("verdict")
TABLE_STATE = [key for key, _ in WINDOW_COLUMNS].index("table")
CLOSED = {"ok", "throttled", "client-bound", "errors", "partial", "not-run"}
SET_UP = {"creating tables", "seeding tables"}


PANEL = (
    "(() => { const d = document.getElementById('dynlocust-run'); if (!d) return null; const f = {}; "
    "d.querySelectorAll('[data-field]').forEach(p => { f[p.dataset.field] = p.innerText; "
    "const a = p.querySelector('a'); if (a) f.href = a.href; }); "
    "return {stage: d.dataset.stage, run: d.dataset.runId, ...f}; })()"
)
START_FORM = (
    "[...document.querySelectorAll('body *:not(script):not(style)')].some(e => [...e.childNodes].some(n => "
    "n.nodeType === Node.TEXT_NODE && n.textContent.includes('Start new load test')))"
)
SHOT = (
    f"() => ({{header: {HEADER_STATUS}, form: {START_FORM}, panel: {PANEL}, rows: {TABLE_ROWS}, "
    "columns: [...document.querySelectorAll('table thead th')].map(th => th.innerText.trim())})"
)
"""What the page shows at one moment: Locust's header, whether its start form is open, the run panel, the rows."""


class Watcher:
    """Samples what the page shows, without ever reloading it: Locust's header, the run panel, the window rows."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.seen: list[dict[str, Any]] = []

    def sample(self) -> dict[str, Any]:
        # one evaluation, so one rendering of the page: read piece by piece, a shot could pair the header of
        # Locust's last poll with the rows of the poll before it
        seen = self.page.evaluate(SHOT)
        rows = seen["rows"]
        shot = {
            "t": time.monotonic(),
            "header": seen["header"],
            "form": seen["form"],
            "panel": seen["panel"] or {},
            "rows": [(r[0], _verdict(r)) for r in rows],
            "states": [r[TABLE_STATE] if len(r) > TABLE_STATE else "" for r in rows],
            "columns": seen["columns"],
        }
        self.seen.append(shot)
        return shot

    def until(self, what: str, check: Callable[[dict[str, Any]], bool], seconds: float) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            shot = self.sample()
            if check(shot):
                return shot
            self.page.wait_for_timeout(250)
        raise AssertionError(f"{what}: not shown within {seconds} s; last seen: {self.seen[-3:]}")

    def since(self, t: float) -> list[dict[str, Any]]:
        return [s for s in self.seen if s["t"] >= t]


def _verdict(row: list[str]) -> str:
    """The verdict a row shows first (``throttled + client-bound`` -> throttled); a set-up row shows its stage."""
    return row[VERDICT].split(" + ")[0].split(" (")[0] if len(row) > VERDICT else ""


def _results(runs: Path, run_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (runs / run_id / "results.jsonl").read_text().splitlines()]


def _start(page: Any, watcher: Watcher) -> float:
    """Click Start (on the first page, or in the form that New opens); the header shows a running state within 2 s:
    from then on, the time returned, the page must follow the run."""
    assert watcher.sample()["form"], watcher.seen[-1]  # the start form, as the shots see it
    page.get_by_role("button", name="Start", exact=True).click()
    clicked = time.monotonic()
    shot = watcher.until("a running state in the header", lambda s: s["header"] in ("SPAWNING", "RUNNING"), 10)
    assert shot["t"] - clicked < 2.0, shot
    return float(shot["t"])


def _follow_set_up(watcher: Watcher, since: float, previous: set[str]) -> str:
    """Set-up of a new run: Locust's own poll says spawning, the panel and the tab's row name the stage; the new
    run's id once its first window runs."""
    shot = watcher.until(
        "the new run's set-up in the header and the panel",
        lambda s: (
            s["header"] == "SPAWNING" and s["panel"].get("stage") == "set-up" and s["panel"]["run"] not in previous
        ),
        15,
    )
    assert any(stage in shot["panel"]["status"] for stage in SET_UP), shot
    watcher.until("the first window running", lambda s: ("1", "running") in s["rows"], 30)
    assert any(s["rows"] and s["rows"][0][1] in SET_UP for s in watcher.since(since)), watcher.since(since)
    return str(shot["panel"]["run"])


def _check_no_stale_run(watcher: Watcher, since: float, previous: set[str]) -> None:
    """After a second Start, while the header says the new run is under way, the tab never shows an earlier run:
    neither its panel (its red exit code) nor its closed rows before the new run's first window runs."""
    shots = watcher.since(since)
    first = next(i for i, s in enumerate(shots) if ("1", "running") in s["rows"])
    under_way = [s for s in shots[:first] if s["header"] in ("SPAWNING", "RUNNING")]
    stale = [s for s in under_way if s["panel"].get("run") in previous or {v for _, v in s["rows"]} & CLOSED]
    assert not stale, stale[:3]


def _first_closed_while_running(shot: dict[str, Any]) -> bool:
    rows = dict(shot["rows"])
    return rows.get("1") in CLOSED and "running" in rows.values() and shot["header"] == "RUNNING"


def _check_a_window_always_live(watcher: Watcher, since: float, until: float) -> None:
    """From the first window running until the last one closed (or `until`, a Stop), some row is running or
    closing: a window closed here whose merge waits for the tables' state at its end stays on the page."""
    shots = [s for s in watcher.since(since) if s["t"] < until]
    first = next(i for i, s in enumerate(shots) if ("1", "running") in s["rows"])
    last = next((i for i, s in enumerate(shots) if dict(s["rows"]).get("3") in CLOSED), len(shots))
    idle = [s["rows"] for s in shots[first:last] if not {"running", "closing"} & {v for _, v in s["rows"]}]
    assert not idle, idle


def _finished(run_id: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a shot shows `run_id`'s end: Locust's header says stopped, and the panel how the run ended."""

    def check(shot: dict[str, Any]) -> bool:
        panel = shot["panel"]
        return bool(shot["header"] == "STOPPED" and panel.get("stage") == "finished" and panel["run"] == run_id)

    return check


def _check_no_fallback(watcher: Watcher, since: float) -> None:
    """From Start to the run's end the page never shows its start form, nor READY or STOPPED before the end."""
    shots = watcher.since(since)
    ended = next((i for i, s in enumerate(shots) if s["header"] == "STOPPED"), len(shots))
    assert not any(s["form"] for s in shots[:ended]), [s["header"] for s in shots]
    assert all(s["header"] in ("SPAWNING", "RUNNING") for s in shots[:ended]), [s["header"] for s in shots]


def _check_finished(shot: dict[str, Any], runs: Path, run_id: str, code: int) -> None:
    """The tab's last word on a run: its exit code, the conclusion and SLOs its results file records, its report."""
    panel = shot["panel"]
    assert panel["stage"] == "finished" and panel["run"] == run_id, panel
    assert panel["status"] == f"run {run_id} finished: exit code {code}: {meaning(code)}"
    end = _results(runs, run_id)[-1]
    assert end["type"] == "end" and end["exit_code"] == code, end
    assert panel["conclusion"] == f"conclusion: {end['conclusion']['text']}"
    if end["slo_failures"]:
        assert panel["slo"] == "SLO failed: " + "; ".join(end["slo_failures"])
    else:
        assert panel["slo"] == "SLOs: none failed (1 set)"
    report = runs / run_id / "report" / "report.html"
    assert panel["report"] == f"report: {report}" and report.is_file()
    with urllib.request.urlopen(panel["href"], timeout=10) as response:  # the link serves that very file
        assert response.read() == report.read_bytes()
    assert [n for n, _ in shot["rows"]] == ["1", "2", "3"]
    assert all(verdict in CLOSED for _, verdict in shot["rows"]), shot["rows"]  # no stale "running" row
    # each closed window's table state, as DescribeTable gave it at the window's end (none for a window cut short)
    assert "table state" in shot["columns"], shot["columns"]
    windows = [r for r in _results(runs, run_id) if r["type"] == "window"]
    scale = _results(runs, run_id)[0]["capacity_scale"]  # the run record's: the endpoint emulates at this scale
    assert scale == 0.0025
    expected = [
        f"t: {describe(w['table_state']['tables']['t'], scale)}" if w.get("table_state") else "-" for w in windows
    ]
    assert shot["states"] == expected, shot["states"]
    # as emulated, then as DescribeTable said (the service's figures): it showed 12,000/4,000 alone
    assert expected[0].startswith("t: on-demand, max -, warm 30/10 (12,000/4,000 x0.0025) r/w, ACTIVE, ")


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_three_runs_in_one_page_followed_live_from_start_to_report(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    runs = tmp_path / "runs"
    with web_locust(tmp_path, SCENARIO) as web:
        page = browser.new_page()
        watcher = Watcher(page)
        try:
            page.goto(web.url + "/")
            assert header_status(page) == "READY"
            ids: list[str] = []
            codes: list[int] = []
            for attempt, ending in enumerate(("the plan's end", "Stop", "the plan's end")):
                if attempt:
                    page.get_by_role("button", name="New").click()
                clicked = _start(page, watcher)
                if not attempt:  # the tab appears once a run has started; the page keeps it from then on
                    page.get_by_role("tab", name="DynamoDB", exact=True).click()
                run_id = _follow_set_up(watcher, clicked, set(ids))
                _check_no_stale_run(watcher, clicked, set(ids))
                watcher.until("the header saying running", lambda s: s["header"] == "RUNNING", 15)
                # the rows close one by one while the page watches: window 1 closed, a later one still running
                watcher.until("window 1 closed while the run goes on", _first_closed_while_running, 40)
                code: int = ExitCode.SLO_FAILED
                stopped = math.inf
                if ending == "Stop":
                    stopped = time.monotonic()
                    page.get_by_role("button", name="Stop").click()
                    code = ExitCode.ABORTED
                shot = watcher.until("the run's end in the header and the tab", _finished(run_id), 90)
                _check_no_fallback(watcher, clicked)
                _check_a_window_always_live(watcher, clicked, stopped)
                _check_finished(shot, runs, run_id, code)
                ids.append(run_id)
                codes.append(code)
            assert len(set(ids)) == 3
        finally:
            page.close()
        exit_code = web.stop()
    out = web.output()
    lines = out.strip().splitlines()
    assert lines[-5] == "3 runs in this process:", lines[-6:]
    for line, run_id, code in zip(lines[-4:-1], ids, codes, strict=True):
        report = runs / run_id / "report" / "report.html"
        assert line == f"run {run_id}: report {report}, exit code {code}: {meaning(code)}"
    assert exit_code == worst(codes) == ExitCode.ABORTED
    assert lines[-1] == f"exit code {exit_code}: {meaning(exit_code)}"
