"""Soak: does a long `dynlocust run` keep its memory flat? The generator's side of issue 29's flat-memory target.

A `dynlocust run` of a bounded scenario (1 KB puts and gets over a fixed key space, one hold phase of `--minutes`
at `--rate`/s, windows of `--window` s) runs in a child process (this script with --child) against a local endpoint
in a process of its own (`dynlocust.local.embedded.LocalEndpoint`), so the endpoint's memory is not in the figure
(`bench_endpoint_soak.py` measures that side). Every `--interval` seconds this process reads the run's RSS from
/proc; the child, with tracemalloc on (unless `--no-tracemalloc`), prints its traced heap and, after warm-up, the
top growers since the end of warm-up. At the end: the growth per hour after warm-up (least squares over the
samples after `--warmup` minutes) of RSS and of the traced heap, and the last top growers.

    python tests/benchmarks/bench_run_soak.py [--minutes 30] [--warmup 5] [--rate 60] [--no-tracemalloc] [--floor]

The right floor is Locust itself: its master keeps a chart point every 5 s (`stats.history`) and a request count
per second and request name (`num_reqs_per_sec`) for the whole run, whatever the user does (locust issue #2045
reports about 2 MiB/h on a master). With `--floor`, a plain `locust --headless` of `FastDynamoDBUser`s doing the same
puts and gets at the same rate (`constant_throughput`, no scenario, no windows) runs beside the run, against the same
endpoint, and its growth is printed too: the run's growth less the floor's is dynlocust's own.

Target (issue 29): under 1 MB per hour of RSS after warm-up. As with the endpoint's soak, tracemalloc's snapshots
live in the measured process: read RSS from a `--no-tracemalloc` run, and the traced heap and growers otherwise.
What a run keeps by design grows with its windows: each closed window's figures, settled (its per-bin histograms
are in the results file only, `ClosedWindow.settled`), a few KB. The figure is per hour at one window a minute
unless `--window` says otherwise, and the growers say whether anything else grows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from the clone's root

from tests.benchmarks.growth import MB, growth  # noqa: E402

SCENARIO = """\
name: soak-run
target: remote
tables:
  - name: soak
    partition_key: {{name: pk, type: S}}
    billing: on_demand
workload:
  item_size: 1KB
  keys: {{distribution: uniform, keyspace: {keys}}}
  operations:
    - {{op: put, weight: 1}}
    - {{op: get, weight: 1}}
phases:
  - name: hold
    hold: {{rate: {rate}, duration: {seconds}s, window: {window}s}}
concurrency: 20
deadline: 5s
limits: {{max_requests: {max_requests}, max_cost_dollars: 1000.0}}
"""


FLOOR_LOCUSTFILE = """\
import os
import random

from locust import constant_throughput, task

from dynlocust.user_classes.fast_user import FastDynamoDBUser

KEYS = int(os.environ["SOAK_KEYS"])
PAD = "x" * 1000


class Floor(FastDynamoDBUser):
    wait_time = constant_throughput(float(os.environ["SOAK_RATE"]) / int(os.environ["SOAK_USERS"]))

    @task
    def put(self):
        key = f"k{random.randrange(KEYS)}"
        self.client.put_item(TableName="soak-floor", Item={"pk": {"S": key}, "pad": {"S": PAD}})

    @task
    def get(self):
        self.client.get_item(TableName="soak-floor", Key={"pk": {"S": f"k{random.randrange(KEYS)}"}})
"""
"""The floor: Locust's own loop of `FastDynamoDBUser`s, the run's operations at its rate, nothing of a scenario."""
FLOOR_USERS = 20


def start_floor(workdir: Path, url: str, rate: int, keys: int, seconds: int) -> subprocess.Popen[bytes]:
    """`locust --headless` of the floor's users against `url` for `seconds` (its table created first)."""
    import boto3

    client = boto3.client(
        "dynamodb", endpoint_url=url, region_name="us-east-1", aws_access_key_id="local",
        aws_secret_access_key="local",
    )  # fmt: skip
    client.create_table(
        TableName="soak-floor", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
    )  # fmt: skip
    locustfile = workdir / "floor.py"
    locustfile.write_text(FLOOR_LOCUSTFILE)
    argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--host", url, "-u", str(FLOOR_USERS)]
    argv += ["-r", str(FLOOR_USERS), "-t", f"{seconds}s", "--only-summary"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOAK_RATE": str(rate), "SOAK_KEYS": str(keys)}
    env["SOAK_USERS"] = str(FLOOR_USERS)
    log = (workdir / "floor.log").open("wb")
    return subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)


def rss_of(pid: int) -> int:
    with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------- child: the run, reporting its heap
