"""Start the local endpoint from Python: as its own process (`LocalEndpoint`) or in a thread (`serve_in_thread`).

Why a process: a load test and its endpoint must not share one core's GIL; the endpoint gets its own interpreter.
Why also a thread: unit tests of the server want a start in milliseconds, with the same code path.

The process starts in a session of its own: a terminal's Ctrl-C goes to its whole foreground process group, and
the endpoint must outlive the run's teardown (which deletes the run's tables through it), so only its parent
stops it. It still dies with its parent however the parent ends: it serves until its stdin, a pipe whose other
end only the parent holds, reaches its end (`--exit-with-parent`).

Why `posix_spawn` and not `subprocess`: gevent's `Popen` (Locust patches `subprocess`) forks, and the child runs
every after-fork hook before it execs. A hook that starts a thread there (OpenTelemetry's providers do, and Locust's
`--otel` sets them up before the endpoint starts) lets the hub switch to the parent's greenlets in that copy of the
parent: a Locust process's own work, done a second time. A spawned child runs no Python before it execs.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict
from types import TracebackType
from typing import TYPE_CHECKING, Any

from dynlocust.errors import DynlocustError
from dynlocust.local.config import LocalConfig

if TYPE_CHECKING:
    from dynlocust.local.server import LocalServer

READY_TIMEOUT = 15.0


def _get_json(
    url: str, method: str = "GET", credentials: dict[str, str] | None = None, region: str = "us-east-1"
) -> dict[str, Any]:
    """A control-path request; signed with the (single) credential pair when the endpoint verifies signatures."""
    headers: dict[str, str] = {}
    if credentials:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        ((key_id, secret),) = credentials.items()
        signed = AWSRequest(method=method, url=url, data=b"")
        SigV4Auth(Credentials(key_id, secret), "dynamodb", region).add_auth(signed)
        headers = dict(signed.headers.items())
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


class _Child:
    """The endpoint's process: spawned with its stdin the read end of a pipe whose write end only this process
    holds, its output to `log`, in a session of its own, with default signals (see the module docstring)."""

    def __init__(self, argv: list[str], env: dict[str, str], log: int) -> None:
        stdin, self._stdin = os.pipe()
        try:
            self.pid = os.posix_spawn(
                argv[0], argv, env,
                file_actions=[(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, log, 1),
                              (os.POSIX_SPAWN_DUP2, log, 2)],
                setsid=True, setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGTERM, signal.SIGINT),
            )  # fmt: skip
        except BaseException:
            os.close(self._stdin)
            raise
        finally:
            os.close(stdin)
        self.ended = False
        self.code: int | None = None
        """Its exit code once ended; None if another waiter reaped it (gevent's, in a process that forked workers)."""

    def poll(self) -> bool:
        """Whether it has ended (reaping it if so)."""
        if not self.ended:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.ended = True
            else:
                if pid:
                    self.ended, self.code = True, os.waitstatus_to_exitcode(status)
        return self.ended

    def wait(self, timeout: float) -> bool:
        """Whether it ended within `timeout` seconds (polled: a blocking wait would stop every greenlet)."""
        deadline = time.monotonic() + timeout
        while not self.poll() and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.ended

    def send(self, signum: int) -> None:
        """Signal it unless it has ended (once reaped, its pid may be another process's)."""
        if not self.poll():
            os.kill(self.pid, signum)

    def close_stdin(self) -> None:
        """Its stdin reaches its end: with `--exit-with-parent`, it stops."""
        if self._stdin >= 0:
            os.close(self._stdin)
            self._stdin = -1


class LocalEndpoint:
    """A local endpoint in a child process (`python -m dynlocust.local --port 0 --ready-file ...`)."""

    def __init__(self, ready_timeout: float = READY_TIMEOUT, **options: Any) -> None:
        options.setdefault("port", 0)
        self.config = LocalConfig(**options)
        self.ready_timeout = ready_timeout
        self.url = ""
        self.port = 0
        self._child: _Child | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def _argv(self, ready_file: str) -> list[str]:
        c = self.config
        argv = [sys.executable, "-m", "dynlocust.local", "--host", c.host, "--port", str(c.port)]
        argv += ["--region", c.region, "--create-delay", repr(c.create_delay), "--ready-file", ready_file]
        argv += ["--capacity-scale", repr(c.capacity_scale), "--time-scale", repr(c.time_scale)]
        argv += ["--header-timeout", repr(c.header_timeout), "--body-timeout", repr(c.body_timeout)]
        argv += ["--idle-timeout", repr(c.idle_timeout), "--max-connections", str(c.max_connections)]
        argv += ["--max-buffered-bytes", str(c.max_buffered_bytes), "--exit-with-parent"]
        if not c.capacity:
            argv.append("--no-capacity")
        if c.latency_model:
            argv.append("--latency-model")
        if c.verify_signatures:
            argv.append("--verify-signatures")
        return argv

    def start(self) -> LocalEndpoint:
        """Start the process and wait (bounded) until it listens; raises DynlocustError if it does not."""
        if self._child is not None:
            return self
        c = self.config
        if c.verify_signatures and len(c.credentials) != 1:
            raise DynlocustError(
                f"LocalEndpoint(verify_signatures=True) expects exactly one credential pair, found "
                f"{len(c.credentials)} (credentials=)"
            )
        self._dir = tempfile.TemporaryDirectory(prefix="dynlocust-local-")
        ready = os.path.join(self._dir.name, "ready")
        env = dict(os.environ)
        # the child must import this very package, installed or not
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        for key_id, secret in c.credentials.items():
            env["DYNLOCUST_LOCAL_ACCESS_KEY_ID"] = key_id
            env["DYNLOCUST_LOCAL_SECRET_ACCESS_KEY"] = secret
        log_path = os.path.join(self._dir.name, "log")
        with open(log_path, "wb") as log:
            self._child = _Child(self._argv(ready), env, log.fileno())
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if os.path.exists(ready):
                with open(ready, encoding="utf-8") as fh:
                    self.url = fh.read().strip()
                self.port = int(self.url.rsplit(":", 1)[1])
                return self
            if self._child.poll():
                break
            time.sleep(0.02)
        ended = self._child.poll()
        code = self._child.code
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            tail = fh.read()[-2000:]
        self.stop()
        found = (f"exit code {code}" if code is not None else "it ended") if ended else "no ready file"
        raise DynlocustError(
            f"expected the local endpoint to listen within {self.ready_timeout:.0f} s, found {found}; "
            f"output: {tail.strip()}"
        )

    def stats(self) -> dict[str, Any]:
        return _get_json(
            self.url + "/_dynlocust/stats", credentials=self._control_credentials(), region=self.config.region
        )

    def reset_stats(self) -> None:
        _get_json(
            self.url + "/_dynlocust/reset-stats",
            method="POST",
            credentials=self._control_credentials(),
            region=self.config.region,
        )

    def _control_credentials(self) -> dict[str, str] | None:
        return self.config.credentials if self.config.verify_signatures else None

    def stop(self) -> None:
        """Terminate, then kill after 5 s; always reaps the child and removes the temporary directory."""
        child, self._child = self._child, None
        if child is not None:
            child.close_stdin()
            child.send(signal.SIGTERM)
            if not child.wait(5):
                child.send(signal.SIGKILL)
                child.wait(5)
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def __enter__(self) -> LocalEndpoint:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        opts = {k: v for k, v in asdict(self.config).items() if k != "credentials"}
        return f"LocalEndpoint(url={self.url!r}, {opts})"


class ThreadedEndpoint:
    """A local endpoint served by a gevent hub in a daemon thread of this process (for tests).

    The calling thread must not be gevent-monkey-patched in a way that blocks the hub; boto3 from the main
    thread talks to it over real sockets.
    """

    def __init__(self, server: LocalServer, thread: threading.Thread, stop: threading.Event, url: str, port: int):
        self.server = server
        self.url = url
        self.port = port
        self._thread = thread
        self._stop = stop

    def stats(self) -> dict[str, Any]:
        return self.server.stats.snapshot()

    def reset_stats(self) -> None:
        self.server.stats.reset()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def __enter__(self) -> ThreadedEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(capacity: Any = None, **options: Any) -> ThreadedEndpoint:
    """Start a LocalServer on 127.0.0.1, port 0, in a daemon thread; `capacity` is a model object or None (a test
    passes a fake model here to inject throttles)."""
    from dynlocust.local.server import LocalServer

    options.setdefault("port", 0)
    config = LocalConfig(**options)
    server = LocalServer(config, capacity=capacity)
    started = threading.Event()
    stop = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        import gevent

        try:
            box["addr"] = server.start()
        except BaseException as exc:
            box["error"] = exc
            started.set()
            return
        started.set()
        while not stop.is_set():
            gevent.sleep(0.02)
        server.stop()

    thread = threading.Thread(target=run, name="dynlocust-local", daemon=True)
    thread.start()
    if not started.wait(READY_TIMEOUT) or "error" in box:
        stop.set()
        raise DynlocustError(f"expected the in-thread endpoint to listen, found {box.get('error', 'a timeout')}")
    host, port = box["addr"]
    server.config.port = port
    return ThreadedEndpoint(server, thread, stop, f"http://{host}:{port}", port)
