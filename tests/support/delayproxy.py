"""An HTTP proxy that delays one DynamoDB operation: a server-side slowdown injected without touching the endpoint.

`python -m tests.support.delayproxy --ready-file F --upstream URL --operation PutItem --delay 0.002` forwards every
request to URL (keep-alive, one upstream connection per client connection) and sleeps `--delay` seconds before
forwarding the named operation (matched on the `X-Amz-Target` header). It exits on its own after `--lifetime` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms delayed-ACK stalls
    upstream: tuple[str, int] = ("127.0.0.1", 0)
    operation = ""
    delay = 0.0

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self, "_upstream_conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(*self.upstream, timeout=30)
            self._upstream_conn = conn
        return conn

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.operation and self.headers.get("X-Amz-Target", "").endswith("." + self.operation):
            time.sleep(self.delay)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        conn = self._connection()
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = self._upstream_conn = http.client.HTTPConnection(*self.upstream, timeout=30)
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
        payload = response.read()
        self.send_response(response.status)
        for k, v in response.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _forward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--operation", default="PutItem")
    parser.add_argument("--delay", type=float, default=0.002)
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args(argv)
    url = urllib.parse.urlsplit(args.upstream)
    Handler.upstream = (url.hostname or "127.0.0.1", url.port or 80)
    Handler.operation = args.operation
    Handler.delay = args.delay
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Timer(args.lifetime, server.shutdown).start()
    tmp = args.ready_file.with_suffix(".tmp")
    tmp.write_text(f"http://127.0.0.1:{server.server_address[1]}")
    tmp.rename(args.ready_file)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
