"""The boto3 transport's guarded reach into botocore's pools: a botocore that hides them loses the pool-wait counter,
with one warning, and nothing else. The missing attribute is simulated (monkeypatch) because no installed botocore
lacks it; the counting itself is measured for real in tests/integration/transport/test_pool_waits.py."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import pytest

from dynlocust.request.transport import boto3 as transport
from dynlocust.request.transport.pool_wait import PoolWaitCounter, pool_counter

OPTIONS: dict[str, Any] = {"region": "us-east-1", "connect_timeout": 1, "read_timeout": 1, "pool_size": 1}


def _drop_pool_classes(client: Any) -> None:
    del client._endpoint.http_session._pool_classes_by_scheme


def _empty_pool_classes(client: Any) -> None:
    client._endpoint.http_session._pool_classes_by_scheme = {}


def _foreign_pool_classes(client: Any) -> None:
    client._endpoint.http_session._pool_classes_by_scheme = {"http": dict}


def _drop_http_session(client: Any) -> None:
    del client._endpoint.http_session


def test_the_installed_botocore_has_its_pools_counted() -> None:
    client = transport.make_client("http://127.0.0.1:1", **OPTIONS)
    assert isinstance(pool_counter(client), PoolWaitCounter)
    classes = client._endpoint.http_session._pool_classes_by_scheme
    assert sorted(c.__name__ for c in classes.values()) == [
        "CountingAWSHTTPConnectionPool",
        "CountingAWSHTTPSConnectionPool",
    ]


@pytest.mark.parametrize("change", [_drop_pool_classes, _empty_pool_classes, _foreign_pool_classes, _drop_http_session])
def test_a_botocore_without_the_pools_turns_the_counter_off_with_one_warning(
    change: Callable[[Any], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "_warned_unavailable", False)
    clients = [transport.make_client("http://127.0.0.1:1", **OPTIONS) for _ in range(2)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counters = []
        for client in clients:
            change(client)
            counters.append(transport.count_pool_waits(client))
    assert counters == [None, None]
    assert [w.category for w in caught] == [transport.PoolWaitsUnavailable]
    assert "pool-wait saturation counter is off" in str(caught[0].message)
