"""Mapper overhead over the raw client: `dynlocust compare` against the local endpoint, checked against 1.05x.

Run: `.venv/bin/python tests/benchmarks/bench_mapper_overhead.py [--runs 5] [--repeat 7] [--endpoint URL]`
Prints the comparison table, then the rows whose median ratio is above the issue's target (1.05x) with their
spread. Always exits 0: a measurement, not a test. On a shared machine the spreads are wide; rerun before
believing a single row.
"""

from __future__ import annotations

import argparse
import statistics

import locust  # noqa: F401 - first: gevent patching before botocore

from dynlocust.compare.cli import run
from dynlocust.compare.measure import format_table
from dynlocust.local.embedded import LocalEndpoint

TARGET = 1.05


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--endpoint")
    args = parser.parse_args()
    local = None if args.endpoint else LocalEndpoint(capacity=False).start()
    try:
        endpoint = args.endpoint or local.url  # type: ignore[union-attr]
        rows = run(endpoint, runs=args.runs, repeat=args.repeat)
    finally:
        if local is not None:
            local.stop()
    print(format_table(rows, args.runs, args.repeat, endpoint))
    over = [(row.name, statistics.median(row.ratios), min(row.ratios)) for row in rows]
    over = [entry for entry in over if entry[1] > TARGET]
    print(f"\nrows above {TARGET:.2f}x: {len(over)} of {len(rows)}")
    for name, ratio, low in over:
        print(f"  {name}: {ratio:.2f}x (best run {low:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
