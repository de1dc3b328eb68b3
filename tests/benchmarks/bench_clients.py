"""Client CPU per request side by side against one canned nginx: wrk, FastHttpUser, FastDynamoDBUser, DynamoDBUser.

Every client sends the same 1 KB PutItem body (`FastDynamoDBUser` and `DynamoDBUser` signed, through the project's
client wrapper and one Locust request event per call; `FastHttpUser` an unsigned POST of the same JSON; wrk the
same bytes from a Lua script, the floor) to the same canned-answer server (`tests/support/canned_server.py`), which
is never the limit. Each Locust client runs in a child process of its own (a fresh interpreter: no client's pool or
garbage is left to the next) with Locust's statistics on; its CPU is that process's `time.process_time` over the
measured seconds, so nginx's work is not counted. wrk's is its own CPU (`/proc/PID/stat`) over its whole run and
the requests nginx saw. The clients alternate, `--rounds` times; the medians and the ratio to FastHttpUser print
last (issue 48's target: `FastDynamoDBUser` at most 0.5x FastHttpUser).

Run: ``python tests/benchmarks/bench_clients.py [--seconds 5] [--rounds 3] [--users 20]
[--clients wrk,http,fast,boto3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from the clone's root

from tests.support.canned_server import TABLE, CannedServer

CLIENTS = {
    "wrk": "wrk (the floor)",
    "http": "Locust FastHttpUser, unsigned",
    "fast": "FastDynamoDBUser, signed",
    "boto3": "DynamoDBUser (boto3), signed",
}
TARGET = 0.5
"""FastDynamoDBUser's CPU per request over FastHttpUser's, at most (issue 48)."""
ITEM = {"pk": {"S": "0" * 32}, "n": {"N": "1"}, "pad": {"S": "x" * 990}}
"""A 1 KB item, as a scenario's `item_size: 1KB` builds it."""
TICKS = os.sysconf("SC_CLK_TCK")

CHILD = r"""
from gevent import monkey
monkey.patch_all()
import json, sys, uuid
import locust
from locust import constant, task
from locust.contrib.fasthttp import FastHttpUser
sys.path.insert(0, {root!r})
from dynlocust.user_classes.fast_user import FastDynamoDBUser
from dynlocust.user_classes.dynamodb_user import DynamoDBUser
from tests.benchmarks.bench_transport import measure_loop

kind, url, table, seconds, users = {kind!r}, {url!r}, {table!r}, {seconds!r}, {users!r}
item = json.loads({item!r})
body = json.dumps({{"TableName": table, "Item": item}}, separators=(",", ":"))
headers = {{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.PutItem"}}

if kind == "http":
    class User(FastHttpUser):
        wait_time = constant(0)
        host = url

        @task
        def put(self):
            item["pk"]["S"] = uuid.uuid4().hex
            self.client.post("/", data=json.dumps({{"TableName": table, "Item": item}}), headers=headers)
else:
    class User({{"fast": FastDynamoDBUser, "boto3": DynamoDBUser}}[kind]):
        abstract = False
        wait_time = constant(0)
        host = url

        @task
        def put(self):
            item["pk"]["S"] = uuid.uuid4().hex
            self.client.put_item(TableName=table, Item=item)

print(json.dumps(measure_loop(User, users, seconds)))
"""

WRK_SCRIPT = """\
wrk.method = "POST"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.PutItem"
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12)) / TICKS


def measure_wrk(server: CannedServer, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    script = workdir / "put.lua"
    body = json.dumps({"TableName": TABLE, "Item": ITEM}, separators=(",", ":"))
    script.write_text(WRK_SCRIPT.format(body=json.dumps(body)))
    argv = ["wrk", "-t1", f"-c{args.users}", f"-d{max(1, round(args.seconds))}s", "-s", str(script), server.url + "/"]
    n0, t0 = server.requests(), time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    cpu = 0.0
    while proc.poll() is None:  # /proc/PID/stat vanishes at exit: keep the last reading
        try:
            cpu = cpu_seconds(proc.pid)
        except (OSError, ValueError):
            break
        time.sleep(0.05)
    proc.wait()
    n1, t1 = server.requests(), time.perf_counter()
    requests = n1 - n0
    if not requests:
        raise RuntimeError(f"wrk sent nothing: {proc.stdout.read().decode(errors='replace') if proc.stdout else ''}")
    return {
        "requests": requests,
        "rps": requests / (t1 - t0),
        "cpu_us": cpu / requests * 1e6,
        "cpu_share": cpu / (t1 - t0),
    }


def measure_locust(kind: str, server: CannedServer, args: argparse.Namespace) -> dict[str, Any]:
    root = str(Path(__file__).resolve().parents[2])
    code = CHILD.format(
        root=root, kind=kind, url=server.url, table=TABLE, seconds=args.seconds, users=args.users, item=json.dumps(ITEM)
    )
    env = {k: v for k, v in os.environ.items() if k != "AWS_PROFILE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the {kind} client failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if result.get("failures"):
        raise RuntimeError(f"the {kind} client had {result['failures']} failures")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per client and round (5)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (3)")
    parser.add_argument(
        "--users",
        type=int,
        default=10,
        help="Locust users, and wrk's connections (10: the shared pool's size here, so no dynlocust user opens a "
        "connection per request; FastHttpUser keeps one per user)",
    )
    parser.add_argument("--clients", default="wrk,http,fast,boto3")
    args = parser.parse_args()
    kinds = [k for k in args.clients.split(",") if k]
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    with CannedServer() as server, tempfile.TemporaryDirectory(prefix="bench-clients-") as tmp:
        for _round in range(args.rounds):
            for kind in kinds:
                if kind == "wrk":
                    rows[kind].append(measure_wrk(server, args, Path(tmp)))
                else:
                    rows[kind].append(measure_locust(kind, server, args))
                r = rows[kind][-1]
                print(
                    f"round {_round + 1} {kind:<6} {r['rps']:>8.0f}/s {r['cpu_share']:>5.0%} CPU"
                    f" {r['cpu_us']:>7.1f} us/req"
                )
    print(f"\n== client CPU per request, 1 KB PutItem against one canned nginx, median of {args.rounds} rounds ==")
    medians = {k: statistics.median(r["cpu_us"] for r in rs) for k, rs in rows.items()}
    base = medians.get("http")
    for kind, us in medians.items():
        ratio = f"{us / base:.2f}x FastHttpUser" if base else ""
        print(f"{CLIENTS[kind]:<34}{us:>8.1f} us/req  {ratio}")
    if base and "fast" in rows:
        ratios = [f["cpu_us"] / h["cpu_us"] for f, h in zip(rows["fast"], rows["http"], strict=True)]
        ratio = statistics.median(ratios)
        verdict = "met" if ratio <= TARGET else "NOT met"
        print(
            f"FastDynamoDBUser / FastHttpUser, median of per-round ratios: {ratio:.2f}x"
            f" (target <= {TARGET}x: {verdict})"
        )


if __name__ == "__main__":
    main()
