"""A whole scenario run's CPU per request, next to a plain Locust user loop's, and where the difference goes.

Both clients saturate one core against the same canned-answer server (`tests/support/canned_server.py`:
Debian's nginx, fixed DynamoDB bodies with their CRC32), so the server is never the limit and shares nothing with
either client. A real scenario (1 KB puts of fresh UUID keys at an offered rate above what one core sends) runs
with `dynlocust run` in its own process; the benchmark reads its CPU time (`/proc/PID/stat`: user + system) and
the server's request count at two instants in the steady part of the run. Beside it, in this process, the plain
loop: a `FastDynamoDBUser` (or `DynamoDBUser` for boto3) in a Locust `Environment` whose task does the same 1 KB
PutItem of a fresh key, with Locust's request events and statistics on; CPU from `time.process_time`. The two
alternate, `--rounds` times, and the medians are printed with their ratio (targets: 1.3x fast, issue 48;
1.15x boto3, issue 31).

The run is sampled by `cpu_sampler.py` (SIGPROF every 2 ms of CPU, ~1% overhead) for the breakdown by stage: what the
run spends outside the transport and Locust's event is what the plain loop does not do.

Run: ``python tests/benchmarks/bench_scenario_generator.py [--rate fast=11000,boto3=1200] [--seconds 20]
[--rounds 3] [--transports fast,boto3]``
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from the clone's root

import locust  # noqa: E402 - before botocore
from locust import constant, task  # noqa: E402

from dynlocust.user_classes.dynamodb_user import DynamoDBUser  # noqa: E402
from dynlocust.user_classes.fast_user import FastDynamoDBUser  # noqa: E402
from tests.benchmarks.bench_transport import measure_loop  # noqa: E402
from tests.support.canned_server import PUT_SCENARIO, TABLE, CannedServer  # noqa: E402

_ = locust
HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")
TARGETS = {"fast": 1.3, "boto3": 1.15}
"""The run's CPU per request over the plain loop's, at most (fast: issue 48, was 1.5 in issue 31; boto3: issue 31)."""
PLAIN_USERS = {"fast": FastDynamoDBUser, "boto3": DynamoDBUser}
PAD = "x" * 990
"""With the key and `n`, a 1 KB item, as the scenario's `item_size: 1KB` builds."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (and of its waited-for children), from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    # after the ")": state is field 0, utime 11, stime 12, cutime 13, cstime 14
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def generator_run(
    server: CannedServer, transport: str, rate: int, args: argparse.Namespace, workdir: Path
) -> dict[str, Any]:
    """One `dynlocust run` of the put scenario at `rate`/s; its CPU and the server's requests over its steady middle."""
    scenario = workdir / f"generator-{transport}-{rate}.yaml"
    window = max(5, args.seconds // 4)
    scenario.write_text(
        PUT_SCENARIO.format(
            transport=transport,
            rate=rate,
            seconds=args.seconds,
            window=window,
            concurrency=args.concurrency,
            max_requests=2 * rate * args.seconds + 1000,
        )
    )
    samples = workdir / f"samples-{transport}.json"
    run_id = f"bench-{uuid.uuid4().hex[:8]}-{transport}"
    argv = [sys.executable, str(HERE / "cpu_sampler.py"), str(samples), "--", "run", str(scenario)]
    argv += ["--host", server.url, "--run-id", run_id, "--metrics-port", str(free_port())]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("AWS_PROFILE", None)
    log_path = workdir / f"generator-{transport}.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        start = server.requests()
        deadline = time.monotonic() + 60
        while server.requests() - start < min(rate, 500):  # puts flow: set-up is over, pacing runs
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(
                    f"the {transport} run did not start:\n{log_path.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.1)
        time.sleep(2.0)  # warm-up: pool filled, first window open
        measured = max(2.0, args.seconds - 5.0)
        proc.send_signal(signal.SIGUSR1)
        c0, n0, t0 = cpu_seconds(proc.pid), server.requests(), time.perf_counter()
        time.sleep(measured)
        c1, n1, t1 = cpu_seconds(proc.pid), server.requests(), time.perf_counter()
        proc.send_signal(signal.SIGUSR2)
        proc.wait(timeout=args.seconds + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    requests = n1 - n0
    cpu = c1 - c0
    return {
        "requests": requests,
        "rps": requests / (t1 - t0),
        "cpu_us": cpu / requests * 1e6 if requests else float("inf"),
        "cpu_share": cpu / (t1 - t0),
        "breakdown": json.loads(samples.read_text()) if samples.exists() else {},
    }


PLAIN_ITEMS = 10_000
PLAIN_BURST = 100
"""The plain loop's floor: its items are built before it starts (cycled: the canned server keeps nothing) and each
task call sends `PLAIN_BURST` puts, so neither item building nor Locust's per-task scheduling is in its figure."""


def plain_loop(server: CannedServer, transport: str, seconds: float, users: int) -> dict[str, Any]:
    """The floor: a Locust user loop doing nothing but the 1 KB PutItem, events and statistics on."""
    items = [{"pk": {"S": uuid.uuid4().hex}, "n": {"N": "1"}, "pad": {"S": PAD}} for _ in range(PLAIN_ITEMS)]

    class Plain(PLAIN_USERS[transport]):  # type: ignore[misc, valid-type]
        abstract = False
        wait_time = constant(0)
        host = server.url

        @task
        def put(self) -> None:
            put_item = self.client.put_item
            start = random.randrange(PLAIN_ITEMS - PLAIN_BURST)
            for item in items[start : start + PLAIN_BURST]:
                put_item(TableName=TABLE, Item=item)

    return measure_loop(Plain, users, seconds)


OWN_STAGES = {
    "pacing": "pacer and tickets",
    "gevent hub (I/O wake-ups, timers)": "greenlet hand-offs (hub)",
    "building": "operation mix and item building",
    "tally": "window tally",
    "bookkeeping": "in-flight and ceiling bookkeeping",
}
"""The run's stages the plain loop has no counterpart for, with their names in issue 31."""


def print_breakdown(name: str, run: dict[str, Any], plain_us: float, detail: int) -> None:
    counts: dict[str, int] = run["breakdown"].get("buckets", {})
    total = sum(counts.values())
    if not total:
        print(f"  ({name}: no samples)")
        return
    gap = run["cpu_us"] - plain_us
    print(f"  where {name}'s {run['cpu_us']:.0f} us/request go ({total} samples; the plain loop: {plain_us:.0f}):")
    for bucket, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        share = n / total
        stage = OWN_STAGES.get(bucket, bucket)
        print(f"    {stage:<40}{share:>6.1%}{share * run['cpu_us']:>8.0f} us/req")
    own = sum(n for b, n in counts.items() if b in OWN_STAGES) / total * run["cpu_us"]
    print(f"    the stages marked by issue 31 sum to {own:.0f} us/req; the measured gap is {gap:.0f} us/req")
    details: dict[str, int] = run["breakdown"].get("details", {})
    for where, n in sorted(details.items(), key=lambda kv: -kv[1])[:detail]:
        print(f"      {n / total:>6.1%}  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", default="fast=11000,boto3=1200", help="offered puts/s per transport, above a core")
    parser.add_argument("--seconds", type=int, default=20, help="length of each hold phase and plain loop (20)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of run and plain loop (3)")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--users", type=int, default=100, help="users of the plain loop (100)")
    parser.add_argument("--transports", default="fast,boto3")
    parser.add_argument("--detail", type=int, default=0, help="also list the N functions with the most samples")
    args = parser.parse_args()
    rates = {k: int(v) for k, v in (pair.split("=") for pair in args.rate.split(",") if pair)}
    transports = [t for t in args.transports.split(",") if t]
    os.environ.pop("AWS_PROFILE", None)
    rows: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {t: ([], []) for t in transports}
    with CannedServer() as server, tempfile.TemporaryDirectory(prefix="bench-generator-") as tmp:
        for _round in range(args.rounds):
            for transport in transports:
                runs, plains = rows[transport]
                plains.append(plain_loop(server, transport, args.seconds - 5.0, args.users))
                runs.append(generator_run(server, transport, rates[transport], args, Path(tmp)))
    print(f"\n== scenario run vs plain user loop: 1 KB puts, fresh keys, canned server, {args.rounds} rounds ==")
    print(
        f"{'transport':<10}{'round':>6}{'run req/s':>10}{'run CPU':>9}{'run us/req':>11}"
        f"{'plain req/s':>12}{'plain CPU':>10}{'plain us/req':>13}{'run/plain':>10}"
    )
    for transport, (runs, plains) in rows.items():
        for i, (run, plain) in enumerate(zip(runs, plains, strict=True)):
            print(
                f"{transport:<10}{i + 1:>6}{run['rps']:>10.0f}{run['cpu_share']:>9.0%}{run['cpu_us']:>11.0f}"
                f"{plain['rps']:>12.0f}{plain['cpu_share']:>10.0%}{plain['cpu_us']:>13.0f}"
                f"{run['cpu_us'] / plain['cpu_us']:>9.2f}x"
            )
    for transport, (runs, plains) in rows.items():
        run_us = statistics.median(r["cpu_us"] for r in runs)
        plain_us = statistics.median(p["cpu_us"] for p in plains)
        ratio = statistics.median(r["cpu_us"] / p["cpu_us"] for r, p in zip(runs, plains, strict=True))
        target = TARGETS[transport]
        print(
            f"{transport}: median run {run_us:.0f} us/req, plain loop {plain_us:.0f} us/req, median ratio {ratio:.2f}x"
            f" (target <= {target}x: {'met' if ratio <= target else 'NOT met'})"
        )
        print_breakdown(f"{transport} (last round)", runs[-1], plains[-1]["cpu_us"], args.detail)


if __name__ == "__main__":
    main()
