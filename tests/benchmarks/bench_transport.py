"""boto3 against the fast transport, side by side inside Locust: signed requests per CPU-second and CPU per request.

Both transports run in this process, one after the other in alternating rounds, through `DynamoDBUser` and
`FastDynamoDBUser` in a Locust `Environment` with a local runner (request events and Locust's statistics on), against
the same endpoint: the project's local endpoint with capacity off, in its own process (the other core). CPU is this
process's own (`time.process_time`), so the endpoint's work is not counted; "per core" is requests per CPU-second.

Run: ``python tests/benchmarks/bench_transport.py [--seconds 5] [--rounds 3] [--users 10] [--op get|put|mixed]``
Add ``--tls`` to also measure both against a TLS front (self-signed certificate) proxying to the same endpoint, and
``--node-dir DIR`` (``npm install --prefix DIR @aws-sdk/client-dynamodb @smithy/node-http-handler``) to put one Node.js
process with AWS SDK v3 (one attempt, keep-alive) beside them.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import locust  # noqa: E402
from locust import constant, task  # noqa: E402
from locust.env import Environment  # noqa: E402

import gevent  # noqa: E402

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402
from dynlocust.plugin import context  # noqa: E402
from dynlocust.request.transport.boto3 import make_client  # noqa: E402
from dynlocust.user_classes.dynamodb_user import DynamoDBUser  # noqa: E402
from dynlocust.user_classes.fast_user import FastDynamoDBUser  # noqa: E402

TABLE = "bench-transport"
ITEM = {"pk": {"S": "key-0"}, "payload": {"S": "x" * 200}, "n": {"N": "42"}}
_ = locust


def make_user_class(base: type, host: str, op: str, verify: bool | str) -> type:
    counter = {"i": 0}

    class Bench(base):
        abstract = False
        wait_time = constant(0)

        @task
        def call(self) -> None:
            counter["i"] += 1
            i = counter["i"]
            if op == "get" or (op == "mixed" and i % 2):
                self.client.get_item(TableName=TABLE, Key={"pk": {"S": f"key-{i % 100}"}})
            else:
                self.client.put_item(TableName=TABLE, Item={**ITEM, "pk": {"S": f"key-{i % 100}"}})

    Bench.host = host
    Bench.verify = verify
    Bench.__name__ = f"Bench{base.__name__}"
    return Bench


def measure(
    base: type, host: str, op: str, users: int, seconds: float, verify: bool | str = True, warmup: float = 1.0
) -> dict[str, float]:
    return measure_loop(make_user_class(base, host, op, verify), users, seconds, warmup=warmup)


def measure_loop(user_class: type, users: int, seconds: float, *, warmup: float = 1.0) -> dict[str, float]:
    """`users` of `user_class` in a local runner: requests, failures and this process's CPU over `seconds`."""
    env = Environment(user_classes=[user_class])
    runner = env.create_local_runner()
    runner.start(users, spawn_rate=min(users * 10, 100))
    gevent.sleep(warmup)
    stats = env.stats.total
    n0, f0, c0, t0 = stats.num_requests, stats.num_failures, time.process_time(), time.perf_counter()
    gevent.sleep(seconds)
    n1, f1, c1, t1 = stats.num_requests, stats.num_failures, time.process_time(), time.perf_counter()
    runner.quit()
    for client in context.state_for(env).clients.values():
        client.close()
    requests = n1 - n0
    cpu = c1 - c0
    return {
        "requests": requests,
        "failures": f1 - f0,
        "rps": requests / (t1 - t0),
        "cpu_us": cpu / requests * 1e6 if requests else float("inf"),
        "per_core": requests / cpu if cpu else 0.0,
        "cpu_share": cpu / (t1 - t0),
    }


NODE_SCRIPT = r"""
const { DynamoDBClient, GetItemCommand, PutItemCommand } = require("@aws-sdk/client-dynamodb");
const { NodeHttpHandler } = require("@smithy/node-http-handler");
const http = require("http"), https = require("https"), fs = require("fs");
const [url, seconds, users, warmup, op, ca] = process.argv.slice(2);
const agentOptions = { keepAlive: true, maxSockets: Number(users) };
if (ca) agentOptions.ca = fs.readFileSync(ca);
const handler = new NodeHttpHandler({
  httpAgent: new http.Agent(agentOptions), httpsAgent: new https.Agent(agentOptions),
});
const client = new DynamoDBClient({
  endpoint: url, region: "us-east-1", maxAttempts: 1, requestHandler: handler,
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
});
const item = { payload: { S: "x".repeat(200) }, n: { N: "42" } };
let count = 0, failures = 0, measuring = false, stop = false, serial = 0;
async function worker() {
  while (!stop) {
    const i = ++serial;
    const key = { pk: { S: `key-${i % 100}` } };
    const get = op === "get" || (op === "mixed" && i % 2);
    const command = get ? new GetItemCommand({ TableName: "bench-transport", Key: key })
                        : new PutItemCommand({ TableName: "bench-transport", Item: { ...item, ...key } });
    try { await client.send(command); } catch (e) { if (measuring) failures++; }
    if (measuring) count++;
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  const workers = Array.from({ length: Number(users) }, worker);
  await sleep(Number(warmup) * 1000);
  const c0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  measuring = true;
  await sleep(Number(seconds) * 1000);
  measuring = false;
  const c = process.cpuUsage(c0), wall = Number(process.hrtime.bigint() - t0) / 1e9;
  stop = true;
  await Promise.all(workers);
  const cpu = (c.user + c.system) / 1e6;
  console.log(JSON.stringify({ requests: count, failures, rps: count / wall, cpu_us: cpu / count * 1e6,
                               per_core: count / cpu, cpu_share: cpu / wall }));
  process.exit(0);
})();
"""


