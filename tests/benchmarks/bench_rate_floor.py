"""The run at a fixed rate beside Locust's own loop of the bare signed user, in cores, with the machine's speed.

What a rate costs the machine, and what its floor costs: a whole `dynlocust run --processes 2` beside Locust's own
loop of the same client, each measured with the machine's speed while it runs.

Issue 48's ramp asks for 16,000 signed 1 KB PutItem per second from one 2-core machine. Whether a window keeps up
depends on how many cores the two workers and the server need together, and this project's machines run a fixed
loop at one of two speeds about 1.6x apart (docs/benchmarks.md, "The machine's two speeds"). So each side is
measured in cores, beside that loop's time:
- **run**: `dynlocust run` of a one-window scenario at `--rate` (`transport: fast`, 1 KB puts, uniform keys,
  `--concurrency` users, `--processes 2`);
- **plain**: `locust --processes 2` of `FastDynamoDBUser`s whose task is one PutItem of a 1 KB item and whose
  `constant_pacing` offers the same rate over the same users: Locust's loop, the signed client and Locust's
  statistics, and none of the run's pacer, operation mix, window tally or metrics. No Locust user sends for less;
- **unpaced**: the same loop with `constant(0)`: the most Locust's loop of the bare client sends on this machine at
  that moment, whatever the rate asked.

All against one canned-answer nginx (`tests/support/canned_server.py`). Each side's worker processes and nginx's
worker are read from `/proc` (user + system) over the same steady stretch, the rate is what nginx served in it,
and the machine's speed is the median of a probe run once a second meanwhile (a tenth of the loop, about 2% of a
core). The sides alternate, `--rounds` times. Last, the medians: each side's CPU per request, the cores it would
need at the offered rate and the slowest speed seen (its cores scaled by that speed over its own), and the run's
CPU per request over the plain loop's.

Run: ``python tests/benchmarks/bench_rate_floor.py [--rate 16000] [--seconds 30] [--rounds 3] [--concurrency 800]``
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from the clone's root

from tests.support.canned_server import PUT_SCENARIO, TABLE, CannedServer

PLAIN = """\
import random

from locust import constant, constant_pacing, task

from dynlocust.user_classes.fast_user import FastDynamoDBUser

ITEM = {{"pk": {{"S": ""}}, "n": {{"N": "1"}}, "pad": {{"S": "x" * 990}}}}
_rng = random.Random()


class Plain(FastDynamoDBUser):
    abstract = False
    wait_time = {wait}

    @task
    def put(self):
        ITEM["pk"]["S"] = "%032x" % _rng.getrandbits(128)
        self.client.put_item(TableName={table!r}, Item=ITEM)
"""
"""The same 1 KB item as the scenario's `item_size: 1KB`, with a fresh 128-bit key per call."""

WINDOW = re.compile(r"^window 1/1 .*?sent ([\d,]+).*?dropped ([\d,]+).*?-> (.+?)(?:, \d+ s left)?$", re.M)
LOOP = 3_000_000


