"""Prometheus metrics wired into Locust: listeners by role, the /metrics server and web UI route, the sampler.

Standalone processes count their own requests and serve them; workers count and ship deltas to the master with
every report; the master merges and serves. The values and the collector are `dynlocust.observe.metrics`'s; the
installed `Metrics` of an environment lives in its run state (`dynlocust.plugin.context`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from locust.env import Environment
from locust.web import WebUI

import gevent
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.metrics import REPORT_KEY, SAMPLE_INTERVAL, Metrics
from dynlocust.plugin import context, epilogue

log = logging.getLogger("dynlocust.observe.metrics")


@dataclass
class _Installed:
    metrics: Metrics
    server: Any = None
    sampler: gevent.Greenlet | None = None


def metrics_for(environment: Environment) -> Metrics | None:
    """The `Metrics` installed on a Locust environment by the `init` listener, if any."""
    installed = context.state_for(environment).metrics
    return installed.metrics if installed is not None else None


def install(
    environment: Environment, registry: CollectorRegistry | None = None, *, wire: Callable[[Metrics], None]
) -> Metrics:
    """Attach metrics to a Locust environment, wired by `wire` (the process's role); the web UI gets a /metrics route.

    Standalone processes count their own requests and serve them; workers count and ship deltas to the master
    with every report; the master merges and serves. Failing to bind the port is logged, not fatal: metrics are
    an observer and must not stop a load test.
    """
    state = context.state_for(environment)
    metrics = Metrics(
        registry if registry is not None else CollectorRegistry(),
        run_source=lambda: context.current_share(environment),
        search_source=lambda: getattr(context.current_merge(environment), "search", None),
    )
    state.metrics = _Installed(metrics)
    wire(metrics)
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is not None:
        _add_web_route(web_ui, metrics)
    return metrics


def count_requests(environment: Environment, metrics: Metrics) -> None:
    """Count every request event of this process, and sample its gauges."""
    environment.events.request.add_listener(metrics.on_request)
    _installed(environment).sampler = gevent.spawn(_sample_forever, metrics)


def merge_worker_reports(environment: Environment, metrics: Metrics) -> None:
    """The master's: merge the deltas each worker ships with its report."""

    def on_worker_report(client_id: str, data: Mapping[str, Any], **_kw: Any) -> None:
        payload = data.get(REPORT_KEY)
        if payload:
            metrics.merge_report(payload)

    environment.events.worker_report.add_listener(on_worker_report)


def ship_to_master(environment: Environment, metrics: Metrics) -> None:
    """A worker's: every report to the master carries the deltas since the last one."""
    runner = environment.runner

    def on_report(client_id: str, data: dict[str, Any], **_kw: Any) -> None:
        metrics.worker = str(getattr(runner, "worker_index", metrics.worker))  # known once the master acked
        metrics.sample_now()
        data[REPORT_KEY] = metrics.take_deltas()

    environment.events.report_to_master.add_listener(on_report)


def serve(environment: Environment, metrics: Metrics) -> None:
    """Serve /metrics on --metrics-host:--metrics-port (0: not served). A port given that cannot be bound ends the
    process before anything starts (exit 2): a Prometheus scraping it would read another process. The default port
    taken only loses /metrics, said at the start and again in the run's epilogue."""
    settings = context.settings_for(environment)
    if not settings.metrics_port:
        return
    where = f"{settings.metrics_host}:{settings.metrics_port}"
    try:
        _installed(environment).server = _serve(metrics, settings.metrics_host, settings.metrics_port)
    except OSError as exc:
        why = os.strerror(exc.errno or 0)
        if settings.metrics_port_given:
            sys.stderr.write(
                f"dynlocust: error: --metrics-port: expected a port free to listen on at {settings.metrics_host}, "
                f"found {settings.metrics_port} taken ({why})\n"
            )
            sys.exit(ExitCode.BAD_INPUT)
        line = (
            f"warning: Prometheus /metrics not served: the default port {where} is taken ({why}), "
            "perhaps by another run; give --metrics-port to choose one (0: none)"
        )
        sys.stderr.write(f"dynlocust: {line}\n")
        epilogue.note(line)


def _installed(environment: Environment) -> _Installed:
    installed = context.state_for(environment).metrics
    assert isinstance(installed, _Installed)
    return installed


def uninstall(environment: Environment, *, final_scrape: bool = True) -> None:
    """Stop the sampler and the server (after one last scrape, when something is scraping)."""
    state = context.state_for(environment)
    installed, state.metrics = state.metrics, None
    if installed is None:
        return
    if installed.sampler is not None:
        installed.sampler.kill(block=False)
        installed.metrics.sample_now()  # the last dropped sends and gauges
    if installed.server is not None:
        if final_scrape and installed.metrics.wait_for_final_scrape():
            log.debug("final metrics scrape served")
        installed.server.stop(timeout=1)


def _sample_forever(metrics: Metrics) -> None:
    while True:
        try:
            metrics.sample_now()
        except Exception:  # an observer: never let a sampling bug end the run
            log.exception("sampling run metrics failed")
        gevent.sleep(SAMPLE_INTERVAL)


def _serve(metrics: Metrics, host: str, port: int) -> Any:
    from gevent.pywsgi import WSGIServer

    server = WSGIServer((host, port), metrics.wsgi_app, log=None, error_log=None)
    server.start()
    log.info("Prometheus metrics at http://%s:%d/metrics", host, server.server_port)
    return server


def _add_web_route(web_ui: WebUI, metrics: Metrics) -> None:
    from flask import Response

    def metrics_view() -> Any:
        return Response(metrics.exposition(), mimetype=None, content_type=CONTENT_TYPE_LATEST)

    view = web_ui.auth_required_if_enabled(metrics_view)  # --web-login protects it like Locust's own pages
    assert web_ui.app is not None  # Locust builds its Flask app with the web UI
    try:
        web_ui.app.add_url_rule("/metrics", "dynlocust_metrics", view)
    except (AssertionError, ValueError) as exc:  # Flask refuses routes once it has served a request
        log.warning("Prometheus /metrics not added to the web UI: %s", exc)
