"""The local endpoint's cost per request as a load test uses it, next to moto's, and as its table grows.

Part 1, side by side with moto's server on the same workload: fresh-key PutItem (UUID keys, ~1 KB items with a number
attribute, as a load test writes them), GetItem and Query of keys already written; requests per second of *server*
CPU (psutil: the server process's user + system time over the measured requests), so load from other processes on a
busy machine distorts it less than throughput would.

Part 2, growth: the table is filled (BatchWriteItem) to each size in `--sizes` (default 10^4, 10^5, 10^6 items) and
at each size the server's CPU per request is measured (the cheapest of `--repeats` cells) for fresh-key PutItem,
GetItem, Query, one Scan page (Limit 100, resuming from the last page's LastEvaluatedKey) and one Scan page
interleaved with one fresh PutItem (new partitions between pages); with the bytes of server memory (RSS growth) per
stored item. Each cell alternates with the same cell on a reference endpoint restarted at every size and filled to
the smallest size (the items a cell's puts added are deleted after it, so every cell starts at its size): on a
shared 2-core machine the same cell's cost moves by 30% from one minute to the next, so growth is read from the
median ratio of the pairs, measured side by side. The last lines give each operation's largest / smallest cost over
the sizes (target: within 1.2), relative to the reference and absolute.

The client is this process: gevent greenlets on raw keep-alive sockets sending unsigned requests (neither server
verifies signatures), built on the fly.

    python tests/benchmarks/bench_endpoint_scaling.py [--seconds 3] [--sizes 10000,100000,1000000] [--no-moto]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import orjson  # noqa: E402
import psutil  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402
from tests.benchmarks.bench_local_endpoint import Conn, request, start_moto, stop  # noqa: E402

TABLE = "bench-scaling"
PAD = "x" * 980
GROWTH_OPS = ("PutItem", "GetItem", "Query", "Scan page", "Scan page + PutItem")


class Server:
    def __init__(self, name: str, port: int, pid: int) -> None:
        self.name = name
        self.port = port
        self.proc = psutil.Process(pid)
        self.keys: list[str] = []  # partition keys written, for reads
        self.scan_start: Any = None

    def cpu(self) -> float:
        times = self.proc.cpu_times()
        return float(times.user + times.system)

    def call(self, conn: Conn, op: str, body: dict[str, Any]) -> tuple[int, bytes]:
        return conn.call(request(self.port, op, body))

    def create_table(self) -> None:
        status, body = self.call(
            Conn(self.port),
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        if status != 200:
            raise SystemExit(f"{self.name}: CreateTable failed: {status} {body[:200]!r}")


def item(key: str) -> dict[str, Any]:
    return {"pk": {"S": key}, "n": {"N": str(len(key) * 7919)}, "pad": {"S": PAD}}


def put(server: Server, conn: Conn, rng: random.Random) -> int:
    key = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    status, _ = server.call(conn, "PutItem", {"TableName": TABLE, "Item": item(key)})
    if status == 200:
        server.keys.append(key)
    return status


def get(server: Server, conn: Conn, rng: random.Random) -> int:
    key = server.keys[rng.randrange(len(server.keys))]
    return server.call(conn, "GetItem", {"TableName": TABLE, "Key": {"pk": {"S": key}}})[0]


def query(server: Server, conn: Conn, rng: random.Random) -> int:
    key = server.keys[rng.randrange(len(server.keys))]
    body = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": key}},
    }
    return server.call(conn, "Query", body)[0]


def scan_page(server: Server, conn: Conn, rng: random.Random) -> int:
    body: dict[str, Any] = {"TableName": TABLE, "Limit": 100}
    if server.scan_start is not None:
        body["ExclusiveStartKey"] = server.scan_start
    status, raw = server.call(conn, "Scan", body)
    if status == 200:
        server.scan_start = orjson.loads(raw).get("LastEvaluatedKey")
    return status


def scan_and_put(server: Server, conn: Conn, rng: random.Random) -> int:
    status = scan_page(server, conn, rng)
    return put(server, conn, rng) if status == 200 else status


OPERATIONS: dict[str, Callable[[Server, Conn, random.Random], int]] = {
    "PutItem": put,
    "GetItem": get,
    "Query": query,
    "Scan page": scan_page,
    "Scan page + PutItem": scan_and_put,
}


def measure(server: Server, op: str, seconds: float, clients: int) -> dict[str, float]:
    """Closed loop for `seconds`: calls, errors, server CPU microseconds per call."""
    call = OPERATIONS[op]
    clients = 1 if op.startswith("Scan") else clients  # one scan walks the table page after page
    done, errors = [0], [0]
    stop_at = time.perf_counter() + seconds

    def worker(w: int) -> None:
        conn = Conn(server.port)
        rng = random.Random(w * 7919 + len(server.keys))
        while time.perf_counter() < stop_at:
            if call(server, conn, rng) == 200:
                done[0] += 1
            else:
                errors[0] += 1

    cpu0, t0 = server.cpu(), time.perf_counter()
    gevent.joinall([gevent.spawn(worker, w) for w in range(clients)])
    cpu1, t1 = server.cpu(), time.perf_counter()
    n = done[0]
    return {
        "calls": n,
        "errors": errors[0],
        "rate": n / (t1 - t0),
        "cpu_us": (cpu1 - cpu0) / n * 1e6 if n else float("inf"),
        "server_busy": (cpu1 - cpu0) / (t1 - t0),
    }


def fill(server: Server, target: int, clients: int) -> None:
    """BatchWriteItem until the table holds `target` items (fresh UUID keys)."""
    rng = random.Random(target)
    need = target - len(server.keys)
    batches: Iterator[int] = iter(range((need + 24) // 25))

    def worker() -> None:
        conn = Conn(server.port)
        for _ in batches:
            keys = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(25)]
            requests = [{"PutRequest": {"Item": item(k)}} for k in keys]
            status, body = server.call(conn, "BatchWriteItem", {"RequestItems": {TABLE: requests}})
            if status != 200 or orjson.loads(body).get("UnprocessedItems"):
                raise SystemExit(f"{server.name}: BatchWriteItem failed while filling: {status} {body[:200]!r}")
            server.keys.extend(keys)

    gevent.joinall([gevent.spawn(worker) for _ in range(clients)], raise_error=True)


def trim(server: Server, target: int, clients: int) -> None:
    """Delete the items written after the first `target` keys (BatchWriteItem), so the next cell starts at its size."""
    extra = server.keys[target:]
    del server.keys[target:]
    batches: Iterator[list[str]] = iter([extra[i : i + 25] for i in range(0, len(extra), 25)])

    def worker() -> None:
        conn = Conn(server.port)
        for keys in batches:
            requests = [{"DeleteRequest": {"Key": {"pk": {"S": k}}}} for k in keys]
            status, body = server.call(conn, "BatchWriteItem", {"RequestItems": {TABLE: requests}})
            if status != 200 or orjson.loads(body).get("UnprocessedItems"):
                raise SystemExit(f"{server.name}: BatchWriteItem failed while trimming: {status} {body[:200]!r}")

    gevent.joinall([gevent.spawn(worker) for _ in range(clients)], raise_error=True)


def versus_moto(ours: Server, args: argparse.Namespace) -> None:
    moto, moto_port = start_moto()
    try:
        theirs = Server("moto", moto_port, moto.pid)
        theirs.create_table()
        results: dict[tuple[str, str], dict[str, float]] = {}
        for op in ("PutItem", "GetItem", "Query"):
            for server in (ours, theirs):  # side by side: the same busy machine for both
                results[(server.name, op)] = measure(server, op, args.seconds, args.clients)
        print(f"\n== fresh-key 1 KB items, {args.clients} keep-alive clients, {args.seconds:g} s per cell ==")
        print(f"{'op':<10}{'dynlocust/s':>12}{'us CPU':>8}{'per core':>10}{'moto/s':>9}{'us CPU':>8}{'per core':>10}")
        for op in ("PutItem", "GetItem", "Query"):
            a, b = results[(ours.name, op)], results[("moto", op)]
            ratio = b["cpu_us"] / a["cpu_us"]
            print(
                f"{op:<10}{a['rate']:>12.0f}{a['cpu_us']:>8.0f}{1e6 / a['cpu_us']:>10.0f}"
                f"{b['rate']:>9.0f}{b['cpu_us']:>8.0f}{1e6 / b['cpu_us']:>10.0f}   {ratio:.0f}x moto per core"
            )
        print("targets: >= 10,000 fresh-key PutItem/s per core of server CPU, >= 30x moto; GetItem and Query alike")
    finally:
        stop(moto)


def growth(ours: Server, args: argparse.Namespace) -> None:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"\n== cost as the table grows: server CPU us per call ({args.seconds:g} s per cell) ==")
    print(
        f"each cell alternates with the same cell on a reference endpoint holding {sizes[0]:,} items, restarted at"
        "\nevery size; 'x ref' is the median ratio of the pairs (the cost: the least disturbed cell), which a"
        "\nmachine's changing speed moves much less than the costs themselves"
    )
    print(f"{'items':>9}{'MB RSS':>8}{'B/item':>8}" + "".join(f"{op:>26}" for op in GROWTH_OPS))
    base_rss = ours.proc.memory_info().rss  # items stored from here on are what the growth adds
    base_items = len(ours.keys)
    relative: dict[str, list[float]] = {op: [] for op in GROWTH_OPS}
    absolute: dict[str, list[float]] = {op: [] for op in GROWTH_OPS}
    for size in sizes:
        fill(ours, size, args.clients)
        rss = ours.proc.memory_info().rss
        per_item = (rss - base_rss) / max(1, len(ours.keys) - base_items)
        items = len(ours.keys)
        reference_endpoint = LocalEndpoint(capacity=False).start()
        try:
            assert reference_endpoint.pid is not None
            reference = Server("reference", reference_endpoint.port, reference_endpoint.pid)
            reference.create_table()
            fill(reference, sizes[0], args.clients)
            cells = []
            for op in GROWTH_OPS:
                # a pair of cells back to back shares the machine's mood: the median of the pairs' ratios, and the
                # least disturbed absolute cost (other processes only ever add cost)
                ratios, big, calls = [], float("inf"), 0.0
                for _ in range(args.repeats):
                    ref = measure(reference, op, args.seconds, args.clients)["cpu_us"]
                    result = measure(ours, op, args.seconds, args.clients)
                    trim(reference, sizes[0], args.clients)  # puts grow a table: each cell starts at its size
                    trim(ours, size, args.clients)
                    ratios.append(result["cpu_us"] / ref)
                    if result["cpu_us"] < big:
                        big, calls = result["cpu_us"], result["calls"]
                ratio = statistics.median(ratios)
                absolute[op].append(big)
                relative[op].append(ratio)
                cells.append(f"{big:>7.0f} ({calls:>5}) {ratio:>5.2f}x ref")
        finally:
            reference_endpoint.stop()
        print(f"{items:>9}{rss / 2**20:>8.0f}{per_item:>8.0f}" + "".join(f"{c:>26}" for c in cells))
    print("largest / smallest cost over the sizes (target <= 1.20): relative to the reference, and absolute")
    for op in GROWTH_OPS:
        rel, ab = relative[op], absolute[op]
        print(f"  {op:<22}{max(rel) / min(rel):>6.2f}{max(ab) / min(ab):>8.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one measured cell")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5, help="growth cells measured this many times, each paired")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="table sizes for the growth part")
    ap.add_argument("--no-moto", action="store_true", help="skip the comparison with moto's server")
    ap.add_argument("--no-growth", action="store_true", help="skip the growth part")
    args = ap.parse_args()
    endpoint = LocalEndpoint(capacity=False).start()
    try:
        assert endpoint.pid is not None
        ours = Server("dynlocust", endpoint.port, endpoint.pid)
        ours.create_table()
        if not args.no_moto:
            versus_moto(ours, args)
        if not args.no_growth:
            growth(ours, args)
    finally:
        endpoint.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
