"""Two versions of the local endpoint side by side: server CPU per request and memory per stored item.

Why: a change to the store must be weighed against the tree it replaces on the same busy machine at the same
minute. `--base` names another checkout of the project (e.g. `git worktree add /tmp/base <commit>`); this tree's
endpoint and that one's run as two processes, each filled to `--items` 1 KB items (UUID keys, as
`bench_endpoint_scaling.py` writes them). Then, for PutItem (fresh keys), GetItem, Query, UpdateItem (`SET n = n + :one`
on a stored key) and a Scan page (Limit 100), cells of `--seconds` alternate between the two (the order swapped
each repeat); each pair's ratio new / base of server CPU per call (psutil: the process's user + system time) is
kept, and the median of the ratios is printed with their range. Puts a cell added are deleted after it. Last, the
bytes of RSS each endpoint grew per stored item since its table was created, with the ratio.

    python tests/benchmarks/bench_endpoint_versions.py --base /tmp/base [--items 100000] [--seconds 2] [--repeats 5]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.benchmarks.bench_endpoint_scaling import OPERATIONS, TABLE, Server, fill, measure, trim  # noqa: E402
from tests.benchmarks.bench_local_endpoint import Conn, stop  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION_OPS = ("PutItem", "GetItem", "Query", "UpdateItem", "Scan page")


def update(server: Server, conn: Conn, rng: random.Random) -> int:
    key = server.keys[rng.randrange(len(server.keys))]
    body = {
        "TableName": TABLE,
        "Key": {"pk": {"S": key}},
        "UpdateExpression": "SET n = n + :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }
    return server.call(conn, "UpdateItem", body)[0]


OPERATIONS["UpdateItem"] = update


def start(name: str, tree: str, workdir: str) -> tuple[subprocess.Popen[bytes], Server]:
    """The endpoint of the checkout `tree` in its own process on 127.0.0.1, capacity emulation off."""
    ready = os.path.join(workdir, f"{name}.ready")
    env = {**os.environ, "PYTHONPATH": tree}
    argv = [sys.executable, "-m", "dynlocust.local", "--host", "127.0.0.1", "--port", "0", "--no-capacity"]
    proc = subprocess.Popen([*argv, "--ready-file", ready], cwd=tree, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{name}: the endpoint of {tree} did not start (exit code {proc.poll()})")
        time.sleep(0.05)
    time.sleep(0.05)  # the file is written whole, then closed
    with open(ready, encoding="utf-8") as fh:
        port = int(fh.read().strip().rsplit(":", 1)[1])
    return proc, Server(name, port, proc.pid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the other checkout's root directory")
    ap.add_argument("--items", type=int, default=100_000, help="items stored before the cells")
    ap.add_argument("--seconds", type=float, default=2.0, help="length of one measured cell")
    ap.add_argument("--repeats", type=int, default=5, help="pairs of cells per operation")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--ops", default=",".join(VERSION_OPS), help="operations to measure (none: memory only)")
    args = ap.parse_args()
    base = os.path.abspath(args.base)
    if not os.path.isfile(os.path.join(base, "dynlocust", "local", "store.py")):
        raise SystemExit(f"--base: expected a checkout of this project, found no dynlocust/local/store.py in {base}")
    ops = [op for op in args.ops.split(",") if op]
    unknown = [op for op in ops if op not in OPERATIONS]
    if unknown:
        raise SystemExit(f"--ops: expected some of {', '.join(VERSION_OPS)}, found {', '.join(unknown)}")
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as workdir:
        try:
            servers: dict[str, Server] = {}
            for name, tree in (("base", base), ("new", ROOT)):
                proc, servers[name] = start(name, tree, workdir)
                procs.append(proc)
            rss0: dict[str, int] = {}
            for s in servers.values():
                s.create_table()
                rss0[s.name] = s.proc.memory_info().rss
            step = max(25, args.items // 20)  # filled in turns: both see the machine alike
            for target in range(step, args.items + step, step):
                for s in servers.values():
                    fill(s, min(target, args.items), args.clients)
            per_item = {n: (s.proc.memory_info().rss - rss0[n]) / len(s.keys) for n, s in servers.items()}
            print(f"== {args.items:,} 1 KB items in each; base = {base}, new = {ROOT} ==")
            print(f"{'op':<12}{'base us':>9}{'new us':>9}{'new/base':>10}  range of the {args.repeats} pairs")
            for op in ops:
                ratios, best = [], {"base": float("inf"), "new": float("inf")}
                for r in range(args.repeats):
                    order = ("base", "new") if r % 2 == 0 else ("new", "base")
                    cost: dict[str, float] = {}
                    for name in order:
                        s = servers[name]
                        cost[name] = measure(s, op, args.seconds, args.clients)["cpu_us"]
                        trim(s, args.items, args.clients)
                        best[name] = min(best[name], cost[name])
                    ratios.append(cost["new"] / cost["base"])
                print(
                    f"{op:<12}{best['base']:>9.1f}{best['new']:>9.1f}{statistics.median(ratios):>10.3f}"
                    f"  {min(ratios):.3f}-{max(ratios):.3f}"
                )
            print("(us: the cheapest cell of each; new/base: the median of the pairs' ratios)")
            b, n = per_item["base"], per_item["new"]
            print(f"RSS per stored item: base {b:,.0f} B, new {n:,.0f} B, new/base {n / b:.3f}")
        finally:
            for proc in procs:
                stop(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
