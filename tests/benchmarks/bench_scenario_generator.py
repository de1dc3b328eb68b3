"""A whole scenario run's CPU per request, next to the bare transport's, and where the difference goes.

A real scenario (1 KB puts of fresh UUID keys at a fixed offered rate, once per rate of `--rate`) runs with
`dynlocust run` in its own process against `dynlocust local --no-capacity` in another. Once requests flow, the
benchmark reads the generator's CPU time (`/proc/PID/stat`: user + system) and the endpoint's request count at two
instants in the steady part of the run and divides: CPU per request of the whole generator (pacer, item building,
transport, window tally, metrics, Locust's events and statistics). The same run is sampled by `cpu_sampler.py`
(SIGPROF every 2 ms of CPU, ~1% overhead) for the breakdown. Beside it, in this process, the bare transport:
`put_item` of pre-built 1 KB items from 10 greenlets (no pacer, no Locust), CPU per request from
`time.process_time`.

CPU time is what a busy machine distorts least; wall-clock rates are printed only to show the offered load was met.
A lightly loaded generator wakes up (hub and kernel) once per request, a busy one handles several per wake-up, so
the cost per request falls as the rate rises; a core's capacity is read at the highest rate that was met.

Run: ``python tests/benchmarks/bench_scenario_generator.py [--rate 1000,2000,3000] [--seconds 30]
[--transports fast,boto3]``
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import locust  # noqa: E402, F401 - before botocore

import gevent  # noqa: E402

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402
from dynlocust.transport.boto3 import make_client  # noqa: E402
from dynlocust.transport.fast import make_fast_client  # noqa: E402

HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")
BARE_TABLE = "bench-bare"
TARGETS = {"fast": 5000.0, "boto3": 2000.0}
"""Offered requests per second per core of generator CPU (issue 19)."""

SCENARIO = """\
name: bench-generator-{transport}
target: remote
transport: {transport}
tables:
  - name: puts
    partition_key: {{name: pk, type: S}}
    billing: on_demand
workload:
  item_size: 1KB
  keys: {{distribution: uniform}}
  operations:
    - {{op: put, weight: 1}}
phases:
  - name: hold
    hold: {{rate: {rate}, duration: {seconds}s, window: {window}s}}
