"""The DynamoDB tab in Locust's web UI: each window as it runs and closes, throttles by code and reason, a chart.

Locust 2.x's React UI takes extra tabs as tables (``extended_tabs``/``extended_tables`` template arguments, rows in
``extended_stats`` of ``/stats/requests``); it has no hook for a chart, so a small script added to the index page
shows ``./dynamodb/chart.svg`` under the DynamoDB table, reloaded every two seconds. ``/dynamodb`` is the same
HTML report `dynlocust report` writes, built from the live run and reloading itself.

Active once imported by a locustfile (it registers an ``init`` listener); does nothing when there is no web UI.
"""

from __future__ import annotations

import json
import time
import weakref
from argparse import Namespace
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locust import events
from locust.runners import MasterRunner

from dynlocust import runstate, webform
from dynlocust.conclusion import window_number
from dynlocust.errors import ConfigurationError
from dynlocust.report import csvout, html, plots
from dynlocust.report.build import RunReport, WindowReport, window_from_stats
from dynlocust.report.table import evidence_cells, reasons_cell, verdict_cell
from dynlocust.scenario.plan import build_plan

if TYPE_CHECKING:
    from dynlocust.coordination import FleetReport
    from dynlocust.runner import ScenarioRun
    from dynlocust.runstate import RunState
    from dynlocust.scenario.model import Scenario
    from dynlocust.windows import ClosedRecord

TAB = "dynamodb"
THROTTLE_TAB = "dynamodb-throttles"
# single lowercase words: the UI camel-cases keys of extended stats
WINDOW_COLUMNS = (
    ("window", "window"),
    ("phase", "phase"),
    ("target", "target/s"),
    ("offered", "offered"),
    ("accepted", "accepted/s"),
    ("throttled", "throttled"),
    ("ratio", "throttle ratio"),
    ("first", "first throttle after"),
    ("p50", "p50"),
    ("p99", "p99"),
    ("sent", "sent/due"),
    ("cpu", "cpu"),
    ("late", "late"),
    ("dropped", "dropped"),
    ("pool", "pool waits"),
    ("verdict", "verdict"),
    ("reasons", "reasons"),
)
THROTTLE_COLUMNS = (("window", "window"), ("code", "code"), ("reason", "reason"), ("requests", "requests"))
CHART_REFRESH_MS = 2000

CHART_SCRIPT = f"""<script>
(function () {{
  function tick() {{
    var on = new URLSearchParams(window.location.search).get("tab") === "{TAB}";
    var img = document.getElementById("dynlocust-chart");
    if (!on) {{ if (img) img.remove(); return; }}
    var table = document.querySelector("table");
    if (!table) return;
    if (!img) {{
      var box = table.parentElement;
      img = document.createElement("img");
      img.id = "dynlocust-chart";
      img.alt = "target, offered, accepted and throttled requests per second per bin";
      img.style.cssText = "display:block;max-width:100%;margin-top:16px;background:#fff";
      box.parentElement.insertBefore(img, box.nextSibling);
    }}
    img.src = "./{TAB}/chart.svg?t=" + Date.now();
  }}
  function setup() {{
    fetch("./{TAB}/state.json", {{cache: "no-store"}}).then(function (r) {{ return r.json(); }}).then(function (s) {{
      var box = document.getElementById("dynlocust-setup");
      if (!s.setup) {{ if (box) box.remove(); return; }}
      if (!box) {{
        box = document.createElement("div");
        box.id = "dynlocust-setup";
        box.setAttribute("role", "status");
        box.style.cssText = "position:fixed;bottom:12px;left:12px;right:12px;z-index:2000;padding:10px 14px;" +
          "border-radius:4px;font:14px sans-serif;color:#fff;box-shadow:0 2px 6px rgba(0,0,0,.3)";
        document.body.appendChild(box);
      }}
      box.style.background = s.setup_failed ? "#b00020" : "#1565c0";
      box.textContent = "dynlocust: " + s.setup;
    }}).catch(function () {{}});
  }}
  setInterval(tick, {CHART_REFRESH_MS});
  setInterval(setup, {CHART_REFRESH_MS});
}})();
</script>"""


def _views(environment: Any) -> tuple[FleetReport | None, ScenarioRun | None]:
    """The merged view (master or standalone) and this process's own run (standalone only: live counters)."""
    return runstate.current_report(environment), runstate.current_run(environment)


def _run_state(environment: Any) -> RunState | None:
    """The current run's state (set-up stage, set-up failure, report), or None before any."""
    return runstate.current(environment)


def _scenario(environment: Any) -> Scenario | None:
    """The scenario this process runs, or None without a scenario locustfile."""
    return runstate.current_scenario(environment)


