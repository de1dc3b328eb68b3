"""Side by side: the unused-placeholder check per key (a regex search per name, as before issue 29) and in one scan.

    python tests/benchmarks/bench_unused_placeholders.py [--names 100000] [--rounds 3]

Prints each one's best time of `rounds` and their ratio, then one Query over HTTP to an in-thread endpoint carrying
that many unused names (what a client waits for).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from dynlocust.local import params  # noqa: E402
from dynlocust.local.embedded import serve_in_thread  # noqa: E402


def per_key(joined: str, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The check before issue 29: one regex compiled and searched per key (re's cache holds 512)."""
    return tuple(sorted(k for k in keys if not re.search(re.escape(k) + r"(?![A-Za-z0-9_])", joined)))


def best(fn: object, rounds: int, *args: object) -> float:
    times = []
    for _ in range(rounds):
        params._unused_cache.clear()
        t0 = time.perf_counter()
        fn(*args)  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--names", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    keys = ("#used", *(f"#n{i}" for i in range(a.names)))
    joined = "#used = :v"
    assert per_key(joined, keys) == params._unused(joined, keys)
    old = best(per_key, a.rounds, joined, keys)
    new = best(params._unused, a.rounds, joined, keys)
    print(f"{a.names:,} unused names: per key {old:.3f} s, one scan {new:.4f} s, ratio {old / new:.0f}x")

    ep = serve_in_thread(capacity=None)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=60)
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.CreateTable"}
        table = {
            "TableName": "bench",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        }
        conn.request("POST", "/", json.dumps(table), headers)
        conn.getresponse().read()
        body = json.dumps(
            {
                "TableName": "bench",
                "KeyConditionExpression": joined,
                "ExpressionAttributeNames": {k: "pk" for k in keys},
                "ExpressionAttributeValues": {":v": {"S": "a"}},
            }
        )
        headers["X-Amz-Target"] = "DynamoDB_20120810.Query"
        t0 = time.perf_counter()
        conn.request("POST", "/", body, headers)
        resp = conn.getresponse()
        resp.read()
        print(f"one Query over HTTP, {len(body) / 1e6:.1f} MB, HTTP {resp.status}: {time.perf_counter() - t0:.3f} s")
    finally:
        ep.stop()


if __name__ == "__main__":
    main()
