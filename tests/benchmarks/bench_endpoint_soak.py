"""Soak: does the local endpoint's memory stay flat under a bounded mixed workload? (issue 29, flat memory)

The endpoint runs in a child process (this script with --serve) with tracemalloc on; this process drives a mixed
workload over raw keep-alive sockets at a fixed rate: puts, gets, updates, deletes, queries, scans, batches,
transactions, PartiQL, refused requests (validation and condition failures) and a table created and deleted now and
then. Keys come from a fixed space, so once every key was written the data no longer grows: what still grows is
the endpoint's own state (caches, statistics, buffers). Every minute the child prints its RSS and the heap
tracemalloc sees; at the end this prints the growth per hour after warm-up (least squares over the minutes after
`--warmup`) and tracemalloc's top growers since the end of warm-up.

    python tests/benchmarks/bench_endpoint_soak.py [--minutes 30] [--warmup 11] [--rate 300] [--keys 2000]
        [--no-tracemalloc] [--interval 60] [--top 8] [--trim] [--no-freeze] [--floor]

Each report also names the requests served and the idempotency tokens kept (both follow the offered rate: a
client that fell behind skips its missed sends rather than bursting), malloc's bytes in use and pymalloc's
blocks: RSS growing while those stay flat is the allocator holding freed memory (fragmentation), which
tracemalloc does not see. `--trim` calls malloc_trim(0) after each reading to show how much that is; `--no-freeze`
leaves out `freeze_after_full_collections`, to compare. Each growth is printed with its standard error and 95%
interval (`growth.py`): the endpoint trims its heap once a minute, so its RSS saw-tooths by ~2 MB and a
half-hour slope of it is uncertain by about as much as the target; the trimmed RSS (`--trim`) is the part the
process keeps, and its slope is the one to read against the target.

`--floor` serves the same traffic with gevent's own WSGI server answering `{}` (`CannedFloor`): run it beside the
endpoint's soak, and the endpoint's own growth is its figure less the floor's.

Target (issue 29): under 1 MB per hour of RSS after warm-up. Take the RSS figure from a run with `--no-tracemalloc`:
tracemalloc's snapshots live in the endpoint's process (RSS jumps by ~15 MB when the warm-up snapshot is taken),
so with it on, read the traced-heap growth and the top growers instead. The warm-up should pass 10 minutes: that
long the endpoint keeps each TransactWriteItems token (as the service does), so until then their number grows.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from tests.benchmarks.bench_local_endpoint import Conn, request  # noqa: E402
from tests.benchmarks.growth import growth  # noqa: E402

TABLE = "soak"


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- child: the endpoint, reporting itself
def malloc_in_use() -> int | None:
    """Bytes glibc's malloc has handed out and not had back (mallinfo2's uordblks + hblkhd), or None off glibc.

    RSS minus this is what the allocator holds free (fragmentation); this minus the traced heap is what C code
    outside tracemalloc's view allocated."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (n, ctypes.c_size_t)
            for n in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):
        return None
    fn.restype = MallInfo2
    info = fn()
    return int(info.uordblks + info.hblkhd)


def malloc_trim() -> None:
    """Hand the free pages inside glibc's heap back to the system (a no-op off glibc)."""
    import ctypes

    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


