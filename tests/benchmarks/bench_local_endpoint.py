"""Side by side: dynlocust's local endpoint vs moto's server, PutItem and GetItem of 1 KB items.

Each server runs in its own process pinned to core 0 (when the machine has 2+ cores); this process is the
client, pinned to core 1: 50 gevent greenlets, each with one raw keep-alive socket sending pre-built requests
(no signing: neither server verifies), so the client costs as little as possible.

    python tests/benchmarks/bench_local_endpoint.py [--seconds 3] [--rounds 3] [--clients 50]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
import psutil  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402

TABLE = "bench"
AUTH = (
    "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64
)


def pin(pid: int, core: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(pid, {core})


def request(port: int, op: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: DynamoDB_20120810.{op}\r\nX-Amz-Date: 20260101T000000Z\r\nAuthorization: {AUTH}\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode() + data


class Conn:
    """One keep-alive connection; reconnects when the server closes it (moto's werkzeug speaks HTTP/1.0)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None
        self.buf = b""
        self.reconnects = 0

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        return sock

    def call(self, raw: bytes) -> tuple[int, bytes]:
        if self.sock is None:
            self.sock = self._connect()
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = 0
        close = head.startswith(b"HTTP/1.0")
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"connection":
                close = v.strip().lower() == b"close" or (close and v.strip().lower() != b"keep-alive")
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            rest += chunk
        self.buf = rest[length:]
        if close:
            self.sock.close()
            self.sock = None
            self.reconnects += 1
        return int(head.split(b" ", 2)[1]), rest[:length]


def setup(port: int) -> None:
    c = Conn(port)
    status, body = c.call(
        request(
            port,
            "CreateTable",
            {
                "TableName": TABLE,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
    )
    if status != 200:
        raise SystemExit(f"CreateTable failed on port {port}: {status} {body[:200]!r}")


def run(port: int, op: str, seconds: float, clients: int, keys: int) -> tuple[float, int]:
    payload = "x" * 1000

    def body(i: int) -> dict:
        key = {"pk": {"S": f"k{i % keys:08d}"}}
        if op == "PutItem":
            return {"TableName": TABLE, "Item": {**key, "v": {"S": payload}}}
        return {"TableName": TABLE, "Key": key}

    prebuilt = [request(port, op, body(i)) for i in range(keys)]
    done = [0]
    errors = [0]
    stop_at = [0.0]

    def worker(w: int) -> None:
        c = Conn(port)
        i = w
        while time.perf_counter() < stop_at[0]:
            status, _ = c.call(prebuilt[i % keys])
            if status == 200:
                done[0] += 1
            else:
                errors[0] += 1
            i += clients

    stop_at[0] = time.perf_counter() + seconds
    t0 = time.perf_counter()
    gevent.joinall([gevent.spawn(worker, w) for w in range(clients)])
    elapsed = time.perf_counter() - t0
    return done[0] / elapsed, errors[0]


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_moto() -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    moto_bin = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = subprocess.Popen(
        [moto_bin, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise SystemExit("moto_server did not start within 30 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one measured run")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; the median is reported")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--keys", type=int, default=2000)
    args = ap.parse_args()
    pin(0, 1)
    ep = LocalEndpoint(capacity=False)
    ep.start()
    moto: subprocess.Popen[bytes] | None = None
    try:
        moto, moto_port = start_moto()
        assert ep.pid is not None
        pin(ep.pid, 0)
        pin(moto.pid, 0)
        servers = {"dynlocust": ep.port, "moto": moto_port}
        procs = {"dynlocust": psutil.Process(ep.pid), "moto": psutil.Process(moto.pid)}
        for port in servers.values():
            setup(port)
        rates: dict[tuple[str, str], list[float]] = {}
        per_cpu: dict[tuple[str, str], list[float]] = {}  # requests per second of server CPU
        # alternate servers within each round so that load from other processes hits both alike
        for rnd in range(args.rounds):
            for op in ("PutItem", "GetItem"):
                for name, port in servers.items():
                    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
                    srv0 = sum(procs[name].cpu_times()[:2])
                    rate, errs = run(port, op, args.seconds, args.clients, args.keys)
                    srv1 = sum(procs[name].cpu_times()[:2])
                    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
                    client_cpu = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / args.seconds
                    rates.setdefault((name, op), []).append(rate)
                    per_cpu.setdefault((name, op), []).append(rate / max((srv1 - srv0) / args.seconds, 1e-6))
                    print(
                        f"round {rnd} {name:9s} {op:8s} {rate:9.0f} req/s  errors={errs}  "
                        f"client cpu {client_cpu:4.0%}  server cpu {(srv1 - srv0) / args.seconds:4.0%}",
                        flush=True,
                    )
        print(f"median of {args.rounds} rounds, {args.clients} keep-alive clients, 1 KB items:")
        for op in ("PutItem", "GetItem"):
            ours = statistics.median(rates[("dynlocust", op)])
            theirs = statistics.median(rates[("moto", op)])
            print(f"  {op:8s} dynlocust {ours:8.0f} req/s  moto {theirs:6.0f} req/s  ratio {ours / theirs:5.1f}x")
            ours_cpu = statistics.median(per_cpu[("dynlocust", op)])
            theirs_cpu = statistics.median(per_cpu[("moto", op)])
            print(
                f"  {op:8s} per server CPU-second: dynlocust {ours_cpu:8.0f}  moto {theirs_cpu:6.0f}  "
                f"ratio {ours_cpu / theirs_cpu:5.1f}x"
            )
        print("  (client cpu near 100%: the client was the limit and the ratio is a floor; server cpu well under")
        print("   100% with the client idle too: other processes shared core 0, and moto's 50 threads win the CPU")
        print("   scheduler against one gevent thread: then the per-CPU-second ratio is the fair one)")
    finally:
        ep.stop()
        if moto is not None:
            stop(moto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