def setup_status(state: RunState | None) -> str | None:
    """What set-up is doing or why it failed, while no window has started; None once the run has begun."""
    if state is None or state.report is not None:
        return None
    if state.setup_error:
        return f"set-up failed: {state.setup_error}"
    if state.stage in ("creating tables", "seeding tables"):
        return f"{state.stage}: the windows start once set-up is done"
    return None


class _ClosedCache:
    """Closed windows never change: build each one's report view once, not on every poll of the UI."""

    def __init__(self) -> None:
        self._fleet: weakref.ref[FleetReport] | None = None
        self._windows: dict[int, WindowReport] = {}

    def get(self, fleet: FleetReport, closed: ClosedRecord) -> WindowReport:
        if self._fleet is None or self._fleet() is not fleet:
            self._fleet = weakref.ref(fleet)
            self._windows = {}
        w = self._windows.get(closed.index)
        if w is None:
            w = self._windows[closed.index] = _closed_window(fleet, closed)
        return w


def _closed_window(fleet: FleetReport, closed: ClosedRecord) -> WindowReport:
    """The report's view of a window the fleet has closed: its merged statistics and the master's figures."""
    w = window_from_stats(
        closed.stats,
        phase=closed.phase,
        verdict=closed.verdict,
        t0=fleet.plan.t0,
        slo_failures=closed.slo_failures,
        saturation=closed.saturation,
        workers=len(closed.workers or {}),
        verdict_detail=closed.verdict_detail,
    )
    w.summary = {**w.summary, **closed.summary}  # the master's figures are the reference
    return w


_CACHE = _ClosedCache()


def live_report(fleet: FleetReport, run: ScenarioRun | None = None, now: float | None = None) -> RunReport:
    """What a run has seen so far: closed windows as closed; with this process's ``run``, the open window up to
    its last full bin (a fleet's master sees windows only once every worker has reported them)."""
    now = fleet.clock() if now is None else now
    windows = [_CACHE.get(fleet, c) for c in list(fleet.closed)]
    if run is not None and not fleet.finished:
        for planned in fleet.plan.windows[len(windows) :]:
            if planned.start > now:
                break
            stats = run.book[planned.index]
            w = window_from_stats(stats, phase=planned.phase, verdict="running", t0=fleet.plan.t0)
            counts = run.pacer.window_counts(planned.index)
            elapsed = min(now, planned.end) - planned.start
            w.summary["offered"] = counts.handed + counts.dropped
            w.summary["dropped"] = counts.dropped
            w.summary["accepted_per_s"] = w.summary["accepted"] / elapsed if elapsed > 0 else None
            w.bins = [b for b in w.bins if b.t + b.seconds <= now - fleet.plan.t0]
            windows.append(w)
    return RunReport(
        source=Path(fleet.results.path),
        run={
            "run_id": fleet.results.path.parent.name,
            "scenario": fleet.scenario.name,
            "source": fleet.scenario.source,
            "t0": fleet.plan.t0,
            "worker_count": fleet.worker_count,
        },
        end=None,
        windows=windows,
        planned=[{"index": w.index, "phase": w.phase, "rate": w.rate} for w in fleet.plan.windows],
    )


def status_line(fleet: FleetReport, now: float | None = None) -> str:
    """Where the run is: the current window and the time left."""
    now = fleet.clock() if now is None else now
    windows = fleet.plan.windows
    total = len(windows)
    if fleet.exit_code is not None:
        return f"finished: {len(fleet.closed)} of {total} windows closed, exit code {fleet.exit_code}"
    current = next((w for w in windows if w.start <= now < w.end), None)
    left = max(0.0, windows[-1].end - now) if total else 0.0
    if current is None:
        return f"{len(fleet.closed)} of {total} windows closed, {left:.0f} s left"
    return f"window {window_number(current.index)} of {total} ({current.phase}), {left:.0f} s left"


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.1f} ms"


def status_row(status: str) -> dict[str, str]:
    """One row that says what the run is doing instead of a table of zeros (set-up under way, or failed): the stage
    as its verdict, the detail as its reasons (the widest column)."""
    stage, _, detail = status.partition(": ")
    return {key: "" for key, _ in WINDOW_COLUMNS} | {
        "window": "-",
        "phase": "set-up",
        "verdict": stage,
        "reasons": detail,
    }


def planned_row(index: int, phase: str, rate: float, verdict: str) -> dict[str, str]:
    """A window that has not begun: its number, phase and target, nothing measured."""
    return {key: "-" for key, _ in WINDOW_COLUMNS} | {
        "window": str(window_number(index)),
        "phase": phase,
        "target": f"{rate:,.0f}",
        "verdict": verdict,
    }


