"""Side by side: how long a client waits for a GetItem while nothing else happens, and while UpdateTable adds a GSI
to a table of `items` items (the index backfills in the background, issue 41; before, UpdateTable filled it in one
go and every client waited for it: 1.07 s at 100,000 items).

    python tests/benchmarks/bench_gsi_backfill.py [--items 100000] [--seconds 2]

One `dynlocust local` process; this process sends GetItems back to back on one connection from a thread while the
main thread sends the UpdateTable and polls DescribeTable until the index is ACTIVE. Prints the UpdateTable's own
latency, the backfill's duration, and the GetItems' p50 and longest latency in each phase with their ratios.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402

TABLE = "bench_gsi"


class Client:
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, op: str, req: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + op}
        self.conn.request("POST", "/", body=json.dumps(req).encode(), headers=headers)
        resp = self.conn.getresponse()
        body = json.loads(resp.read())
        assert resp.status == 200, (op, body)
        return dict(body)


def get_latencies(port: int, stop: threading.Event) -> list[float]:
    client = Client(port)
    out = []
    req = {"TableName": TABLE, "Key": {"pk": {"S": "k1"}}}
    while not stop.is_set():
        t0 = time.perf_counter()
        client.call("GetItem", req)
        out.append(time.perf_counter() - t0)
    return out


def phase(port: int, work: Any) -> tuple[list[float], Any]:
    """GetItem latencies measured while `work()` runs in this thread, and what it returned."""
    stop = threading.Event()
    result: list[list[float]] = []
    t = threading.Thread(target=lambda: result.append(get_latencies(port, stop)))
    t.start()
    try:
        value = work()
    finally:
        stop.set()
        t.join()
    return result[0], value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of the idle phase")
    a = ap.parse_args()
    with LocalEndpoint(capacity=False) as ep:
        c = Client(ep.port)
        c.call(
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        for first in range(0, a.items, 25):
            batch = [
                {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % 100}"}, "d": {"S": "x" * 200}}}}
                for i in range(first, min(first + 25, a.items))
            ]
            c.call("BatchWriteItem", {"RequestItems": {TABLE: batch}})
        idle, _ = phase(ep.port, lambda: time.sleep(a.seconds))

        def create_index() -> tuple[float, float]:
            t0 = time.perf_counter()
            c.call(
                "UpdateTable",
                {
                    "TableName": TABLE,
                    "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
                    "GlobalSecondaryIndexUpdates": [
                        {
                            "Create": {
                                "IndexName": "by-g",
                                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"},
                            }
                        }
                    ],
                },
            )
            update = time.perf_counter() - t0
            while c.call("DescribeTable", {"TableName": TABLE})["Table"]["GlobalSecondaryIndexes"][0][
                "IndexStatus"
            ] != ("ACTIVE"):
                time.sleep(0.01)
            return update, time.perf_counter() - t0

        busy, (update, backfill) = phase(ep.port, create_index)
    print(f"{a.items:,} items: UpdateTable answered in {update * 1000:.1f} ms, index ACTIVE after {backfill:.2f} s")
    print(f"{'GetItem latency':<28} {'requests':>9} {'p50 ms':>8} {'max ms':>8}")
    for name, lat in (("idle", idle), ("while the index backfills", busy)):
        print(f"{name:<28} {len(lat):>9} {statistics.median(lat) * 1000:8.2f} {max(lat) * 1000:8.2f}")
    print(
        f"ratio backfilling / idle: p50 {statistics.median(busy) / statistics.median(idle):.1f}x, "
        f"max {max(busy) / max(idle):.1f}x"
    )


if __name__ == "__main__":
    main()
