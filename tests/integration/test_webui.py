"""The DynamoDB tab in Locust's web UI, driven from a real headless Chromium against a real Locust process.

Start a run from Locust's form (the scenario options are in it), then see windows close, throttles counted and
the live chart drawn in the tab. Needs Debian's ``chromium`` and Playwright for Python.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
import urllib.request
from argparse import Namespace
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.plugin.settings import from_options
from dynlocust.plugin.webui import WINDOW_COLUMNS
from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.support.scenarios import put_scenario, scenario_yaml
from tests.support.webui import table_rows, web_locust

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


@contextmanager
def _locust(tmp_path: Path, scenario_text: str, *args: str) -> Iterator[str]:
    """A Locust web UI with the scenario locustfile and the DynamoDB tab, on 127.0.0.1; stopped when the block ends."""
    with web_locust(tmp_path, scenario_text, *args) as web:
        yield web.url


@pytest.fixture
def throttling_locust(tmp_path: Path) -> Iterator[str]:
    """The throttling scenario against a local endpoint of its own, with the user count given on the command line."""
    endpoint = LocalEndpoint(capacity_scale=0.0025).start()
    try:
        with _locust(tmp_path, SCENARIO, "--host", endpoint.url, "-u", "8", "-r", "8", "--run-id", "web") as url:
            yield url
    finally:
        endpoint.stop()


@pytest.mark.slow
def test_start_from_the_form_and_watch_windows_and_throttles(
    browser: Any,  # noqa: F811
    throttling_locust: str,
    tmp_path: Path,
) -> None:
    url = throttling_locust
    page = browser.new_page()
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    try:
        page.goto(url + "/")
        page.get_by_text("Custom parameters").click()
        page.locator("form input[name=runId]").wait_for(timeout=10_000)
        for name in ("resultsDir", "runId", "region", "readTimeout"):
            assert page.locator(f"form input[name={name}]").count() == 1, name
        for name in ("scenario", "deadline"):  # set when the process starts; the scenario's deadline applies
            assert page.locator(f"form [name={name}]").count() == 0, name
        assert page.locator("form input[name=userCount]").input_value() == "8"  # the command line's, kept
        page.locator("form input[name=runId]").fill("from-the-form")  # the form's value applies, not --run-id's
        page.get_by_role("button", name="Start").click()

        page.get_by_role("tab", name="DynamoDB", exact=True).click()
        assert "tab=dynamodb" in page.url
        header = page.eval_on_selector_all("table thead th", "ths => ths.map(t => t.innerText.trim())")
        assert header == [title for _, title in WINDOW_COLUMNS]

        rows: list[list[str]] = []
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            rows = table_rows(page)
            if sum(1 for r in rows if r and _verdict(r) in CLOSED_VERDICTS) >= 2:
                break
            page.wait_for_timeout(500)
        closed = [r for r in rows if _verdict(r) in CLOSED_VERDICTS]
        assert len(closed) >= 2, rows
        assert [r[0] for r in rows] == ["1", "2", "3"]  # counted from 1, as the console's progress lines
        assert _verdict(rows[2]) in {"running", "pending"} | CLOSED_VERDICTS
        assert all(0 <= float(r[CPU]) < 2 for r in closed), closed  # the client's evidence is shown
        throttled = [int(r[5].replace(",", "")) for r in closed]
        assert sum(throttled) > 0, closed

        chart = page.locator("img#dynlocust-chart")
        chart.wait_for(state="visible", timeout=10_000)
        page.wait_for_function("() => document.getElementById('dynlocust-chart').naturalWidth > 0", timeout=10_000)

        page.get_by_role("tab", name="DynamoDB throttles").click()
        page.wait_for_timeout(2500)  # the UI polls every 2 s
        throttle_rows = table_rows(page)
        assert any(r[1] == "ThrottlingException" and int(r[3].replace(",", "")) > 0 for r in throttle_rows)
        assert page.locator("img#dynlocust-chart").count() == 0  # only under the DynamoDB tab

        assert (tmp_path / "runs" / "from-the-form" / "results.jsonl").exists()
        assert not (tmp_path / "runs" / "web").exists()

        page.goto(url + "/dynamodb")
        assert page.locator("#status").get_attribute("data-status") == "live"
        assert page.locator("svg#timeline path.series").count() == 5  # target, offered, sent, accepted, throttled
        assert failed == []
    finally:
        page.close()


# a local scenario: no --host, so the process starts the embedded endpoint and the form shows it
LOCAL = put_scenario("webui-local", "steps: [{rate: 20, window: 2s}, {rate: 20, window: 2s}]", concurrency=5)
UNTIL_STOPPED = put_scenario("webui-two", "steps: [{rate: 20, window: 2s}, {rate: 20, window: 60s}]", concurrency=5)
MISSING_TABLE = scenario_yaml(
    "webui-missing",
    "steps: [{rate: 20, window: 2s}, {rate: 20, window: 2s}]",
    tables="[{name: t, partition_key: {name: pk, type: S}, use_existing: true, existing_table_name: absent-table}]",
    concurrency=5,
)


def _open_form(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.get_by_text("Custom parameters").click()
    page.locator("form input[name=runId]").wait_for(timeout=10_000)


def _runner_state(url: str) -> str:
    with urllib.request.urlopen(url + "/stats/requests", timeout=5) as response:
        return str(json.load(response)["state"])


def _swarm(url: str, form: dict[str, str]) -> dict[str, Any]:
    body = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(urllib.request.Request(url + "/swarm", data=body), timeout=30) as response:
        return dict(json.load(response))


def _tables(endpoint: str) -> list[str]:
    body = json.dumps({}).encode()
    request = urllib.request.Request(
        endpoint,
        data=body,
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=0",
        },
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return list(json.load(response)["TableNames"])


def _wait(check: Any, seconds: float, what: str) -> Any:
    """Poll `check` until it returns something truthy; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what}: not seen within {seconds} s")


