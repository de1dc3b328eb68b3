"""One request, one record: the windows, the metrics and the reports count each call identically.

Real calls over HTTP: accepted writes and a batch against the local endpoint (which reports consumed capacity), a
throttle, a batch with unprocessed items and a stall past the deadline against the fault server. Every call's one
`RequestRecord` reaches the window (via `WindowStats.add`, as `LocalRun.execute` does) and the metrics (via
the request event, as in a Locust process); the report is built from the window's results record, as
`dynlocust report` does. The three must agree on every count and on the capacity consumed.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from locust.event import EventHook

from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.observe.metrics import Metrics
from dynlocust.observe.report.build import window_from_stats
from dynlocust.request.client import DynamoDBClient
from dynlocust.request.record import RequestRecord
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.pacing import Ticket
from dynlocust.run.tally import WindowStats
from tests.conftest import FaultServer


def _client(url: str, event: EventHook, deadline: float = 5.0) -> DynamoDBClient:
    raw = make_client(url, region="us-east-1", connect_timeout=2, read_timeout=10, pool_size=4)
    return DynamoDBClient(raw, event, deadline=deadline)


def _metric_totals(metrics: Metrics) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    units: defaultdict[str, float] = defaultdict(float)
    unprocessed = 0.0
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == "dynlocust_requests_total":
                kinds[sample.labels["outcome"]] += int(sample.value)
            elif sample.name == "dynlocust_consumed_capacity_units_total":
                units[sample.labels["kind"]] += sample.value
            elif sample.name == "dynlocust_unprocessed_items_total":
                unprocessed += sample.value
    return {"kinds": dict(kinds), "read": units["read"], "write": units["write"], "unprocessed": unprocessed}


def test_one_call_is_counted_identically_by_windows_metrics_and_reports(fault_server: FaultServer) -> None:
    event = EventHook()
    metrics = Metrics(CollectorRegistry())
    event.add_listener(metrics.on_request)
    fired: list[RequestRecord] = []
    event.add_listener(lambda context, **_kw: fired.append(context["record"]))
    start = time.time()
    window = WindowStats(0, start, 60.0, bin_seconds=60.0)
    sent: list[RequestRecord] = []

    def send(client: DynamoDBClient, method: str, **kwargs: Any) -> RequestRecord:
        record = client.send(method, kwargs, ticket=Ticket(len(sent), 0, time.time()))
        window.add(record)
        sent.append(record)
        return record

    endpoint = LocalEndpoint().start()
    try:
        local = _client(endpoint.url, event)
        local.logical_names = {"t-run1": "t"}
        local.raw.create_table(
            TableName="t-run1",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for i in range(3):
            item = {"pk": {"S": f"k{i}"}, "v": {"S": "x" * 1500}}
            ok = send(local, "put_item", TableName="t-run1", Item=item, ReturnConsumedCapacity="TOTAL")
            assert ok.outcome.ok and ok.write and ok.write_units == 2.0 and ok.table == "t", ok
        keys = {"t-run1": {"Keys": [{"pk": {"S": "k0"}}, {"pk": {"S": "k1"}}]}}
        read = send(local, "batch_get_item", RequestItems=keys, ReturnConsumedCapacity="TOTAL")
        assert read.outcome.ok and not read.write and read.read_units > 0, read
    finally:
        endpoint.stop()

    # the canned answers get the default 5 s deadline (a CI runner once took longer than 0.5 s to answer one); only
    # the stalled call is given a short one, so that it times out soon
    faults = _client(fault_server.url, event)
    throttled = send(faults, "put_item", TableName="throttle", Item={"pk": {"S": "a"}})
    assert throttled.outcome.kind == "throttled", throttled
    batch = {"unprocessed": [{"PutRequest": {"Item": {"pk": {"S": f"u{i}"}}}} for i in range(3)]}
    unprocessed = send(faults, "batch_write_item", RequestItems=batch)
    assert unprocessed.outcome.kind == "unprocessed" and unprocessed.outcome.unprocessed > 0, unprocessed
    timeout = send(
        _client(fault_server.url, event, deadline=0.5), "get_item", TableName="stall", Key={"pk": {"S": "a"}}
    )
    assert (timeout.outcome.kind, timeout.outcome.code) == ("timeout", "DeadlineExceeded"), timeout

    assert fired == sent  # the event carries the very record the caller got back: nobody rebuilt it
    expected_kinds = dict(Counter(r.outcome.kind for r in sent))
    read_units = sum(r.read_units for r in sent)
    write_units = sum(r.write_units for r in sent)
    unprocessed_items = sum(r.outcome.unprocessed for r in sent)

    tally = window.total()
    assert tally.by_kind == expected_kinds
    assert (tally.read_units, tally.write_units, tally.unprocessed_items) == (
        read_units,
        write_units,
        unprocessed_items,
    )

    counted = _metric_totals(metrics)
    assert counted == {
        "kinds": expected_kinds,
        "read": read_units,
        "write": write_units,
        "unprocessed": unprocessed_items,
    }

    # the report reads the window's results record back, as `dynlocust report` does
    report = window_from_stats(WindowStats.from_dict(window.to_dict()), phase="p", verdict="throttled", t0=start)
    summary = report.summary
    assert summary["sent"] == len(sent) and summary["accepted"] == expected_kinds["ok"]
    assert summary["throttled"] == expected_kinds["throttled"]
    assert summary["unprocessed_requests"] == expected_kinds["unprocessed"]
    assert summary["unprocessed_items"] == unprocessed_items
    assert summary["timeouts_by"] == {"DeadlineExceeded": 1}
    assert summary["errors"] == expected_kinds["timeout"]
    assert (summary["read_units"], summary["write_units"]) == (read_units, write_units)
