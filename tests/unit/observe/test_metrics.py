"""observe.metrics: counting from request events, bounded labels, deltas that merge exactly, the exposition."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from locust.argument_parser import parse_options
from locust.env import Environment
from locust.event import EventHook, Events

import msgpack
import pytest
import yaml
from botocore.exceptions import ClientError
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from dynlocust.observe import metrics as m
from dynlocust.plugin import listeners, metrics_wiring, roles
from dynlocust.request.client import REQUEST_TYPE, Target, measured_call
from dynlocust.request.outcomes import THROTTLED, DeadlineExceeded, Outcome, ThrottlingReason, classify
from dynlocust.request.record import is_write
from dynlocust.run.local_run import LocalRun
from dynlocust.run.saturation import REASONS, Saturation
from dynlocust.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[3]
TABLES = {"items": "items-20260101T000000-abcd", "orders": "orders-20260101T000000-abcd"}


def throttle(code: str = "ThrottlingException", reason: str = "TableWriteKeyRangeThroughputExceeded") -> Outcome:
    error = {
        "Error": {"Code": code, "Message": "slow down"},
        "ResponseMetadata": {"HTTPStatusCode": 400},
        "throttlingReasons": [{"reason": reason, "resource": "arn:aws:dynamodb:us-east-1:1:table/items"}],
    }
    return classify(exception=ClientError(error, "PutItem"))


def new_metrics(**kwargs: Any) -> m.Metrics:
    run = SimpleNamespace(physical_names=TABLES)
    return m.Metrics(CollectorRegistry(), run_source=lambda: run, **kwargs)


def fire(
    metrics: m.Metrics,
    outcome: Outcome,
    *,
    operation: str = "PutItem",
    table: str = TABLES["items"],
    index: str | None = None,
    ms: float = 3.0,
    response: dict[str, Any] | None = None,
) -> None:
    """Count one call as a client does: `measured_call` builds its record and fires the request event."""
    logical = {physical: name for name, physical in TABLES.items()}
    event = EventHook()
    event.add_listener(metrics.on_request)
    target = Target(operation, logical.get(table, table), table, index, is_write(operation), logical.get)
    clock = iter([0.0, ms / 1000.0]).__next__
    measured_call(event, target, lambda: response, deadline=1.0, outcome_of=lambda _r, _e: outcome, clock=clock)


def samples(metrics: m.Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.exposition().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(metrics: m.Metrics, name: str, **labels: str) -> float:
    return samples(metrics)[(name, tuple(sorted(labels.items())))]


OK_PUT = {"ConsumedCapacity": {"TableName": TABLES["items"], "CapacityUnits": 1.0}}


@pytest.mark.parametrize(
    ("outcome", "operation", "response", "expected"),
    [
        (
            classify(OK_PUT),
            "PutItem",
            OK_PUT,
            {
                ("dynlocust_requests_total", "ok"): 1,
                ("dynlocust_consumed_capacity_units_total", "write"): 1.0,
            },
        ),
        (
            classify({"ConsumedCapacity": [{"TableName": TABLES["items"], "CapacityUnits": 0.5}]}),
            "GetItem",
            {"ConsumedCapacity": [{"TableName": TABLES["items"], "CapacityUnits": 0.5}]},
            {("dynlocust_requests_total", "ok"): 1, ("dynlocust_consumed_capacity_units_total", "read"): 0.5},
        ),
        (throttle(), "PutItem", None, {("dynlocust_requests_total", "throttled"): 1}),
        (
            classify({"UnprocessedItems": {TABLES["items"]: [{}, {}, {}]}}),
            "BatchWriteItem",
            None,
            {
                ("dynlocust_requests_total", "unprocessed"): 1,
                ("dynlocust_unprocessed_items_total", "BatchWriteItem"): 3,
            },
        ),
        (classify(exception=DeadlineExceeded(8.0)), "GetItem", None, {("dynlocust_requests_total", "timeout"): 1}),
    ],
)
def test_each_outcome_is_counted_under_the_logical_table(
    outcome: Outcome, operation: str, response: Any, expected: dict[tuple[str, str], float]
) -> None:
    metrics = new_metrics()
    fire(metrics, outcome, operation=operation, response=response)
    got = samples(metrics)
    for (name, detail), want in expected.items():
        matches = [
            v
            for (n, labels), v in got.items()
            if n == name and dict(labels).get("table") == "items" and detail in dict(labels).values()
        ]
        assert matches == [want], (name, detail, got)
    assert not any("abcd" in str(labels) for _, labels in got), "physical table names leaked into labels"


def test_throttles_carry_code_reason_and_status() -> None:
    metrics = new_metrics()
    fire(metrics, throttle())
    fire(metrics, throttle("ProvisionedThroughputExceededException", "IndexWriteProvisionedThroughputExceeded"))
    fire(metrics, throttle())
    labels = {"operation": "PutItem", "table": "items", "index": "", "http_status": "400"}
    assert (
        value(
            metrics,
            "dynlocust_throttled_requests_total",
            code="ThrottlingException",
            reason="TableWriteKeyRangeThroughputExceeded",
            **labels,
        )
        == 2
    )
    assert (
        value(
            metrics,
            "dynlocust_throttled_requests_total",
            code="ProvisionedThroughputExceededException",
            reason="IndexWriteProvisionedThroughputExceeded",
            **labels,
        )
        == 1
    )


def test_label_values_stay_bounded() -> None:
    metrics = new_metrics()
    odd = Outcome(THROTTLED, "Bad code with spaces {x}", 400, reasons=(ThrottlingReason("pk=user#42"),))
    fire(metrics, odd)
    for i in range(m.MAX_TABLES + 10):
        fire(metrics, classify({}), table=f"generated-{i}")
    got = samples(metrics)
    throttled = [dict(k) for (n, k), _ in got.items() if n == "dynlocust_throttled_requests_total"]
    assert [(t["code"], t["reason"]) for t in throttled] == [(m.OTHER, m.OTHER)]
    tables = {dict(k)["table"] for (n, k), _ in got.items() if n == "dynlocust_requests_total"}
    assert len(tables) <= m.MAX_TABLES + 1 and m.OTHER in tables


@pytest.mark.parametrize(
    ("ms", "le"),
    [(0.4, "0.001"), (1.0, "0.001"), (1.2, "0.002"), (7.5, "0.0075"), (49.0, "0.05"), (20000.0, "+Inf")],
)
def test_latency_lands_in_the_smallest_bucket_that_holds_it(ms: float, le: str) -> None:
    metrics = new_metrics()
    fire(metrics, classify({}), ms=ms)
    got = samples(metrics)
    buckets = {
        dict(k)["le"]: v for (n, k), v in got.items() if n == "dynlocust_request_duration_seconds_bucket"
    }  # cumulative
    bounds = [m.le_label(b) for b in m.DURATION_BUCKETS] + ["+Inf"]
    first = next(b for b in bounds if buckets[b] == 1)
    assert first == le
    sum_labels = {"operation": "PutItem", "table": "items", "outcome": "ok"}  # the logical table name
    assert value(metrics, "dynlocust_request_duration_seconds_sum", **sum_labels) == ms / 1000


def test_buckets_resolve_one_to_fifty_milliseconds() -> None:
    inside = [b for b in m.DURATION_BUCKETS if 0.001 <= b <= 0.05]
    assert len(inside) >= 12
    steps = list(itertools.pairwise(inside))
    assert all(b - a <= max(0.001, 0.5 * a) + 1e-12 for a, b in steps)  # 1 ms steps, then at most +50%


def test_other_request_types_and_contexts_without_outcome_are_ignored() -> None:
    metrics = new_metrics()
    metrics.on_request("GET", "/", 1.0, 0, context={"outcome": classify({})})
    metrics.on_request(REQUEST_TYPE, "x", 1.0, 0, context={"operation": "PutItem"})
    assert not [k for k in samples(metrics) if k[0] == "dynlocust_requests_total"]


def test_consumed_capacity_by_index_and_cost() -> None:
    metrics = new_metrics()
    response = {
        "ConsumedCapacity": {
            "TableName": TABLES["orders"],
            "CapacityUnits": 3.0,
            "Table": {"CapacityUnits": 1.0},
            "GlobalSecondaryIndexes": {"by-customer": {"CapacityUnits": 2.0}},
        }
    }
    fire(metrics, classify(response), operation="PutItem", table=TABLES["orders"], response=response)
    fire(metrics, classify(OK_PUT), operation="GetItem", response=OK_PUT)
    units = "dynlocust_consumed_capacity_units_total"
    assert value(metrics, units, table="orders", index="", kind="write") == 1.0
    assert value(metrics, units, table="orders", index="by-customer", kind="write") == 2.0
    assert value(metrics, units, table="items", index="", kind="read") == 1.0
    want = (3.0 * 0.625 + 1.0 * 0.125) / 1e6
    assert value(metrics, "dynlocust_estimated_cost_dollars_total") == pytest.approx(want)


def test_worker_deltas_merge_to_what_one_process_would_count() -> None:
    single, master = new_metrics(), new_metrics()
    workers = [new_metrics(worker="0"), new_metrics(worker="1")]
    events = [
        (0, throttle(), 2.0),
        (1, classify({}), 4.0),
        (0, classify({}), 30.0),
        (1, throttle(), 1.0),
        (0, classify({"UnprocessedItems": {TABLES["items"]: [{}]}}), 9.0),
    ]
    for round_ in range(3):  # several reports: deltas must not double count
        for worker, outcome, ms in events:
            fire(workers[worker], outcome, ms=ms + round_)
            fire(single, outcome, ms=ms + round_)
        for w in workers:
            payload = msgpack.unpackb(msgpack.packb(w.take_deltas()), raw=False)  # as Locust ships it
            master.merge_report(payload)
    assert workers[0].take_deltas()["counters"] == []  # nothing new since the last report
    counted = ("dynlocust_req", "dynlocust_thr", "dynlocust_unp")  # requests, request duration, throttles, items
    merged = {k: v for k, v in samples(master).items() if k[0].startswith(counted)}
    alone = {k: v for k, v in samples(single).items() if k[0].startswith(counted)}
    assert merged == pytest.approx(alone)
    assert value(master, "dynlocust_workers") == 2


def test_apply_deltas_ignores_unknown_or_malformed_entries() -> None:
    values = m.MetricValues()
    m.apply_deltas(
        values,
        {
            "counters": [["not_a_metric", ["a"], 1], ["dynlocust_requests", ["too", "few"], 1]],
            "histograms": [[["PutItem", "ok"], [1.0]], [["PutItem", "items", "ok"], [1.0]]],
        },
    )
    assert values.counters["dynlocust_requests"] == {} and values.histograms == {}


def sample(**overrides: Any) -> m.RunSample:
    fields: dict[str, Any] = {
        "run_id": "r1", "sent": 0, "dropped": 0, "inflight": 0, "target_rate": 100.0, "window": 0,
        "phase": "ramp", "client_bound": False, "tables": {},
    }  # fmt: skip
    fields.update(overrides)
    return m.RunSample(**fields)


def test_run_gauges_offered_rate_and_dropped_sends() -> None:
    now = [1000.0]
    metrics = new_metrics(clock=lambda: now[0])
    metrics.sample(sample(sent=0))
    now[0] += 2.0
    metrics.sample(sample(sent=150, dropped=4, inflight=7, client_bound=True, window=1, target_rate=80.0))
    assert value(metrics, "dynlocust_offered_rate") == 75.0
    assert value(metrics, "dynlocust_target_rate") == 80.0
    assert value(metrics, "dynlocust_inflight_requests") == 7
    assert value(metrics, "dynlocust_client_bound", worker="0") == 1
    assert value(metrics, "dynlocust_dropped_sends_total") == 4
    assert value(metrics, "dynlocust_window_index") == 1
    # one series per run and phase: the window and its rate are the gauges above, not labels
    assert value(metrics, "dynlocust_window_info", run_id="r1", phase="ramp") == 1
    assert [k for k in samples(metrics) if k[0] == "dynlocust_window_info"] == [
        ("dynlocust_window_info", (("phase", "ramp"), ("run_id", "r1")))
    ]
    now[0] += 1.0
    metrics.sample(sample(sent=200, dropped=6))
    assert value(metrics, "dynlocust_dropped_sends_total") == 6  # a counter: adds the difference
    metrics.sample(sample(run_id="r2", sent=10, dropped=1))  # a new run restarts the run's own counts
    assert value(metrics, "dynlocust_dropped_sends_total") == 7


def test_one_metric_per_client_bound_reason_with_its_figure_reaches_the_master() -> None:
    evidence = Saturation(True, ("lag", "dropped"), 0.42, 0.08, 30, 2, cpu_seconds=5.0, late=70, late_bound=0.025,
                          due=1000, sent=960, cpu_wait=1.5)  # fmt: skip
    worker = new_metrics(worker="1")
    worker.sample(sample(client_bound=True, client=evidence))
    master = new_metrics(worker="master")
    master.merge_report(worker.take_deltas())
    for metrics in (worker, master):
        assert value(metrics, "dynlocust_client_cpu_ratio", worker="1") == 0.42
        assert value(metrics, "dynlocust_client_cpu_wait_seconds", worker="1") == 1.5
        assert value(metrics, "dynlocust_client_late_sends", worker="1") == 70
        assert value(metrics, "dynlocust_client_dropped_sends", worker="1") == 30
        assert value(metrics, "dynlocust_client_pool_waits", worker="1") == 2
        assert value(metrics, "dynlocust_client_offered_short_sends", worker="1") == 40
        flags = {r: value(metrics, "dynlocust_client_bound_reason", worker="1", reason=r) for r in REASONS}
        assert flags == {"cpu": 0, "machine-busy": 0, "lag": 1, "dropped": 1, "pool": 0, "offered-short": 0}
    assert {name for _, name, _, _ in m.CLIENT_EVIDENCE} == {
        "dynlocust_client_cpu_ratio", "dynlocust_client_cpu_wait_seconds", "dynlocust_client_late_sends",
        "dynlocust_client_dropped_sends",
        "dynlocust_client_pool_waits", "dynlocust_client_offered_short_sends",
    }  # fmt: skip
    assert [reason for reason, _, _, _ in m.CLIENT_EVIDENCE] == list(REASONS)


def test_sample_run_reads_a_real_scenario_run() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "quickstart.yaml")
    physical = {"items": "items-r1"}
    run = LocalRun(
        scenario=scenario,
        physical_names=physical,
        run_id="r1",
        t0=1000.0,
        deadline=8.0,
        on_window=lambda record: None,
        on_done=lambda record: None,
    )
    windows = run.plan.windows
    before = m.sample_run(run, 999.0)
    assert (before.window, before.target_rate, before.dropped, before.sent) == (-1, 0.0, 0, 0)
    during = m.sample_run(run, windows[1].start + 0.5)
    assert (during.window, during.target_rate, during.phase) == (1, windows[1].rate, windows[1].phase)
    after = m.sample_run(run, windows[-1].end + 1)
    assert (after.window, after.target_rate) == (windows[-1].index, 0.0)
    assert after.tables == {"items-r1": "items"}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool (Debian package `prometheus`)")
def test_promtool_accepts_the_exposition() -> None:
    metrics = new_metrics()
    fire(metrics, throttle())
    fire(metrics, classify(OK_PUT), response=OK_PUT)
    fire(metrics, classify({"UnprocessedItems": {TABLES["items"]: [{}]}}), operation="BatchWriteItem")
    metrics.sample(sample(sent=10, dropped=1))
    result = subprocess.run(
        ["promtool", "check", "metrics"], input=metrics.exposition(), capture_output=True, timeout=30
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_install_serves_metrics_and_the_web_ui_route_then_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["locust"])  # the web UI parses the command line for its form
    listeners.register_plugin()  # what importing a dynlocust user does: --metrics-port on Locust's parser
    port = free_port()
    environment = Environment(events=Events())
    environment.parsed_options = parse_options(["--metrics-port", str(port)])
    runner = environment.create_local_runner()
    web_ui = environment.create_web_ui("127.0.0.1", 0, delayed_start=True)
    metrics = roles.role_for(environment).install_metrics(registry=CollectorRegistry())
    try:
        assert metrics_wiring.metrics_for(environment) is metrics
        measured_call(
            environment.events.request, Target("PutItem", "t", "t", write=True), lambda: None, deadline=1.0,
            outcome_of=lambda _r, _e: throttle(),
        )  # fmt: skip
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            body = response.read().decode()
        assert 'dynlocust_requests_total{index="",operation="PutItem",outcome="throttled",table="t"} 1.0' in body
        assert web_ui.app is not None
        via_ui = web_ui.app.test_client().get("/metrics")
        assert via_ui.status_code == 200 and b"dynlocust_throttled_requests_total{" in via_ui.data
    finally:
        started = time.monotonic()
        metrics_wiring.uninstall(environment)
        runner.quit()
    assert time.monotonic() - started < 3  # scraped once only: no final-scrape wait
    assert metrics_wiring.metrics_for(environment) is None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_a_given_port_taken_ends_the_process_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """A Prometheus pointed at that port would scrape the other process: exit 2 (it was a log line, then exit 0)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        environment = Environment(events=Events())
        environment.parsed_options = Namespace(metrics_port=str(port), metrics_host="127.0.0.1")
        runner = environment.create_local_runner()
        try:
            with pytest.raises(SystemExit) as exited:
                roles.role_for(environment).install_metrics(registry=CollectorRegistry())
            assert exited.value.code == 2
            err = capsys.readouterr().err
            assert (
                f"dynlocust: error: --metrics-port: expected a port free to listen on at 127.0.0.1, found {port}" in err
            )
        finally:
            metrics_wiring.uninstall(environment)
            runner.quit()


