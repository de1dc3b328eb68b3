"""The capacity model end to end: a local endpoint process, PutItem paced above the scaled ceiling.

The senders use the fast transport (a tenth of boto3's CPU per request): under stress-ng at load 13, four boto3
senders in this process could not offer 100/s (400 puts took 9.5 s), and nothing was above the ceiling.

capacity_scale=0.01 puts the new-table ceiling at 41.3 WRU/s and time_scale=10 shrinks the burst to 3.4 WRU,
so 100 writes/s offered for 4 s throttle within a tenth of a second and settle at the ceiling.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from dynlocust.local.capacity_figures import ON_DEMAND_TABLE_MESSAGE
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.request.transport.fast import make_fast_client

SCALE = 0.01
TIME_SCALE = 10.0
CEILING = 4130 * SCALE
BURST = 0.85 * 4000 * SCALE / TIME_SCALE
OFFERED = 100.0
SECONDS = 4.0
THREADS = 4


@pytest.fixture
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity_scale=SCALE, time_scale=TIME_SCALE)
    try:
        ep.start()
        yield ep
    finally:
        ep.stop()


def _client(url: str) -> Any:
    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=5,
        read_timeout=5,
        max_pool_connections=2,
    )
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=config,
    )


def test_put_item_above_the_scaled_ceiling(endpoint: LocalEndpoint) -> None:
    setup = _client(endpoint.url)
    table = "capacity_e2e"
    arn = setup.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]["TableArn"]
    setup.get_waiter("table_exists").wait(TableName=table, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    endpoint.reset_stats()

    clients = [
        make_fast_client(endpoint.url, region="us-east-1", connect_timeout=5, read_timeout=5, pool_size=2)
        for _ in range(THREADS)
    ]
    ok = [0] * THREADS
    throttles: list[list[tuple[float, dict[str, Any]]]] = [[] for _ in range(THREADS)]
    other: list[str] = []
    n_total = int(OFFERED * SECONDS)
    t0 = time.monotonic() + 0.3

    def worker(j: int) -> None:
        client = clients[j]
        for k in range(j, n_total, THREADS):
            delay = t0 + k / OFFERED - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            try:
                client.put_item(TableName=table, Item={"pk": {"S": uuid.uuid4().hex}, "v": {"S": "x" * 100}})
                ok[j] += 1
            except ClientError as exc:
                if exc.response["Error"]["Code"] == "ThrottlingException":
                    throttles[j].append((time.monotonic() - t0, exc.response))
                else:
                    other.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(j,)) for j in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    elapsed = time.monotonic() - t0
    assert not any(th.is_alive() for th in threads)
    assert other == []

    accepted = sum(ok)
    seen = [t for per in throttles for t in per]
    assert accepted + len(seen) == n_total
    # The client side pacing is only as exact as the threads: allow the offered window to stretch.
    assert elapsed < SECONDS * 1.5, f"client could not offer {OFFERED}/s (took {elapsed:.2f} s)"
    assert CEILING * SECONDS * 0.9 <= accepted <= CEILING * elapsed + BURST + 2
    assert min(t for t, _ in seen) < 0.5

    response = seen[0][1]
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert response["Error"]["Message"] == ON_DEMAND_TABLE_MESSAGE
    assert response["throttlingReasons"] == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn}]
    assert all(r["throttlingReasons"][0]["reason"] == "TableWriteKeyRangeThroughputExceeded" for _, r in seen)

    stats = endpoint.stats()
    put = stats["tables"][table]["PutItem"]
    assert (put["ok"], put["throttled"], put["error"]) == (accepted, len(seen), 0)
