"""Issue 16, finding 4, as a real process: idle connections beyond the descriptor limit never lock clients out."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
REQUEST = (
    b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 2\r\n"
    b"Connection: close\r\n\r\n{}"
)


def _status(port: int) -> int:
    """Status of one ListTables on a fresh connection; the socket timeout fails the test if the server hangs."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(REQUEST)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def test_idle_connections_beyond_the_descriptor_limit_do_not_lock_clients_out() -> None:
    def low_descriptor_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    with tempfile.TemporaryDirectory(prefix="dynlocust-fd-") as tmp:
        ready = os.path.join(tmp, "ready")
        argv = [sys.executable, "-m", "dynlocust.local", "--port", "0", "--ready-file", ready, "--idle-timeout", "2"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        log = open(os.path.join(tmp, "stderr"), "w+")  # noqa: SIM115  # read after the process ends
        proc = subprocess.Popen(argv, preexec_fn=low_descriptor_limit, env=env, stdout=subprocess.DEVNULL, stderr=log)
        held: list[socket.socket] = []
        try:
            deadline = time.monotonic() + 15
            while not os.path.exists(ready):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.02)
            port = int(Path(ready).read_text().rsplit(":", 1)[1])
            for _ in range(600):  # more idle connections than the server has descriptors
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            assert _status(port) == 503  # answered at once, not left hanging in the accept queue
            for sock in held:
                sock.close()
            held.clear()
            deadline = time.monotonic() + 15
            while _status(port) != 200:  # the idle ones time out or close; the server serves again
                assert time.monotonic() < deadline
                time.sleep(0.1)
        finally:
            for sock in held:
                sock.close()
            proc.terminate()
            proc.wait(timeout=10)
            log.seek(0)
            logged = log.read()
            log.close()
    # issue 41: running out of descriptors was a traceback per failed accept (4 under `ulimit -n 256`); now one line
    assert "Traceback" not in logged, logged
    assert logged.count("out of file descriptors (limit 256)") == 1, logged
