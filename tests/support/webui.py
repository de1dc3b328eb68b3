"""A Locust web UI with dynlocust's scenario locustfile, as a real process on 127.0.0.1, and what its page shows."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.processes import wait_http_ok
from tests.support.runs import ROOT

LOCUSTFILE = """\
from dynlocust.user_classes.scenario_user import ScenarioUser  # noqa: F401
import dynlocust.plugin.webui  # noqa: F401
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class WebLocust:
    """The process, its page's URL and its console (stdout and stderr together)."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM (Locust shuts down through `quitting`), then its exit code; killed if it does not exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


@contextmanager
def web_locust(
    tmp_path: Path, scenario_text: str, *args: str, locustfile: str = LOCUSTFILE, default_results: bool = False
) -> Iterator[WebLocust]:
    """A Locust web UI running `scenario_text` from `tmp_path` (with `locustfile`: `LOCUSTFILE` and more), results
    in `tmp_path/runs`; stopped when the block ends. With `default_results`, no --results-dir: the process runs in
    `tmp_path`, so its results go to the default, relative `results` there."""
    (tmp_path / "lf.py").write_text(locustfile)
    scenario = tmp_path / "webui.yaml"
    scenario.write_text(scenario_text)
    port = free_port()
    argv = [sys.executable, "-m", "locust", "-f", str(tmp_path / "lf.py"), "--scenario", str(scenario)]
    argv += ["--web-host", "127.0.0.1", "--web-port", str(port)]
    argv += [] if default_results else ["--results-dir", str(tmp_path / "runs")]
    argv += ["--metrics-port", "0", *args]
    log_path = tmp_path / "locust.log"
    log = open(log_path, "w+b")  # noqa: SIM115 - closed in finally
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cwd = tmp_path if default_results else ROOT
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    web = WebLocust(f"http://127.0.0.1:{port}", proc, log_path)
    try:
        wait_http_ok(web.url + "/", proc, log_path)
        yield web
    finally:
        web.stop()
        log.close()


HEADER_STATUS = (
    "(() => { const label = [...document.querySelectorAll('header *')].find(e => e.children.length === 0 "
    "&& e.textContent.trim() === 'Status'); return label && label.nextElementSibling ? "
    "label.nextElementSibling.innerText.trim() : ''; })()"
)
"""A JavaScript expression: the run's state in Locust's header (the value under its "Status" label)."""
TABLE_ROWS = (
    "[...document.querySelectorAll('table tbody tr')].map(r => [...r.querySelectorAll('td')]"
    ".map(td => td.innerText.trim()))"
)
"""A JavaScript expression: the cells of every row of the table on the page's current tab."""


def header_status(page: Any) -> str:
    """The run's state in Locust's header, as the page shows it."""
    return str(page.evaluate(f"() => {HEADER_STATUS}"))


def table_rows(page: Any) -> list[list[str]]:
    """The cells of every row of the table on the page's current tab."""
    return list(page.evaluate(f"() => {TABLE_ROWS}"))
