"""The DynamoDB tab in Locust's web UI: each window as it runs and closes, throttles by code and reason, a chart,
and the run itself: where it is, then its conclusion, its SLOs and a link to its report.

Locust 2.x's React UI takes extra tabs as tables (`extended_tabs`/`extended_tables` template arguments, rows in
`extended_stats` of `/stats/requests`); it has no hook for anything else, and it polls only while its runner says
spawning or running. So a script added to the index page (`webui.js`) polls `./dynamodb/state.json` on its own
every two seconds: it shows `./dynamodb/chart.svg` under the DynamoDB table, what set-up is doing, and a panel
above the table that follows the run to its end, after Locust's page has stopped polling. `/dynamodb` is the same
HTML report `dynlocust report` writes, built from the live run and reloading itself; `/dynamodb/report/RUN_ID` is
the report a finished run of this process wrote.

Installed at `init` when Locust has a web UI (`dynlocust.plugin.listeners`).
"""

from __future__ import annotations

import json
import time
import weakref
from argparse import Namespace
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from locust.env import Environment
from locust.web import WebUI

from dynlocust.errors import ConfigurationError
from dynlocust.exit_codes import exit_line
from dynlocust.fleet.output import capacity_scale
from dynlocust.observe.conclusion import window_list, window_number
from dynlocust.observe.report import csvout, html, plots, table_states
from dynlocust.observe.report.build import RunReport, WindowReport, window_from_stats
from dynlocust.observe.report.table import evidence_cells, reasons_cell, verdict_cell
from dynlocust.plugin import context, webform
from dynlocust.plugin.roles import role_for
from dynlocust.run.search import bracket_text
from dynlocust.scenario.plan import build_plan

if TYPE_CHECKING:
    from dynlocust.fleet.merge import FleetMerge
    from dynlocust.plugin.context import RunContext, RunOutcome
    from dynlocust.run.closed_window import ClosedWindow
    from dynlocust.run.local_run import LocalRun
    from dynlocust.scenario.model import Scenario

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
    ("wait", "cpu wait"),
    ("late", "late"),
    ("dropped", "dropped"),
    ("pool", "pool waits"),
    ("table", "table state"),
    ("verdict", "verdict"),
    ("reasons", "reasons"),
)
EVIDENCE_KEYS = ("sent", "cpu", "wait", "late", "dropped", "pool")
"""The columns `evidence_cells` fills, in its order."""
THROTTLE_COLUMNS = (("window", "window"), ("code", "code"), ("reason", "reason"), ("requests", "requests"))
CHART_REFRESH_MS = 2000

SCRIPT = "webui.js"
"""The page's additions (the chart, the set-up banner, the run's panel), polled on their own: Locust's page stops
polling once its runner says stopped, and a run's end (its conclusion, its report) comes after that."""


def page_script() -> str:
    """The script added to Locust's index page, read from the package (the wheel carries it)."""
    from importlib import resources

    text = resources.files("dynlocust.plugin").joinpath(SCRIPT).read_text(encoding="utf-8")
    text = text.replace("__TAB__", TAB).replace("__REFRESH_MS__", str(CHART_REFRESH_MS))
    return f"<script>\n{text}</script>"


def _views(environment: Environment) -> tuple[FleetMerge | None, LocalRun | None]:
    """The merged view (master or standalone) and this process's own run (standalone only: live counters)."""
    return context.current_merge(environment), context.current_share(environment)


def _run_state(environment: Environment) -> RunContext | None:
    """The current run's state (set-up stage, set-up failure, report), or None before any."""
    return context.current(environment)


def _scenario(environment: Environment) -> Scenario | None:
    """The scenario this process runs, or None without a scenario locustfile."""
    return context.current_scenario(environment)


def setup_status(state: RunContext | None) -> str | None:
    """What set-up is doing or why it failed, while no window has started; None once the run has begun."""
    if state is None or state.merge is not None:
        return None
    if state.setup_error:
        return f"set-up failed: {state.setup_error}"
    if state.stage in ("creating tables", "seeding tables"):
        return f"{state.stage}: the windows start once set-up is done"
    return None


class _ClosedCache:
    """Closed windows never change: build each one's report view once, not on every poll of the UI."""

    def __init__(self) -> None:
        self._fleet: weakref.ref[FleetMerge] | None = None
        self._windows: dict[int, WindowReport] = {}

    def get(self, fleet: FleetMerge, closed: ClosedWindow) -> WindowReport:
        if self._fleet is None or self._fleet() is not fleet:
            self._fleet = weakref.ref(fleet)
            self._windows = {}
        w = self._windows.get(closed.index)
        if w is None:
            w = self._windows[closed.index] = _closed_window(fleet, closed)
        return w