def loop_seconds(n: int = LOOP) -> float:
    """This thread's CPU seconds for `n` multiply-adds: 3,000,000 take about 0.125 s or about 0.200 s on this
    project's machines, whose cores switch between two speeds (docs/benchmarks.md)."""
    start, total = time.thread_time(), 0
    for i in range(n):
        total += i * i
    return time.thread_time() - start


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def measure(proc: subprocess.Popen[bytes], server: CannedServer, args: argparse.Namespace, log: Path) -> dict[str, Any]:
    """Cores of the run's workers and of nginx's workers, and nginx's rate, over the steady middle of a side."""
    start = server.requests()
    deadline = time.monotonic() + 60
    while server.requests() - start < 1000:  # set-up is over, sends flow
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{log.stem} did not start sending:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.1)
    time.sleep(args.warmup)
    workers = [p.pid for p in psutil.Process(proc.pid).children(recursive=True) if p.children() == []]
    servers = [p.pid for p in psutil.Process(server.pid()).children()]
    c0 = {pid: cpu_seconds(pid) for pid in workers + servers}
    n0, t0 = server.requests(), time.perf_counter()
    probes = []  # a tenth of the loop once a second (about 2% of a core): the machine's speed while measured
    while (left := t0 + args.measure - time.perf_counter()) > 0:
        probes.append(loop_seconds(LOOP // 10) * 10)
        time.sleep(max(0.0, min(left, 1.0 - probes[-1] / 10)))
    c1 = {pid: cpu_seconds(pid) for pid in workers + servers}
    n1, t1 = server.requests(), time.perf_counter()
    span = t1 - t0
    return {
        "rate": (n1 - n0) / span,
        "workers": [(c1[pid] - c0[pid]) / span for pid in workers],
        "server": sum(c1[pid] - c0[pid] for pid in servers) / span,
        "speed": statistics.median(probes),
    }


def side_run(server: CannedServer, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    scenario = workdir / "flat.yaml"
    scenario.write_text(
        PUT_SCENARIO.format(
            transport="fast",
            rate=args.rate,
            seconds=args.seconds,
            window=args.seconds,
            concurrency=args.concurrency,
            max_requests=2 * args.rate * args.seconds,
        )
    )
    argv = [str(Path(sys.executable).with_name("dynlocust")), "run", str(scenario), "--host", server.url]
    argv += ["--processes", "2"]
    argv += ["--run-id", f"floor-{uuid.uuid4().hex[:8]}"]
    argv += ["--results-dir", str(workdir / "results")]
    figures, code, text = play(argv, workdir / "run.log", server, args)
    found = WINDOW.search(text)
    if found is None:
        raise RuntimeError(f"the run (exit {code}) printed no window line:\n{text[-2000:]}")
    sent, dropped, verdict = int(found[1].replace(",", "")), int(found[2].replace(",", "")), found[3]
    return {
        **figures,
        "outcome": f"exit {code}, sent {sent:,}/{args.rate * args.seconds:,}, dropped {dropped:,}, {verdict}",
    }


def side_plain(server: CannedServer, args: argparse.Namespace, workdir: Path, paced: bool = True) -> dict[str, Any]:
    locustfile = workdir / "plain.py"
    wait = f"constant_pacing({args.concurrency / args.rate!r})" if paced else "constant(0)"
    locustfile.write_text(PLAIN.format(wait=wait, table=TABLE))
    users = str(args.concurrency)
    argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--processes", "2", "-u", users]
    argv += ["-r", users, "-t", f"{args.seconds}s", "--host", server.url, "--only-summary"]
    figures, code, text = play(argv, workdir / "plain.log", server, args)
    failures = re.search(r"Aggregated\s+(\d+)\s+(\d+)\(", text)
    sent = f"{int(failures[1]):,} sent, {int(failures[2]):,} failed" if failures else "no summary"
    return {**figures, "outcome": f"exit {code}, {sent}"}


def play(argv: list[str], log: Path, server: CannedServer, args: argparse.Namespace) -> tuple[dict[str, Any], int, str]:
    """One side from start to exit: its figures, its exit code and its output."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT, env=environment())
        try:
            figures = measure(proc, server, args, log)
            code = proc.wait(timeout=args.seconds + 120)
        finally:
            stop(proc)
    return figures, code, log.read_text(errors="replace")


def environment() -> dict[str, str]:
    """Static local credentials (the canned server checks none) and the clone on the path."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
    env["AWS_DEFAULT_REGION"] = "us-east-1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    env.pop("AWS_PROFILE", None)
    return env


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def cores(side: dict[str, Any]) -> float:
    return float(sum(side["workers"]) + side["server"])


def show(name: str, side: dict[str, Any]) -> None:
    workers = " + ".join(f"{w:.2f}" for w in side["workers"])
    print(
        f"  {name:7} speed {side['speed']:.3f} s | {side['rate']:8,.0f}/s | workers {workers} | "
        f"nginx {side['server']:.2f} | {cores(side):.2f} cores | {side['outcome']}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=16_000, help="requests/s offered by each side")
    parser.add_argument("--seconds", type=int, default=30, help="each side's length")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds after sends start, before measuring")
    parser.add_argument("--measure", type=float, default=15.0, help="seconds measured in each side's middle")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=800, help="users on each side")
    args = parser.parse_args()
    if args.warmup + args.measure + 5 > args.seconds:
        parser.error("--seconds must exceed --warmup + --measure by 5 s or more")
    sides: dict[str, Callable[[CannedServer, argparse.Namespace, Path], dict[str, Any]]] = {
        "run": side_run,
        "plain": side_plain,
        "unpaced": partial(side_plain, paced=False),
    }
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    print(f"{args.rate:,}/s offered by {args.concurrency} users in 2 processes, to one canned nginx")
    with CannedServer() as server, tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        for n in range(1, args.rounds + 1):
            print(f"round {n}")
            for name, run in sides.items():
                seen[name].append(run(server, args, Path(tmp)))
                show(name, seen[name][-1])
    slow = max(side["speed"] for runs in seen.values() for side in runs)
    print(f"medians (the slowest machine speed seen: {slow:.3f} s):")
    for name in ("run", "plain"):
        us = statistics.median(cores(side) / side["rate"] for side in seen[name]) * 1e6
        need = statistics.median(cores(side) * args.rate / side["rate"] * slow / side["speed"] for side in seen[name])
        print(
            f"  {name:7} {us:.1f} us of CPU per request, workers and nginx; {args.rate:,}/s at the slowest speed "
            f"would need {need:.2f} cores of the machine's {os.cpu_count()}"
        )
    slowest = max(seen["unpaced"], key=lambda side: side["speed"])
    print(
        f"  unpaced {statistics.median(side['rate'] for side in seen['unpaced']):,.0f}/s; in its slowest round "
        f"({slowest['speed']:.3f} s) {slowest['rate']:,.0f}/s"
    )
    per = {name: statistics.median(sum(s["workers"]) / s["rate"] for s in runs) for name, runs in seen.items()}
    print(f"run / plain loop, the workers' CPU per request: {per['run'] / per['plain']:.2f}x")


if __name__ == "__main__":
    main()
