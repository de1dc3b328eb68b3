"""Two ways to load a DynamoDB table: the raw client (`DynamoDBUser`) and a data layer (`MapperUser`).

    dynlocust local --port 8000 &      # the embedded local endpoint, or see README.md to point it at AWS
    locust -t 30s                      # locust.conf: this file, headless, 10 users

Each call is one Locust request, with no retries and a hard deadline; a throttle is a failure named by its
reason, e.g. `ThrottlingException (TableWriteKeyRangeThroughputExceeded)`.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from dataclasses import dataclass
from typing import Any

from locust import between, events, task

from dynlocust import DynamoDBUser, MapperUser, settings_for, shared_boto3_client
from dynlocust.mapper import entity

LOCAL_ENDPOINT = "http://127.0.0.1:8000"
"""Where `dynlocust local --port 8000` listens; `--host` overrides it."""
TABLE = "starter-orders"
PADDING = "x" * 1000  # ~1 KB items: one write unit each


@entity(table=TABLE, partition_key="pk")
@dataclass
class Order:
    pk: str
    status: str
    total: int


class RawOrders(DynamoDBUser):
    """boto3's low-level calls: the same keyword arguments and response dicts."""

    host = LOCAL_ENDPOINT
    wait_time = between(0.05, 0.2)

    def on_start(self) -> None:
        self.keys: list[str] = []

    @task(3)
    def put(self) -> None:
        key = uuid.uuid4().hex
        response = self.client.put_item(TableName=TABLE, Item={"pk": {"S": key}, "data": {"S": PADDING}})
        if response is not None:  # None: the call failed, and Locust has counted it
            self.keys = [*self.keys[-999:], key]

    @task(1)
    def get(self) -> None:
        if self.keys:
            self.client.get_item(TableName=TABLE, Key={"pk": {"S": random.choice(self.keys)}})


class MapperOrders(MapperUser):
    """dynlocust's mapper: each repository call is one request, named `Order.<operation>`."""

    host = LOCAL_ENDPOINT
    wait_time = between(0.05, 0.2)

    def on_start(self) -> None:
        self.orders = self.repository(Order)
        self.mine: list[str] = []

    @task(3)
    def create(self) -> None:
        order = Order(pk=uuid.uuid4().hex, status="new", total=random.randint(1, 500))
        if self.orders.create(order) is not None:
            self.mine = [*self.mine[-999:], order.pk]

    @task(1)
    def get(self) -> None:
        if self.mine:
            self.orders.get(random.choice(self.mine))


@events.test_start.add_listener
def create_table(environment: Any, **_kwargs: Any) -> None:
    """Create the table if it is missing (the local endpoint starts empty) and wait until it is ACTIVE."""
    client = shared_boto3_client(environment, environment.host or LOCAL_ENDPOINT, settings_for(environment))
    with contextlib.suppress(client.exceptions.ResourceInUseException):  # it exists, or another process made it
        client.create_table(
            TableName=TABLE,
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
    until = time.monotonic() + 60
    while client.describe_table(TableName=TABLE)["Table"]["TableStatus"] != "ACTIVE" and time.monotonic() < until:
        time.sleep(0.5)
