"""The measured write ramp on one machine: `scenarios/write-ceiling.yaml` unscaled against the embedded endpoint.

The shipped scenario (1,000 -> 8,000 puts/s in 60 s windows, fast transport) runs with its target switched to the
embedded local endpoint at capacity scale 1 (so the new on-demand table's ceiling near 4,130 writes/s appears), with
Locust's `--processes N`. Every second the benchmark reads the CPU time of each process of the run: the generator
side (master and workers) and the endpoint (`python -m dynlocust.local`), and the machine's total. Afterwards it
reads the run's windows and prints, per window, the offered rate, what was accepted and throttled, whether the window
was client-bound (and why), and the cores each side used.

It reports the highest offered rate below which no window is client-bound and, for each client-bound window,
which side ran out of CPU and by how much: a worker process pinned at one core (the generator), the endpoint's one
process pinned at one core (the endpoint), or the machine's cores all busy; with the CPU each side spends per
request, the cores each would need at the offered rate.

Full length is 8 windows x 60 s (~9 minutes); run it on a quiet machine. A smoke run:

    python tests/benchmarks/bench_write_ceiling_ramp.py --window 5 --to 2000 [--processes 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "write-ceiling.yaml"
PINNED = 0.9
"""A process (or the machine) busy this share of its cores in a window ran out of CPU."""


@dataclass
class Sample:
    at: float
    generator: dict[int, float]  # pid -> CPU seconds so far
    endpoint: float
    machine_busy: float  # CPU seconds so far, all processes, all cores


def scenario_text(args: argparse.Namespace) -> str:
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["target"] = {"local": {"capacity_scale": 1.0, "time_scale": 1.0}}
    ramp = doc["phases"][0]["ramp"]
    ramp.update({"from": args.rate_from, "to": args.to, "step": args.step, "window": f"{args.window}s"})
    doc["bin"] = f"{min(10, args.window)}s"
    if args.concurrency:
        doc["concurrency"] = args.concurrency
    return yaml.safe_dump(doc, sort_keys=False)


def is_endpoint(proc: psutil.Process) -> bool:
    try:
        return "dynlocust.local" in " ".join(proc.cmdline())
    except psutil.Error:
        return False


def sample(root: psutil.Process, endpoints: dict[int, bool]) -> Sample:
    generator: dict[int, float] = {}
    endpoint = 0.0
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        procs = []
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        cpu = times.user + times.system
        if endpoints.setdefault(proc.pid, is_endpoint(proc)):
            endpoint += cpu
        else:
            generator[proc.pid] = cpu
    machine = psutil.cpu_times()
    busy = sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)
    return Sample(time.time(), generator, endpoint, busy)


def sampler(root: psutil.Process, out: list[Sample], stop: threading.Event) -> None:
    endpoints: dict[int, bool] = {}
    while not stop.is_set():
        out.append(sample(root, endpoints))
        stop.wait(1.0)


def between(samples: list[Sample], start: float, end: float) -> tuple[Sample, Sample] | None:
    inside = [s for s in samples if start <= s.at <= end]
    return (inside[0], inside[-1]) if len(inside) >= 2 else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 2, help="Locust --processes (default: cores)")
    ap.add_argument("--window", type=int, default=60, help="seconds per window (default 60, as shipped)")
    ap.add_argument("--from", dest="rate_from", type=int, default=1000)
    ap.add_argument("--to", type=int, default=8000)
    ap.add_argument("--step", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=0, help="override the scenario's concurrency")
    args = ap.parse_args()
    windows = (args.to - args.rate_from) // args.step + 1
    with tempfile.TemporaryDirectory(prefix="bench-ramp-") as tmp:
        work = Path(tmp)
        (work / "ramp.yaml").write_text(scenario_text(args))
        argv = [sys.executable, "-c", "import sys; from dynlocust.cli import main; sys.exit(main(sys.argv[1:]))"]
        argv += ["run", "ramp.yaml", "--processes", str(args.processes), "--run-id", "ramp"]
        log = (work / "run.log").open("wb")
        proc = subprocess.Popen(argv, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        samples: list[Sample] = []
        stop = threading.Event()
        thread = threading.Thread(target=sampler, args=(psutil.Process(proc.pid), samples, stop), daemon=True)
        thread.start()
        try:
            proc.wait(timeout=windows * args.window + 180)
        finally:
            stop.set()
            thread.join(5)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        results = work / "results" / "ramp" / "results.jsonl"
        if not results.exists():
            print((work / "run.log").read_text(errors="replace")[-3000:])
            print(f"the run wrote no results (exit {proc.returncode})")
            return 1
        records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        report(records, samples, args, proc.returncode)
    return 0


def report(records: list[dict[str, Any]], samples: list[Sample], args: argparse.Namespace, code: int | None) -> None:
    run = next(r for r in records if r["type"] == "run")
    rates = {w["index"]: w["rate"] for w in run["windows"]}
    cores = psutil.cpu_count() or 1
    print(f"\n== write-ceiling unscaled on the embedded endpoint: --processes {args.processes}, {cores} cores ==")
    print(
        f"{'window':>6}{'offered/s':>10}{'accepted/s':>11}{'throttled':>10}{'gen cores':>10}{'max proc':>9}"
        f"{'endpoint':>9}{'machine':>8}  client-bound"
    )
    best = 0.0
    clean = True
    bound_windows: list[tuple[dict[str, Any], tuple[float, float, float, float]]] = []
    for w in (r for r in records if r["type"] == "window"):
        span = between(samples, w["start"], w["start"] + w["duration"])
        if span is None:
            continue
        a, b = span
        dt = b.at - a.at
        gen = sum(b.generator.get(pid, cpu) - cpu for pid, cpu in a.generator.items()) / dt
        busiest = max((b.generator.get(pid, cpu) - cpu for pid, cpu in a.generator.items()), default=0.0) / dt
        endpoint = (b.endpoint - a.endpoint) / dt
        machine = (b.machine_busy - a.machine_busy) / dt / cores
        summary, saturation = w["summary"], w["saturation"]
        bound = bool(saturation["client_bound"])
        rate = rates[w["index"]]
        if bound:
            bound_windows.append((w, (gen, busiest, endpoint, machine)))
        clean = clean and not bound and not w["summary"]["partial"]
        if clean:
            best = rate
        why = ", ".join(saturation["reasons"]) if bound else "no"
        if w["summary"]["partial"]:
            why += " (partial: not fully observed, so it ends the clean stretch)"
        if bound:
            why += (
                f" (late {saturation['late']}, dropped {saturation['dropped']} of which stalled "
                f"{saturation['stalled']}, lag p99 {saturation['lag_p99'] * 1000:.0f} ms)"
            )
        print(
            f"{w['index']:>6}{rate:>10.0f}{summary['accepted_per_s']:>11.0f}{summary['throttled']:>10}{gen:>10.2f}"
            f"{busiest:>9.2f}{endpoint:>9.2f}{machine:>8.0%}  {why}"
        )
    print(f"highest offered rate with no client-bound window before it: {best:,.0f}/s (target: {args.to:,}/s)")
    for w, (gen, busiest, endpoint, machine) in bound_windows:
        rate = rates[w["index"]]
        sent = max(1.0, w["summary"]["sent"] / w["duration"])
        gen_us, end_us = gen / sent * 1e6, endpoint / sent * 1e6
        print(
            f"window {w['index']} at {rate:,.0f}/s: the generator spent {gen_us:.0f} us and the endpoint "
            f"{end_us:.0f} us of CPU per request sent; at the offered rate they need {gen_us * rate / 1e6:.2f} and "
            f"{end_us * rate / 1e6:.2f} cores, {(gen_us + end_us) * rate / 1e6:.2f} of this machine's {cores}"
        )
        if endpoint >= PINNED:
            print(f"  the endpoint ran out of CPU: its one process was {endpoint:.0%} busy")
        if busiest >= PINNED:
            print(f"  a generator process ran out of CPU: {busiest:.0%} busy (more --processes, or more machines)")
        if machine >= PINNED:
            others = max(0.0, machine * cores - gen - endpoint)
            short = (gen_us + end_us) * rate / 1e6 - (cores - others)
            print(
                f"  the machine ran out of CPU: {machine:.0%} of {cores} cores busy, {others:.2f} of them by other "
                f"processes; this run was {max(0.0, short):.2f} cores short of the offered rate"
            )
        if max(endpoint, busiest, machine) < PINNED:
            print("  no side was pinned: the cause is not CPU (see the reasons above, e.g. concurrency)")
    if code not in (0, None):
        print(f"(the run exited {code})")


if __name__ == "__main__":
    sys.exit(main())
