"""One record per DynamoDB request, built once in `client.measured_call` and consumed by every observer.

The windows, the metrics, the web UI and the reports read what a call was (operation, logical table, read or
write), how it ended (`Outcome`), how long it took and what it consumed from this record alone: nobody classifies
an outcome, decides whether an operation writes, or counts capacity units a second time. The vocabularies for
"is it a write" (`WRITE_OPERATIONS`) and "what did it consume" (`consumed_capacity`) live here, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynlocust.request.outcomes import Outcome

if TYPE_CHECKING:
    from dynlocust.run.pacing import Ticket

WRITE_OPERATIONS = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "ExecuteTransaction"}
)
"""API operations that consume write units (a bare `CapacityUnits` of theirs counts as write units)."""

NO_TABLE = "-"


def is_write(operation: str) -> bool:
    """Whether an API operation (`PutItem`, not `put_item`) writes."""
    return operation in WRITE_OPERATIONS


@dataclass(frozen=True, slots=True)
class Consumed:
    """Capacity units one table (`index` "") or one of its indexes reported consumed by one request."""

    table: str
    """The logical table name (the scenario's), or the physical name when no mapping is known."""
    index: str
    read_units: float
    write_units: float


@dataclass(slots=True)
class RequestRecord:
    """What one request was, how it ended and what it cost; `latency_from_intended` needs a pacer's ticket.

    Never changed once built, though not frozen: a frozen dataclass's `__init__` sets each field through
    `object.__setattr__`, once per request (with the per-request name and closure, 10% of the request path's
    instructions: `bench_hot_path.py`, issue 48).
    """

    operation: str
    """The API name (`PutItem`), or the mapper operation for mapper requests."""
    table: str
    """The logical table name (what request names and metric labels show)."""
    physical_table: str
    index: str | None
    write: bool
    outcome: Outcome
    latency: float
    """Seconds from send to answer (or failure)."""
    latency_from_intended: float | None
    """Seconds from the send's intended time (the pacer's schedule) to the answer; None without a ticket."""
    consumed: tuple[Consumed, ...] = ()
    ticket: Ticket | None = None
    label: str | None = None
    """The scenario operation's label, when a scenario run sent it."""
    read_units: float = field(init=False)
    """The sum of `consumed`'s read units (summed once: the run, its window and the metrics all read it)."""
    write_units: float = field(init=False)

    def __post_init__(self) -> None:
        consumed = self.consumed
        if consumed:
            self.read_units = sum(c.read_units for c in consumed)
            self.write_units = sum(c.write_units for c in consumed)
        else:
            self.read_units = self.write_units = 0.0

    @property
    def name(self) -> str:
        """The Locust request name: operation and logical table (so runs with different ids compare)."""
        return request_name(self.operation, self.table, self.index)


def request_name(operation: str, table: str, index: str | None) -> str:
    return f"{operation} {table}/{index}" if index else f"{operation} {table}"


def request_target(kwargs: Mapping[str, Any]) -> tuple[str, str | None]:
    """The physical table (and index) a call addresses; batches and transactions name their first table."""
    table = kwargs.get("TableName")
    if table is None and "RequestItems" in kwargs:
        table = next(iter(kwargs["RequestItems"]), None)
    if table is None and "TransactItems" in kwargs:
        for action in kwargs["TransactItems"]:
            inner: Mapping[str, Any] = next(iter(action.values()), {})
            table = inner.get("TableName")
            if table:
                break
    return (str(table) if table else NO_TABLE), kwargs.get("IndexName")


def consumed_capacity(
    response: Any, *, write: bool, logical: Callable[[str], str] = lambda name: name
) -> tuple[Consumed, ...]:
    """The capacity a response reports (`ReturnConsumedCapacity` TOTAL or INDEXES), per table and index.

    Explicit `ReadCapacityUnits`/`WriteCapacityUnits` are taken as given; a bare `CapacityUnits` counts as write
    units for a write operation and read units otherwise. With INDEXES, the table's and each index's share are
    reported apart. `logical` maps a physical table name to the name the record shows.
    """
    if not isinstance(response, (dict, Mapping)):
        return ()
    consumed = response.get("ConsumedCapacity")
    if not consumed:
        return ()
    if isinstance(consumed, (dict, Mapping)) and "Table" not in consumed and len(consumed) == 2:  # TOTAL, one table
        total = float(consumed.get("CapacityUnits") or 0.0)
        if not total:
            return ()
        table = logical(str(consumed.get("TableName", NO_TABLE)))
        return (Consumed(table, "", 0.0, total) if write else Consumed(table, "", total, 0.0),)
    out: list[Consumed] = []
    for entry in [consumed] if isinstance(consumed, (dict, Mapping)) else consumed:
        table = logical(str(entry.get("TableName", NO_TABLE)))
        parts: list[tuple[str, Mapping[str, Any]]] = [("", entry)]
        if "Table" in entry:  # ReturnConsumedCapacity=INDEXES: table and indexes apart
            parts = [("", entry["Table"])]
            for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                parts.extend((str(name), units) for name, units in (entry.get(group) or {}).items())
        for index, units in parts:
            read = float(units.get("ReadCapacityUnits") or 0.0)
            written = float(units.get("WriteCapacityUnits") or 0.0)
            if not read and not written:
                total = float(units.get("CapacityUnits") or 0.0)
                read, written = (0.0, total) if write else (total, 0.0)
            if read or written:
                out.append(Consumed(table, index, read, written))
    return tuple(out)