def test_the_form_takes_its_defaults_from_the_scenario(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    with _locust(tmp_path, LOCAL) as url:
        page = browser.new_page()
        try:
            _open_form(page, url)
            assert page.locator("form input[name=userCount]").input_value() == "5"  # the scenario's concurrency
            assert page.locator("form input[name=spawnRate]").input_value() == "5"
            assert page.locator("form input[name=host]").input_value().startswith("http://127.0.0.1:")  # embedded
            assert page.locator("form [name=scenario]").count() == 0
            # the tabs appear once a run starts; their data already shows the scenario's plan
            with urllib.request.urlopen(url + "/dynamodb/state.json", timeout=5) as response:
                rows = [[r[k] for k, _ in WINDOW_COLUMNS] for r in json.load(response)["windows"]]
            assert [(r[0], r[2], _verdict(r)) for r in rows] == [("1", "20", "not started"), ("2", "20", "not started")]
        finally:
            page.close()


def test_a_bad_form_value_is_refused_in_the_form_with_the_command_lines_message(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigurationError) as on_the_command_line:
        from_options(Namespace(read_timeout="abc"))
    expected = f"dynlocust: error: {on_the_command_line.value}"
    with _locust(tmp_path, LOCAL) as url:
        page = browser.new_page()
        try:
            _open_form(page, url)
            page.locator("form input[name=readTimeout]").fill("abc")
            page.get_by_role("button", name="Start").click()
            page.get_by_text(expected).wait_for(timeout=10_000)
            assert _runner_state(url) == "ready"  # nothing started
            # a field the form does not offer is refused too, not silently ignored
            answer = _swarm(url, {"user_count": "5", "spawn_rate": "5", "scenario": str(tmp_path / "missing.yaml")})
            assert answer["success"] is False
            assert answer["message"].startswith("dynlocust: error: --scenario: set when the process starts")
            assert _runner_state(url) == "ready"
        finally:
            page.close()


def test_an_endpoint_that_does_not_answer_is_refused_in_the_form(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        host = f"http://127.0.0.1:{closed.getsockname()[1]}"
        with _locust(tmp_path, LOCAL, "--host", host, "--connect-timeout", "1") as url:
            page = browser.new_page()
            try:
                _open_form(page, url)
                page.get_by_role("button", name="Start").click()
                page.get_by_text("dynlocust: error: --host: expected a DynamoDB endpoint that answers").wait_for(
                    timeout=15_000
                )
                assert _runner_state(url) == "ready"
            finally:
                page.close()


def test_a_set_up_failure_is_shown_in_the_ui(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    with _locust(tmp_path, MISSING_TABLE) as url:
        page = browser.new_page()
        try:
            _open_form(page, url)
            page.get_by_role("button", name="Start").click()
            banner = page.locator("#dynlocust-setup")
            banner.wait_for(timeout=15_000)
            page.wait_for_function(
                "() => document.getElementById('dynlocust-setup').textContent.includes('set-up failed')",
                timeout=15_000,
            )
            assert "'absent-table': expected an existing table" in banner.inner_text()
            page.get_by_role("tab", name="DynamoDB", exact=True).click()
            page.wait_for_function(
                "() => [...document.querySelectorAll('table tbody td')].some(td => "
                "td.innerText.includes('set-up failed'))",
                timeout=10_000,
            )
            row = table_rows(page)[0]
            assert (_verdict(row), row[-1]) == ("set-up failed", banner.inner_text().split("set-up failed: ")[1])
        finally:
            page.close()


@pytest.mark.slow
def test_two_runs_in_a_row_from_the_form(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """Each Start a fresh run (its own run id and tables); Stop tears down that run's tables at once."""
    runs = tmp_path / "runs"
    with _locust(tmp_path, UNTIL_STOPPED) as url:
        page = browser.new_page()
        try:
            _open_form(page, url)
            endpoint = page.locator("form input[name=host]").input_value()
            page.get_by_role("button", name="Start").click()
            first = _wait(lambda: [d.name for d in runs.iterdir()] if runs.exists() else [], 30, "the first run")
            assert len(first) == 1
            _wait(lambda: any(first[0] in t for t in _tables(endpoint)), 30, "the first run's tables")
            page.get_by_role("button", name="Stop").click()
            _wait(lambda: not any(first[0] in t for t in _tables(endpoint)), 30, "the first run's tables deleted")

            page.get_by_role("button", name="New").click()
            page.get_by_role("button", name="Start").click()
            second = _wait(lambda: [d.name for d in runs.iterdir() if d.name not in first], 30, "a second run")
            assert len(second) == 1 and second[0] != first[0]
            _wait(lambda: any(second[0] in t for t in _tables(endpoint)), 30, "the second run's tables")
            rows = _wait(lambda: [r for r in _table_rows_of(page) if _verdict(r) in CLOSED_VERDICTS], 40, "a window")
            assert rows[0][0] == "1"
            assert not any(first[0] in t for t in _tables(endpoint))
        finally:
            page.close()


def _table_rows_of(page: Any) -> list[list[str]]:
    page.get_by_role("tab", name="DynamoDB", exact=True).click()
    return table_rows(page)


def test_the_report_link_opens_the_report_with_the_default_results_dir(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    """The default, relative `results` is the one in the directory the process started in: the run panel's report
    link serves that report (it answered HTTP 500 when read under Locust's package directory)."""
    with web_locust(tmp_path, LOCAL, default_results=True) as web:
        page = browser.new_page()
        try:
            _open_form(page, web.url)
            page.get_by_role("button", name="Start").click()
            page.get_by_role("tab", name="DynamoDB", exact=True).click()
            link = page.locator("#dynlocust-run [data-field=report] a")
            link.wait_for(timeout=60_000)
            (run_id,) = [d.name for d in (tmp_path / "results").iterdir()]
            report = tmp_path / "results" / run_id / "report" / "report.html"
            with page.context.expect_page() as opened:
                link.click()
            shown = opened.value
            shown.wait_for_load_state()
            assert shown.url.endswith(f"/dynamodb/report/{run_id}")
            assert run_id in shown.locator("body").inner_text(), shown.locator("body").inner_text()[:300]
            with urllib.request.urlopen(shown.url, timeout=10) as response:  # that very file
                assert response.read() == report.read_bytes()
            assert link.inner_text() == f"report: {report}"  # the path it serves, absolute
            shown.close()
        finally:
            page.close()
