"""Side by side: the server CPU of the costliest requests found (issue 41's probes and the grammar fuzzer's worst)
against an ordinary GetItem of a 1 KB item, each sent alone to a `dynlocust local` process.

    python tests/benchmarks/bench_worst_requests.py [--repeat 15] [--fuzz 3000] [--seed 0]

The server measures each request's thread CPU itself (its statistics' max_request_cpu_seconds, reset before each
request), so the client and other processes' load do not count. Prints, for each request, its HTTP status, the
median server CPU of `repeat` sends and the ratio to GetItem's; then the `fuzz` requests of the grammar fuzzer
(tests/support/fuzz.py, from `seed`) sent once each, and the five costliest of them re-measured the same way.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402
from tests.support.fuzz import GrammarGenerator, fixture_requests, nested_map  # noqa: E402

TARGET = "DynamoDB_20120810."
KEY = {"pk": {"S": "k1"}}


class Client:
    def __init__(self, ep: LocalEndpoint) -> None:
        self.ep = ep
        self.conn = http.client.HTTPConnection("127.0.0.1", ep.port, timeout=60)

    def send(self, op: str, body: bytes) -> int:
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": TARGET + op}
        try:
            self.conn.request("POST", "/", body=body, headers=headers)
            resp = self.conn.getresponse()
            resp.read()
        except (ConnectionError, http.client.HTTPException):
            self.conn.close()
            return 0
        if resp.getheader("Connection", "").lower() == "close":
            self.conn.close()
        return resp.status

    def cpu(self, op: str, body: bytes) -> tuple[int, float]:
        """(status, server CPU seconds) of one request sent alone."""
        self.ep.reset_stats()
        status = self.send(op, body)
        return status, float(self.ep.stats()["max_request_cpu_seconds"])


def probes() -> list[tuple[str, str, bytes]]:
    """(name, operation, body) of the costliest requests issue 41's probes found, and their neighbours."""
    values = {":v": {"N": "1"}}
    statements = {
        "PartiQL ( x 1000": "SELECT * FROM fz_hash WHERE " + "(" * 1000 + "pk='k1'" + ")" * 1000,
        "PartiQL NOT x 1000": "SELECT * FROM fz_hash WHERE " + "NOT " * 1000 + "pk='k1'",
        "PartiQL size( x 1000": "SELECT * FROM fz_hash WHERE a = " + "size(" * 1000 + "b" + ")" * 1000,
        "PartiQL list literal 200 deep": "INSERT INTO fz_hash VALUE {'pk':'q','a':" + "[" * 200 + "]" * 200 + "}",
        "PartiQL map literal 1000 deep": "SELECT * FROM fz_hash WHERE pk = 'k1' AND a = "
        + "{'x':" * 1000
        + "1"
        + "}" * 1000,
        "PartiQL 8 KB string literal": "SELECT * FROM fz_hash WHERE pk = '" + "s" * 8100 + "'",
    }
    conditions = {
        "ConditionExpression ( x 1000": "(" * 1000 + "a = :v" + ")" * 1000,
        "ConditionExpression NOT x 1000": "NOT " * 1000 + "a = :v",
    }
    item_requests: list[tuple[str, str, dict[str, Any]]] = [
        ("GetItem of a 1 KB item (baseline)", "GetItem", {"TableName": "fz_hash", "Key": KEY}),
        *(
            (
                name,
                "DeleteItem",
                {"TableName": "fz_hash", "Key": KEY, "ConditionExpression": c, "ExpressionAttributeValues": values},
            )
            for name, c in conditions.items()
        ),
        (
            "UpdateItem SET a.x...(60 levels)",
            "UpdateItem",
            {
                "TableName": "fz_hash",
                "Key": KEY,
                "UpdateExpression": "SET a" + ".x" * 59 + " = :v",
                "ExpressionAttributeValues": values,
            },
        ),
        (
            "UpdateItem growing past 32 levels",
            "UpdateItem",
            {
                "TableName": "fz_hash",
                "Key": KEY,
                "UpdateExpression": "SET a" + ".x" * 18 + " = :d",
                "ExpressionAttributeValues": {":d": nested_map(20)},
                "ReturnValues": "ALL_NEW",
            },
        ),
        ("PutItem item 300 levels deep", "PutItem", {"TableName": "fz_hash", "Item": {**KEY, "a": nested_map(300)}}),
        (
            "PutItem N 1e9223372036854775808",
            "PutItem",
            {"TableName": "fz_hash", "Item": {**KEY, "a": {"N": "1e9223372036854775808"}}},
        ),
    ]
    out = [(name, op, json.dumps(req).encode()) for name, op, req in item_requests]
    out[1:1] = [
        (name, "ExecuteStatement", json.dumps({"Statement": text}).encode()) for name, text in statements.items()
    ]
    deep_json = b'{"TableName":"fz_hash","Key":{"pk":{"S":"k1"}},"x":' + b"[" * 1000 + b"]" * 1000 + b"}"
    out.append(("JSON body 1000 arrays deep", "GetItem", deep_json))
    return out


def median_cpu(client: Client, op: str, body: bytes, repeat: int) -> tuple[int, float]:
    runs = [client.cpu(op, body) for _ in range(repeat)]
    return runs[-1][0], statistics.median(c for _, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--fuzz", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with LocalEndpoint(capacity=False) as ep:
        client = Client(ep)
        for op, req in fixture_requests():
            assert client.send(op, json.dumps(req).encode()) == 200
        item = {**KEY, "g": {"S": "x"}, "data": {"S": "d" * 1000}}
        assert client.send("PutItem", json.dumps({"TableName": "fz_hash", "Item": item}).encode()) == 200
        rows = [(name, *median_cpu(client, op, body, a.repeat)) for name, op, body in probes()]
        gen = GrammarGenerator(a.seed)
        found = []
        for _ in range(a.fuzz):
            op, req = gen.request()
            body = json.dumps(req).encode()
            status, cpu = client.cpu(op, body)
            found.append((cpu, op, body, status))
        found.sort(key=lambda f: f[0], reverse=True)
        for _, op, body, _status in found[:5]:
            shown = body.decode()[:60].replace("\n", " ")
            rows.append((f"fuzz: {op} {shown}...", *median_cpu(client, op, body, a.repeat)))
        base = rows[0][2]
        print(f"server CPU per request, median of {a.repeat} (GetItem = 1.0); fuzz: {a.fuzz} requests, seed {a.seed}")
        print(f"{'request':<84} {'HTTP':>4} {'CPU ms':>8} {'ratio':>7}")
        for name, status, cpu in rows:
            print(f"{name[:84]:<84} {status:>4} {cpu * 1000:8.3f} {cpu / base:7.1f}")
        worst = max(rows[1:], key=lambda r: r[2])
        print(f"costliest: {worst[0]}: {worst[2] * 1000:.2f} ms of server CPU, {worst[2] / base:.0f}x a GetItem")


if __name__ == "__main__":
    main()
