"""The request seams: `Transport` (one DynamoDB operation in, one `Reply` out) and `RequestEvent` (where a measured
call reports itself).

`Transport` is modelled on httpx's `BaseTransport`: a named seam with one method. A service error is an answer, not
an exception: `handle_request` returns its status and the parsed error body (what botocore's `ClientError.response`
holds), so a scenario run, which never raises, classifies a throttle without building and catching an exception.
What never became an answer (a refused connection, a read timeout, a bad checksum, invalid parameters) raises
botocore's exception for it, as httpx's transports raise for a failed exchange.

`BotocoreClient` is the other face of a transport client: the botocore-shaped methods (`put_item(**kwargs)`) a
user's tasks call through `DynamoDBClient`, found by name beside `meta`. Both transports offer both faces:
`FastDynamoDB` natively, a botocore client through `BotocoreTransport` (`transport.boto3`).

`RequestEvent` is what `DynamoDBClient` fires once per call: Locust's `environment.events.request` in a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


class Reply:
    """What a DynamoDB endpoint answered: the HTTP status and the parsed body, botocore-shaped.

    On success the body is the response dict a botocore client returns; on a service error it is the dict of its
    `ClientError.response` (`Error`, the modeled fields such as `ThrottlingReasons`, `ResponseMetadata`).
    """

    __slots__ = ("body", "status")

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body

    @property
    def ok(self) -> bool:
        """Whether the service answered with a success (HTTP 2xx); batch leftovers on a 200 are still a success."""
        return self.status < 300

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.body!r})"


@runtime_checkable
class Transport(Protocol):
    """Sends one DynamoDB operation (`PutItem`, the API name) with its botocore-shaped parameters."""

    def handle_request(self, operation: str, params: dict[str, Any], deadline: float | None = None) -> Reply:
        """Exactly one exchange, no retries: a service error is returned, a failed exchange raises.

        `deadline` is the caller's total deadline around the exchange (`client.measured_call`'s timer), if it has
        one: a transport may skip its own per-read timeouts where they could not fire before it."""
        ...


class ClientMeta(Protocol):
    """The part of a botocore client's `meta` the measured client reads."""

    @property
    def method_to_api_mapping(self) -> Mapping[str, str]:
        """Method name (`put_item`) -> API operation name (`PutItem`)."""
        ...


class BotocoreClient(Protocol):
    """A client shaped like botocore's DynamoDB client: its operations are methods named in `meta`."""

    @property
    def meta(self) -> ClientMeta: ...


class RequestEvent(Protocol):
    """The request event a measured call fires once (Locust's `EventHook`, `environment.events.request`)."""

    def fire(
        self,
        *,
        request_type: str,
        name: str,
        response_time: float,
        response_length: int,
        response: Any,
        context: dict[str, Any],
        exception: BaseException | None,
        url: str | None,
        start_time: float,
    ) -> None: ...


__all__ = ["BotocoreClient", "ClientMeta", "Reply", "RequestEvent", "Transport"]
