"""Reads throttled because writes fill an on-demand table's shared budget say so, from the wire to the conclusion.

The embedded endpoint gives an on-demand table one budget for reads and writes (1 WRU = 3 RRU) and a provisioned
table one per kind (docs/local-endpoint-capacity.md). With writes far over the ceiling and reads far under it,
the on-demand table refuses reads and says why in its `x-dynlocust-throttle-cause` header; the provisioned table
never refuses a read for the writes' sake. Both transports carry the cause onto the request record, and a real
`dynlocust run` carries it into the results, the reports and the conclusion.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

from locust.event import EventHook

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.client import DynamoDBClient
from dynlocust.request.transport.boto3 import make_client
from dynlocust.request.transport.fast import make_fast_client
from dynlocust.run.closed_window import ClosedWindow
from tests.support.runs import run_dynlocust
from tests.support.scenarios import write_scenario

WHY = "reads throttled: writes over the ceiling hold the table's shared on-demand capacity"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    # capacity_scale 0.003: an on-demand table takes 12.4 WRU/s or 37.2 RRU/s, so a loop of puts (tens a second
    # on a starved machine, thousands on an idle one) is over its ceiling, while at most 20 reads a second stay far
    # under it. A refused put leaves the budget anywhere below 1 WRU, so a read (a third of one) right after it is
    # refused about one time in three, less what refills in between: 1/3 WRU takes 27 ms at this scale (8 ms at
    # 0.01, shorter than boto3's turnaround under stress-ng: no read was refused). Hence many reads, each right
    # after a refused put.
    ep = LocalEndpoint(capacity_scale=0.003).start()
    try:
        yield ep
    finally:
        ep.stop()


def client(transport: str, url: str) -> DynamoDBClient:
    options: dict[str, Any] = {"region": "us-east-1", "connect_timeout": 2, "read_timeout": 10, "pool_size": 4}
    raw = make_fast_client(url, **options) if transport == "fast" else make_client(url, **options)
    return DynamoDBClient(raw, EventHook(), deadline=5.0)


@pytest.mark.parametrize("transport", ["boto3", "fast"])
@pytest.mark.parametrize("billing", ["PAY_PER_REQUEST", "PROVISIONED"])
def test_the_record_says_why_a_read_was_throttled(endpoint: LocalEndpoint, transport: str, billing: str) -> None:
    c = client(transport, endpoint.url)
    table = f"mixed-{transport}-{billing.lower()}"
    extra: dict[str, Any] = {"BillingMode": billing}
    if billing == "PROVISIONED":  # scaled: 300 RCU/s, 12 WCU/s
        extra["ProvisionedThroughput"] = {"ReadCapacityUnits": 100_000, "WriteCapacityUnits": 4000}
    c.raw.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        **extra,
    )
    writes: list[Any] = []
    reads: list[Any] = []
    # reads begin half a second in: the endpoint weighs each kind's load over at least that (its cause window is
    # 1 s), and one read in the first few milliseconds is a read load over the ceiling on its own
    last_read = time.monotonic() + 0.45
    until = last_read + 30.0
    while len(reads) < 40 and time.monotonic() < until:
        writes.append(c.send("put_item", {"TableName": table, "Item": {"pk": {"S": f"k{len(writes) % 50}"}}}).outcome)
        if writes[-1].kind == "throttled" and time.monotonic() - last_read >= 0.05:
            key = {"pk": {"S": f"k{len(reads) % 50}"}}  # no key read often: one key's own limit stays far
            reads.append(c.send("get_item", {"TableName": table, "Key": key, "ConsistentRead": True}).outcome)
            last_read = time.monotonic()
        if billing == "PAY_PER_REQUEST" and len(writes) > 200 and any(r.kind == "throttled" for r in reads):
            break
    assert sum(w.kind == "throttled" for w in writes) > 100
    assert all(w.cause is None for w in writes)  # writes over the ceiling on their own: no news
    throttled_reads = [r for r in reads if r.kind == "throttled"]
    if billing == "PAY_PER_REQUEST":
        assert throttled_reads, reads
        assert {(r.cause, r.reasons[0].reason) for r in throttled_reads} == {
            ("writes-over-ceiling", "TableReadKeyRangeThroughputExceeded")
        }
    else:
        assert not throttled_reads, throttled_reads  # provisioned reads have their own budget
    c.raw.close()


MIXED = """\
name: mixed
target: {local: {capacity_scale: 0.005}}
transport: fast
tables:
  - {name: od, partition_key: pk, seed: {items: 50, item_size: 512}}
  - name: prov
    partition_key: pk
    billing: {provisioned: {read: 6000, write: 2000}}
    seed: {items: 50, item_size: 512}
workload:
  item_size: 512
  operations:
    - {op: put, table: od, weight: 5, label: put od}
    - {op: get, table: od, weight: 1, label: get od, consistent: true}
    - {op: put, table: prov, weight: 5, label: put prov}
    - {op: get, table: prov, weight: 1, label: get prov, consistent: true}
phases:
  - steps: [{rate: 144, window: 8s}]
concurrency: 20
limits: {max_requests: 5000}
bin: 2s
"""
"""At x0.005 the on-demand table takes 20.7 WRU/s and gets 60 puts/s and 12 strongly consistent reads/s (12 RRU/s
of its 62 RRU/s); the provisioned one takes 10 WCU/s and 30 RCU/s and gets the same."""


@pytest.mark.slow
def test_a_mixed_run_says_reads_are_throttled_by_writes_on_demand_and_not_provisioned(tmp_path: Path) -> None:
    result = run_dynlocust(write_scenario(tmp_path, MIXED), tmp_path, run_id="mixed", timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    (window,) = result.windows
    assert window["summary"]["throttle_causes"]["writes-over-ceiling"] > 0, window["summary"]
    total = ClosedWindow.from_dict(window).stats.total()
    od_reads, prov_reads = total.operation("get od"), total.operation("get prov")
    assert od_reads.throttled > 0 and od_reads.throttle_causes == {"writes-over-ceiling": od_reads.throttled}
    assert total.operation("put prov").throttled > 0 and prov_reads.throttled == 0
    assert not total.operation("put od").throttle_causes
    report = tmp_path / "mixed" / "report"
    assert f"- {WHY} ({od_reads.throttled:,} requests in window 1)" in (report / "summary.md").read_text()
    assert f'<ul id="throttle-why"><li>{escape(WHY)} (' in (report / "report.html").read_text()
    assert (
        f"{WHY[0].upper()}{WHY[1:]} ({od_reads.throttled:,} requests in window 1)." in result.end["conclusion"]["text"]
    )