def child(report: str, interval: float, warmup: float, trace: bool, argv: list[str]) -> int:
    import tracemalloc

    import gevent

    from dynlocust.cli import main as dynlocust_main

    if trace:
        tracemalloc.start(1)  # one frame: a snapshot of a 50 MB heap then takes well under a second

    def watch() -> None:
        started, base, n = time.monotonic(), None, 0
        with open(report, "a", encoding="utf-8") as out:
            while True:
                # the next tick still ahead, and never sooner than half an interval: snapshots block the hub
                n = max(n + 1, int((time.monotonic() - started) / interval) + 1)
                gevent.sleep(max(interval / 2, started + n * interval - time.monotonic()))
                minute = (time.monotonic() - started) / 60
                line: dict[str, Any] = {"minute": round(minute, 2), "traced": tracemalloc.get_traced_memory()[0]}
                if base is None and minute >= warmup:
                    base = tracemalloc.take_snapshot()
                elif base is not None:
                    top = tracemalloc.take_snapshot().compare_to(base, "lineno")[:8]
                    line["top"] = [
                        f"{s.size_diff / 1024:+.1f} KiB {s.count_diff:+d} blocks {s.traceback[0]}" for s in top
                    ]
                out.write(json.dumps(line) + "\n")
                out.flush()

    if trace:
        gevent.spawn(watch)
    try:
        return dynlocust_main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1


# ---------------------------------------------------------------- parent
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=5.0, help="minutes left out of the growth figure")
    ap.add_argument("--rate", type=int, default=60, help="requests per second offered")
    ap.add_argument("--keys", type=int, default=5000, help="size of the key space")
    ap.add_argument("--window", type=int, default=60, help="window length in seconds")
    ap.add_argument("--interval", type=float, default=60.0, help="seconds between samples")
    ap.add_argument("--no-tracemalloc", action="store_true")
    ap.add_argument("--floor", action="store_true", help="run Locust's own loop beside it (the floor)")
    ap.add_argument("--child", nargs=3, metavar=("REPORT", "INTERVAL", "WARMUP"), help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.child:
        report, interval, warmup = args.child
        return child(report, float(interval), float(warmup), not args.no_tracemalloc, rest[rest.index("--") + 1 :])

    import locust  # noqa: F401 - before botocore (the endpoint helper imports it lazily)

    from dynlocust.local.embedded import LocalEndpoint

    seconds = int(args.minutes * 60)
    print(f"run soak: {args.minutes} min at {args.rate} req/s, {args.keys} keys, warm-up {args.warmup} min", flush=True)
    with tempfile.TemporaryDirectory(prefix="run-soak-") as tmp, LocalEndpoint() as endpoint:
        workdir = Path(tmp)
        scenario = workdir / "soak.yaml"
        scenario.write_text(
            SCENARIO.format(
                keys=args.keys,
                rate=args.rate,
                seconds=seconds,
                window=args.window,
                max_requests=2 * args.rate * seconds + 1000,
            )
        )
        report = workdir / "heap.jsonl"
        argv = [sys.executable, __file__, "--child", str(report), str(args.interval), str(args.warmup)]
        if args.no_tracemalloc:
            argv.append("--no-tracemalloc")
        argv += ["--", "run", str(scenario), "--host", endpoint.url, "--results-dir", str(workdir / "results")]
        argv += ["--metrics-port", "0"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        log = (workdir / "run.log").open("wb")
        proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)
        floor = start_floor(workdir, endpoint.url, args.rate, args.keys, seconds) if args.floor else None
        samples: list[tuple[float, float]] = []
        floor_samples: list[tuple[float, float]] = []
        started = time.monotonic()
        stop = threading.Event()
        while proc.poll() is None and not stop.wait(args.interval):
            if proc.poll() is not None:
                break
            minute = (time.monotonic() - started) / 60
            try:
                rss = rss_of(proc.pid)
            except OSError:
                break
            sample = {"minute": round(minute, 2), "rss_mb": round(rss / 2**20, 2)}
            if minute > args.minutes:  # the plan is over: the run is writing its report, which is not growth
                sample["after_the_plan"] = True
                print(json.dumps(sample), flush=True)
                continue
            samples.append((minute, rss))
            if floor is not None and floor.poll() is None:
                floor_samples.append((minute, rss_of(floor.pid)))
                sample["floor_rss_mb"] = round(floor_samples[-1][1] / 2**20, 2)
            print(json.dumps(sample), flush=True)
        proc.wait()
        if floor is not None:
            floor.wait(120)
        log.close()
        heap = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
        print(f"run exited {proc.returncode}; its last lines:")
        print("\n".join((workdir / "run.log").read_text(errors="replace").splitlines()[-3:]))
        if floor is not None:
            lines = (workdir / "floor.log").read_text(errors="replace").splitlines()
            print(f"the floor exited {floor.returncode}; its requests:", *[x for x in lines if "Aggregated" in x][:1])
    after = [(m, r) for m, r in samples if m >= args.warmup]
    grown = growth(after)
    print(f"RSS growth after warm-up: {grown.describe()} (target < 1)")
    floor_after = [(m, r) for m, r in floor_samples if m >= args.warmup]
    if floor_after:
        floor_grown = growth(floor_after)
        own, own_error = grown.per_hour - floor_grown.per_hour, math.hypot(grown.stderr, floor_grown.stderr)
        print(f"the floor's (Locust's own loop, same rate): {floor_grown.describe()}")
        print(f"the run's growth less the floor's (dynlocust's own): {own / MB:+.2f} MB/hour ± {own_error / MB:.2f}")
    traced = [(h["minute"], h["traced"]) for h in heap if h["minute"] >= args.warmup]
    if traced:
        print(f"traced heap growth after warm-up: {growth(traced).describe()}")
        last: list[str] = next((h["top"] for h in reversed(heap) if "top" in h), [])
        print("top growers since warm-up:")
        for line in last:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
