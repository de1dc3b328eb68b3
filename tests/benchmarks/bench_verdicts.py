"""How often the verdicts are wrong: false ``client-bound`` on the shipped quickstart, and starved runs missed.

Runs ``dynlocust run scenarios/quickstart.yaml`` N times (its embedded endpoint, nothing else asked of the machine)
and counts the windows judged ``client-bound``: every one is a false positive, the target is 0. Then runs the same
scenario N times with a CPU hog in the worker (tests/integration/hog_locustfile.py) and counts the runs whose every
judged window is flagged ``client-bound`` with ``cpu`` or ``lag`` among its reasons: the target is 100%.

Each run takes about 75 s. Run: ``python tests/benchmarks/bench_verdicts.py [--runs 5] [--out DIR]``. On a shared
machine, say so next to the figures: a busy host can make the client really late (then the flag is right).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dynlocust.run.results import read_results  # noqa: E402

QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"
HOG = ROOT / "tests" / "integration" / "hog_locustfile.py"


def run(out: Path, run_id: str, *, starved: bool) -> list[dict[str, Any]]:
    """One quickstart run; its merged window records."""
    if starved:
        argv = [sys.executable, "-m", "locust", "-f", str(HOG), "--headless", "--scenario", str(QUICKSTART)]
    else:
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(QUICKSTART)]
    argv += ["--results-dir", str(out), "--run-id", run_id, "--metrics-port", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    records = read_results(out / run_id / "results.jsonl") if (out / run_id / "results.jsonl").exists() else []
    if proc.returncode not in (0, 3):  # 3: the quickstart's SLO on throttles above the ceiling, as designed
        print(f"  {run_id}: exit code {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}")
    return [r for r in records if r["type"] == "window"]


def sent_share(window: dict[str, Any]) -> str:
    """The share of due sends that went out: what `SENT_TOLERANCE` (dynlocust/run/verdict.py) is judged on."""
    sat = window.get("saturation") or {}
    return f"{sat['sent'] / sat['due']:.1%}" if sat.get("due") else "-"


def labels(window: dict[str, Any]) -> list[str]:
    return list((window.get("verdict_detail") or {}).get("labels") or [window.get("verdict", "?")])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each kind (default 5)")
    parser.add_argument("--out", type=Path, default=None, help="results directory (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-verdicts-"))
    print(f"results in {out}; {args.runs} clean and {args.runs} starved quickstart runs")

    judged = flagged = discarded = 0
    for i in range(args.runs):
        windows = run(out, f"clean-{i}", starved=False)
        mine = [w for w in windows if labels(w)[0] not in ("partial", "not-run")]
        bound = [w for w in mine if "client-bound" in labels(w)]
        judged += len(mine)
        flagged += len(bound)
        discarded += sum(labels(w)[0] == "client-bound" for w in bound)
        shown = " ".join(f"{w['index']}:{'+'.join(labels(w))}" for w in windows)
        reasons = {w["index"]: (w["verdict_detail"]["reasons"], sent_share(w)) for w in bound}
        print(f"  clean-{i}: {shown}{f'  reasons, share sent {reasons}' if reasons else ''}")
    rate = flagged / judged if judged else float("nan")
    print(f"false positives: {flagged} of {judged} judged windows client-bound ({rate:.1%}; target 0)")
    print(f"  of which discarded (client-bound first, not judged): {discarded}; the rest were within the 5% tolerance")

    caught = 0
    for i in range(args.runs):
        windows = run(out, f"starved-{i}", starved=True)
        mine = [w for w in windows if labels(w)[0] not in ("partial", "not-run")]
        hit = bool(mine) and all(
            "client-bound" in labels(w) and {"cpu", "lag"} & set(w["verdict_detail"]["reasons"]) for w in mine
        )
        caught += hit
        shown = " ".join(f"{w['index']}:{'+'.join(labels(w))}{w['verdict_detail']['reasons']}" for w in windows)
        print(f"  starved-{i}: {'flagged' if hit else 'MISSED'}: {shown}")
    share = caught / max(args.runs, 1)
    print(f"starved runs flagged in every window: {caught} of {args.runs} ({share:.0%}; target 100%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