def test_dashboard_uses_the_provisioned_datasource_and_only_exposed_metrics() -> None:
    dashboard = json.loads((ROOT / "docker" / "grafana" / "dashboards" / "dynlocust.json").read_text())
    provisioned = yaml.safe_load(
        (ROOT / "docker" / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text()
    )
    types = {d["type"] for d in provisioned["datasources"]}
    metrics = new_metrics()
    fire(metrics, throttle())
    fire(metrics, classify(OK_PUT), response=OK_PUT)
    fire(metrics, classify({"UnprocessedItems": {TABLES["items"]: [{}]}}), operation="BatchWriteItem")
    metrics.sample(sample())
    exposed = {name for name, _ in samples(metrics)} | {
        f"{f.name}_bucket" for f in text_string_to_metric_families(metrics.exposition().decode())
    }
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [a["expr"] for a in dashboard["annotations"]["list"] if "expr" in a]
    assert len(dashboard["panels"]) >= 8
    for panel in dashboard["panels"]:
        # the ${DS_PROMETHEUS} input, resolved on provisioning by the datasource variable of that name
        assert panel["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"} and panel["targets"]
        assert panel["datasource"]["type"] in types, panel["title"]
    used = {name for expr in exprs for name in re.findall(r"dynlocust_[a-z_]+", expr)}
    assert used and used <= exposed, used - exposed


def test_the_exit_says_so_when_it_waits_for_a_final_scrape(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    import gevent

    metrics = m.Metrics(CollectorRegistry())
    with caplog.at_level(logging.INFO, logger="dynlocust.observe.metrics"):
        assert not metrics.wait_for_final_scrape(max_wait=1)  # nothing scrapes: no wait, nothing said
        assert not caplog.records
        metrics.exposition()
        metrics.exposition()  # now something scrapes regularly
        gevent.spawn_later(0.05, metrics.exposition)
        assert metrics.wait_for_final_scrape(max_wait=5)
    (record,) = caplog.records
    assert re.fullmatch(r"waiting up to \d+\.\d s for a final scrape of /metrics before exiting", record.getMessage())


def test_latency_from_the_intended_send_is_a_histogram_of_its_own_merged_like_the_others() -> None:
    from dynlocust.request.record import RequestRecord
    from dynlocust.run.pacing import Ticket

    def sent(late: float) -> RequestRecord:
        return RequestRecord(
            operation="PutItem", table="items", physical_table=TABLES["items"], index=None, write=True,
            outcome=classify({}), latency=0.003, latency_from_intended=0.003 + late, ticket=Ticket(1, 0, 1e9),
        )  # fmt: skip

    worker, master = new_metrics(worker="0"), new_metrics()
    for late in (0.0, 0.02, 0.2):
        worker.count(sent(late))
    worker.count(dataclasses.replace(sent(0.0), latency_from_intended=None, ticket=None))  # no schedule: not in it
    master.merge_report(msgpack.unpackb(msgpack.packb(worker.take_deltas()), raw=False))
    labels = {"operation": "PutItem", "table": "items", "outcome": "ok"}
    name = "dynlocust_request_latency_from_intended_seconds"
    assert value(master, f"{name}_count", **labels) == 3
    assert value(master, f"{name}_sum", **labels) == pytest.approx(0.009 + 0.22)
    assert value(master, f"{name}_bucket", **labels, le="0.025") == 2
    assert value(master, "dynlocust_request_duration_seconds_count", **labels) == 4


def test_a_ceiling_searchs_bracket_is_a_gauge() -> None:
    from dynlocust.run.search import CeilingSearch, Steady
    from dynlocust.run.verdict import Verdict
    from dynlocust.scenario.model import Search

    search = CeilingSearch(Search(start=100.0, window=30.0), burst=0.1)
    metrics = m.Metrics(CollectorRegistry(), search_source=lambda: search)
    assert 'dynlocust_ceiling_bracket{bound="next"} 100.0' in metrics.exposition().decode()
    search.observe(0, 100.0, Verdict(("ok",)), Steady(3000, 0, 0.0))
    search.observe(1, 150.0, Verdict(("throttled",)), Steady(4000, 400, 0.1))
    text = metrics.exposition().decode()
    assert f'dynlocust_ceiling_bracket{{bound="low"}} {search.low!r}' in text and 99.6 < (search.low or 0) < 99.7
    assert 'dynlocust_ceiling_bracket{bound="high"} 150.0' in text
    assert 'dynlocust_ceiling_bracket{bound="next"} 125.0' in text
