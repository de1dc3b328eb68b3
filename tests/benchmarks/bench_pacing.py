"""What one core can hand out through the pacer, and the schedule lag at 50%, 80% and 100% of it.

Each ticket costs a fixed amount of CPU (a tight json encode standing in for building a request). First a
closed loop measures that work alone, then the pacer is driven at twice that rate to find its capacity
(tickets/s actually handed with the pacer's own cost included); then three runs at 50/80/100% of capacity print
schedule lag p50/p99/max and dropped sends. Run: ``python tests/benchmarks/bench_pacing.py [--work-us 150]``.
"""

from __future__ import annotations

import argparse
import json
import time

import gevent

from dynlocust.run.pacing import Pacer, Segment

PAYLOAD = {f"attr{i}": {"S": "x" * 20, "N": str(i * 1.5)} for i in range(12)}


def work(loops: int) -> None:
    for _ in range(loops):
        json.dumps(PAYLOAD)


def calibrate(target_us: float) -> tuple[int, float]:
    """Loops of the json encode whose CPU cost is close to ``target_us``, and that cost in seconds."""
    n = 2000
    t = time.process_time()
    work(n)
    per_loop = (time.process_time() - t) / n
    loops = max(1, round(target_us * 1e-6 / per_loop))
    return loops, loops * per_loop


def closed_loop_rate(loops: int, seconds: float) -> float:
    done = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        work(loops)
        done += 1
    return done / seconds


def stall_probe(seconds: float) -> tuple[int, float]:
    """Gaps > 2 ms seen by a busy loop: the box's own scheduling stalls, which no pacer can hide."""
    gaps = []
    last = time.perf_counter()
    end = last + seconds
    while last < end:
        now = time.perf_counter()
        if now - last > 0.002:
            gaps.append(now - last)
        last = now
    return len(gaps), max(gaps, default=0.0)


def paced_run(rate: float, seconds: float, loops: int, users: int) -> dict[str, float]:
    t0 = time.time() + 0.2
    pacer = Pacer([Segment(0, t0, seconds, rate)], max_lateness=0.1)

    def user() -> None:
        while pacer.acquire() is not None:
            work(loops)
            gevent.sleep(0)  # stands in for the request's I/O wait

    greenlets = [gevent.spawn(user) for _ in range(users)]
    pacer.start()
    gevent.sleep(t0 - time.time())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    gevent.sleep(seconds)
    cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
    gevent.joinall(greenlets, timeout=5)
    pacer.stop()
    gevent.killall(greenlets)
    c = pacer.window_counts(0)
    return {
        "rate": rate,
        "scheduled": c.scheduled,
        "handed": c.handed,
        "handed_per_s": c.handed / seconds,
        "dropped": c.dropped,
        "lag_p50_ms": (c.lag_p50 or 0.0) * 1e3,
        "lag_p99_ms": (c.lag_p99 or 0.0) * 1e3,
        "lag_max_ms": (c.lag_max or 0.0) * 1e3,
        "cpu": cpu_s / wall_s,
        "cpu_us_per_ticket": cpu_s / max(1, c.handed) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work-us", type=float, default=150.0, help="CPU per ticket, microseconds")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each paced run")
    parser.add_argument("--users", type=int, default=50)
    args = parser.parse_args()

    stalls, worst = stall_probe(1.0)
    print(f"machine: {stalls} stalls > 2 ms in 1 s of busy loop (worst {worst * 1e3:.1f} ms); lag p99 under load")
    print("         cannot beat these: a stall of s at load r leaves sends late for about s / (1 - r)")
    loops, cost = calibrate(args.work_us)
    bare = closed_loop_rate(loops, 1.0)
    print(f"work per ticket: {cost * 1e6:.0f} us CPU ({loops} json encodes); closed loop: {bare:,.0f}/s")
    over = paced_run(2 * bare, 2.0, loops, args.users)
    capacity = over["handed_per_s"]
    print(
        f"pacer capacity (driven at {2 * bare:,.0f}/s): {capacity:,.0f} tickets/s = {capacity / bare:.2f}x the "
        f"closed loop; pacer overhead ~{(1 / capacity - 1 / bare) * 1e6:.1f} us per ticket"
    )
    print(
        f"{'load':>9} {'rate/s':>8} {'handed/s':>9} {'dropped':>8} {'lag p50':>8} {'lag p99':>8} {'max':>8}"
        f" {'cpu':>5} {'cpu/ticket':>10}"
    )
    runs = [(f"{share:.0%}", share * capacity, loops) for share in (0.5, 0.8, 1.0)]
    runs.append(("no work", 0.8 * capacity, 0))  # the pacer and gevent alone, at the 80% rate
    for label, rate, n in runs:
        r = paced_run(rate, args.seconds, n, args.users)
        print(
            f"{label:>9} {r['rate']:>8,.0f} {r['handed_per_s']:>9,.0f} {r['dropped']:>8.0f} "
            f"{r['lag_p50_ms']:>6.2f}ms {r['lag_p99_ms']:>6.2f}ms {r['lag_max_ms']:>6.1f}ms {r['cpu']:>5.2f}"
            f" {r['cpu_us_per_ticket']:>8.0f}us"
        )


if __name__ == "__main__":
    main()
