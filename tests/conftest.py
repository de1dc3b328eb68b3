"""Fixtures shared by unit and integration tests: real servers on 127.0.0.1, always stopped."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()  # as Locust does on import; must precede ssl/urllib3/botocore in the test process

import json  # noqa: E402
import urllib.request  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from tests.support.processes import ServerProcess  # noqa: E402


class FaultServer:
    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        self.url = process.url

    def requests(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(self.url + "/_faults/log", timeout=5) as response:
            return json.load(response)["requests"]

    def clear(self) -> None:
        urllib.request.urlopen(self.url + "/_faults/clear", timeout=5).close()


@pytest.fixture(scope="session")
def fault_server_session() -> Iterator[FaultServer]:
    process = ServerProcess("tests.support.faultserver")
    try:
        yield FaultServer(process)
    finally:
        process.stop()


@pytest.fixture
def fault_server(fault_server_session: FaultServer) -> FaultServer:
    fault_server_session.clear()
    return fault_server_session
