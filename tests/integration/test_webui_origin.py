"""No page but the web UI's own drives or reads it (issue 41), against a real Locust process with dynlocust's web UI.

The routes come from the running app's `url_map` (written by the locustfile at `init`, after dynlocust's own
routes are added), so a route added later (Locust's, dynlocust's, a locustfile's like `/custom-action` here) is
covered without a change here. The browser side, the page itself still starting and stopping runs, is
`test_webui.py`'s. The fuzz at the end is bounded like the endpoint's (`DYNLOCUST_WEB_FUZZ_REQUESTS`,
`DYNLOCUST_WEB_FUZZ_SECONDS`, `DYNLOCUST_WEB_FUZZ_SEED`); run longer by hand with, for example:

    DYNLOCUST_WEB_FUZZ_SECONDS=600 DYNLOCUST_WEB_FUZZ_REQUESTS=10000000 \\
        python -m pytest -x -q -p no:cacheprovider tests/integration/test_webui_origin.py -k fuzz
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_report_browser import browser  # noqa: F401 - the Chromium fixture
from tests.support.origin_fuzz import PARAMETER, SAFE, UNSAFE, Route, generate
from tests.support.scenarios import put_scenario
from tests.support.webui import LOCUSTFILE, WebLocust, web_locust

SCENARIO = put_scenario("origin", "steps: [{rate: 10, window: 60s}]", concurrency=2)
FUZZ_REQUESTS = int(os.environ.get("DYNLOCUST_WEB_FUZZ_REQUESTS", "2000"))
FUZZ_SECONDS = float(os.environ.get("DYNLOCUST_WEB_FUZZ_SECONDS", "20"))
FUZZ_SEED = int(os.environ.get("DYNLOCUST_WEB_FUZZ_SEED", "0"))
FOREIGN = "http://evil.example"
ATTACK_FORM = b"user_count=3&spawn_rate=3&host=http%3A%2F%2F127.0.0.1%3A9"


def _locustfile(routes: Path, touched: Path) -> str:
    """dynlocust's web UI, a route of the locustfile's own (it leaves a file when it runs), and the app's url_map
    written at `init` (after dynlocust's listeners: they were registered when the imports above ran)."""
    return (
        LOCUSTFILE
        + f"""
import json
from pathlib import Path
from locust import events


@events.init.add_listener
def _custom_route_and_url_map(environment, web_ui=None, **_kwargs):
    if web_ui is None:
        return

    @web_ui.app.route("/custom-action", methods=["POST", "PUT", "DELETE", "PATCH"])
    def custom_action():
        Path({str(touched)!r}).write_text("ran")
        return "done"

    rules = [{{"rule": r.rule, "methods": sorted(r.methods or ())}} for r in web_ui.app.url_map.iter_rules()]
    Path({str(routes)!r}).write_text(json.dumps(rules))
"""
    )


@dataclass
class UI:
    web: WebLocust
    routes: list[Route]
    touched: Path
    runs: Path

    @property
    def own(self) -> str:
        return self.web.url.removeprefix("http://")

    def request(
        self, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        host, _, port = self.own.rpartition(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            conn.request(method, path, body=body or None, headers=headers or {})
            response = conn.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            conn.close()

    def runner_state(self) -> str:
        status, _, body = self.request("GET", "/stats/requests")
        assert status == 200, body
        return str(json.loads(body)["state"])


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UI]:
    tmp_path = tmp_path_factory.mktemp("origin")
    routes, touched = tmp_path / "routes.json", tmp_path / "custom-action-ran"
    with web_locust(tmp_path, SCENARIO, locustfile=_locustfile(routes, touched)) as web:
        found = [Route(r["rule"], tuple(r["methods"])) for r in json.loads(routes.read_text())]
        yield UI(web, found, touched, tmp_path / "runs")


def _path(rule: str) -> str:
    return PARAMETER.sub("x", rule)


def _unsafe(ui: UI) -> list[tuple[str, str]]:
    return [(m, _path(r.rule)) for r in ui.routes for m in r.methods if m in UNSAFE]


def _assert_nothing_happened(ui: UI) -> None:
    assert ui.runner_state() == "ready"
    assert not ui.touched.exists(), "the locustfile's own route ran"
    assert not ui.runs.exists() or not any(ui.runs.iterdir()), "a run began"


def test_every_state_changing_route_refuses_a_foreign_origin_or_referer(ui: UI) -> None:
    unsafe = _unsafe(ui)
    paths = {p for _, p in unsafe}
    assert {"/swarm", "/stop", "/stats/reset", "/user", "/custom-action"} <= paths, sorted(paths)
    foreign_headers = [
        {"Origin": FOREIGN},
        {"Origin": "null"},
        {"Origin": f"http://{ui.own}.evil.example"},
        {"Referer": f"{FOREIGN}/attack.html"},  # no Origin: an old browser, or a page that could suppress it
    ]
    answers = {}
    for method, path in unsafe:
        for headers in foreign_headers:
            status, got, _ = ui.request(
                method, path, {**headers, "Content-Type": "application/x-www-form-urlencoded"}, ATTACK_FORM
            )
            answers[(method, path, tuple(headers.items()))] = status
            assert "access-control-allow-origin" not in got, (method, path, headers, got)
    assert set(answers.values()) == {403}, {k: v for k, v in answers.items() if v != 403}
    _assert_nothing_happened(ui)


def test_the_ui_s_own_page_and_a_script_without_origin_still_change_state(ui: UI) -> None:
    """The control: the refusals above are the origin check's, not routes that refuse everything."""
    own = f"http://{ui.own}"
    status, got, body = ui.request("POST", "/custom-action", {"Origin": own})
    assert (status, body) == (200, b"done")
    assert "access-control-allow-origin" not in got  # same-origin needs none
    ui.touched.unlink()
    assert ui.request("POST", "/stats/reset", {"Referer": own + "/"})[0] == 200
    assert ui.request("POST", "/stats/reset")[0] == 200  # curl, a script: neither header


def test_reads_from_a_foreign_origin_carry_no_cors_header(ui: UI) -> None:
    reads = [_path(r.rule) for r in ui.routes if "GET" in r.methods]
    assert {"/logs", "/stats/requests", "/dynamodb/state.json", "/metrics"} <= set(reads), reads
    for path in reads:
        for method, extra in (("GET", {}), ("OPTIONS", {"Access-Control-Request-Method": "GET"})):
            status, got, _ = ui.request(method, path, {"Origin": FOREIGN, **extra})
            assert "access-control-allow-origin" not in got, (method, path, status, got)
            assert status == 403, (method, path, status)
    status, got, _ = ui.request("OPTIONS", "/swarm", {"Origin": FOREIGN, "Access-Control-Request-Method": "POST"})
    assert status == 403 and not any(k.startswith("access-control-") for k in got), got


def test_a_dns_rebinding_page_is_refused_by_its_host(ui: UI) -> None:
    """evil.example resolving to 127.0.0.1: the page is same-origin to itself, only its Host shows it."""
    port = ui.own.rpartition(":")[2]
    evil = f"evil.example:{port}"
    assert ui.request("GET", "/logs", {"Host": evil})[0] == 403
    assert ui.request("POST", "/stop", {"Host": evil, "Origin": f"http://{evil}"})[0] == 403
    assert ui.request("GET", "/logs", {"Host": f"localhost:{port}"})[0] == 200  # a loopback name is this machine


def test_fuzz_foreign_pages_against_every_route(ui: UI) -> None:
    """Foreign requests generated from the app's routes (tests/support/origin_fuzz.py): every one refused with
    403 and no CORS header; afterwards no run began, the locustfile's route never ran and the UI still answers."""
    routes = [Route(r.rule, tuple(m for m in r.methods if m in UNSAFE + SAFE)) for r in ui.routes]
    deadline = time.monotonic() + FUZZ_SECONDS
    sent, seed, wrong = 0, FUZZ_SEED, []
    while sent < FUZZ_REQUESTS and time.monotonic() < deadline:
        for r in generate(seed, min(200, FUZZ_REQUESTS - sent), routes, ui.own):
            status, got, _ = ui.request(r.method, r.path, r.headers, r.body)
            cors = [k for k in got if k.startswith("access-control-")]
            if status != 403 or cors:
                wrong.append(f"seed {seed}: {r.method} {r.path} {r.headers} -> {status} {cors}")
            sent += 1
        seed += 1
    print(f"web UI origin fuzz: {sent} requests, seeds {FUZZ_SEED}..{seed - 1}, {len(wrong)} not refused")
    assert sent >= min(FUZZ_REQUESTS, 200)
    assert not wrong, "\n".join(wrong[:20])
    _assert_nothing_happened(ui)
    assert ui.request("GET", "/logs", {"Origin": f"http://{ui.own}"})[0] == 200


ATTACK_PAGE = """<!DOCTYPE html><html><body>
<form id="f" method="POST" action="UI/swarm" target="sink">
  <input name="user_count" value="3"><input name="spawn_rate" value="3"><input name="host" value="http://127.0.0.1:9">
</form>
<iframe id="sink" name="sink"></iframe>
<script>
window.results = {};
async function attempt(name, url, init) {
  try { const r = await fetch(url, init); window.results[name] = "read " + r.status; }
  catch (e) { window.results[name] = "blocked"; }
}
(async () => {
  await attempt("logs", "UI/logs", {});
  await attempt("state", "UI/dynamodb/state.json", {});
  await attempt("reset", "UI/stats/reset", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
  await fetch("UI/stop", {method: "POST", mode: "no-cors"}).catch(() => {});
  document.getElementById("sink").addEventListener("load", () => { window.results.submitted = true; });
  document.getElementById("f").submit();
})();
</script></body></html>"""


@contextmanager
def _attack_site(ui_url: str) -> Iterator[str]:
    """Another origin (127.0.0.1, another port) serving a page that tries to drive and read the UI."""
    page = ATTACK_PAGE.replace("UI/", ui_url + "/").encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/attack.html"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_of_another_origin_in_a_real_browser_can_neither_start_a_run_nor_read(
    browser: Any,  # noqa: F811
    ui: UI,
) -> None:
    """The attack of issue 41 in Chromium: a form POST to /swarm, fetches of /logs and the DynamoDB state, a JSON
    POST (preflighted) and a no-cors POST to /stop from http://127.0.0.1:<another port>."""
    page = browser.new_page()
    try:
        with _attack_site(ui.web.url) as attack:
            page.goto(attack)
            try:
                page.wait_for_function("() => window.results.submitted === true", timeout=15_000)
            finally:
                results = page.evaluate("() => window.results")
                print(results)
    finally:
        page.close()
    assert results["logs"] == "blocked" and results["state"] == "blocked", results
    assert results["reset"] == "blocked", results
    _assert_nothing_happened(ui)
    assert "refused POST /swarm" in ui.web.output()
