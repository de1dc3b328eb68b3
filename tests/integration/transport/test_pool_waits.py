"""Both transports count the requests that find every pooled connection busy (the verdicts' ``pool`` reason).

Real sockets: sequential requests to the local endpoint (in its own process) never wait; concurrent requests to the
fault server's stalling table (tests/conftest.py) all stay in flight until their 1 s read timeout, so every one
beyond the pool's size must be counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import gevent
import pytest
from botocore.exceptions import BotoCoreError

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import MIN_POOL, make_client
from dynlocust.request.transport.fast import make_fast_client
from dynlocust.request.transport.pool_wait import pool_counter
from tests.conftest import FaultServer

FACTORIES: dict[str, Callable[..., Any]] = {"boto3": make_client, "fast": make_fast_client}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(latency_model=True).start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.mark.parametrize("transport", sorted(FACTORIES))
def test_pool_waits_count_requests_beyond_the_pool(
    endpoint: LocalEndpoint, fault_server: FaultServer, transport: str
) -> None:
    options = {"region": "us-east-1", "connect_timeout": 3, "read_timeout": 1.0, "pool_size": 1}  # pool: MIN_POOL
    client = FACTORIES[transport](endpoint.url, **options)
    counter = pool_counter(client)
    assert counter is not None and counter.value == 0
    for _ in range(2 * MIN_POOL):  # one at a time: a pooled connection is always free
        client.list_tables()
    assert counter.value == 0

    stalled = FACTORIES[transport](fault_server.url, **options)
    concurrent = 2 * MIN_POOL + 5

    def call() -> None:
        with pytest.raises(BotoCoreError):  # a read timeout, or a reset when the backlog is full
            stalled.get_item(TableName="stall", Key={"pk": {"S": "a"}})

    calls = [gevent.spawn(call) for _ in range(concurrent)]
    gevent.joinall(calls, timeout=30, raise_error=True)
    stalled_counter = pool_counter(stalled)
    assert stalled_counter is not None
    assert stalled_counter.value == concurrent - MIN_POOL  # all in flight at once: the rest found none free