def _closed_window(fleet: FleetMerge, closed: ClosedWindow) -> WindowReport:
    """The report's view of a window the fleet has closed: its merged statistics and the master's figures."""
    w = window_from_stats(
        closed.stats,
        bin_summaries=closed.bin_summaries,
        phase=closed.phase,
        verdict=closed.verdict,
        t0=fleet.plan.t0,
        slo_failures=closed.slo_failures,
        saturation=closed.saturation,
        workers=len(closed.workers or {}),
        verdict_detail=closed.verdict_detail,
    )
    w.summary = {**w.summary, **closed.summary}  # the master's figures are the reference
    w.table_state = closed.table_state
    return w


_CACHE = _ClosedCache()


def live_report(fleet: FleetMerge, run: LocalRun | None = None, now: float | None = None) -> RunReport:
    """What a run has seen so far: closed windows as closed; with this process's `run`, the open window up to
    its last full bin, and a window closed here but not yet merged as closing (a fleet's master sees windows
    only once every worker has reported them)."""
    now = fleet.clock() if now is None else now
    windows = [_CACHE.get(fleet, c) for c in list(fleet.closed)]
    if run is not None and not fleet.finished:
        progress = run.progress(now, figures_from=len(windows))
        for planned in fleet.plan.windows[len(windows) :]:
            if planned.start > now:
                break
            part = progress.open_windows.get(planned.index)
            if part is None:
                break
            w = window_from_stats(
                part.stats, phase=planned.phase, verdict="closing" if part.closing else "running", t0=fleet.plan.t0
            )
            elapsed = min(now, planned.end) - planned.start
            w.summary["offered"] = part.handed + part.dropped
            w.summary["dropped"] = part.dropped
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
            "table_state": fleet.table_states.before if fleet.table_states is not None else None,
            "capacity_scale": capacity_scale(fleet.scenario),
        },
        end=None,
        windows=windows,
        planned=[{"index": w.index, "phase": w.phase, "rate": w.rate} for w in fleet.plan.windows],
        ceiling=fleet.search.record() if fleet.search is not None else None,
    )


def status_line(fleet: FleetMerge, now: float | None = None) -> str:
    """Where the run is: the current window and the time left."""
    now = fleet.clock() if now is None else now
    windows = fleet.plan.windows
    total: int | str = len(windows)
    if fleet.exit_code is not None:
        return f"finished: {len(fleet.closed)} of {total} windows closed, exit code {fleet.exit_code}"
    current = next((w for w in windows if w.start <= now < w.end), None)
    left = max(0.0, windows[-1].end - now) if total else 0.0
    search = fleet.search
    if search is not None:  # its undecided probes have no times: at most their windows' length
        left, total = fleet.seconds_left(), f"at most {total}"
    if current is None:
        line = f"{len(fleet.closed)} of {total} windows closed, {left:.0f} s left"
    else:
        line = f"window {window_number(current.index)} of {total} ({current.phase}), {left:.0f} s left"
    if search is None:
        return line
    probing = f", probing {search.next_rate():,.1f}/s" if search.stopped is None else f", stopped ({search.stopped})"
    return f"{line}; search: {bracket_text(search)}{probing}"


def slo_line(outcome: RunOutcome) -> str:
    """The run's SLOs in one line: which failed, or that none did."""
    if outcome.slo_failures:
        return "SLO failed: " + "; ".join(outcome.slo_failures)
    if not outcome.slos:
        return "SLOs: none set"
    return f"SLOs: none failed ({outcome.slos} set)"


def run_panel(state: RunContext | None, fleet: FleetMerge | None, now: float | None = None) -> dict[str, Any] | None:
    """What the DynamoDB tab says about the current run: its stage and where it is, then how it ended (its exit code,
    conclusion, SLOs and report); None before any Start."""
    if state is None or not state.begun:
        return None
    panel: dict[str, Any] = {"run_id": state.run_id}
    outcome = state.outcome
    if outcome is not None:
        report = outcome.report
        return panel | {
            "stage": "finished",
            "status": f"run {state.run_id} finished: {exit_line(outcome.exit_code)}",
            "exit_code": outcome.exit_code,
            "conclusion": outcome.conclusion,
            "slo": slo_line(outcome) if fleet is not None else None,
            "report_url": f"./{TAB}/report/{state.run_id}" if report is not None else None,
            "report_path": str(report) if report is not None else None,
            "report_error": outcome.report_error or None,
        }
    if state.ending is not None:
        return panel | {"stage": "ending", "status": f"run {state.run_id} ending: deleting its tables, then its report"}
    if fleet is None:
        said = setup_status(state) or state.stage
        return panel | {"stage": "set-up", "status": f"run {state.run_id} {said}"}
    return panel | {"stage": "running", "status": f"run {state.run_id}: {status_line(fleet, now)}"}


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
    previous = report.run.get("table_state")
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
                **dict(
                    zip(("sent", "cpu", "wait", "late", "dropped", "pool"), evidence_cells(w.saturation), strict=True)
                ),
                "table": table_states.cell(previous, w.table_state, report.run.get("capacity_scale")),
                "verdict": verdict_cell(w),
                "reasons": reasons_cell(w),
            }
        )
        previous = w.table_state or previous
    for planned in report.planned[len(report.windows) :]:
        if report.ceiling is not None and not planned["rate"]:
            continue  # a search's probe not decided yet: no rate to show
        rows.append(planned_row(planned["index"], planned["phase"], planned["rate"], "pending"))
    return rows


