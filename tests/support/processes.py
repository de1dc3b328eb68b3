"""Start a helper server as its own process and wait until it says where it listens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def wait_http_ok(url: str, proc: subprocess.Popen[Any], log: Path, timeout: float = 30.0) -> None:
    """Poll `url` until it answers 200; fail with the end of `log` if `proc` exits or the time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"{url} did not answer 200 within {timeout} s: {log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.2)


class ServerProcess:
    """A child process that writes its URL to a ready file; always reaped by `stop()`."""

    def __init__(self, module: str, *args: str, timeout: float = 15.0) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="dynlocust-test-")
        ready = Path(self._dir.name) / "ready"
        self._stderr = open(Path(self._dir.name) / "stderr", "w+b")  # noqa: SIM115 - a file, not a pipe nobody drains
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, "--ready-file", str(ready), *args],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                err = (Path(self._dir.name) / "stderr").read_text() if Path(self._dir.name).exists() else ""
                raise RuntimeError(f"{module} did not become ready within {timeout} s: {err[-2000:]}")
            time.sleep(0.02)
        self.url = ready.read_text().strip()

    def stderr(self) -> str:
        return (Path(self._dir.name) / "stderr").read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._stderr.close()
