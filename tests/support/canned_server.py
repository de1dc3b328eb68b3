"""A canned-answer DynamoDB server: Debian's nginx answering fixed bodies (with their CRC32) by `X-Amz-Target`.

Why nginx: a client's CPU per request is only comparable when the server is never the limit and does not share the
client's interpreter; nginx answers a keep-alive request in a few microseconds of its own CPU. A `map` on the
`X-Amz-Target` header picks the body; `stub_status` counts the requests served, so a client in another process is
measured by what the server saw. Binds 127.0.0.1 only; runs in the foreground of a temporary prefix, not as root.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

TABLE = "bench-canned"
"""The one table the server describes (a scenario names it with `use_existing: true`)."""

PUT_SCENARIO = (
    """\
name: bench-canned-{transport}
target: remote
transport: {transport}
tables:
  - name: puts
    partition_key: {{name: pk, type: S}}
    billing: on_demand
    use_existing: true
    existing_table_name: """
    + TABLE
    + """
workload:
  item_size: 1KB
  keys: {{distribution: uniform}}
  operations:
    - {{op: put, weight: 1}}
phases:
  - name: hold
    hold: {{rate: {rate}, duration: {seconds}s, window: {window}s}}
concurrency: {concurrency}
deadline: 8s
limits: {{max_requests: {max_requests}, max_cost_dollars: 100.0}}
bin: 5s
"""
)
"""The benchmarks' scenario against this server: 1 KB puts of uniform keys into `TABLE` at a held `rate`, formatted
with `transport`, `rate`, `seconds`, `window`, `concurrency` and `max_requests`."""

_ARN = f"arn:aws:dynamodb:us-east-1:000000000000:table/{TABLE}"
_DESCRIPTION = {
    "TableName": TABLE,
    "TableStatus": "ACTIVE",
    "TableArn": _ARN,
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
    "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0, "NumberOfDecreasesToday": 0},
    "ItemCount": 0,
    "TableSizeBytes": 0,
    "CreationDateTime": 1700000000.0,
}
ANSWERS: dict[str, dict[str, Any]] = {
    "PutItem": {},
    "GetItem": {},
    "DescribeTable": {"Table": _DESCRIPTION},
    "ListTagsOfResource": {"Tags": []},
}
"""Operation -> the body it always gets (status 200); any other operation gets a validation error's body."""
_UNKNOWN = {"__type": "com.amazon.coral.validate#ValidationException", "message": "not canned"}

_CONF = """\
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    client_body_buffer_size 64k;
    map $http_x_amz_target $canned_body {{
{bodies}
        default '{unknown}';
    }}
    map $http_x_amz_target $canned_crc {{
{crcs}
        default {unknown_crc};
    }}
    server {{
        listen 127.0.0.1:{port};
        location = /_canned/status {{ stub_status; }}
        location / {{
            default_type application/x-amz-json-1.0;
            add_header x-amz-crc32 $canned_crc always;
            add_header x-amzn-RequestId canned always;
            return 200 $canned_body;
        }}
    }}
}}
"""


def _body(answer: dict[str, Any]) -> str:
    return json.dumps(answer, separators=(",", ":"))


def _conf(prefix: Path, port: int) -> str:
    bodies, crcs = [], []
    for op, answer in ANSWERS.items():
        target = f'"DynamoDB_20120810.{op}"'
        body = _body(answer)
        bodies.append(f"        {target} '{body}';")
        crcs.append(f"        {target} {zlib.crc32(body.encode())};")
    unknown = _body(_UNKNOWN)
    return _CONF.format(
        prefix=prefix,
        port=port,
        bodies="\n".join(bodies),
        crcs="\n".join(crcs),
        unknown=unknown,
        unknown_crc=zlib.crc32(unknown.encode()),
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CannedServer:
    """nginx in the foreground of a temporary prefix; `start()` returns once it answers."""

    def __init__(self, nginx: str | None = None) -> None:
        found = nginx or shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
        if found is None:
            raise RuntimeError("expected nginx on PATH or at /usr/sbin/nginx (apt-get install nginx), found none")
        self.nginx = found
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._dir = tempfile.TemporaryDirectory(prefix="canned-nginx-")
        self._proc: subprocess.Popen[bytes] | None = None
        self._status_reads = 0

    def start(self) -> CannedServer:
        if self._proc is not None:
            # a second nginx fails to bind but lives through its retries, and the first would outlive stop()
            raise RuntimeError("CannedServer already started: call start() once, or enter it with `with`")
        prefix = Path(self._dir.name)
        conf = prefix / "nginx.conf"
        conf.write_text(_conf(prefix, self.port))
        self._proc = subprocess.Popen(
            [self.nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                self.requests()
                return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                    self.stop()
                    raise RuntimeError(f"nginx did not start on {self.url}: {err.strip()}") from None
                time.sleep(0.05)

    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def requests(self) -> int:
        """Requests served so far, not counting the status requests themselves."""
        self._status_reads += 1
        with urllib.request.urlopen(self.url + "/_canned/status", timeout=5) as resp:
            lines = resp.read().decode().splitlines()
        # "server accepts handled requests" then " A H R"
        return int(lines[2].split()[2]) - self._status_reads

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._dir.cleanup()

    def __enter__(self) -> CannedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
