"""A minimal DynamoDBUser: puts and gets of ~1 KB items in one table.

    locust -f locustfiles/example.py --headless -u 10 -t 30s --host http://127.0.0.1:8000

The table (env DYNLOCUST_EXAMPLE_TABLE, default "dynlocust-example", partition key `pk` of type S) must exist.
"""

from __future__ import annotations

import os
import uuid

from locust import between, task

from dynlocust import DynamoDBUser

TABLE = os.environ.get("DYNLOCUST_EXAMPLE_TABLE", "dynlocust-example")
PADDING = "x" * 1000


class ExampleUser(DynamoDBUser):
    wait_time = between(0.01, 0.05)

    def on_start(self) -> None:
        self.keys: list[str] = []

    @task(3)
    def put(self) -> None:
        key = uuid.uuid4().hex
        response = self.client.put_item(TableName=TABLE, Item={"pk": {"S": key}, "data": {"S": PADDING}})
        if response is not None:
            self.keys.append(key)
            del self.keys[:-1000]

    @task(1)
    def get(self) -> None:
        key = self.keys[-1] if self.keys else "missing"
        self.client.get_item(TableName=TABLE, Key={"pk": {"S": key}})
