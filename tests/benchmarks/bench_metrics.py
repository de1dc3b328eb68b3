"""Side by side: client CPU per DynamoDB request with Prometheus metrics on vs off.

This process is the client: a `DynamoDBClient` (boto3, the default transport) sending PutItem with
ReturnConsumedCapacity=TOTAL to the embedded local endpoint (its own process, capacity model off), with Locust's own
request statistics listening in both modes. Rounds alternate off/on so drift hits both; CPU is this process's
`time.process_time()`. The issue's budget: metrics on costs at most 5% more CPU per request.

    python tests/benchmarks/bench_metrics.py [--rounds 6] [--requests 400]
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from locust.env import Environment  # noqa: E402
from locust.event import Events  # noqa: E402

from prometheus_client import CollectorRegistry  # noqa: E402

from dynlocust.local.embedded import LocalEndpoint  # noqa: E402
from dynlocust.observe.metrics import Metrics  # noqa: E402
from dynlocust.request.client import REQUEST_TYPE, DynamoDBClient  # noqa: E402
from dynlocust.request.outcomes import classify  # noqa: E402
from dynlocust.request.record import RequestRecord, consumed_capacity  # noqa: E402
from dynlocust.request.transport.boto3 import make_client  # noqa: E402

TABLE = "bench-metrics"
PADDING = "x" * 1000


def round_cpu(client: DynamoDBClient, n: int) -> float:
    """CPU seconds per request over `n` sequential PutItems."""
    start = time.process_time()
    for _ in range(n):
        client.put_item(
            TableName=TABLE,
            Item={"pk": {"S": uuid.uuid4().hex}, "data": {"S": PADDING}},
            ReturnConsumedCapacity="TOTAL",
        )
    return (time.process_time() - start) / n


def listener_cost(metrics: Metrics, n: int = 100_000) -> float:
    """CPU seconds per event of the metrics listener alone (a mix of ok and throttled outcomes)."""
    response = {"ConsumedCapacity": {"TableName": TABLE, "CapacityUnits": 1.0}}
    records = [
        RequestRecord(
            "PutItem", TABLE, TABLE, None, True, classify({}), (2.5 + i) / 1000, None,
            consumed_capacity(response, write=True),
        )
        for i in range(7)
    ]  # fmt: skip
    contexts = [{"record": record} for record in records]
    start = time.process_time()
    for i in range(n):
        metrics.on_request(REQUEST_TYPE, "PutItem x", 2.5 + (i % 7), 0, response=response, context=contexts[i % 7])
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()

    endpoint = LocalEndpoint(capacity=False).start()
    try:
        raw = make_client(endpoint.url, region="us-east-1", connect_timeout=3, read_timeout=8, pool_size=4)
        raw.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        raw.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
        environment = Environment(events=Events())
        runner = environment.create_local_runner()  # Locust's own stats listener, on in both modes
        metrics = Metrics(CollectorRegistry())
        client = DynamoDBClient(raw, environment.events.request, deadline=8.0)
        round_cpu(client, 100)  # warm up connections and botocore caches
        off: list[float] = []
        on: list[float] = []
        for _ in range(args.rounds):
            off.append(round_cpu(client, args.requests))
            environment.events.request.add_listener(metrics.on_request)
            on.append(round_cpu(client, args.requests))
            environment.events.request.remove_listener(metrics.on_request)
        runner.quit()
        alone = listener_cost(Metrics(CollectorRegistry()))
    finally:
        endpoint.stop()
    off_us, on_us = statistics.median(off) * 1e6, statistics.median(on) * 1e6
    print(f"client CPU per request, median of {args.rounds} rounds x {args.requests} PutItems (boto3 transport)")
    print(f"  metrics off: {off_us:8.1f} us")
    print(f"  metrics on:  {on_us:8.1f} us")
    print(f"  on/off ratio: {on_us / off_us:.3f}  (budget 1.05)")
    print(f"metrics listener alone: {alone * 1e6:.2f} us/event = {alone * 1e6 / off_us:.2%} of a request's CPU")


if __name__ == "__main__":
    main()
