"""A CPU-time sampling profiler for a generator process, with greenlets: where does a request's CPU go?

Why sampling and not cProfile: under gevent, cProfile's single call stack is torn apart by greenlet switches. A
SIGPROF timer (`ITIMER_PROF`, process CPU time) interrupts whatever greenlet is running; the handler walks that
greenlet's frames outward and files the sample under the first part of the request path it recognises.

Used by `bench_scenario_generator.py`: `python cpu_sampler.py OUT.json -- ARGV...` runs `dynlocust ARGV`; SIGUSR1
starts sampling and SIGUSR2 stops it (so set-up and teardown are not counted); at exit the counts go to OUT.json.
"""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from types import FrameType

INTERVAL = 0.002
"""Seconds of CPU between samples: 500 samples per CPU-second."""

# (bucket, path fragment): the first frame (innermost outward) whose file matches decides the bucket.
RULES: tuple[tuple[str, str], ...] = (
    ("pacing", "dynlocust/run/pacing.py"),
    ("bookkeeping", "dynlocust/run/saturation.py"),
    ("bookkeeping", "dynlocust/plugin/safety.py"),
    ("building", "dynlocust/request/operations.py"),
    ("building", "dynlocust/request/keys.py"),
    ("transport", "dynlocust/request/transport/"),
    ("transport", "botocore/"),
    ("transport", "urllib3/"),
    ("transport", "http/client.py"),
    ("metrics", "dynlocust/observe/metrics.py"),
    ("metrics", "prometheus_client/"),
    ("tally", "dynlocust/run/tally.py"),
    ("tally", "dynlocust/run/histogram.py"),
    ("tally", "dynlocust/request/outcomes.py"),
    ("tally", "dynlocust/run/local_run.py"),
    ("client wrapper", "dynlocust/request/client.py"),
    ("Locust events/stats", "locust/"),
    ("dynlocust other", "dynlocust/"),
)
GEVENT = "gevent"

counts: Counter[str] = Counter()
details: Counter[str] = Counter()
"""Per bucket, the deciding frame's function and the innermost frame's (what the bucket's time is spent in)."""
_active = False


def _where(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"


def classify(frame: FrameType | None) -> tuple[str, str]:
    saw_gevent = False
    f = frame
    while f is not None:
        name = f.f_code.co_filename
        for bucket, fragment in RULES:
            if fragment in name:
                inner = "" if f is frame or frame is None else f" > {_where(frame)}"
                return bucket, f"{bucket}: {_where(f)}{inner}"
        if "gevent/" in name:
            saw_gevent = True
        f = f.f_back
    bucket = "gevent hub (I/O wake-ups, timers)" if saw_gevent else "other"
    return bucket, f"{bucket}: {_where(frame) if frame is not None else '?'}"


def _sample(signum: int, frame: FrameType | None) -> None:
    if _active:
        bucket, detail = classify(frame)
        counts[bucket] += 1
        details[detail] += 1


def _start(signum: int, frame: FrameType | None) -> None:
    global _active
    counts.clear()
    details.clear()
    _active = True


def _stop(signum: int, frame: FrameType | None) -> None:
    global _active
    _active = False


def main() -> int:
    out = sys.argv[1]
    argv = sys.argv[sys.argv.index("--") + 1 :]
    signal.signal(signal.SIGPROF, _sample)
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)
    from dynlocust.cli import main as dynlocust_main

    try:
        code = dynlocust_main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"buckets": dict(counts), "details": dict(details)}, fh)
    return code


if __name__ == "__main__":
    sys.exit(main())