def measure_node(node_dir: str, url: str, args: argparse.Namespace, ca: str = "") -> dict[str, float]:
    """The measured study's instrument class: one Node.js process, AWS SDK v3, one attempt, keep-alive."""
    script = os.path.join(node_dir, "bench_dynamodb.js")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(NODE_SCRIPT)
    argv = ["node", script, url, str(args.seconds), str(args.users), "2", args.op, ca]  # 2 s warm-up: the JIT
    done = subprocess.run(argv, cwd=node_dir, capture_output=True, text=True, timeout=args.seconds + 60, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def prepare(url: str) -> None:
    raw = make_client(url, region="us-east-1", connect_timeout=3, read_timeout=10, pool_size=2, credentials=None)
    raw.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    while raw.describe_table(TableName=TABLE)["Table"]["TableStatus"] != "ACTIVE":
        time.sleep(0.05)
    for i in range(100):
        raw.put_item(TableName=TABLE, Item={**ITEM, "pk": {"S": f"key-{i}"}})


def compare(label: str, url: str, args: argparse.Namespace, verify: bool | str = True) -> None:
    results: dict[str, list[dict[str, float]]] = {"boto3": [], "fast": []}
    if args.node_dir:
        results["node-sdk-v3"] = []
    for _ in range(args.rounds):
        results["boto3"].append(measure(DynamoDBUser, url, args.op, args.users, args.seconds, verify))
        results["fast"].append(measure(FastDynamoDBUser, url, args.op, args.users, args.seconds, verify))
        if args.node_dir:
            ca = verify if isinstance(verify, str) else ""
            results["node-sdk-v3"].append(measure_node(args.node_dir, url, args, ca))
    print(f"\n== {label}: op={args.op} users={args.users} {args.rounds} x {args.seconds:g} s per transport ==")
    print(f"{'transport':<10}{'req/s':>10}{'CPU us/req':>12}{'req/CPU-s':>12}{'CPU busy':>10}{'failures':>10}")
    medians: dict[str, dict[str, float]] = {}
    for name, runs in results.items():
        med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        medians[name] = med
        per_core_runs = ", ".join(f"{r['per_core']:.0f}" for r in runs)
        spread = f"(per-core runs: {per_core_runs})"
        print(
            f"{name:<10}{med['rps']:>10.0f}{med['cpu_us']:>12.1f}{med['per_core']:>12.0f}"
            f"{med['cpu_share']:>10.0%}{sum(r['failures'] for r in runs):>10.0f}  {spread}"
        )
    ratio = medians["fast"]["per_core"] / medians["boto3"]["per_core"]
    print(
        f"fast / boto3, requests per CPU-second: {ratio:.1f}x (target >= 7x); fast per core: "
        f"{medians['fast']['per_core']:.0f}/s (target >= 4,000/s)"
    )
    if "node-sdk-v3" in medians:
        node = medians["node-sdk-v3"]["cpu_us"] / medians["fast"]["cpu_us"]
        print(f"Node.js SDK v3 / fast, CPU per request: {node:.1f}x (target >= 4x)")


def tls_front(backend_port: int) -> tuple[subprocess.Popen[bytes], str, str, tempfile.TemporaryDirectory[str]]:
    """A TLS-terminating proxy (self-signed certificate) in its own process, in front of the local endpoint."""
    tmp = tempfile.TemporaryDirectory(prefix="bench-tls-")
    cert, key = os.path.join(tmp.name, "cert.pem"), os.path.join(tmp.name, "key.pem")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    ready = os.path.join(tmp.name, "ready")
    code = f"""
from gevent import monkey; monkey.patch_all()
import gevent, socket
from gevent.server import StreamServer
def pipe(a, b):
    try:
        while (d := a.recv(65536)):
            b.sendall(d)
    except OSError:
        pass
    finally:
        a.close(); b.close()
def handle(client, _addr):
    upstream = socket.create_connection(("127.0.0.1", {backend_port}))
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    gevent.spawn(pipe, upstream, client)
    pipe(client, upstream)
server = StreamServer(("127.0.0.1", 0), handle, certfile={cert!r}, keyfile={key!r})
server.start()
open({ready!r}, "w").write(str(server.server_port))
server.serve_forever()
"""
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 10
    while not os.path.exists(ready) or not read(ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("TLS front did not start")
        time.sleep(0.05)
    return proc, f"https://127.0.0.1:{read(ready)}", cert, tmp


def read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--op", choices=["get", "put", "mixed"], default="get")
    parser.add_argument("--tls", action="store_true", help="also compare through a local TLS front")
    parser.add_argument(
        "--node-dir",
        default="",
        help="a directory with @aws-sdk/client-dynamodb and @smithy/node-http-handler installed (npm, e.g. under "
        "/tmp): adds one Node.js process with AWS SDK v3 against the same endpoint",
    )
    args = parser.parse_args()
    os.environ.pop("AWS_PROFILE", None)
    endpoint = LocalEndpoint(capacity=False).start()
    try:
        prepare(endpoint.url)
        compare("plain HTTP, local endpoint in its own process", endpoint.url, args)
        if args.tls:
            proc, url, cert, tmp = tls_front(endpoint.port)
            try:
                os.environ["AWS_CA_BUNDLE"] = cert  # botocore verifies the self-signed front against it
                compare("TLS (self-signed front proxying to the same endpoint)", url, args, verify=cert)
            finally:
                proc.terminate()
                proc.wait(5)
                tmp.cleanup()
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
