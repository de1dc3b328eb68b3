"""How often does the mapper diff catch a real slowdown, and how often does it cry wolf? Welch vs ranks, simulated.

`compare --baseline` tests one ratio per run on each side. On a quiet machine the runs' log ratios spread by a few
percent; on a busy one some runs are thrown far out (CI saw 0.84x-1.85x around 1.16x). This draws both sides from
that shape: per-run noise `--noise` (sd of log), a share `--contaminated` of runs pushed by a uniform -15%..+80% in
log, a real shift `--shift` on the new side. It prints, for Welch's t-test on the logs and for the Mann-Whitney
rank test `compare` uses, the share of trials called significant (p < 0.05) with the shift (power) and without it
(false alarms), side by side at each number of runs.

Run: ``python tests/benchmarks/bench_mapper_diff_power.py [--trials 400] [--shift 0.09]``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from dynlocust.observe.diff.stats import ALPHA, log_ratio_test, rank_ratio_test


def draw(rng: random.Random, runs: int, center: float, noise: float, contaminated: float) -> list[float]:
    out = []
    for _ in range(runs):
        x = rng.gauss(math.log(center), noise)
        if rng.random() < contaminated:
            x += rng.uniform(-0.15, 0.6)
        out.append(math.exp(x))
    return out


def flagged(p: float | None) -> bool:
    return p is not None and p < ALPHA


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--shift", type=float, default=0.09, help="the new side's real slowdown (default 0.09: +9%%)")
    ap.add_argument("--noise", type=float, default=0.05, help="per-run sd of log ratio (default 0.05)")
    ap.add_argument("--runs", default="15,30", help="runs per side to try (default 15,30)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"{args.trials} trials per cell, +{args.shift:.0%} shift, per-run noise {args.noise:.0%}, alpha {ALPHA}")
    columns = ("power welch", "power ranks", "false welch", "false ranks")
    print(f"{'contaminated':>12}{'runs':>6}" + "".join(f"{c:>13}" for c in columns))
    for contaminated in (0.0, 0.2, 0.35):
        for runs in (int(r) for r in args.runs.split(",")):
            hits = {"welch": 0, "ranks": 0, "welch0": 0, "ranks0": 0}
            for _ in range(args.trials):
                base = draw(rng, runs, 1.06, args.noise, contaminated)
                for suffix, factor in (("", 1 + args.shift), ("0", 1.0)):
                    new = draw(rng, runs, 1.06 * factor, args.noise, contaminated)
                    hits["welch" + suffix] += flagged(log_ratio_test(base, new).p_value)
                    hits["ranks" + suffix] += flagged(rank_ratio_test(base, new).p_value)
            share = {k: v / args.trials for k, v in hits.items()}
            print(
                f"{contaminated:>12.0%}{runs:>6}{share['welch']:>13.2f}{share['ranks']:>13.2f}"
                f"{share['welch0']:>13.3f}{share['ranks0']:>13.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