def window_rows(report: RunReport | None) -> list[dict[str, str]]:
    """The tab's rows: closed and running windows with their figures, later windows as pending."""
    if report is None:
        return []
    rows = []
    for w in report.windows:
        s = w.summary
        throttled = s["throttled"] + s["unprocessed_requests"]
        first = s["first_throttle_s"]
        rows.append(
            {
                "window": str(window_number(w.index)),
                "phase": w.phase,
                "target": f"{s['target_rate']:,.0f}",
                "offered": f"{s['offered']:,}",
                "accepted": "-" if s["accepted_per_s"] is None else f"{s['accepted_per_s']:,.1f}",
                "throttled": f"{throttled:,}",
                "ratio": f"{throttled / s['sent']:.1%}" if s["sent"] else "-",
                "first": "-" if first is None else f"{first:.1f} s",
                "p50": _ms(s["latency"]["p50"]),
                "p99": _ms(s["latency"]["p99"]),
                **dict(zip(("sent", "cpu", "late", "dropped", "pool"), evidence_cells(w.saturation), strict=True)),
                "verdict": verdict_cell(w),
                "reasons": reasons_cell(w),
            }
        )
    for planned in report.planned[len(report.windows) :]:
        rows.append(planned_row(planned["index"], planned["phase"], planned["rate"], "pending"))
    return rows


def tab_rows(report: RunReport | None, state: RunState | None, scenario: Scenario | None) -> list[dict[str, str]]:
    """The DynamoDB tab: the run's windows; before it, what set-up is doing, or else the plan the scenario sets."""
    if report is not None or scenario is None:
        return window_rows(report)
    setup = setup_status(state)
    if setup:
        return [status_row(setup)]
    return [planned_row(w.index, w.phase, w.rate, "not started") for w in build_plan(scenario, t0=0.0).windows]


NO_THROTTLES = {"window": "-", "code": "no throttles yet", "reason": "", "requests": "0"}


def throttle_rows(report: RunReport | None) -> list[dict[str, str]]:
    """Throttled requests by window, code and reason, then the run's total per code and reason."""
    rows = []
    for w in report.windows if report is not None else []:
        for key, n in w.summary["throttled_by"].items():
            code, _, reason = key.partition("|")
            rows.append(
                {"window": str(window_number(w.index)), "code": code, "reason": reason or "-", "requests": f"{n:,}"}
            )
    for key, n in report.throttles().items() if report is not None else []:
        code, _, reason = key.partition("|")
        rows.append({"window": "all", "code": code, "reason": reason or "-", "requests": f"{n:,}"})
    return rows or [dict(NO_THROTTLES)]


def environment_report(environment: Any) -> RunReport | None:
    """The live report of an environment's run, or None before one has started."""
    fleet, run = _views(environment)
    return None if fleet is None else live_report(fleet, run)


def extended_stats(environment: Any) -> list[dict[str, Any]]:
    report = environment_report(environment)
    return [
        {"key": TAB, "data": tab_rows(report, _run_state(environment), _scenario(environment))},
        {"key": THROTTLE_TAB, "data": throttle_rows(report)},
    ]


