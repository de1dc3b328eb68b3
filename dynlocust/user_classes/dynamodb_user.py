"""`DynamoDBUser`: an abstract Locust user whose `self.client` is a retry-free, deadline-bound DynamoDB client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from locust import User  # first: Locust monkey-patches for gevent before botocore is imported
from locust.env import Environment

from botocore.config import Config

from dynlocust.plugin import context, listeners
from dynlocust.plugin.settings import Settings
from dynlocust.request.client import DynamoDBClient
from dynlocust.request.transport.boto3 import MIN_POOL, make_client

listeners.register_plugin()  # options, the process's role and metrics, for any locustfile with a dynlocust user


class DynamoDBUser(User):
    """Subclass it and write tasks against `self.client` as you would against `boto3.client("dynamodb")`.

    `host` (or `--host`) is the endpoint URL; without one, AWS's own endpoint for `--region` is used. All users of a
    process share one botocore client whose connection pool is sized to the number of users.
    """

    abstract = True
    deadline: ClassVar[float | None] = None
    """Total deadline of one call in seconds; `None` takes `--deadline` (default 8 s)."""
    botocore_config: ClassVar[Config | None] = None
    """Extra botocore settings merged over dynlocust's; any that would enable retries is refused."""
    raise_errors: ClassVar[bool] = False
    """Re-raise botocore's exception after reporting a failed call (default: return None, as Locust clients do)."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        settings = context.settings_for(environment)
        self.client = DynamoDBClient(
            self._raw_client(environment, settings),
            environment.events.request,
            deadline=self.deadline if self.deadline is not None else settings.deadline,
            raise_errors=self.raise_errors,
        )

    def _raw_client(self, environment: Environment, settings: Settings) -> Any:
        """The process-wide transport client this user's calls go through (a transport picks its own)."""
        return shared_boto3_client(environment, self.host or None, settings, self.botocore_config)


def shared_client(environment: Environment, key: tuple[Any, ...], factory: Callable[[], Any]) -> Any:
    """One transport client per environment and key, built on first use: its pool serves every user of the process."""
    clients = context.state_for(environment).clients
    if key not in clients:
        clients[key] = factory()
    return clients[key]


def transport_options(environment: Environment, settings: Settings) -> dict[str, Any]:
    """The keyword arguments every transport factory takes, from the validated settings."""
    return {
        "region": settings.region,
        "connect_timeout": settings.connect_timeout,
        "read_timeout": settings.effective_read_timeout,
        "pool_size": pool_size(environment, settings),
    }


def shared_boto3_client(
    environment: Environment, host: str | None, settings: Settings, config: Config | None = None
) -> Any:
    """The process's retry-free botocore client for `host` (and a user's extra `config`)."""
    return shared_client(
        environment,
        ("boto3", host, settings.region, id(config)),
        lambda: make_client(host, user_config=config, **transport_options(environment, settings)),
    )


def pool_size(environment: Environment, settings: Settings) -> int:
    """Connections per process: `--pool-size`, else one per Locust user (at least `MIN_POOL`)."""
    if settings.pool_size:
        return settings.pool_size
    users = getattr(environment.parsed_options, "num_users", None) or 0
    return max(int(users), MIN_POOL)


__all__ = ["DynamoDBUser", "shared_boto3_client"]
