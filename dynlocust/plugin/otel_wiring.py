"""OpenTelemetry wired into Locust's own `--otel`: dynlocust's spans and instruments on the providers it set.

Without `--otel` (or without the `otel` extra's packages, which Locust reports itself) nothing is installed. Every
process that sends requests emits their spans; the process that serves the merged Prometheus values (standalone or
master, never a worker) exports the instruments, so a fleet delivers one merged set (`dynlocust.observe.otel`).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from locust.env import Environment
from locust.runners import MasterRunner, WorkerRunner

from dynlocust.observe.metrics import REPORT_KEY
from dynlocust.observe.otel import INSTRUMENTATION, RequestSpans, RunInstruments
from dynlocust.plugin import context, metrics_wiring
from dynlocust.request.client import REQUEST_TYPE
from dynlocust.request.record import RequestRecord

log = logging.getLogger("dynlocust.observe.otel")
FLUSH_TIMEOUT_MS = 10_000
_installed: list[Environment] = []
"""Environments `install` wired (Locust's `quit` carries no environment; `flush` needs to know)."""


def enabled(environment: Environment) -> bool:
    """Whether Locust was asked for OpenTelemetry (`--otel`) and its SDK is installed."""
    options = environment.parsed_options
    return bool(getattr(options, "otel", False)) and importlib.util.find_spec("opentelemetry.sdk") is not None


def install(environment: Environment) -> None:
    """At `init`, after the Prometheus metrics: spans for this process's requests, instruments where values merge."""
    if not enabled(environment):
        return
    from opentelemetry import metrics, trace

    from dynlocust import __version__

    runner = environment.runner
    spans = RequestSpans(trace.get_tracer(INSTRUMENTATION, __version__), lambda: _run_id(environment))
    values = metrics_wiring.metrics_for(environment)
    instruments = None
    if values is not None and not isinstance(runner, WorkerRunner):
        meter = metrics.get_meter(INSTRUMENTATION, __version__)
        instruments = RunInstruments(meter, values, lambda: _windows(environment))
        if isinstance(runner, MasterRunner):

            def on_worker_report(client_id: str, data: Mapping[str, Any], **_kw: Any) -> None:
                assert instruments is not None
                instruments.record_deltas(data.get(REPORT_KEY) or {})

            environment.events.worker_report.add_listener(on_worker_report)

    def on_request(request_type: str, context: Mapping[str, Any] | None = None, **_kw: Any) -> None:
        record = context.get("record") if request_type == REQUEST_TYPE and context else None
        if isinstance(record, RequestRecord):
            spans.on_record(record)
            if instruments is not None:
                instruments.record(record)

    environment.events.request.add_listener(on_request)
    _installed.append(environment)


def flush() -> None:
    """At `quit`: export what is pending now, while the collector still listens (the SDK's own exit hook is last)."""
    if not _installed:
        return
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None and not force_flush(FLUSH_TIMEOUT_MS):
            log.warning("OpenTelemetry: %s not flushed within %d ms", type(provider).__name__, FLUSH_TIMEOUT_MS)


def _run_id(environment: Environment) -> str | None:
    run = context.current(environment)
    return run.run_id if run is not None else None


def _windows(environment: Environment) -> Iterator[tuple[int, str, str, str]]:
    report = context.current_merge(environment)
    if report is None:
        return
    run_id = _run_id(environment) or ""
    for closed in list(report.closed):
        yield closed.index, report.plan.windows[closed.index].phase, closed.verdict, run_id
