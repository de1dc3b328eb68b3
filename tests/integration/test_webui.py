"""The DynamoDB tab in Locust's web UI, driven from a real headless Chromium against a real Locust process.

Start a run from Locust's form (the scenario options are in it), then see windows close, throttles counted and
the live chart drawn in the tab. Needs Debian's ``chromium`` and Playwright for Python.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.webui import WINDOW_COLUMNS
from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.support.processes import wait_http_ok
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

LOCUSTFILE = """\
from dynlocust.hooks import ScenarioUser  # noqa: F401
import dynlocust.webui  # noqa: F401
"""
# ~10 writes/s of capacity against 40/s offered: throttles from the first second
SCENARIO = put_scenario(
    "webui",
    "steps: [{rate: 40, window: 3s}, {rate: 40, window: 3s}, {rate: 40, window: 60s}]",
    capacity_scale=0.0025,
    concurrency=8,
)
CLOSED_VERDICTS = {"ok", "throttled", "client-bound", "errors", "partial", "not-run"}
VERDICT = [key for key, _ in WINDOW_COLUMNS].index("verdict")
CPU = [key for key, _ in WINDOW_COLUMNS].index("cpu")


def _verdict(row: list[str]) -> str:
    """The verdict a row shows first: ``throttled + client-bound`` -> throttled, ``partial (40% ran)`` -> partial."""
    return row[VERDICT].split(" + ")[0].split(" (")[0] if len(row) > VERDICT else ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def web_locust(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A Locust web UI with the scenario locustfile and dynlocust.webui, on 127.0.0.1; stopped by the test."""
    endpoint = LocalEndpoint(capacity_scale=0.0025).start()
    (tmp_path / "lf.py").write_text(LOCUSTFILE)
    scenario = tmp_path / "webui.yaml"
    scenario.write_text(SCENARIO)
    port = _free_port()
    argv = [sys.executable, "-m", "locust", "-f", str(tmp_path / "lf.py"), "--scenario", str(scenario)]
    argv += ["--web-host", "127.0.0.1", "--web-port", str(port), "--host", endpoint.url, "-u", "8", "-r", "8"]
    argv += ["--results-dir", str(tmp_path / "runs"), "--run-id", "web", "--metrics-port", "0"]
    log = open(tmp_path / "locust.log", "w+b")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http_ok(url + "/", proc, tmp_path / "locust.log")
        yield url, tmp_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        log.close()
        endpoint.stop()


def _table_rows(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "table tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.innerText.trim()))"
    )


@pytest.mark.slow
def test_start_from_the_form_and_watch_windows_and_throttles(browser: Any, web_locust: tuple[str, Path]) -> None:  # noqa: F811
    url, tmp_path = web_locust
    page = browser.new_page()
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    try:
        page.goto(url + "/")
        page.get_by_text("Custom parameters").click()
        scenario_input = page.locator("form input[name=scenario]")
        scenario_input.wait_for(timeout=10_000)
        assert scenario_input.input_value() == str(tmp_path / "webui.yaml")
        for name in ("deadline", "resultsDir", "runId", "region"):
            assert page.locator(f"form input[name={name}]").count() == 1, name
        page.get_by_role("button", name="Start").click()

        page.get_by_role("tab", name="DynamoDB", exact=True).click()
        assert "tab=dynamodb" in page.url
        header = page.eval_on_selector_all("table thead th", "ths => ths.map(t => t.innerText.trim())")
        assert header == [title for _, title in WINDOW_COLUMNS]

        rows: list[list[str]] = []
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            rows = _table_rows(page)
            if sum(1 for r in rows if r and _verdict(r) in CLOSED_VERDICTS) >= 2:
                break
            page.wait_for_timeout(500)
        closed = [r for r in rows if _verdict(r) in CLOSED_VERDICTS]
        assert len(closed) >= 2, rows
        assert [r[0] for r in rows] == ["0", "1", "2"]
        assert _verdict(rows[2]) in {"running", "pending"} | CLOSED_VERDICTS
        assert all(0 <= float(r[CPU]) < 2 for r in closed), closed  # the client's evidence is shown
        throttled = [int(r[5].replace(",", "")) for r in closed]
        assert sum(throttled) > 0, closed

        chart = page.locator("img#dynlocust-chart")
        chart.wait_for(state="visible", timeout=10_000)
        page.wait_for_function("() => document.getElementById('dynlocust-chart').naturalWidth > 0", timeout=10_000)

        page.get_by_role("tab", name="DynamoDB throttles").click()
        page.wait_for_timeout(2500)  # the UI polls every 2 s
        throttle_rows = _table_rows(page)
        assert any(r[1] == "ThrottlingException" and int(r[3].replace(",", "")) > 0 for r in throttle_rows)
        assert page.locator("img#dynlocust-chart").count() == 0  # only under the DynamoDB tab

        page.goto(url + "/dynamodb")
        assert page.locator("#status").get_attribute("data-status") == "live"
        assert page.locator("svg#timeline path.series").count() == 4
        assert failed == []
    finally:
        page.close()
