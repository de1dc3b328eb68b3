"""Route moto's server-mode traffic: DynamoDB to a real `dynlocust local`, everything else to moto's own server.

moto's tests in server mode send every AWS call to one endpoint (TEST_SERVER_MODE_ENDPOINT). The router reads
X-Amz-Target: DynamoDB and DynamoDB Streams calls go to dynlocust, the rest (moto-api, STS, IAM, CloudFormation,
S3 ... that the tests' fixtures touch) go to moto. moto's `POST /moto-api/reset`, sent when each test starts,
also empties dynlocust: the router deletes every table in every region it has seen, as moto forgets its own.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

DYNAMODB_TARGETS = ("DynamoDB_20120810.", "DynamoDBStreams_20120810.")
_REGION = re.compile(r"Credential=[^/]*/[^/]*/([^/]+)/")
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "transfer-encoding", "content-length", "host"))


def _forward(base: str, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list, bytes]:
    parts = urlsplit(base)
    assert parts.hostname is not None, base
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={**headers, "Host": parts.netloc})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


class Router:
    """An HTTP server on 127.0.0.1 (ephemeral port) in a background thread."""

    def __init__(self, dynamodb_url: str, moto_url: str) -> None:
        self.dynamodb_url = dynamodb_url
        self.moto_url = moto_url
        self.regions: set[str] = {"us-east-1"}
        self._lock = threading.Lock()
        router = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # the head and the body go out in two writes: with Nagle's algorithm the body waited for the client's
            # delayed ACK of the head, 40 ms a response (moto's 20,000-item batch test took 38 s, 1.5 s direct)
            disable_nagle_algorithm = True

            def log_message(self, *_args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                target = self.headers.get("X-Amz-Target", "")
                if target.startswith(DYNAMODB_TARGETS):
                    m = _REGION.search(self.headers.get("Authorization", ""))
                    if m:
                        with router._lock:
                            router.regions.add(m.group(1))
                    base = router.dynamodb_url
                else:
                    base = router.moto_url
                if self.command == "POST" and self.path.startswith("/moto-api/reset"):
                    router.reset_dynamodb()
                status, out_headers, out = _forward(base, self.command, self.path, headers, body)
                self.send_response(status)
                for k, v in out_headers:
                    if k.lower() not in _HOP_BY_HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str), host
        return f"http://{host}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _call(self, region: str, op: str, req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        headers = {
            "X-Amz-Target": "DynamoDB_20120810." + op,
            "Content-Type": "application/x-amz-json-1.0",
            # unsigned (dynlocust runs without --verify-signatures); the credential scope names the region
            "Authorization": f"AWS4-HMAC-SHA256 Credential=testing/20250101/{region}/dynamodb/aws4_request",
        }
        status, _, out = _forward(self.dynamodb_url, "POST", "/", headers, json.dumps(req).encode())
        return status, json.loads(out or b"{}")

    def reset_dynamodb(self) -> None:
        """Delete every table of every region seen so far (turning deletion protection off first)."""
        with self._lock:
            regions = sorted(self.regions)
        for region in regions:
            names: list[str] = []
            start: str | None = None
            for _ in range(1000):
                status, page = self._call(region, "ListTables", {"ExclusiveStartTableName": start} if start else {})
                if status != 200:
                    break
                names += page.get("TableNames", [])
                start = page.get("LastEvaluatedTableName")
                if not start:
                    break
            for name in names:
                status, _ = self._call(region, "DeleteTable", {"TableName": name})
                if status != 200:
                    self._call(region, "UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
                    self._call(region, "DeleteTable", {"TableName": name})
