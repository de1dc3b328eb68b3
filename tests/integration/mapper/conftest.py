"""One local endpoint process for the mapper's integration tests, and entity classes with their tables."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import locust  # noqa: F401 - gevent patching before botocore, as in production

import pytest

from dynlocust.local.embedded import LocalEndpoint
from dynlocust.mapper.model import Index, entity, model_of
from dynlocust.request.transport.boto3 import make_client


@entity(
    table="orders",
    partition_key="pk",
    sort_key="sk",
    indexes=[Index("by_status", "status", "created")],
)
@dataclass
class Order:
    pk: str
    sk: str
    status: str = "NEW"
    created: int = 0
    total: Decimal = Decimal(0)
    ratio: float | None = None
    tags: set[str] = field(default_factory=set)
    payload: bytes | None = None
    lines: list[Any] = field(default_factory=list)


@entity(table="events", partition_key="pk", sort_key="ts", shards=4)
@dataclass
class Event:
    pk: str
    ts: int
    body: str = ""


@pytest.fixture(scope="session")
def endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity=False).start()
    try:
        yield ep
    finally:
        ep.stop()


@pytest.fixture(scope="session")
def client(endpoint: LocalEndpoint) -> Any:
    return make_client(endpoint.url, region="us-east-1", connect_timeout=2, read_timeout=10, pool_size=10)


_tables = itertools.count()


@pytest.fixture
def make_table(client: Any) -> Iterator[Any]:
    """Create a fresh table for a model (deleted after the test); returns its name."""
    created: list[str] = []

    def make(cls: type) -> str:
        name = f"{model_of(cls).table}-{next(_tables)}"
        client.create_table(**model_of(cls).create_table_request(name))
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 100})
        created.append(name)
        return name

    try:
        yield make
    finally:
        for name in created:
            client.delete_table(TableName=name)
