"""`MapperUser`: time any mapper's operations as Locust requests, with dynlocust's deadlines and outcomes.

It lives beside the other users, not in `dynlocust.mapper`, so the mapper's core imports without Locust.

Why a proxy rather than per-mapper instrumentation: a mapper operation may make several calls (a query then a
transaction, N shard queries) and what a team wants to know is what the *operation* costs under load. So one
request event is fired per operation, named `<model>.<operation>`, around the whole call, with a total deadline and
the outcome classified from whatever botocore exception is inside the mapper's own (PynamoDB wraps them). Lazy
results (PynamoDB's query and scan iterators) are drained inside the timed region, where the network work happens.

Adapters: `self.repository(Entity)` (dynlocust's mapper), `self.pynamodb(Model)` (PynamoDB, optional) and
`self.table(name)` (boto3's resource `Table`). All run with retries off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import locust  # noqa: F401 - first: it monkey-patches for gevent before botocore is imported
from locust import User
from locust.env import Environment

from dynlocust.errors import ConfigurationError
from dynlocust.mapper.model import model_of
from dynlocust.mapper.repository import Repository
from dynlocust.plugin import context
from dynlocust.request.client import Target, measured_call
from dynlocust.request.outcomes import UNPROCESSED, Outcome, classify
from dynlocust.request.record import NO_TABLE
from dynlocust.request.transport.base import RequestEvent
from dynlocust.request.transport.boto3 import LOCAL_CREDENTIALS, MIN_POOL, is_local_endpoint, retry_free_config
from dynlocust.user_classes.dynamodb_user import pool_size, shared_boto3_client, shared_client

REQUEST_TYPE = "Mapper"
_LAZY_RESULTS = ("ResultIterator", "Generator")


def _botocore_error(exc: BaseException) -> BaseException:
    """The botocore exception a mapper's own error wraps (PynamoDB keeps it as `.cause`), else the error itself."""
    seen = exc
    for _ in range(5):
        inner = getattr(seen, "cause", None) or seen.__cause__
        if not isinstance(inner, BaseException):
            break
        seen = inner
        if type(seen).__module__.startswith("botocore"):
            return seen
    return exc


def _unprocessed(result: Any) -> int:
    leftovers = getattr(result, "unprocessed", None)
    if isinstance(leftovers, list | tuple):
        return len(leftovers)
    if isinstance(result, Mapping):
        return classify(result).unprocessed
    return 0


