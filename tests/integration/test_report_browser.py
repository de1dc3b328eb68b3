"""The HTML report in a real headless Chromium: no request leaves the file, every chart draws, partial says so.

Needs Debian's ``chromium`` (``/usr/bin/chromium``) and Playwright for Python (never ``playwright install``).
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.observe.report import build, plots
from tests.support.runs import ROOT
from tests.support.scenarios import put_scenario

CHROMIUM = os.environ.get("DYNLOCUST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DATA = ROOT / "tests" / "unit" / "observe" / "report" / "data"
CHARTS = ("timeline", "latency", "throttles", "verdicts")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A fresh Chromium profile per module, closed whatever happens."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p, tempfile.TemporaryDirectory(prefix="dynlocust-chromium-") as profile:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1200, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of pixels, with no imaging library."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        filt = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if filt == 1:
                line[i] = (line[i] + a) & 0xFF
            elif filt == 2:
                line[i] = (line[i] + b) & 0xFF
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, channels, rows


def colour_stats(png: bytes) -> tuple[int, float]:
    """Distinct colours and the fraction of pixels that are not white."""
    width, channels, rows = png_pixels(png)
    colours: set[bytes] = set()
    inked = total = 0
    for row in rows:
        for x in range(width):
            px = row[x * channels : x * channels + 3]
            colours.add(px)
            total += 1
            inked += px != b"\xff\xff\xff"
    return len(colours), inked / total


def open_report(browser: Any, html_path: Path) -> tuple[Any, list[str], list[str], list[str]]:
    page = browser.new_page()
    requests: list[str] = []
    failed: list[str] = []
    console_errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.goto(html_path.as_uri(), wait_until="load")
    return page, requests, failed, console_errors


def test_html_report_opens_offline_and_its_charts_render(browser: Any, tmp_path: Path) -> None:
    built = build.build_reports(DATA / "complete.jsonl", tmp_path)
    html_path = built.files["html"][0]
    page, requests, failed, console_errors = open_report(browser, html_path)
    try:
        assert failed == []
        assert requests == [html_path.as_uri()]  # nothing but the document itself
        assert console_errors == []
        assert page.locator("#status").get_attribute("data-status") == "complete"
        assert page.locator("#windows tbody tr").count() == len(built.report.windows)
        for chart in CHARTS:
            svg = page.locator(f"svg#{chart}")
            box = svg.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 60, (chart, box)
            drawn = svg.evaluate(
                "el => [...el.querySelectorAll('path.series, rect.bar')]"
                ".map(e => e.getBBox()).filter(b => b.width > 0 || b.height > 0).length"
            )
            assert drawn > 0, chart
            colours, inked = colour_stats(svg.screenshot())
            assert colours > 10 and inked > 0.02, (chart, colours, inked)
        lengths = page.eval_on_selector_all("svg#timeline path.series", "ps => ps.map(p => p.getTotalLength())")
        assert len(lengths) == len(plots.timeline_series(built.report)) and min(lengths) > 100
    finally:
        page.close()


def test_killed_runs_report_says_partial_in_the_browser(browser: Any, tmp_path: Path) -> None:
    built = build.build_reports(DATA / "killed.jsonl", tmp_path)
    page, _requests, failed, _console = open_report(browser, built.files["html"][0])
    try:
        assert failed == []
        status = page.locator("#status")
        assert status.get_attribute("data-status") == "partial"
        assert status.is_visible() and "PARTIAL RESULTS" in status.inner_text()
        assert "2 of 4 planned windows closed" in status.inner_text()
        assert "(PARTIAL)" in page.title()
        assert page.locator("#windows tbody tr").count() == 2
    finally:
        page.close()


SCENARIO = put_scenario("killed", "steps: [{rate: 40, window: 3s}, {rate: 40, window: 3s}, {rate: 40, window: 30s}]")


@pytest.mark.slow
def test_a_run_killed_mid_run_still_gets_a_partial_report(tmp_path: Path) -> None:
    scenario = tmp_path / "killed.yaml"
    scenario.write_text(SCENARIO)
    results = tmp_path / "runs" / "k" / "results.jsonl"
    endpoint = LocalEndpoint(capacity=False).start()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--host", endpoint.url]
    argv += ["--results-dir", str(tmp_path / "runs"), "--run-id", "k", "--metrics-port", "0"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_text().count('"type":"window"') >= 2:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(1.5)  # into the third (30 s) window
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        endpoint.stop()
    out = tmp_path / "report"
    report = subprocess.run(
        [sys.executable, "-m", "dynlocust.observe.report.build", str(results.parent), "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert report.returncode == 0, report.stderr[-2000:]
    assert "(PARTIAL)" in report.stdout.splitlines()[0]
    assert "no end record" in report.stdout and "2 of 3 planned windows closed" in report.stdout
    html = (out / "report.html").read_text()
    assert 'data-status="partial"' in html
    shutil.rmtree(out)
