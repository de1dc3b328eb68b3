"""Locust's `--otel` carries dynlocust's spans and metrics over OTLP/HTTP to a receiver that decodes the wire format.

The quickstart, standalone: every DynamoDB request is a span with the DynamoDB attributes, and the throttle counts
by code and reason (spans and the `dynlocust.throttled_requests` counter) equal the run's results.jsonl. A fleet
(master and two workers): the workers send the spans, one process (the master) the merged metrics, equal to the
results too.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_prometheus import SCENARIO, free_port, run_bounded, run_fleet
from tests.support.otlp_receiver import Received, otlp_receiver
from tests.support.runs import ROOT


def otel_env(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """Locust's own switches: LOCUST_ENABLE_OPENTELEMETRY is `--otel`; the rest are the SDK's standard variables."""
    for name, value in {
        "LOCUST_ENABLE_OPENTELEMETRY": "true",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_METRIC_EXPORT_INTERVAL": "1000",
        "OTEL_LOGS_EXPORTER": "none",
    }.items():
        monkeypatch.setenv(name, value)


def results_of(path: Path) -> dict[str, Any]:
    """What the results file says: requests, throttles by `code|reason`, and each window's verdict."""
    throttled: Counter[str] = Counter()
    requests, verdicts, run_id = 0, {}, ""
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "run":
            run_id = record["run_id"]
        if record["type"] == "window":
            verdicts[record["index"]] = record["verdict"]
            for b in record["bins"]:
                requests += sum(b["by_kind"].values())
                throttled.update(b["throttled_by"])
    return {"requests": requests, "throttled": dict(throttled), "verdicts": verdicts, "run_id": run_id}


def dynlocust_spans(received: Received) -> list[Any]:
    return [s for s in received.spans if s.scope == "dynlocust"]


def metric_throttles(received: Received) -> tuple[dict[str, float], set[str]]:
    """`code|reason` -> the counter's last value, summed over its series; and the processes that sent them."""
    out: dict[str, float] = {}
    senders = set()
    for point in received.latest("dynlocust.throttled_requests").values():
        a = point.attributes
        key = f"{a['error.type']}|{a.get('dynlocust.throttle.reason', '')}"
        out[key] = out.get(key, 0.0) + point.value
        senders.add(point.resource["service.instance.id"])
    return out, senders


def total(received: Received, metric: str) -> float:
    return sum(p.count or p.value for p in received.latest(metric).values())


def wait_for(received: Received, expected: dict[str, float], within: float = 10.0) -> None:
    """The last export comes with the processes' exit; give the receiver's threads a moment to decode it."""
    until = time.monotonic() + within
    while time.monotonic() < until and metric_throttles(received)[0] != expected:
        time.sleep(0.2)


@pytest.mark.slow
def test_a_quickstart_run_delivers_spans_and_metrics_whose_throttles_equal_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with otlp_receiver() as (url, received):
        otel_env(monkeypatch, url)
        argv = [sys.executable, "-m", "dynlocust.cli", "run", "quickstart", "--results-dir", "results"]
        code, output = run_bounded([*argv, "--run-id", "otel-quick"], tmp_path, {**os.environ, "PYTHONPATH": str(ROOT)})
        results = results_of(tmp_path / "results" / "otel-quick" / "results.jsonl")
        assert results["throttled"], f"the quickstart did not throttle: nothing to compare (exit {code})"
        wait_for(received, results["throttled"])

        spans = dynlocust_spans(received)
        assert len(spans) == results["requests"], output[-3000:]
        assert all(
            s.attributes["db.system.name"] == "aws.dynamodb"
            and s.attributes["db.operation.name"] in ("PutItem", "GetItem")
            and s.attributes["aws.dynamodb.table_names"] == ["items-otel-quick"]
            and s.attributes["dynlocust.run.id"] == "otel-quick"
            and s.attributes["dynlocust.window"] in results["verdicts"]
            and s.attributes["dynlocust.send.delay"] >= 0
            for s in spans
        )
        by_reason = Counter(
            f"{s.attributes['error.type']}|{s.attributes['dynlocust.throttle.reason']}"
            for s in spans
            if s.attributes["dynlocust.outcome"] == "throttled"
        )
        assert dict(by_reason) == results["throttled"]
        accepted = [s for s in spans if s.attributes["dynlocust.outcome"] == "ok"]
        assert all(json.loads(c)["TableName"] == "items" for s in accepted for c in s.attributes.get(
            "aws.dynamodb.consumed_capacity", ['{"TableName": "items"}']))  # fmt: skip
        assert any("aws.dynamodb.consumed_capacity" in s.attributes for s in accepted)

        throttles, _senders = metric_throttles(received)
        assert throttles == results["throttled"]
        assert total(received, "dynlocust.requests") == results["requests"]
        assert total(received, "dynlocust.request.duration") == results["requests"]
        assert total(received, "dynlocust.request.latency_from_intended") == results["requests"]
        verdicts = {
            p.attributes["dynlocust.window"]: p.attributes["dynlocust.verdict"]
            for p in received.latest("dynlocust.window.verdict").values()
        }
        assert verdicts == results["verdicts"]


@pytest.mark.slow
def test_a_fleet_delivers_one_merged_set_of_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    with otlp_receiver() as (url, received):
        otel_env(monkeypatch, url)
        code, output = run_fleet(scenario, free_port(), tmp_path / "results")
        assert code == 0, output[-4000:]
        results = results_of(tmp_path / "results" / "prom-e2e" / "results.jsonl")
        assert results["throttled"], "the scenario did not throttle: nothing to compare"
        wait_for(received, results["throttled"])

        spans = dynlocust_spans(received)
        span_senders = {s.resource["service.instance.id"] for s in spans}
        assert len(span_senders) == 2, "each worker sends its own requests' spans"
        assert len(spans) == results["requests"]

        throttles, senders = metric_throttles(received)
        assert len(senders) == 1 and not senders & span_senders, "one set of metrics, from the master"
        assert throttles == results["throttled"]
        assert total(received, "dynlocust.requests") == results["requests"]
        assert total(received, "dynlocust.request.duration") == results["requests"]
        dynlocust_metrics = {p.metric for p in received.points if p.scope == "dynlocust"}
        assert {p.resource["service.instance.id"] for p in received.points if p.scope == "dynlocust"} == senders
        assert "dynlocust.window.verdict" in dynlocust_metrics
