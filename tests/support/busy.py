"""A second process that keeps one core busy for a bounded time: the loaded machine a user's run meets."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SPIN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def busy_core(seconds: float = 90) -> Iterator[subprocess.Popen[bytes]]:
    """Spin one core for at most ``seconds`` (it stops by itself), and stop it when the block ends."""
    proc = subprocess.Popen([sys.executable, "-c", SPIN.format(seconds=seconds)])
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