concurrency: {concurrency}
deadline: 8s
limits: {{max_requests: {max_requests}, max_cost_dollars: 10.0}}
bin: 5s
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (and of its waited-for children), from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    # after the ")": state is field 0, utime 11, stime 12, cutime 13, cstime 14
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def generator_run(
    url: str,
    transport: str,
    rate: int,
    args: argparse.Namespace,
    workdir: Path,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One `dynlocust run` of the put scenario at `rate`/s; CPU and its table's requests over its steady middle."""
    scenario = workdir / f"generator-{transport}-{rate}.yaml"
    window = max(5, args.seconds // 6)
    scenario.write_text(
        SCENARIO.format(
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
    argv = [sys.executable, str(HERE / "cpu_sampler.py"), str(samples), "--", "run", str(scenario), "--host", url]
    argv += ["--run-id", run_id, "--metrics-port", str(free_port())]  # metrics on, on a port of its own
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    env.pop("AWS_PROFILE", None)
    log = (workdir / f"generator-{transport}.log").open("wb")
    proc = subprocess.Popen(argv, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        table = f"puts-{run_id}"
        deadline = time.monotonic() + 60
        while endpoint_requests(url, table) < rate:  # a second of puts: set-up is over, pacing runs
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                tail = (workdir / f"generator-{transport}.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the {transport} run did not start:\n{tail}")
            time.sleep(0.2)
        time.sleep(2.0)  # warm-up: pools filled, first windows open
        measured = max(2.0, args.seconds - 6.0)
        proc.send_signal(signal.SIGUSR1)
        c0, n0, t0 = cpu_seconds(proc.pid), endpoint_requests(url, table), time.perf_counter()
        time.sleep(measured)
        c1, n1, t1 = cpu_seconds(proc.pid), endpoint_requests(url, table), time.perf_counter()
        proc.send_signal(signal.SIGUSR2)
        proc.wait(timeout=args.seconds + 60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    requests = n1 - n0
    cpu = c1 - c0
    breakdown = json.loads(samples.read_text()) if samples.exists() else {}
    return {
        "requests": requests,
        "rps": requests / (t1 - t0),
        "cpu_us": cpu / requests * 1e6 if requests else float("inf"),
        "cpu_share": cpu / (t1 - t0),
        "breakdown": breakdown,
        "exit": proc.returncode,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def endpoint_requests(url: str, table: str) -> int:
    """Requests the endpoint has served for `table` (whatever else runs against it)."""
    import urllib.request

    with urllib.request.urlopen(url + "/_dynlocust/stats", timeout=10) as resp:
        ops = json.loads(resp.read())["tables"].get(table, {})
    return sum(sum(v for k, v in counts.items() if k != "unprocessed_items") for counts in ops.values())


def bare_transport(url: str, transport: str, count: int, greenlets: int = 10) -> dict[str, float]:
    """put_item of pre-built 1 KB items with fresh keys, closed loop: the transport alone."""
    factory = make_fast_client if transport == "fast" else make_client
    client = factory(url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=greenlets)
    pad = "x" * 990
    requests = [
        {"TableName": BARE_TABLE, "Item": {"pk": {"S": str(uuid.uuid4())}, "n": {"N": "1"}, "pad": {"S": pad}}}
        for _ in range(count)
    ]
    for kwargs in requests[:greenlets]:  # warm-up: connections open
        client.put_item(**kwargs)
    queue = iter(requests[greenlets:])

    def worker() -> None:
        for kwargs in queue:
            client.put_item(**kwargs)

    c0, t0 = time.process_time(), time.perf_counter()
    gevent.joinall([gevent.spawn(worker) for _ in range(greenlets)])
    c1, t1 = time.process_time(), time.perf_counter()
    client.close()
    n = count - greenlets
    return {"requests": n, "rps": n / (t1 - t0), "cpu_us": (c1 - c0) / n * 1e6}


def prepare(url: str) -> None:
    raw = make_client(url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=2)
    raw.create_table(
        TableName=BARE_TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    while raw.describe_table(TableName=BARE_TABLE)["Table"]["TableStatus"] != "ACTIVE":
        time.sleep(0.05)


def print_breakdown(name: str, run: dict[str, Any], detail: int) -> None:
    counts: dict[str, int] = run["breakdown"].get("buckets", {})
    total = sum(counts.values())
    if not total:
        print(f"  ({name}: no samples)")
        return
    print(f"  where {name}'s {run['cpu_us']:.0f} us/request go ({total} samples):")
    for bucket, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        share = n / total
        print(f"    {bucket:<36}{share:>6.1%}{share * run['cpu_us']:>8.0f} us/req")
    details: dict[str, int] = run["breakdown"].get("details", {})
    for where, n in sorted(details.items(), key=lambda kv: -kv[1])[:detail]:
        print(f"      {n / total:>6.1%}  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rate", default="1000,2000,3000", help="offered puts/s, one run per rate (default 1000,2000,3000)"
    )
    parser.add_argument("--seconds", type=int, default=30, help="length of the hold phase (default 30)")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--transports", default="fast,boto3")
    parser.add_argument("--bare-requests", type=int, default=4000)
    parser.add_argument("--detail", type=int, default=0, help="also list the N functions with the most samples")
    args = parser.parse_args()
    rates = sorted(int(r) for r in args.rate.split(",") if r)
    transports = [t for t in args.transports.split(",") if t]
    os.environ.pop("AWS_PROFILE", None)
    endpoint = LocalEndpoint(capacity=False).start()
    try:
        prepare(endpoint.url)
        with tempfile.TemporaryDirectory(prefix="bench-generator-") as tmp:
            rows = []
            for transport in transports:
                bare = bare_transport(endpoint.url, transport, args.bare_requests)
                runs = [(rate, generator_run(endpoint.url, transport, rate, args, Path(tmp))) for rate in rates]
                rows.append((transport, bare, runs))
        print(f"\n== scenario generator: 1 KB puts, fresh UUID keys, {args.seconds} s per offered rate ==")
        print(
            f"{'transport':<10}{'offered/s':>10}{'run req/s':>10}{'run CPU':>9}{'run us/req':>11}"
            f"{'bare us/req':>12}{'run/bare':>9}"
        )
        for transport, bare, runs in rows:
            for rate, run in runs:
                print(
                    f"{transport:<10}{rate:>10}{run['rps']:>10.0f}{run['cpu_share']:>9.0%}{run['cpu_us']:>11.0f}"
                    f"{bare['cpu_us']:>12.0f}{run['cpu_us'] / bare['cpu_us']:>8.2f}x"
                )
        print(
            "A lightly loaded generator pays its own wake-ups (the hub's and the kernel's) for every request, so its"
            "\nCPU per request falls as the offered rate rises: what one core offers is read at the highest rate met."
        )
        for transport, bare, runs in rows:
            met = [(rate, run) for rate, run in runs if run["rps"] >= 0.99 * rate and run["exit"] in (0, None)]
            if not met:
                print(f"{transport}: no offered rate was met (each run fell short by more than 1%)")
                continue
            rate, run = met[-1]
            per_core = 1e6 / run["cpu_us"]
            target = TARGETS.get(transport, 0.0)
            verdict = "met" if per_core >= target else "NOT met"
            print(
                f"{transport}: at {rate:,}/s offered, {per_core:,.0f} offered req/s per core of generator CPU "
                f"(target >= {target:,.0f}: {verdict}), {run['cpu_us'] / bare['cpu_us']:.2f}x the bare transport "
                f"(target <= 2x: {'met' if run['cpu_us'] <= 2 * bare['cpu_us'] else 'NOT met'})"
            )
        for transport, _bare, runs in rows:
            rate, run = runs[-1]
            print_breakdown(f"{transport} at {rate:,}/s", run, args.detail)
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
