"""The table's state per window boundary, read from a real endpoint: what it records, what changed, and its bounds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import gevent
import pytest
from gevent.server import StreamServer

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run.table_state import TableStatePoller, changes, describe, window_changes


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint().start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture
def client(endpoint: LocalEndpoint) -> Any:
    return make_client(endpoint.url, region="us-east-1", connect_timeout=1, read_timeout=2, pool_size=2)


def _provisioned(client: Any, name: str) -> None:
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        WarmThroughput={"ReadUnitsPerSecond": 100, "WriteUnitsPerSecond": 100},
    )


def test_a_poll_records_billing_capacity_warm_throughput_status_and_items(client: Any) -> None:
    _provisioned(client, "prov")
    client.create_table(
        TableName="ondemand",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        OnDemandThroughput={"MaxReadRequestUnits": 900, "MaxWriteRequestUnits": 300},
    )
    client.put_item(TableName="ondemand", Item={"pk": {"S": "a"}})
    poll = TableStatePoller(client, {"p": "prov", "o": "ondemand"}, deadline=2.0).poll_now()
    prov, od = poll["tables"]["p"], poll["tables"]["o"]
    assert prov == {
        "status": "ACTIVE",
        "billing": "PROVISIONED",
        "provisioned": {"read": 5, "write": 5},
        "on_demand_max": None,
        "warm": {"read": 100, "write": 100, "status": "ACTIVE"},
        "items": 0,
    }
    assert od["billing"] == "PAY_PER_REQUEST" and od["provisioned"] is None
    assert od["on_demand_max"] == {"read": 900, "write": 300}
    assert od["warm"] == {"read": 12000, "write": 4000, "status": "ACTIVE"}  # a new on-demand table's own
    assert od["items"] == 1
    assert describe(prov) == "provisioned 5/5, warm 100/100 r/w, ACTIVE, 0 items"
    assert describe(od) == "on-demand, max 900/300, warm 12,000/4,000 r/w, ACTIVE, 1 items"
    # the local endpoint at a capacity scale: as emulated, then as DescribeTable says (it showed 12,000/4,000 alone)
    assert describe(od, 0.025) == (
        "on-demand, max 22/8 (900/300 x0.025), warm 300/100 (12,000/4,000 x0.025) r/w, ACTIVE, 1 items"
    )
    assert describe(prov, 1.0) == "provisioned 5/5, warm 100/100 r/w, ACTIVE, 0 items"


def test_an_update_table_between_two_polls_is_named_as_a_change(client: Any) -> None:
    _provisioned(client, "upd")
    poller = TableStatePoller(client, {"t": "upd"}, deadline=2.0)
    before = poller.poll_now()
    client.update_table(TableName="upd", ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 60})
    client.put_item(TableName="upd", Item={"pk": {"S": "a"}})
    after = poller.poll_now()
    assert changes(before["tables"]["t"], after["tables"]["t"]) == ["provisioned 5/5 -> 50/60"]  # items: no change
    assert window_changes(before, after) == {"t": ["provisioned 5/5 -> 50/60"]}
    assert window_changes(after, after) == {}


def test_the_poller_polls_once_at_each_boundary_and_says_when_a_window_may_close(client: Any) -> None:
    _provisioned(client, "bounds")
    polled: list[int] = []
    poller = TableStatePoller(client, {"t": "bounds"}, deadline=2.0)
    now = time.time()
    boundaries = [now + 0.3, now + 0.6]
    assert poller.ready(0)  # before its boundary (a run stopped early): nothing to wait for
    poller.start(boundaries, polled.append)
    while len(polled) < 2:
        gevent.sleep(0.05)
    assert polled == [0, 1] and sorted(poller.states) == [0, 1]
    assert all(poller.states[i]["at"] >= boundaries[i] for i in (0, 1))
    assert poller.ready(0) and poller.ready(1)
    assert poller.last() is poller.states[1]


def test_a_window_past_its_boundary_waits_for_its_poll_until_stopped(client: Any) -> None:
    poller = TableStatePoller(client, {"t": "bounds"}, deadline=5.0, boundaries=[time.time() - 0.1])
    assert not poller.ready(0)  # its boundary has passed and its poll is not in
    poller.stop()
    assert poller.ready(0)


@pytest.fixture
def silent_server() -> Iterator[tuple[str, list[bytes]]]:
    """An HTTP server that reads each request and never answers (a stalled endpoint); it keeps what it read."""
    seen: list[bytes] = []

    def handle(sock: Any, _address: Any) -> None:
        seen.append(sock.recv(65536))
        gevent.sleep(60)

    server = StreamServer(("127.0.0.1", 0), handle)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.stop(timeout=0)


def test_a_poll_is_bounded_by_the_deadline_never_retried_and_never_fails(
    client: Any, silent_server: tuple[str, list[bytes]]
) -> None:
    """A stalled endpoint costs one deadline and one request; a refused DescribeTable is recorded as such."""
    refused = TableStatePoller(client, {"gone": "no-such-table"}, deadline=2.0).poll_now()
    assert "ResourceNotFoundException" in refused["tables"]["gone"]["error"]
    url, seen = silent_server
    stalled = make_client(url, region="us-east-1", connect_timeout=1, read_timeout=30, pool_size=2)
    poller = TableStatePoller(stalled, {"slow": "slow-table", "next": "next-table"}, deadline=1.0)
    started = time.monotonic()
    poll = poller.poll_now()
    assert time.monotonic() - started < 10  # bounded by the deadline, not by the 30 s read timeout
    assert poll["tables"] == {
        "slow": {"error": "no answer within the deadline of 1 s"},
        "next": {"error": "no answer within the deadline of 1 s"},
    }
    assert describe(poll["tables"]["slow"]) == "not read: no answer within the deadline of 1 s"
    assert len(seen) == 1 and b"DynamoDB_20120810.DescribeTable" in seen[0]  # one request: nothing resent
