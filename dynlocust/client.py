"""The instrumented DynamoDB client a Locust user holds as `self.client`.

It offers the low-level client's methods with their keyword arguments and response dicts, and around each call it
enforces a total deadline with `gevent.Timeout` (socket timeouts alone cannot stop a server that trickles bytes),
classifies the result with `outcomes.classify`, and fires the request event it was handed exactly once.
Timing goes one way: a single monotonic start and stop around the call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import gevent

from dynlocust.outcomes import DeadlineExceeded, Outcome, classify

REQUEST_TYPE = "DynamoDB"


class RequestFailed(Exception):
    """The exception a request event carries for every outcome that is not `ok`; `str()` is the failure label."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.label)
        self.outcome = outcome

    def __repr__(self) -> str:  # Locust groups failures by repr(): show the label alone
        return self.outcome.label


def request_target(kwargs: Mapping[str, Any]) -> tuple[str, str | None]:
    """The table (and index) a call addresses, for request names and labels; batches name their first table."""
    table = kwargs.get("TableName")
    if table is None and "RequestItems" in kwargs:
        table = next(iter(kwargs["RequestItems"]), None)
    if table is None and "TransactItems" in kwargs:
        for action in kwargs["TransactItems"]:
            inner: dict[str, Any] = next(iter(action.values()), {})
            table = inner.get("TableName")
            if table:
                break
    return (str(table) if table else "-"), kwargs.get("IndexName")


def request_name(operation: str, table: str, index: str | None) -> str:
    return f"{operation} {table}/{index}" if index else f"{operation} {table}"


class DynamoDBClient:
    """Wraps a botocore DynamoDB client for one Locust user.

    `raise_errors=False` (the default) follows Locust's convention: a failed call is reported through the request
    event and returns `None`, so throttles do not flood the log with tracebacks. `last_outcome` always says what the
    last call ended with. With `raise_errors=True` the original botocore exception is re-raised after the event.
    """

    def __init__(
        self,
        raw_client: Any,
        request_event: Any,
        *,
        deadline: float,
        raise_errors: bool = False,
        context: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._raw = raw_client
        self._request_event = request_event
        self.deadline = deadline
        self.raise_errors = raise_errors
        self.context: dict[str, Any] = dict(context or {})
        self._clock = clock
        self._operations: dict[str, str] = dict(raw_client.meta.method_to_api_mapping)
        self.last_outcome: Outcome | None = None

    @property
    def raw(self) -> Any:
        """The underlying botocore client, for calls that must not be measured (setup, teardown)."""
        return self._raw

    def __getattr__(self, name: str) -> Any:
        operation = self._operations.get(name)
        attribute = getattr(self._raw, name)
        if operation is None:
            return attribute

        def call(**kwargs: Any) -> Any:
            return self.call(operation, attribute, kwargs)

        call.__name__ = name
        call.__doc__ = attribute.__doc__
        setattr(self, name, call)  # later lookups skip __getattr__
        return call

    def call(
        self,
        operation: str,
        method: Callable[..., Any],
        kwargs: dict[str, Any],
        *,
        context: Mapping[str, Any] | None = None,
    ) -> Any:
        """Run one measured call; `context` is merged into the request event's context."""
        table, index = request_target(kwargs)
        response, error, outcome = measured_call(
            self._request_event,
            request_name(operation, table, index),
            lambda: method(**kwargs),
            deadline=self.deadline,
            context={**self.context, **(context or {}), "operation": operation, "table": table, "index": index},
            clock=self._clock,
        )
        self.last_outcome = outcome
        if error is not None:
            if self.raise_errors:
                raise error
            return None
        return response


def measured_call(
    request_event: Any,
    name: str,
    function: Callable[[], Any],
    *,
    deadline: float,
    context: Mapping[str, Any],
    outcome_of: Callable[[Any, BaseException | None], Outcome] = classify,
    request_type: str = REQUEST_TYPE,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Any, BaseException | None, Outcome]:
    """Run `function` under a total deadline and fire the request event exactly once for it.

    Every client (the raw transports, the mapper adapters) measures through here, so deadlines, outcomes and
    request events mean the same everywhere. Returns the result, the exception it raised (if any) and the outcome.
    """
    result: Any = None
    error: BaseException | None = None
    timer = gevent.Timeout(deadline)
    start = clock()
    timer.start()
    try:
        result = function()
    except gevent.Timeout as exc:
        if exc is not timer:
            raise
        error = DeadlineExceeded(deadline)
    except Exception as exc:
        error = exc
    finally:
        timer.close()
    elapsed = clock() - start
    outcome = outcome_of(result, error)
    request_event.fire(
        request_type=request_type,
        name=name,
        response_time=elapsed * 1000.0,
        response_length=_response_length(result, error),
        response=result,
        context={**context, "outcome": outcome},
        exception=None if outcome.ok else RequestFailed(outcome),
        url=None,
        start_time=time.time() - elapsed,
    )
    return result, error, outcome


def _response_length(response: Any, error: BaseException | None) -> int:
    meta = response if response is not None else getattr(error, "response", None)
    if not isinstance(meta, Mapping):
        return 0
    headers = meta.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    try:
        return int(headers.get("content-length", 0))
    except (TypeError, ValueError):
        return 0
