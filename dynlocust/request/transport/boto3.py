"""The boto3 transport: a botocore DynamoDB client that never retries and never waits unboundedly.

Retries are forced to one total attempt (`standard` mode, `total_max_attempts=1`) because a retry absorbs the very
throttles a load test is there to count; `adaptive` mode is refused outright because its client-side rate limiter
slows the offered load even with retries off. A caller's own `botocore.config.Config` is merged on top of ours, and
one that asks for retries is an error, not a silent override.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.session import Session as BotocoreSession
from urllib3.connectionpool import HTTPConnectionPool

from dynlocust.errors import ConfigurationError
from dynlocust.request.transport.base import BotocoreClient, Reply
from dynlocust.request.transport.pool_wait import PoolWaitCounter

NO_RETRIES: dict[str, Any] = {"mode": "standard", "total_max_attempts": 1}
MIN_POOL = 10
LOCAL_CREDENTIALS = ("local", "local")
BAD_CREDENTIALS = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "MissingAuthenticationTokenException",
        "ExpiredTokenException",
    }
)
"""The error codes with which DynamoDB refuses the credentials themselves."""


@contextmanager
def endpoint_errors(where: str, *, option: str = "--host", refusals: bool = True) -> Iterator[None]:
    """Turn what a user causes around a command's calls into one `ConfigurationError` naming `where`: no endpoint
    answering, no credentials, refused credentials and (with `refusals`) any other refusal, such as AccessDenied."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        yield
    except NoCredentialsError:
        raise ConfigurationError(
            f"credentials: expected AWS credentials for {where} (AWS_PROFILE, AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or an instance role), found none"
        ) from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code in BAD_CREDENTIALS:
            raise ConfigurationError(
                f"credentials: expected credentials that {where} accepts, found it answers {code}"
            ) from None
        if not refusals:
            raise
        raise ConfigurationError(
            f"{where}: expected {exc.operation_name} to be accepted, found {code}: {error.get('Message', '')}"
        ) from None
    except BotoCoreError as exc:
        raise ConfigurationError(
            f"{option}: expected a DynamoDB endpoint that answers, found none at {where} ({exc})"
        ) from None


def retry_free_config(
    *,
    connect_timeout: float,
    read_timeout: float,
    pool_size: int,
    user_config: Config | None = None,
) -> Config:
    """Our config with `user_config` merged over it; refuses any user setting that would turn retries on."""
    base = Config(
        retries=dict(NO_RETRIES),
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=max(pool_size, 1),
        tcp_keepalive=True,
    )
    if user_config is None:
        return base
    _refuse_retries(user_config)
    merged = base.merge(user_config)
    merged.retries = dict(NO_RETRIES)
    return merged


def _refuse_retries(config: Config) -> None:
    retries = getattr(config, "retries", None) or {}
    mode = retries.get("mode", "standard")
    if mode == "adaptive":
        raise ConfigurationError(
            "botocore Config retries: expected mode 'standard' with one attempt, found mode 'adaptive' "
            "(its client-side rate limiter throttles the offered load even with retries off)"
        )
    if retries.get("max_attempts", 0) not in (0, None) or retries.get("total_max_attempts", 1) not in (1, None):
        raise ConfigurationError(
            "botocore Config retries: expected no retries (total_max_attempts 1), found "
            f"{ {k: v for k, v in retries.items() if k != 'mode'} }; a retry hides the throttles a load test measures"
        )