def tab_rows(report: RunReport | None, state: RunContext | None, scenario: Scenario | None) -> list[dict[str, str]]:
    """The DynamoDB tab: the run's windows; before it, what set-up is doing, or else the plan the scenario sets."""
    if report is not None or scenario is None:
        return window_rows(report)
    setup = setup_status(state)
    if setup:
        return [status_row(setup)]
    windows = build_plan(scenario, t0=0.0).windows
    if scenario.search is not None:  # its probes after the first are not decided yet: no rate to show
        windows = windows[:1]
    return [planned_row(w.index, w.phase, w.rate, "not started") for w in windows]


NO_THROTTLES = {"window": "-", "code": "no throttles yet", "reason": "", "requests": "0"}


def throttle_rows(report: RunReport | None) -> list[dict[str, str]]:
    """Throttled requests by window, code and reason, the run's total per code and reason, then why (the report's
    "why throttled" lines, where the run knows: a shared on-demand budget, an index over its limit)."""
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
    for why in report.explanations() if report is not None else []:
        rows.append(
            {"window": window_list(why.windows), "code": "why", "reason": why.text, "requests": f"{why.requests:,}"}
        )
    return rows or [dict(NO_THROTTLES)]


def environment_report(environment: Environment) -> RunReport | None:
    """The live report of an environment's run, or None before one has started."""
    fleet, run = _views(environment)
    return None if fleet is None else live_report(fleet, run)


def extended_stats(environment: Environment) -> list[dict[str, Any]]:
    report = environment_report(environment)
    return [
        {"key": TAB, "data": tab_rows(report, _run_state(environment), _scenario(environment))},
        {"key": THROTTLE_TAB, "data": throttle_rows(report)},
    ]


def install(environment: Environment, web_ui: WebUI) -> None:
    """Add the DynamoDB tabs, their data, the chart and the live report to a Locust web UI."""
    from flask import Blueprint, Response, request

    app = web_ui.app
    assert app is not None  # Locust builds its Flask app with the web UI
    if "dynlocust" in app.blueprints:  # installed already (init fired twice)
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
            "run": run_panel(run_state, fleet),
            "setup": setup,
            "setup_failed": bool(run_state is not None and run_state.setup_error),
            "windows": tab_rows(report, run_state, _scenario(environment)),
            "throttles": throttle_rows(report),
            "at": time.time(),
        }
        return Response(json.dumps(body), mimetype="application/json")

    @bp.route("/report/<run_id>")
    @web_ui.auth_required_if_enabled
    def run_report(run_id: str) -> Response:
        """The HTML report of a run this process ended (never any other file)."""
        from flask import send_file

        state = context.state_for(environment)
        report = next((o.report for o in state.outcomes if o.run_id == run_id and o.report is not None), None)
        if report is None or not report.is_file():
            known = ", ".join(o.run_id for o in state.outcomes if o.report is not None) or "none yet"
            text = f"no report of a run {run_id!r} in this process: expected one of its finished runs ({known})"
            return Response(text, status=404, mimetype="text/plain")
        return send_file(report, mimetype="text/html", max_age=0)

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
                response.set_data(text.replace("</body>", page_script() + "</body>", 1))
        return response


def _hidden(environment: Environment) -> frozenset[str]:
    return webform.not_offered(scenario_run=_scenario(environment) is not None, fleet=role_for(environment).is_fleet)


def _install_form(environment: Environment, web_ui: WebUI) -> None:
    """The start form: defaults from the scenario, only fields a Start applies, each validated before the run starts.

    Locust rebuilds its template arguments from `parsed_options` on every page load, so the defaults go there and
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

    web_ui.update_template_args = update_template_args  # type: ignore[method-assign]  # Locust rebuilds the form's arguments here on every page load

    app = web_ui.app
    assert app is not None

    @app.before_request
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
        context.state_for(environment).settings = settings
        if form.get("host"):
            for user_class in environment.user_classes:  # Locust sets only the environment's host
                user_class.host = form["host"]
        return None
