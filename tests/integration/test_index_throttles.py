"""A GSI that refuses a base-table write is named: on the record, in the window, in the metrics and in the report.

Real puts over HTTP to the embedded endpoint, every item with the same GSI key value (a hot index partition),
each item its own table key (so the table's partitions stay cold): the index's partition limit is what says no,
with reason `IndexWriteKeyRangeThroughputExceeded` and the index's ARN as the resource, as the service does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from locust.event import EventHook

from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.observe.conclusion import conclude
from dynlocust.observe.metrics import Metrics
from dynlocust.observe.report import html, markdown
from dynlocust.observe.report.build import RunReport, window_from_stats, window_record
from dynlocust.request.client import DynamoDBClient
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.pacing import Ticket
from dynlocust.run.tally import WindowStats

REASON = "IndexWriteKeyRangeThroughputExceeded"
SAID = f"writes to items throttled by GSI by_owner ({REASON})"


def test_a_hot_index_key_throttles_base_table_writes_and_the_index_is_named_everywhere(tmp_path: Path) -> None:
    event = EventHook()
    metrics = Metrics(CollectorRegistry())
    event.add_listener(metrics.on_request)
    start = time.time()
    window = WindowStats(0, start, 600.0, bin_seconds=600.0)
    # capacity_scale 0.01: an index partition takes 10 write units/s with 10 units of burst
    endpoint = LocalEndpoint(capacity_scale=0.01).start()
    try:
        raw = make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=10, pool_size=4)
        client = DynamoDBClient(raw, event, deadline=5.0)
        client.logical_names = {"items-run1": "items"}
        raw.create_table(
            TableName="items-run1",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "owner", "AttributeType": "S"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by_owner",
                    "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        throttled: Any = None
        for i in range(400):
            item = {"pk": {"S": f"item{i}"}, "owner": {"S": "hot"}}
            record = client.send(
                "put_item", {"TableName": "items-run1", "Item": item}, ticket=Ticket(i, 0, time.time())
            )
            window.add(record)
            if record.outcome.kind == "throttled":
                throttled = record
                break
            assert record.outcome.ok, record
        raw.close()
    finally:
        endpoint.stop()

    assert throttled is not None, "no throttle in 400 puts on one index key"
    assert throttled.index is None  # the request addressed the table ...
    assert throttled.outcome.throttled_index == "by_owner"  # ... and the index refused it
    assert [r.reason for r in throttled.outcome.reasons] == [REASON]

    assert window.summary()["throttled_index"] == {f"by_owner|{REASON}": 1}

    samples = [
        s.labels
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
        if s.name == "dynlocust_throttled_requests_total"
    ]
    assert [(s["table"], s["index"], s["reason"]) for s in samples] == [("items", "by_owner", REASON)]

    stats = WindowStats.from_dict(window.to_dict())  # as a results file gives it back
    report = RunReport(
        source=tmp_path / "results.jsonl",
        run={},
        end=None,
        windows=[window_from_stats(stats, phase="p", verdict="throttled", t0=start)],
        planned=[],
    )
    assert f"- {SAID} (1 request in window 1)" in markdown.render(report)
    assert f'<ul id="throttle-why"><li>{SAID} (1 request in window 1)</li></ul>' in html.render(report)
    assert f"{SAID[0].upper()}{SAID[1:]} (1 request in window 1)." in conclude([window_record(report.windows[0])]).text