class CannedFloor:
    """The floor: gevent's own WSGI server parsing each request's JSON body and answering `{}`, with no store.

    What it grows under the same traffic is what Python, gevent and glibc grow serving it, none of it the endpoint's
    (the role Locust's own loop plays in `bench_run_soak.py --floor`). It heap-trims once a minute, as the endpoint
    does (`dynlocust.local.heap`), so that both RSS figures hold the same free pages."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.stats = SimpleNamespace(requests_total=0)
        self.backend = SimpleNamespace(state=SimpleNamespace(tokens=()))

    def app(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        import orjson

        length = int(environ.get("CONTENT_LENGTH") or 0)
        orjson.loads(environ["wsgi.input"].read(length) or b"{}")
        self.stats.requests_total += 1
        body = b"{}"
        start_response("200 OK", [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(body)))])
        return [body]

    def start(self) -> tuple[str, int]:
        from gevent.pywsgi import WSGIServer

        from dynlocust.local.heap import keep_heap_trimmed

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # as the endpoint does: pywsgi writes a response's head and body apart, and Nagle would hold the body back
        # for the client's delayed ACK (~40 ms a request); Linux gives accepted sockets the listener's option
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        server = WSGIServer(listener, self.app, log=None, error_log=None)
        server.start()
        gevent.spawn(keep_heap_trimmed)
        return "127.0.0.1", server.server_port


def serve(interval: float, warmup: float, trace: bool, freeze: bool, top: int, trim: bool, floor: bool) -> None:
    import gc
    import tracemalloc

    from dynlocust.local.config import LocalConfig
    from dynlocust.local.server import LocalServer, build_capacity
    from dynlocust.local.store import freeze_after_full_collections

    if trace:
        tracemalloc.start(4)
    if floor:
        server: Any = CannedFloor()
        host, port = server.start()
    else:
        config = LocalConfig(port=0)
        server = LocalServer(config, capacity=build_capacity(config))
        host, port = server.start()
    if freeze:
        freeze_after_full_collections()  # as `dynlocust local` does
    print(json.dumps({"url": f"http://{host}:{port}"}), flush=True)
    started = time.monotonic()
    base: Any = None
    n = 0
    while True:
        # the next tick still ahead: a report that took longer than the interval skips ticks, never starves serving
        n = max(n + 1, int((time.monotonic() - started) / interval) + 1)
        gevent.sleep(max(0.0, started + n * interval - time.monotonic()))
        minute = (time.monotonic() - started) / 60
        # what the endpoint keeps by design, reported so that a figure moved by the offered rate is told apart
        rss = rss_bytes()
        if trim:
            malloc_trim()
        line: dict[str, Any] = {
            "minute": round(minute, 2),
            "rss": rss,
            "rss_trimmed": rss_bytes(),
            "malloc": malloc_in_use(),
            "served": server.stats.requests_total,
            "tokens": len(server.backend.state.tokens),
            "frozen": gc.get_freeze_count(),
            "blocks": sys.getallocatedblocks(),
        }
        if trace:
            line["traced"] = tracemalloc.get_traced_memory()[0]
            if base is None and minute >= warmup:
                base = tracemalloc.take_snapshot()
            elif base is not None:
                growers = tracemalloc.take_snapshot().compare_to(base, "lineno")[:top]
                line["top"] = [
                    f"{s.size_diff / 1024:+.1f} KiB {s.count_diff:+d} blocks {s.traceback[0]}" for s in growers
                ]
        print(json.dumps(line), flush=True)


# ---------------------------------------------------------------- parent: the workload
def key(rng: random.Random, keys: int) -> dict[str, Any]:
    k = rng.randrange(keys)
    return {"pk": {"S": f"p{k % (keys // 10 or 1)}"}, "sk": {"N": str(k)}}


def workload(rng: random.Random, keys: int) -> tuple[str, dict[str, Any]]:
    """One request of the mix (weights roughly a read-heavy service plus the less common operations)."""
    r = rng.random()
    k = key(rng, keys)
    payload = {"S": "x" * rng.randrange(10, 900)}
    if r < 0.25:
        return "PutItem", {"TableName": TABLE, "Item": {**k, "v": payload, "n": {"N": str(rng.randrange(100))}}}
    if r < 0.45:
        return "GetItem", {"TableName": TABLE, "Key": k, "ConsistentRead": rng.random() < 0.5}
    if r < 0.55:
        return "UpdateItem", {
            "TableName": TABLE,
            "Key": k,
            "UpdateExpression": "SET #c = if_not_exists(#c, :z) + :one, tags = :t",
            "ExpressionAttributeNames": {"#c": "count"},
            "ExpressionAttributeValues": {":z": {"N": "0"}, ":one": {"N": "1"}, ":t": {"SS": ["a", str(rng.random())]}},
        }
    if r < 0.62:
        return "Query", {
            "TableName": TABLE,
            "KeyConditionExpression": "pk = :p AND sk > :s",
            "ExpressionAttributeValues": {":p": k["pk"], ":s": {"N": str(rng.randrange(keys))}},
            "Limit": rng.randrange(1, 50),
        }
    if r < 0.64:
        return "Scan", {
            "TableName": TABLE,
            "Limit": 100,
            "FilterExpression": "n < :n",
            "ExpressionAttributeValues": {":n": {"N": "50"}},
        }
    if r < 0.70:
        return "DeleteItem", {"TableName": TABLE, "Key": k}
    if r < 0.75:
        return "BatchWriteItem", {
            "RequestItems": {TABLE: [{"PutRequest": {"Item": {**key(rng, keys), "v": payload}}} for _ in range(10)]}
        }
    if r < 0.80:
        ks = {json.dumps(key(rng, keys), sort_keys=True) for _ in range(20)}
        return "BatchGetItem", {"RequestItems": {TABLE: {"Keys": [json.loads(x) for x in ks]}}}
    if r < 0.84:
        return "TransactWriteItems", {
            "TransactItems": [
                {"Put": {"TableName": TABLE, "Item": {**key(rng, keys), "v": payload}}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": key(rng, keys),
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
            ],
            "ClientRequestToken": f"t{rng.randrange(10**9)}",
        }
    if r < 0.88:
        return "ExecuteStatement", {
            "Statement": f'SELECT * FROM "{TABLE}" WHERE pk = ? AND sk = ?',
            "Parameters": [k["pk"], k["sk"]],
        }
    if r < 0.92:  # conditions that fail, and expressions whose text varies (a cache must stay bounded)
        return "PutItem", {
            "TableName": TABLE,
            "Item": {**k, "v": payload},
            "ConditionExpression": f"attribute_not_exists(pk) OR n = :v{rng.randrange(10**6)}",
            "ExpressionAttributeValues": {f":v{rng.randrange(10**6)}": {"N": "1"}},
        }
    if r < 0.96:  # refused requests of several kinds
        bad = rng.choice(
            [
                {"TableName": TABLE, "Key": {"pk": {"N": "1"}}},
                {"TableName": "nope" + str(rng.randrange(10**6)), "Key": k},
                {"TableName": TABLE, "Key": k, "ProjectionExpression": f"a{rng.randrange(10**6)}.."},
            ]
        )
        return "GetItem", bad
    if r < 0.98:
        return "DescribeTable", {"TableName": TABLE}
    return "ListTables", {"Limit": 10}


def call(conn: Conn, op: str, body: dict[str, Any]) -> int:
    """Send one request and read its whole response; returns the HTTP status."""
    return conn.call(request(conn.port, op, body))[0]


def churn_table(conn: Conn, n: int) -> None:
    """A short-lived table with an index, created, written and deleted (tables come and go in a CI run)."""
    name = f"churn{n % 3}"
    call(
        conn,
        "CreateTable",
        {
            "TableName": name,
            "AttributeDefinitions": [
                {"AttributeName": "id", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
            ],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "byg",
                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
            "BillingMode": "PAY_PER_REQUEST",
            "Tags": [{"Key": "run", "Value": str(n)}],
        },
    )
    for i in range(50):
        call(conn, "PutItem", {"TableName": name, "Item": {"id": {"S": str(i)}, "g": {"S": str(i % 5)}}})
    call(conn, "DeleteTable", {"TableName": name})


def drive(port: int, seconds: float, rate: float, keys: int, clients: int) -> dict[str, int]:
    counts = {"requests": 0, "http_500": 0}
    deadline = time.monotonic() + seconds
    per_client = rate / clients

    def client(i: int) -> None:
        rng = random.Random(i)
        conn = Conn(port)
        start = time.monotonic()
        n = 0
        while time.monotonic() < deadline:
            n += 1
            late = time.monotonic() - (start + n / per_client)
            if late > 1.0:  # fallen behind (a busy machine): skip the missed sends, a burst would raise the rate
                n += int(late * per_client)
            gevent.sleep(max(0.0, start + n / per_client - time.monotonic()))
            if i == 0 and n % 2000 == 0:
                churn_table(conn, n // 2000)
                continue
            op, body = workload(rng, keys)
            if call(conn, op, body) >= 500:
                counts["http_500"] += 1
            counts["requests"] += 1

    gevent.joinall([gevent.spawn(client, i) for i in range(clients)])
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=11.0, help="minutes left out of the growth figure")
    ap.add_argument("--rate", type=float, default=300.0, help="requests per second offered")
    ap.add_argument("--keys", type=int, default=2000, help="size of the key space (bounds the stored data)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--interval", type=float, default=60.0, help="seconds between reports")
    ap.add_argument("--no-tracemalloc", action="store_true")
    ap.add_argument("--no-freeze", action="store_true", help="leave out freeze_after_full_collections (to compare)")
    ap.add_argument(
        "--trim",
        action="store_true",
        help="malloc_trim(0) after each RSS reading: rss_trimmed then shows what glibc's heap held free",
    )
    ap.add_argument("--top", type=int, default=8, help="how many of tracemalloc's top growers to print")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="serve the traffic with a canned gevent WSGI server instead of the endpoint (the floor; run it beside)",
    )
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.interval, args.warmup, not args.no_tracemalloc, not args.no_freeze, args.top, args.trim, args.floor)
        return 0
    argv = [sys.executable, os.path.abspath(__file__), "--serve", "--interval", str(args.interval)]
    argv += ["--warmup", str(args.warmup)] + (["--no-tracemalloc"] if args.no_tracemalloc else [])
    argv += (["--no-freeze"] if args.no_freeze else []) + (["--trim"] if args.trim else []) + ["--top", str(args.top)]
    argv += ["--floor"] if args.floor else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)}
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert child.stdout is not None
        url = json.loads(child.stdout.readline())["url"]
        port = int(url.rsplit(":", 1)[1])
        call(
            Conn(port),
            "CreateTable",
            {
                "TableName": TABLE,
                "AttributeDefinitions": [
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "N"},
                ],
                "KeySchema": [
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
        lines: list[dict[str, Any]] = []

        def report() -> None:
            assert child.stdout is not None
            for raw in child.stdout:
                line = json.loads(raw)
                lines.append(line)
                traced = f"  traced {line['traced'] / 2**20:7.2f} MB" if "traced" in line else ""
                malloc = f"  malloc {line['malloc'] / 2**20:7.2f} MB" if line.get("malloc") is not None else ""
                trimmed = f" (trimmed {line['rss_trimmed'] / 2**20:7.2f})" if args.trim else ""
                print(
                    f"min {line['minute']:6.2f}  rss {line['rss'] / 2**20:7.2f} MB{trimmed}{malloc}{traced}  "
                    f"served {line['served']}  tokens {line['tokens']}  frozen {line['frozen']}  "
                    f"blocks {line['blocks']}",
                    flush=True,
                )

        reader = gevent.spawn(report)
        print(
            f"soak: {args.minutes} min at {args.rate:.0f} req/s, {args.keys} keys, warm-up {args.warmup} min",
            flush=True,
        )
        counts = drive(port, args.minutes * 60 + 1, args.rate, args.keys, args.clients)
        gevent.sleep(0.5)
        reader.kill()
    finally:
        child.terminate()
        child.wait(timeout=10)
    after = [(ln["minute"], ln["rss"]) for ln in lines if ln["minute"] >= args.warmup]
    print(f"requests {counts['requests']}, HTTP 500s {counts['http_500']}")
    if len(after) >= 2:
        print(
            f"RSS growth after warm-up: {growth(after).describe()} "
            f"({after[0][1] / 2**20:.2f} -> {after[-1][1] / 2**20:.2f} MB; target < 1)"
        )
        if args.trim:
            kept = [(ln["minute"], ln["rss_trimmed"]) for ln in lines if ln["minute"] >= args.warmup]
            print(f"RSS kept after a trim, growth after warm-up: {growth(kept).describe()} (the figure to read)")
        malloc = [(ln["minute"], ln["malloc"]) for ln in lines if ln["minute"] >= args.warmup and ln.get("malloc")]
        if len(malloc) >= 2:
            print(f"malloc in-use growth after warm-up: {growth(malloc).describe()}")
        traced = [(ln["minute"], ln["traced"]) for ln in lines if ln["minute"] >= args.warmup and "traced" in ln]
        if len(traced) >= 2:
            print(f"traced heap growth after warm-up: {growth(traced).describe()}")
    else:
        print("too few reports after warm-up for a growth figure: run longer or lower --warmup")
    tops = [ln["top"] for ln in lines if "top" in ln]
    if tops:
        print("tracemalloc top growers since the end of warm-up:")
        for t in tops[-1]:
            print("  " + t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
