"""`FastDynamoDBUser`: `DynamoDBUser`'s contract on the fast signed transport, for several times the requests per core.

Tasks written for `DynamoDBUser` run unchanged: `self.client` is the same `DynamoDBClient` (deadline, outcomes, one
request event per call), wrapped around a `FastDynamoDB` instead of a botocore client.
"""

from __future__ import annotations

from typing import Any, ClassVar

from locust.env import Environment  # first: Locust monkey-patches for gevent before botocore is imported

from dynlocust.errors import ConfigurationError
from dynlocust.plugin.settings import Settings
from dynlocust.request.transport.fast import FastDynamoDB, make_fast_client
from dynlocust.scenario.spec import TRANSPORTS
from dynlocust.user_classes.dynamodb_user import DynamoDBUser, shared_client, transport_options


class FastDynamoDBUser(DynamoDBUser):
    """Subclass it and write tasks against `self.client` as you would against `boto3.client("dynamodb")`.

    The data-plane operations (put/get/update/delete_item, query, scan, batch and transact calls) go over the fast
    transport; any other method is served by a retry-free botocore client. All users of a process share one pool.
    """

    abstract = True
    verify: ClassVar[bool | str] = True
    """TLS verification for https endpoints: True (system/certifi bundle), False, or a CA bundle path."""

    def _raw_client(self, environment: Environment, settings: Settings) -> Any:
        return shared_fast_client(environment, self.host or None, settings, self.verify)


def user_base(transport: str) -> type[DynamoDBUser]:
    """The user class a scenario's `transport: fast | boto3` selects; tasks run unchanged on either."""
    if transport == "fast":
        return FastDynamoDBUser
    if transport == "boto3":
        return DynamoDBUser
    raise ConfigurationError(f"transport: expected one of {', '.join(TRANSPORTS)}, found {transport!r}")


def shared_fast_client(
    environment: Environment, host: str | None, settings: Settings, verify: bool | str = True
) -> FastDynamoDB:
    """One `FastDynamoDB` per (environment, endpoint, region, TLS setting): its pool serves every user."""
    return shared_client(
        environment,
        ("fast", host, settings.region, verify),
        lambda: make_fast_client(host, verify=verify, **transport_options(environment, settings)),
    )


__all__ = ["TRANSPORTS", "FastDynamoDBUser", "shared_fast_client", "user_base"]