def is_local_endpoint(endpoint_url: str | None) -> bool:
    """Loopback endpoints get throwaway credentials when none are configured: nothing secret is at stake there."""
    if not endpoint_url:
        return False
    host = urlsplit(endpoint_url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def validate_endpoint(endpoint_url: str | None) -> str | None:
    """Return the endpoint URL, or raise naming what an endpoint must look like."""
    if not endpoint_url:
        return None
    parts = urlsplit(endpoint_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(
            f"--host: expected a DynamoDB endpoint URL such as http://127.0.0.1:8000 or "
            f"https://dynamodb.us-east-1.amazonaws.com, found {endpoint_url!r}"
        )
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigurationError(f"--host: expected a port from 1 to 65535, found {endpoint_url!r}") from None
    return endpoint_url


def make_client(
    endpoint_url: str | None,
    *,
    region: str,
    connect_timeout: float,
    read_timeout: float,
    pool_size: int,
    user_config: Config | None = None,
    credentials: tuple[str, str] | None = None,
    service: str = "dynamodb",
) -> Any:
    """Build a retry-free botocore DynamoDB client; shared by every user of a process (one pool). `service`
    "cloudwatch" builds the CloudWatch witness's client the same way (`dynlocust.observe.witness`)."""
    endpoint_url = validate_endpoint(endpoint_url)
    config = retry_free_config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        pool_size=max(pool_size, MIN_POOL),
        user_config=user_config,
    )
    session = BotocoreSession()
    session.set_config_variable("region", region)
    kwargs: dict[str, Any] = {"region_name": region, "endpoint_url": endpoint_url, "config": config}
    if credentials is None and is_local_endpoint(endpoint_url) and not has_env_credentials():
        credentials = LOCAL_CREDENTIALS
    if credentials is not None:
        kwargs["aws_access_key_id"], kwargs["aws_secret_access_key"] = credentials
    client = session.create_client(service, **kwargs)
    client.pool_waits = count_pool_waits(client)
    return client


UNKNOWN_ERROR_STATUS = 400
"""The status of an error reply whose response names none: an error all the same."""


class BotocoreTransport:
    """A botocore-shaped client as a `Transport`: a modeled error it raises becomes a `Reply` again.

    botocore has no call that answers an error without raising it; what never became an answer still raises.
    """

    __slots__ = ("_client", "_methods")

    def __init__(self, client: BotocoreClient) -> None:
        self._client = client
        self._methods = {operation: method for method, operation in client.meta.method_to_api_mapping.items()}

    def handle_request(self, operation: str, params: dict[str, Any], deadline: float | None = None) -> Reply:
        # botocore's read timeout is set on its client: `deadline` changes nothing here
        try:
            body: dict[str, Any] = getattr(self._client, self._methods[operation])(**params)
        except ClientError as exc:
            error: dict[str, Any] = exc.response
            return Reply(error.get("ResponseMetadata", {}).get("HTTPStatusCode") or UNKNOWN_ERROR_STATUS, error)
        return Reply(body.get("ResponseMetadata", {}).get("HTTPStatusCode", 200), body)


class PoolWaitsUnavailable(RuntimeWarning):
    """botocore no longer exposes the pool classes the pool-wait counter hooks: the counter is off, nothing else."""


_warned_unavailable = False


def count_pool_waits(client: Any) -> PoolWaitCounter | None:
    """Count the requests that find every pooled connection of `client` busy, or None if botocore hides its pools.

    botocore's urllib3 pools do not block (`block=False`): such a request opens a connection outside the pool
    (its latency then includes a TCP handshake) and closes it afterwards. The pool classes botocore hands its
    pool managers are swapped, in place, for subclasses that look at the pool in urllib3's public `urlopen`.
    botocore has no public way to reach those classes, so the one private step is guarded: if a botocore release
    moves it, the counter turns off with one `PoolWaitsUnavailable` warning and the client works as before.
    """
    classes = _pool_classes(client)
    if classes is None:
        global _warned_unavailable
        if not _warned_unavailable:
            _warned_unavailable = True
            warnings.warn(
                "this botocore no longer exposes its urllib3 pool classes (expected "
                "client._endpoint.http_session._pool_classes_by_scheme to map schemes to HTTPConnectionPool "
                "subclasses): the pool-wait saturation counter is off",
                PoolWaitsUnavailable,
                stacklevel=2,
            )
        return None
    counter = PoolWaitCounter()
    for scheme, base in list(classes.items()):
        classes[scheme] = _counting_pool(base, counter)
    return counter


def _pool_classes(client: Any) -> MutableMapping[str, type[HTTPConnectionPool]] | None:
    """botocore's scheme -> pool class map, shared with its pool managers, if it still has the shape we hook."""
    session = getattr(getattr(client, "_endpoint", None), "http_session", None)
    classes = getattr(session, "_pool_classes_by_scheme", None)
    if not isinstance(classes, MutableMapping) or not classes:
        return None
    if not all(isinstance(c, type) and issubclass(c, HTTPConnectionPool) for c in classes.values()):
        return None
    return classes


def _counting_pool(base: type[HTTPConnectionPool], counter: PoolWaitCounter) -> type[HTTPConnectionPool]:
    class CountingPool(base):  # type: ignore[valid-type,misc]  # a subclass of a class known only at run time
        def urlopen(self, *args: Any, **kwargs: Any) -> Any:
            pool = self.pool
            if pool is not None and pool.empty():  # all `maxsize` connections are out
                counter.increment()
            return super().urlopen(*args, **kwargs)

    CountingPool.__name__ = CountingPool.__qualname__ = f"Counting{base.__name__}"
    return CountingPool


def has_env_credentials() -> bool:
    return bool(os.environ.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_PROFILE"))