def install(environment: Any, web_ui: Any) -> None:
    """Add the DynamoDB tabs, their data, the chart and the live report to a Locust web UI."""
    from flask import Blueprint, Response, request

    if "dynlocust" in web_ui.app.blueprints:  # installed already (init fired twice)
        return
    web_ui.template_args["extended_tabs"] = [
        {"title": "DynamoDB", "key": TAB},
        {"title": "DynamoDB throttles", "key": THROTTLE_TAB},
    ]
    web_ui.template_args["extended_tables"] = [
        {"key": TAB, "structure": [{"key": k, "title": t} for k, t in WINDOW_COLUMNS]},
        {"key": THROTTLE_TAB, "structure": [{"key": k, "title": t} for k, t in THROTTLE_COLUMNS]},
    ]
    web_ui.template_args["extended_csv_files"] = [
        {"href": f"./{TAB}/windows.csv", "title": "Download DynamoDB windows CSV"},
        {"href": f"./{TAB}", "title": "DynamoDB live report"},
    ]
    app = web_ui.app
    locust_bp = app.blueprints.get("locust")
    prefix = (getattr(locust_bp, "url_prefix", None) or "").rstrip("/")
    bp = Blueprint("dynlocust", __name__, url_prefix=f"{prefix}/{TAB}")

    @bp.route("")
    @web_ui.auth_required_if_enabled
    def page() -> Response:
        fleet, run = _views(environment)
        if fleet is None:
            said = setup_status(_run_state(environment)) or "No scenario run yet: start one from the Locust form."
            body = '<!DOCTYPE html><html><head><meta http-equiv="refresh" content="2"><title>dynlocust</title></head>'
            body += f'<body><p id="setup">{escape(said)}</p></body></html>'
            return Response(body, mimetype="text/html")
        return Response(html.render(live_report(fleet, run), live=status_line(fleet)), mimetype="text/html")

    @bp.route("/chart.svg")
    @web_ui.auth_required_if_enabled
    def chart() -> Response:
        report = environment_report(environment)
        series = plots.timeline_series(report) if report is not None else []
        svg = plots.line_chart_svg(
            series,
            chart_id="timeline",
            title="Requests per second per bin (live)",
            x_label="seconds since T0",
            y_label="requests/s",
        )
        return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-store"})

    @bp.route("/state.json")
    @web_ui.auth_required_if_enabled
    def state() -> Response:
        fleet, run = _views(environment)
        report = None if fleet is None else live_report(fleet, run)
        run_state = _run_state(environment)
        setup = setup_status(run_state)
        body = {
            "status": None if fleet is None else status_line(fleet),
            "setup": setup,
            "setup_failed": bool(run_state is not None and run_state.setup_error),
            "windows": tab_rows(report, run_state, _scenario(environment)),
            "throttles": throttle_rows(report),
            "at": time.time(),
        }
        return Response(json.dumps(body), mimetype="application/json")

    @bp.route("/windows.csv")
    @web_ui.auth_required_if_enabled
    def windows_csv() -> Response:
        report = environment_report(environment)
        text = csvout.render(report)["windows.csv"] if report is not None else ",".join(csvout.WINDOW_COLUMNS) + "\n"
        return Response(
            text, mimetype="text/csv", headers={"Content-Disposition": "attachment; filename=dynamodb_windows.csv"}
        )

    app.register_blueprint(bp)
    _install_form(environment, web_ui)

    @app.after_request
    def _extend(response: Response) -> Response:
        endpoint = request.endpoint or ""
        if endpoint.endswith(".request_stats") and response.is_json:
            data = response.get_json()
            if isinstance(data, dict):
                data["extended_stats"] = extended_stats(environment)
                response.set_data(json.dumps(data))
        elif endpoint.endswith(".index") and response.mimetype == "text/html" and not response.direct_passthrough:
            text = response.get_data(as_text=True)
            if "dynlocust-chart" not in text and "</body>" in text:
                response.set_data(text.replace("</body>", CHART_SCRIPT + "</body>", 1))
        return response


def _hidden(environment: Any) -> frozenset[str]:
    return webform.not_offered(
        scenario_run=_scenario(environment) is not None, fleet=isinstance(environment.runner, MasterRunner)
    )


def _install_form(environment: Any, web_ui: Any) -> None:
    """The start form: defaults from the scenario, only fields a Start applies, each validated before the run starts.

    Locust rebuilds its template arguments from ``parsed_options`` on every page load, so the defaults go there and
    the offered fields are filtered right after it rebuilds them.
    """
    from flask import jsonify, request

    rebuild = web_ui.update_template_args

    def update_template_args() -> None:
        scenario = _scenario(environment)
        if scenario is not None and environment.parsed_options is not None:
            webform.fill_defaults(environment.parsed_options, scenario.concurrency)
        rebuild()
        extra = web_ui.template_args.get("extra_options") or {}
        web_ui.template_args["extra_options"] = webform.offered(extra, _hidden(environment))

    web_ui.update_template_args = update_template_args

    @web_ui.app.before_request
    def _start() -> Any:
        """Refuse a Start whose form values the command line would refuse, or whose endpoint cannot be used."""
        if request.method != "POST" or not (request.endpoint or "").endswith(".swarm"):
            return None
        form = {key: value for key, value in request.form.items() if key != "user_classes"}
        scenario = _scenario(environment)
        try:
            settings = webform.validate(form, environment.parsed_options or Namespace(), _hidden(environment))
            if scenario is not None:
                host = form.get("host", environment.host)
                webform.check_host(host, local=scenario.is_local)
                region = getattr(scenario.target, "region", None) or settings.region
                webform.preflight(host or None, settings, region)
        except ConfigurationError as exc:
            return jsonify({"success": False, "message": f"dynlocust: error: {exc}", "host": environment.host})
        runstate.state_for(environment).settings = settings
        if form.get("host"):
            for user_class in environment.user_classes:  # Locust sets only the environment's host
                user_class.host = form["host"]
        return None


@events.init.add_listener
def _on_init(environment: Any, web_ui: Any = None, **_kwargs: Any) -> None:
    if web_ui is not None:
        install(environment, web_ui)