class OperationTimer:
    """Runs one mapper operation under a deadline and fires one Locust request event for it."""

    def __init__(self, request_event: RequestEvent, deadline: float, *, raise_errors: bool = False) -> None:
        self.request_event = request_event
        self.deadline = deadline
        self.raise_errors = raise_errors
        self.last_outcome: Outcome | None = None

    def run(self, name: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call `function`; on failure return None (or re-raise with `raise_errors`), as Locust clients do."""
        model, _, operation = name.rpartition(".")

        def call() -> Any:
            result = function(*args, **kwargs)
            if type(result).__name__ in _LAZY_RESULTS or isinstance(result, Iterator):
                result = list(result)  # lazy results are fetched inside the measured call
            return result

        result, error, record = measured_call(
            self.request_event,
            Target(operation, model or NO_TABLE, model or NO_TABLE),
            call,
            deadline=self.deadline,
            outcome_of=_outcome_of,
            request_type=REQUEST_TYPE,
            name=name,
        )
        self.last_outcome = record.outcome
        if error is not None:
            if self.raise_errors:
                raise error
            return None
        return result


def _outcome_of(result: Any, error: BaseException | None) -> Outcome:
    if error is not None:
        return classify(exception=_botocore_error(error))
    leftovers = _unprocessed(result)
    return Outcome(UNPROCESSED, "UnprocessedKeys", unprocessed=leftovers) if leftovers else Outcome("ok")


class Instrumented:
    """A proxy whose method calls are timed as `<prefix>.<method>`; other attributes pass through."""

    def __init__(self, target: Any, prefix: str, timer: OperationTimer) -> None:
        self._target = target
        self._prefix = prefix
        self._timer = timer

    @property
    def target(self) -> Any:
        """The wrapped object, for calls that must not be measured (setup, teardown)."""
        return self._target

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute) or isinstance(attribute, type) or name.startswith("_"):
            return attribute  # data, private helpers and classes (e.g. PynamoDB's DoesNotExist) pass through
        label = f"{self._prefix}.{name}"
        run = self._timer.run

        def timed(*args: Any, **kwargs: Any) -> Any:
            return run(label, attribute, *args, **kwargs)

        timed.__name__ = name
        setattr(self, name, timed)
        return timed

    def __repr__(self) -> str:
        return f"Instrumented({self._prefix})"


class MapperUser(User):
    """Subclass it and write tasks against mapper adapters; each operation is one Locust request.

    ```python
    class Shop(MapperUser):
        @task
        def buy(self):
            self.repository(Order).create(Order(...))   # request "Order.create"
    ```
    Adapters are built once and reused: a second `self.repository(Order)` (in `on_start` or in every task) returns
    the same timed proxy, and the clients behind it are shared by every user of the process, so what is measured is
    the mapper's call, never the construction of a client. `self.timed(name, fn, ...)` times any other call.
    """

    abstract = True
    deadline: ClassVar[float | None] = None
    """Total deadline of one operation in seconds; `None` takes `--deadline`."""
    raise_errors: ClassVar[bool] = False

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        settings = context.settings_for(environment)
        self._settings = settings
        self._adapters: dict[tuple[Any, ...], Instrumented] = {}
        self.raw_client = shared_boto3_client(environment, self.host or None, settings)
        self.timer = OperationTimer(
            environment.events.request,
            self.deadline if self.deadline is not None else settings.deadline,
            raise_errors=self.raise_errors,
        )

    def timed(self, name: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self.timer.run(name, function, *args, **kwargs)

    def _adapter(self, key: tuple[Any, ...], build: Callable[[], Instrumented]) -> Any:
        adapter = self._adapters.get(key)
        if adapter is None:
            adapter = self._adapters[key] = build()
        return adapter

    def repository(self, cls: type, *, table: str | None = None) -> Any:
        """dynlocust's mapper for an `@entity` class, timed as `<Entity>.<operation>`."""
        return self._adapter(
            ("repository", cls, table),
            lambda: Instrumented(Repository(cls, self.raw_client, table=table), model_of(cls).name, self.timer),
        )

    def table(self, name: str) -> Any:
        """boto3's document-model `Table` on this user's endpoint, timed as `Table(<name>).<method>`."""
        host, settings = self.host or None, self._settings

        def build() -> Instrumented:
            table = shared_client(  # one Table (one connection pool) per process, endpoint and name
                self.environment,
                ("boto3-table", host, settings.region, name),
                lambda: resource_table(host, name, settings, pool_size(self.environment, settings)),
            )
            return Instrumented(table, f"Table({name})", self.timer)

        return self._adapter(("table", name), build)

    def pynamodb(self, model: type) -> Any:
        """A PynamoDB model class pointed at this user's endpoint with retries off, timed as `<Model>.<method>`."""
        return self._adapter(("pynamodb", model), lambda: self._pynamodb(model))

    def _pynamodb(self, model: type) -> Instrumented:
        host, settings = self.host or None, self._settings

        def configure() -> str | None:
            configure_pynamodb(
                model,
                host,
                region=settings.region,
                connect_timeout=settings.connect_timeout,
                read_timeout=settings.effective_read_timeout,
                pool_size=pool_size(self.environment, settings),
            )
            return host

        # PynamoDB's connection belongs to the class: configured once per process, for one endpoint
        configured_host = shared_client(self.environment, ("pynamodb", model), configure)
        if configured_host != host:
            raise ConfigurationError(
                f"pynamodb adapter: expected one endpoint per PynamoDB model in a process (its connection belongs to "
                f"the class), found {model.__name__} used with {configured_host} and {host}"
            )
        return Instrumented(model, model.__name__, self.timer)


def resource_table(host: str | None, name: str, settings: Any, pool_size: int = MIN_POOL) -> Any:
    """A boto3 resource `Table` with dynlocust's retry-free configuration and a pool of `pool_size` connections."""
    import boto3  # local: locust (gevent) first, and boto3's resource layer only when asked for

    config = retry_free_config(
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.effective_read_timeout,
        pool_size=max(pool_size, MIN_POOL),
    )
    kwargs: dict[str, Any] = {"region_name": settings.region, "endpoint_url": host, "config": config}
    if is_local_endpoint(host):
        kwargs["aws_access_key_id"], kwargs["aws_secret_access_key"] = LOCAL_CREDENTIALS
    return boto3.resource("dynamodb", **kwargs).Table(name)


def configure_pynamodb(
    model: type,
    host: str | None,
    *,
    region: str,
    connect_timeout: float,
    read_timeout: float,
    pool_size: int = MIN_POOL,
) -> Any:
    """Point a PynamoDB model at `host` with one attempt per call, and build its connection now.

    PynamoDB keeps one connection (and botocore client) per model class and builds it on the first call; building
    it here keeps that construction (~100 ms of CPU) out of the first measured operation. Call it once per process
    and endpoint: every call discards the class's connection. Returns the model's botocore client.
    """
    meta = getattr(model, "Meta", None)
    if meta is None or not hasattr(model, "_get_connection"):
        raise ConfigurationError(f"pynamodb adapter: expected a PynamoDB Model with a Meta class, found {model!r}")
    meta.host = host
    meta.region = region
    meta.max_retry_attempts = 0
    meta.connect_timeout_seconds = connect_timeout
    meta.read_timeout_seconds = read_timeout
    meta.max_pool_connections = max(pool_size, MIN_POOL)
    if is_local_endpoint(host) and not getattr(meta, "aws_access_key_id", None):
        meta.aws_access_key_id, meta.aws_secret_access_key = LOCAL_CREDENTIALS
    model._connection = None  # type: ignore[attr-defined]  # PynamoDB caches the connection per class
    client = model._get_connection().connection.client
    retries = client.meta.config.retries or {}
    if retries.get("total_max_attempts", 1) != 1:
        raise ConfigurationError(
            f"pynamodb adapter: expected one attempt per call for {model.__name__}, found retries {retries} "
            "(PynamoDB's retry_configuration setting must stay 'LEGACY' so max_retry_attempts = 0 applies)"
        )
    return client


__all__ = ["REQUEST_TYPE", "Instrumented", "MapperUser", "OperationTimer", "configure_pynamodb", "resource_table"]
