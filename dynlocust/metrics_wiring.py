"""Prometheus metrics wired into Locust: listeners by role, the /metrics server and web UI route, the sampler.

Standalone processes count their own requests and serve them; workers count and ship deltas to the master with
every report; the master merges and serves. The values and the collector are `dynlocust.metrics`'s; the installed
`Metrics` of an environment lives in its run state (`dynlocust.runstate`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from locust import events

import gevent
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry

import dynlocust.plugin  # noqa: F401 - dynlocust's options on Locust's parser, validated at init
from dynlocust import runstate
from dynlocust.metrics import REPORT_KEY, SAMPLE_INTERVAL, Metrics

log = logging.getLogger("dynlocust.metrics")


@dataclass
class _Installed:
    metrics: Metrics
    server: Any = None
    sampler: gevent.Greenlet | None = None


def metrics_for(environment: Any) -> Metrics | None:
    """The `Metrics` installed on a Locust environment by the `init` listener, if any."""
    installed = runstate.state_for(environment).metrics
    return installed.metrics if installed is not None else None


def install(environment: Any, registry: CollectorRegistry | None = None) -> Metrics:
    """Attach metrics to a Locust environment: listeners by role, /metrics server, web UI route, sampler.

    Standalone processes count their own requests and serve them; workers count and ship deltas to the master
    with every report; the master merges and serves. Failing to bind the port is logged, not fatal: metrics are
    an observer and must not stop a load test.
    """
    from locust.runners import MasterRunner, WorkerRunner

    state = runstate.state_for(environment)
    settings = state.settings
    runner = environment.runner
    worker = str(getattr(runner, "worker_index", 0)) if isinstance(runner, WorkerRunner) else "0"
    metrics = Metrics(
        registry if registry is not None else CollectorRegistry(),
        run_source=lambda: runstate.current_run(environment),
        worker=worker,
    )
    installed = state.metrics = _Installed(metrics)
    if isinstance(runner, MasterRunner):

        def on_worker_report(client_id: str, data: Mapping[str, Any], **_kw: Any) -> None:
            payload = data.get(REPORT_KEY)
            if payload:
                metrics.merge_report(payload)

        environment.events.worker_report.add_listener(on_worker_report)
    else:
        environment.events.request.add_listener(metrics.on_request)
        installed.sampler = gevent.spawn(_sample_forever, metrics)
    if isinstance(runner, WorkerRunner):

        def on_report(client_id: str, data: dict[str, Any], **_kw: Any) -> None:
            metrics.worker = str(getattr(runner, "worker_index", metrics.worker))
            metrics.sample_now()
            data[REPORT_KEY] = metrics.take_deltas()

        environment.events.report_to_master.add_listener(on_report)
        return metrics
    if settings.metrics_port:
        installed.server = _serve(metrics, settings.metrics_host, settings.metrics_port)
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is not None:
        _add_web_route(web_ui, metrics)
    return metrics


def uninstall(environment: Any, *, final_scrape: bool = True) -> None:
    """Stop the sampler and the server (after one last scrape, when something is scraping)."""
    state = runstate.state_for(environment)
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
    try:
        server.start()
    except OSError as exc:
        log.warning("Prometheus /metrics not served: cannot listen on %s:%d (%s)", host, port, exc)
        return None
    log.info("Prometheus metrics at http://%s:%d/metrics", host, server.server_port)
    return server


def _add_web_route(web_ui: Any, metrics: Metrics) -> None:
    from flask import Response

    def metrics_view() -> Any:
        return Response(metrics.exposition(), mimetype=None, content_type=CONTENT_TYPE_LATEST)

    view = web_ui.auth_required_if_enabled(metrics_view)  # --web-login protects it like Locust's own pages
    try:
        web_ui.app.add_url_rule("/metrics", "dynlocust_metrics", view)
    except (AssertionError, ValueError) as exc:  # Flask refuses routes once it has served a request
        log.warning("Prometheus /metrics not added to the web UI: %s", exc)


@events.init.add_listener
def _on_init(environment: Any, **_kwargs: Any) -> None:
    install(environment)


@events.quitting.add_listener
def _on_quitting(environment: Any, **_kwargs: Any) -> None:
    uninstall(environment)
