"""How often does `dynlocust diff` call two runs of the same scenario different? Its false alarm rate.

Each repeat runs one scenario twice (real `dynlocust run` processes against the embedded local endpoint) and diffs
the two: "no significant change" means no cell of the table is significant (Holm-corrected tests, exact figures
changed). A diff that is refused (a window client-bound on a busy machine, say) is counted apart, not as a pass.
Target on an idle machine: no significant change in at least 19 of 20 repeats.

Run: ``python tests/benchmarks/bench_diff.py [--repeats 20] [--scenario FILE]``.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dynlocust.observe.diff.errors import DiffError  # noqa: E402
from dynlocust.observe.diff.load import RunSide, load_side  # noqa: E402
from dynlocust.observe.diff.runs import QUANTILES, diff_runs  # noqa: E402
from dynlocust.observe.diff.stats import RUN_NOISE  # noqa: E402

SCENARIO = """\
name: diff-noise
target: {local: {capacity_scale: 1.0}}
transport: boto3
tables:
  - {name: items, partition_key: {name: pk, type: S}, seed: {items: 500, item_size: 200}}
workload:
  item_size: 200
  operations: [{op: put, weight: 3}, {op: get, weight: 1}]
phases:
  - steps: [{rate: 40, window: 8s}, {rate: 80, window: 8s}]
concurrency: 24
deadline: 2s
bin: 1s
"""


def run(scenario: Path, results: Path, run_id: str) -> int:
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", str(results)]
    argv += ["--run-id", run_id, "--metrics-port", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--scenario", type=Path, help="scenario file (default: a put/get mix of two windows)")
    parser.add_argument(
        "--ignore-client-bound",
        action="store_true",
        help="busy machines only: compare client-bound windows anyway (a measurement of the tests, not a diff "
        "dynlocust would make; the output says so)",
    )
    args = parser.parse_args()
    quiet = significant = refused = 0
    log_ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        scenario = args.scenario or Path(tmp) / "scenario.yaml"
        if args.scenario is None:
            scenario.write_text(SCENARIO)
        results = Path(tmp) / "results"
        started = time.monotonic()
        for repeat in range(args.repeats):
            codes = [run(scenario, results, f"r{repeat}-{side}") for side in ("baseline", "new")]
            try:
                base, new = (load_side(results / f"r{repeat}-{side}", side) for side in ("baseline", "new"))
                assert isinstance(base, RunSide) and isinstance(new, RunSide)
                if args.ignore_client_bound:
                    for w in [*base.report.windows, *new.report.windows]:
                        throttled = w.summary["throttled"] or w.summary["unprocessed_requests"]
                        if w.verdict == "client-bound":  # what `verdict.verdict` says next, minus errors
                            w.verdict = "throttled" if throttled else "ok"
                every = diff_runs(base, new).cells
                cells = [c for c in every if c.significant]
                for c in every:
                    if c.metric.name in QUANTILES and isinstance(c.base, float) and isinstance(c.new, float):
                        log_ratios.setdefault(c.metric.name, []).append(math.log(c.new / c.base))
            except DiffError as exc:
                refused += 1
                print(f"repeat {repeat + 1}: refused (run exit codes {codes}): {exc}", flush=True)
                continue
            if cells:
                significant += 1
                found = ", ".join(f"{c.metric.name} {c.row} ({c.change and c.change * 100:+.1f}%)" for c in cells)
                print(f"repeat {repeat + 1}: significant change: {found}", flush=True)
            else:
                quiet += 1
                print(f"repeat {repeat + 1}: no significant change", flush=True)
        compared = quiet + significant
        print(
            f"\n{args.repeats} repeats in {time.monotonic() - started:.0f} s: {compared} compared, {refused} refused; "
            f"no significant change in {quiet} of {compared}"
            + (f" ({quiet / compared:.0%}; target >= 95% on an idle machine)" if compared else "")
        )
        print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        # two runs of one build differ in log(percentile) by the difference of two draws: sigma^2 = E[L^2] / 2
        # (this includes sampling, so it over-states the run-to-run part a little: a safe side to err on)
        noise = {q: math.sqrt(sum(x * x for x in v) / len(v) / 2) for q, v in log_ratios.items() if v}
        if noise:
            print(
                "run-to-run noise of latency percentiles (sd of log, over every compared window and operation): "
                + ", ".join(f"{q} {s:.1%}" for q, s in noise.items())
                + "; dynlocust diff assumes --run-noise "
                + ",".join(f"{q}={s:.0%}" for q, s in RUN_NOISE.items())
            )
        if args.ignore_client_bound:
            print("client-bound windows were compared anyway (--ignore-client-bound): dynlocust diff refuses them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
