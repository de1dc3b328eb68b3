"""The instrumented DynamoDB client a Locust user holds as `self.client`.

It offers the low-level client's methods with their keyword arguments and response dicts, and around each call it
enforces a total deadline with a gevent timer (socket timeouts alone cannot stop a server that trickles bytes),
classifies the result with `outcomes.classify`, builds the call's one `RequestRecord` and fires the request event it
was handed exactly once, with that record in its context. Timing goes one way: a single monotonic start and stop
around the call. `send`, the scenario path, goes through the transport's `handle_request` (`transport.base`): a
service error is a reply to classify there, not an exception to build and catch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gevent import getcurrent
from gevent.hub import get_hub

from dynlocust.request.outcomes import DeadlineExceeded, Outcome, classify, classify_error
from dynlocust.request.record import RequestRecord, consumed_capacity, is_write, request_name, request_target
from dynlocust.request.transport.base import BotocoreClient, Reply, RequestEvent, Transport

if TYPE_CHECKING:
    from dynlocust.run.pacing import Ticket

REQUEST_TYPE = "DynamoDB"
MAX_TARGETS = 256
"""Call targets a client remembers (a user generating table names must not grow it without bound)."""


class _DeadlineFired(BaseException):
    """Thrown into a call by its own deadline timer; `args[0]` is that timer (an outer one's is re-raised).

    A BaseException, as `gevent.Timeout` is, so that no `except Exception` in a transport swallows it."""


class RequestFailed(Exception):
    """The exception a request event carries for every outcome that is not `ok`; `str()` is the failure label."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.label)
        self.outcome = outcome

    def __repr__(self) -> str:  # Locust groups failures by repr(): show the label alone
        return self.outcome.label


class DynamoDBClient:
    """Wraps a botocore DynamoDB client for one Locust user.

    `raise_errors=False` (the default) follows Locust's convention: a failed call is reported through the request
    event and returns `None`, so throttles do not flood the log with tracebacks. With `raise_errors=True` the
    original botocore exception is re-raised after the event.

    `last_record` (and `last_outcome`, its outcome) is a convenience for a user's own tasks, to branch on how the
    last call ended; observers read the record from the request event's context instead.
    `logical_names` maps physical table names to the names request names and metrics show (a scenario run's
    tables carry the run id; its logical names keep runs comparable). A raw client that is a `Transport` itself
    (`FastDynamoDB`) serves `send` directly; any other is adapted by `BotocoreTransport`.
    """

    def __init__(
        self,
        raw_client: BotocoreClient,
        request_event: RequestEvent,
        *,
        deadline: float,
        raise_errors: bool = False,
        context: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._raw = raw_client
        self._transport = raw_client if isinstance(raw_client, Transport) else _adapted(raw_client)
        self._request_event = request_event
        self.deadline = deadline
        self.raise_errors = raise_errors
        self.context: dict[str, Any] = dict(context or {})
        self._clock = clock
        self._operations: dict[str, str] = dict(raw_client.meta.method_to_api_mapping)
        self.logical_names: Mapping[str, str] = {}
        self.last_record: RequestRecord | None = None
        self._targets: dict[tuple[str, str, str | None, int], Target] = {}

    @property
    def raw(self) -> Any:
        """The underlying botocore client, for calls that must not be measured (setup, teardown)."""
        return self._raw

    @property
    def transport(self) -> Transport:
        """The seam `send` goes through."""
        return self._transport

    @property
    def last_outcome(self) -> Outcome | None:
        """How the last call ended (a convenience for tasks; see `last_record`)."""
        return self.last_record.outcome if self.last_record is not None else None

    def __getattr__(self, name: str) -> Any:
        if name not in self._operations:
            return getattr(self._raw, name)
        attribute = getattr(self._raw, name)

        def call(**kwargs: Any) -> Any:
            response, error, _record = self._measure(name, kwargs)
            if error is not None:
                if self.raise_errors:
                    raise error
                return None
            return response

        call.__name__ = name
        call.__doc__ = attribute.__doc__
        setattr(self, name, call)  # later lookups skip __getattr__
        return call

    def send(
        self, method: str, kwargs: dict[str, Any], *, ticket: Ticket | None = None, label: str | None = None
    ) -> RequestRecord:
        """Run one measured call of `method` (`put_item`) for a pacer's `ticket` through the transport's non-raising
        route; never raises the call's error."""
        return self._measure(method, kwargs, ticket=ticket, label=label, reply=True)[2]

    def _measure(
        self,
        method: str,
        kwargs: dict[str, Any],
        *,
        ticket: Ticket | None = None,
        label: str | None = None,
        reply: bool = False,
    ) -> tuple[Any, BaseException | None, RequestRecord]:
        function = self._transport.handle_request if reply else getattr(self._raw, method)
        physical, index = request_target(kwargs)
        names = self.logical_names
        key = (method, physical, index, id(names))
        target = self._targets.get(key)
        if target is None:  # a user calls few distinct (method, table) pairs: build each target once
            operation = self._operations[method]
            logical = names.get(physical, physical)
            target = Target(operation, logical, physical, index, is_write(operation), names.get)
            self._targets = self._targets if len(self._targets) < MAX_TARGETS else {}
            self._targets[key] = target
        response, error, record = measured_call(
            self._request_event,
            target,
            function,
            deadline=self.deadline,
            context=self.context,
            clock=self._clock,
            ticket=ticket,
            label=label,
            kwargs=kwargs,
            reply=reply,
        )
        self.last_record = record
        return response, error, record


@dataclass(frozen=True, slots=True)
class Target:
    """What a call addresses, known before it is sent: the record's identity fields."""

    operation: str
    table: str
    physical_table: str
    index: str | None = None
    write: bool = False
    logical: Callable[[str], str | None] | None = None
    """Maps a physical table name of the response's consumed capacity to its logical name (None: unknown)."""
    name: str = field(init=False)
    """The request name (`<operation> <logical table>`), built once per target rather than once per request."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", request_name(self.operation, self.table, self.index))

    def logical_name(self, physical: str) -> str:
        """The logical name of a physical table the response's consumed capacity names (itself when unknown)."""
        logical = self.logical
        return (logical(physical) if logical is not None else None) or physical


def _adapted(raw_client: BotocoreClient) -> Transport:
    from dynlocust.request.transport.boto3 import BotocoreTransport  # botocore: imported after Locust

    return BotocoreTransport(raw_client)


def measured_call(
    request_event: RequestEvent,
    target: Target,
    function: Callable[..., Any],
    *,
    deadline: float,
    context: Mapping[str, Any] | None = None,
    outcome_of: Callable[[Any, BaseException | None], Outcome] = classify,
    request_type: str = REQUEST_TYPE,
    name: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
    ticket: Ticket | None = None,
    label: str | None = None,
    kwargs: Mapping[str, Any] | None = None,
    reply: bool = False,
) -> tuple[Any, BaseException | None, RequestRecord]:
    """Run `function` (with `kwargs`) under a total deadline, build its `RequestRecord`, fire the request event once.

    Every client (the raw transports, the mapper adapters) measures through here, so deadlines, outcomes, records
    and request events mean the same everywhere. The event's context carries the record under `record` (and its
    outcome under `outcome`). `name` overrides the request name (`<operation> <logical table>`). Each call gets
    its own libev timer (a stopped one restarted keeps only what was left of its time), started as `gevent.Timeout`
    starts one but without its object: 1.4 against 0.4 us per call by timeit, paid on every request. With `reply`,
    `function` is a `Transport.handle_request`, called with the operation, `kwargs` and the deadline: its `Reply`
    is classified (an error reply's body as a `ClientError`'s response would be) and `outcome_of` is not asked.
    Returns the result (None for an error reply), the exception raised (if any) and the record.
    """
    result: Any = None
    answer: Reply | None = None
    error: BaseException | None = None
    timer = get_hub().loop.timer(deadline, 0.0, True, -1)  # gevent.Timeout's ref and priority
    start = clock()
    timer.start(getcurrent().throw, _DeadlineFired, timer, update=True)
    try:
        if reply:
            answer = function(target.operation, kwargs, deadline)
        else:
            result = function() if kwargs is None else function(**kwargs)
    except _DeadlineFired as exc:
        if exc.args[0] is not timer:
            raise
        error = DeadlineExceeded(deadline)
    except Exception as exc:
        error = exc
    finally:
        timer.close()
    elapsed = clock() - start
    now = time.time()
    if answer is None:
        outcome = outcome_of(result, error)
        body = result if result is not None else getattr(error, "response", None)
    elif answer.status < 300:
        result = body = answer.body
        outcome = classify(body)
    else:
        body = answer.body
        outcome = classify_error(body)
    write = target.write
    # positional: this runs once per request, and keyword arguments cost a dataclass __init__ measurably more
    record = RequestRecord(
        target.operation,
        target.table,
        target.physical_table,
        target.index,
        write,
        outcome,
        elapsed,
        None if ticket is None else now - ticket.intended,
        consumed_capacity(result, write=write, logical=target.logical_name) if result else (),
        ticket,
        label,
    )
    request_event.fire(
        request_type=request_type,
        name=target.name if name is None else name,
        response_time=elapsed * 1000.0,
        response_length=_response_length(body),
        response=result,
        context={**context, "record": record, "outcome": outcome}
        if context
        else {"record": record, "outcome": outcome},
        exception=None if outcome.ok else RequestFailed(outcome),
        url=None,
        start_time=now - elapsed,
    )
    return result, error, record


def _response_length(body: Any) -> int:
    """The content length a response (or an error's parsed body) reports, else 0."""
    if not isinstance(body, (dict, Mapping)):  # dict first: an ABC check costs 5x
        return 0
    headers = body.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    try:
        return int(headers.get("content-length", 0))
    except (TypeError, ValueError):
        return 0
