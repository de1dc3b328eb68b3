"""The HTML report and the web UI's DynamoDB tab fit their content at 1280 and 1440 px, in a real headless Chromium.

Issue 33: throttle bar labels were cut at the chart's left edge ("ttlingException..."), the verdict strip showed
only a window's first verdict (dropping `client-bound`), a window's verdict badge broke over lines out of its
cell, and the DynamoDB tab pushed its reasons column out of view at 1440 px. Built from a real run whose last
window is both throttled and client-bound, on a table whose GSI throttles with a long reason; every text of the
page must be whole (no cell, badge or chart label cut) and every verdict label the results record must show.
Screenshots are kept in each test's tmp_path.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from dynlocust.observe.report import build
from dynlocust.plugin.webui import WINDOW_COLUMNS
from dynlocust.run.results import read_results
from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.support.runs import run_dynlocust
from tests.support.scenarios import scenario_yaml
from tests.support.webui import web_locust

WIDTHS = (1280, 1440)
VERDICT = [key for key, _ in WINDOW_COLUMNS].index("verdict")
"""The tab's verdict column, wherever WINDOW_COLUMNS puts it."""
# ~10 writes/s of capacity: 40/s throttles (on the GSI, whose reason is long); 3,000/s from 3 users is client-bound
SCENARIO = scenario_yaml(
    "layout",
    "steps: [{rate: 40, window: 3s}, {rate: 40, window: 3s}, {rate: 3000, window: 3s}]",
    target="{local: {capacity_scale: 0.0025}}",
    tables="[{name: t, partition_key: {name: pk, type: S}, gsis: [{name: by_g, partition_key: {name: g, type: S}}]}]",
    concurrency=3,
)

CLIPPED = """(selector) => {
  const out = [];
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth) out.push(`page: ${page.scrollWidth} px wide in ${page.clientWidth}`);
  for (const e of document.querySelectorAll(selector)) {
    if (e.scrollWidth > e.clientWidth + 1) out.push(`${e.tagName} cut: ${e.innerText.slice(0, 60)}`);
  }
  for (const badge of document.querySelectorAll('.verdict')) {
    const cell = badge.closest('td').getBoundingClientRect(), r = badge.getBoundingClientRect();
    if (badge.getClientRects().length !== 1) out.push(`badge broken over lines: ${badge.innerText}`);
    if (r.left < cell.left || r.right > cell.right) out.push(`badge out of its cell: ${badge.innerText}`);
  }
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        out.push(`${svg.id} label cut: ${t.textContent}`);
    }
  }
  return out;
}"""


def labels_by_window(results: Path) -> dict[str, list[str]]:
    """Every verdict label the results record, by window number as a person reads it."""
    windows = [r for r in read_results(results) if r["type"] == "window"]
    return {str(w["index"] + 1): list((w.get("verdict_detail") or {}).get("labels") or [w["verdict"]]) for w in windows}


@pytest.fixture(scope="module")
def layout_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("layout")
    (directory / "layout.yaml").write_text(SCENARIO)
    run = run_dynlocust(directory / "layout.yaml", directory / "results", run_id="layout")
    assert run.windows, run.stderr[-2000:]
    assert any("client-bound" in (w.get("verdict_detail") or {}).get("labels", []) for w in run.windows), run.windows
    return directory / "results" / "layout" / "results.jsonl"


@pytest.mark.slow  # 14-20 s with other work on 2 cores (make test-quick stays under 5 minutes)
@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_fits_its_content_and_shows_every_verdict(
    browser: Any,  # noqa: F811 - the fixture
    layout_run: Path,
    tmp_path: Path,
    width: int,
) -> None:
    built = build.build_reports(layout_run, tmp_path)
    page = browser.new_page()
    try:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(built.files["html"][0].as_uri(), wait_until="load")
        page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=True)
        assert page.evaluate(CLIPPED, "td, th, .verdict, figure, p, h1, h2") == []
        assert "IndexWriteKeyRangeThroughputExceeded" in page.inner_text("table#throttles")  # the GSI's long reason
        strip = page.eval_on_selector_all(
            "#verdicts text.label", "ts => ts.map(t => [t.dataset.window, t.textContent])"
        )
        badges = page.eval_on_selector_all(
            "#windows tbody tr",
            "rows => rows.map(r => [r.cells[0].innerText, [...r.querySelectorAll('.verdict')].map(b => b.innerText)])",
        )
    finally:
        page.close()
    for window, labels in labels_by_window(layout_run).items():
        shown = [text for number, text in strip if number == window]
        assert [s.split(" (")[0] for s in shown] == labels, (window, shown)
        assert [b.split(" (")[0] for b in dict(badges)[window]] == labels, (window, badges)


@pytest.mark.slow
def test_the_dynamodb_tab_fits_its_content(browser: Any, tmp_path: Path) -> None:  # noqa: F811 - the fixture
    with web_locust(tmp_path, SCENARIO, "--autostart") as web:
        page = browser.new_page()
        try:
            page.set_viewport_size({"width": WIDTHS[-1], "height": 900})
            page.goto(web.url + "/?tab=dynamodb")
            deadline = time.monotonic() + 90
            while page.evaluate("() => document.getElementById('dynlocust-run')?.dataset.stage") != "finished":
                assert time.monotonic() < deadline, web.output()[-3000:]
                page.wait_for_timeout(500)
            (results,) = (tmp_path / "runs").glob("*/results.jsonl")
            expected = labels_by_window(results)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                page.wait_for_timeout(2500)  # the tab's own poll lays it out
                page.screenshot(path=str(tmp_path / f"dynamodb-tab-{width}.png"), full_page=True)
                problems = page.evaluate(CLIPPED, "td, th")
                box = page.evaluate("() => { const p = document.querySelector('table').parentElement; "
                                    "return [p.scrollWidth, p.clientWidth]; }")  # fmt: skip
                assert problems == [] and box[0] <= box[1], (width, problems, box)
                rows = page.eval_on_selector_all(
                    "table tbody tr", f"rows => rows.map(r => [r.cells[0].innerText, r.cells[{VERDICT}].innerText])"
                )
                assert {w: v.split(" + ") for w, v in rows} == expected, rows
        finally:
            page.close()
