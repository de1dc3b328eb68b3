"""Seeding paces itself to the table's capacity: every item lands, at close to items / capacity, with few refusals."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import gevent
import pytest

from dynlocust.local.capacity import CapacityModel
from dynlocust.local.capacity_resources import ResourceSpec
from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.seeding import Seeder, SeedPace
from dynlocust.run.tables import TableManager
from dynlocust.scenario import load_scenario_text


def scenario_text(scale: float, items: int) -> str:
    return f"""\
name: seeding
target: {{local: {{capacity_scale: {scale}}}}}
tables:
  - {{name: items, partition_key: {{name: pk, type: S}}, billing: on_demand, seed: {{items: {items}, item_size: 1KB}}}}
workload: {{item_size: 1KB, operations: [{{op: put, weight: 1}}]}}
phases: [{{steps: [{{rate: 1, window: 1s}}]}}]
"""


def scan_count(client: Any, name: str) -> int:
    """Every item of the table, paging and waiting out throttles (the scan shares the tiny capacity)."""
    count, start = 0, dict[str, Any]()
    while True:
        try:
            page = client.scan(TableName=name, Select="COUNT", **start)
        except client.exceptions.ClientError:
            gevent.sleep(0.5)
            continue
        count += page["Count"]
        if "LastEvaluatedKey" not in page:
            return count
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def test_seeding_a_low_capacity_table_writes_every_item_with_few_refusals() -> None:
    """60 items of 1 KB at x0.005 (~20 WRU/s): unpaced, 8 greenlets of 25-item batches got 490 items back
    unprocessed and 13 sends wholly throttled; paced, the endpoint refuses at most a tenth of the items."""
    items = 60
    server = serve_in_thread(capacity=CapacityModel(capacity_scale=0.005))
    try:
        client = make_client(server.url, region="us-east-1", connect_timeout=2, read_timeout=10, pool_size=10)
        manager = TableManager(client, load_scenario_text(scenario_text(0.005, items), "s.yaml"), "r1")
        manager.create_all()
        assert manager.seed_all() == items
        (name,) = manager.created
        with urllib.request.urlopen(server.url + "/_dynlocust/stats", timeout=5) as response:
            writes = json.load(response)["tables"][name]["BatchWriteItem"]
        assert scan_count(client, name) == items
        assert writes["unprocessed_items"] + 25 * writes["throttled"] <= items // 10, writes
        assert writes["error"] == 0
        manager.teardown()
    finally:
        server.stop()


class ModelTable:
    """BatchWriteItem against the endpoint's own capacity model on a clock that moves only when seeding sleeps:
    how long seeding takes, measured without wall-clock time."""

    class exceptions:  # the shape of a boto3 client's
        ClientError = RuntimeError

    def __init__(self, scale: float) -> None:
        self.now = 0.0
        self.model = CapacityModel(capacity_scale=scale, clock=lambda: self.now)
        self.model.add_resource(ResourceSpec("t", None, "arn:t", "PAY_PER_REQUEST"))
        self.written: set[str] = set()
        self.refused = 0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def batch_write_item(self, RequestItems: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        left = []
        for request in RequestItems["t"]:
            key = request["PutRequest"]["Item"]["pk"]["S"]
            if self.model.charge("t", None, "write", 1.0, key) is None:
                self.written.add(key)
            else:
                left.append(request)
        self.refused += len(left)
        return {"UnprocessedItems": {"t": left} if left else {}}


@pytest.mark.parametrize(("scale", "items"), [(0.0005, 100), (0.005, 400), (0.025, 2000), (1.0, 40000)])
def test_seeding_finishes_close_to_items_over_capacity(scale: float, items: int) -> None:
    """From x0.0005 (2 WRU/s, the quickstart at --capacity-scale 0.02) to x1: within 1.25x of the ideal time, every
    item written, few refused."""
    table = ModelTable(scale)
    known = 4000.0 * scale
    seeder = Seeder(table, "t", 1.0, SeedPace(known, lambda: table.now), limit_s=1e6, sleep=table.sleep)
    assert seeder.run([{"pk": {"S": f"k{i}"}} for i in range(items)], concurrency=1) == items
    assert len(table.written) == items
    ideal = items / known
    print(f"x{scale}: {table.now:.2f} s of {ideal:.2f} s ideal, {seeder.sends} sends, {table.refused} refused")
    assert table.now <= 1.25 * ideal, (table.now, ideal)
    assert table.refused <= items // 10, table.refused


def test_a_shortage_seen_by_sends_in_flight_cuts_the_pace_once() -> None:
    now = [0.0]
    pace = SeedPace(100.0, lambda: now[0])
    first, second = pace.reserve(10), pace.reserve(10)  # both in flight
    now[0] = 1.0
    pace.taken(first, whole=False)
    pace.taken(second, whole=False)
    assert pace.rate == pytest.approx(70.0) and pace.cuts == 1
    pace.taken(pace.reserve(10), whole=True)  # recovers quickly up to the known capacity ...
    assert pace.rate == pytest.approx(95.0)
    pace.taken(pace.reserve(10), whole=True)
    pace.taken(pace.reserve(10), whole=True)  # ... and probes slowly above it
    assert pace.rate == pytest.approx(121.0)
    for _ in range(30):
        pace.taken(pace.reserve(10), whole=False)
    assert pace.rate == pytest.approx(2.0)  # never below 2% of the known capacity
