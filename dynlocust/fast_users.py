"""`FastDynamoDBUser`: `DynamoDBUser`'s contract on the fast signed transport, for several times the requests per core.

Tasks written for `DynamoDBUser` run unchanged: `self.client` is the same `DynamoDBClient` (deadline, outcomes, one
request event per call), wrapped around a `FastDynamoDB` instead of a botocore client.
"""

from __future__ import annotations

from typing import Any, ClassVar

import locust  # first: it monkey-patches for gevent before botocore is imported
from locust import User

from dynlocust import plugin
from dynlocust.client import DynamoDBClient
from dynlocust.errors import ConfigurationError
from dynlocust.settings import Settings
from dynlocust.transport.boto3 import MIN_POOL
from dynlocust.transport.fast import FastDynamoDB, make_fast_client


class FastDynamoDBUser(User):
    """Subclass it and write tasks against `self.client` as you would against `boto3.client("dynamodb")`.

    The data-plane operations (put/get/update/delete_item, query, scan, batch and transact calls) go over the fast
    transport; any other method is served by a retry-free botocore client. All users of a process share one pool.
    """

    abstract = True
    deadline: ClassVar[float | None] = None
    """Total deadline of one call in seconds; `None` takes `--deadline` (default 8 s)."""
    raise_errors: ClassVar[bool] = False
    """Re-raise botocore's exception after reporting a failed call (default: return None, as Locust clients do)."""
    verify: ClassVar[bool | str] = True
    """TLS verification for https endpoints: True (system/certifi bundle), False, or a CA bundle path."""

    def __init__(self, environment: Any) -> None:
        super().__init__(environment)
        settings = plugin.settings_for(environment)
        raw = shared_fast_client(environment, self.host or None, settings, self.verify)
        self.client = DynamoDBClient(
            raw,
            environment.events.request,
            deadline=self.deadline if self.deadline is not None else settings.deadline,
            raise_errors=self.raise_errors,
        )


TRANSPORTS = ("boto3", "fast")


def user_base(transport: str) -> type[User]:
    """The user class a scenario's `transport: fast | boto3` selects; tasks run unchanged on either."""
    if transport == "fast":
        return FastDynamoDBUser
    if transport == "boto3":
        from dynlocust.users import DynamoDBUser

        return DynamoDBUser
    raise ConfigurationError(f"transport: expected one of {', '.join(TRANSPORTS)}, found {transport!r}")


def shared_fast_client(
    environment: Any, host: str | None, settings: Settings, verify: bool | str = True
) -> FastDynamoDB:
    """One `FastDynamoDB` per (environment, endpoint, region, TLS setting): its pool serves every user."""
    key = ("fast", host, settings.region, verify)
    clients = plugin.state_for(environment).clients
    client = clients.get(key)
    if client is None:
        client = make_fast_client(
            host,
            region=settings.region,
            connect_timeout=settings.connect_timeout,
            read_timeout=settings.effective_read_timeout,
            pool_size=_pool_size(environment, settings),
            verify=verify,
        )
        clients[key] = client
    return client


def _pool_size(environment: Any, settings: Settings) -> int:
    if settings.pool_size:
        return settings.pool_size
    users = getattr(environment.parsed_options, "num_users", None) or 0
    return max(int(users), MIN_POOL)


__all__ = ["TRANSPORTS", "FastDynamoDBUser", "locust", "shared_fast_client", "user_base"]
