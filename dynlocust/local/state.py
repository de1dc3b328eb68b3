"""What every operation of the local endpoint works on: the tables of the request's region and the capacity model.

`State` owns the tables (namespaced by region, as in the service), the TTL settings, the idempotency tokens of
TransactWriteItems, and the one way to look a table up and to charge capacity; `Ctx` is what one request touched,
for the server's statistics. The operations themselves live in one module per job (control, items, reads,
batches) and take `(State, request, Ctx)`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynlocust.dynamodb import THROTTLE_CAUSE_HEADER
from dynlocust.local import errors
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError
from dynlocust.local.idempotency import TokenStore
from dynlocust.local.store import StoredItem, Table, WritePlan
from dynlocust.local.units import write_units

if TYPE_CHECKING:
    from dynlocust.local.capacity import CapacityModel


class Ctx:
    """What one request touched, for the server's statistics (a plain class: one is built per request)."""

    __slots__ = ("region", "tables", "unprocessed")

    def __init__(self, region: str = "") -> None:
        self.tables: list[str] = []
        self.unprocessed = 0
        self.region = region  # from the request's credential scope; "" = the endpoint's --region


def request_region(headers: dict[str, str]) -> str:
    """The region of a SigV4 request's credential scope (Credential=KEY/DATE/REGION/dynamodb/...), or ""."""
    auth = headers.get("authorization")
    if not auth:
        return ""
    start = auth.find("Credential=")
    if start < 0:
        return ""
    parts = auth[start + 11 : start + 200].split("/", 3)
    return parts[2] if len(parts) > 3 else ""


def throttle_error(th: Any) -> ServiceError:
    key = "throttlingReasons" if th.code == "ThrottlingException" else "ThrottlingReasons"
    headers = {THROTTLE_CAUSE_HEADER: th.cause} if th.cause else None
    return ServiceError(
        th.code, th.message, extra={key: [{"reason": th.reason, "resource": th.resource}]}, headers=headers
    )


_NULL_TABLE_NAME = (
    "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"
)


class State:
    """All tables of one endpoint (single-threaded: gevent, no preemption)."""

    def __init__(
        self, config: LocalConfig, capacity: CapacityModel | None = None, clock: Callable[[], float] = time.monotonic
    ):
        self.config = config
        self.capacity = capacity
        self.clock = clock
        self.tables: dict[str, Table] = {}
        self.ttl: dict[str, dict[str, Any]] = {}
        # tables live in a region, as in the service: each request works on its credential scope's region
        self.region = config.region
        self._regions: dict[str, tuple[dict[str, Table], dict[str, dict[str, Any]]]] = {
            config.region: (self.tables, self.ttl)
        }
        self.tokens = TokenStore()
        # runs a step (True: done) again and again between other requests; set by the server (see backfill.py)
        self.background: Callable[[Callable[[], bool]], None] | None = None

    def use_region(self, region: str) -> None:
        """Work on the tables of `region` ("" = the endpoint's own) until the next call."""
        region = region or self.config.region
        if region != self.region:
            self.tables, self.ttl = self._regions.setdefault(region, ({}, {}))
            self.region = region

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.config.account_id}:table/{name}"

    def table(self, req: dict[str, Any], ctx: Ctx, name: str | None = None) -> Table:
        """An ACTIVE table for the data plane; missing or still CREATING -> ResourceNotFoundException."""
        t = self._lookup(name if name is not None else req.get("TableName"), ctx)
        if t is None or t.active_at > self.clock():
            raise errors.not_found()
        return t

    def any_table(self, name: Any, ctx: Ctx) -> Table:
        """A table in any state, for the control plane; missing -> ResourceNotFoundException naming it."""
        t = self._lookup(name, ctx)
        if t is None:
            raise errors.not_found(f"Requested resource not found: Table: {name} not found")
        return t

    def _lookup(self, name: Any, ctx: Ctx) -> Table | None:
        """The table `name` names (a name or, as every operation that takes TableName accepts, the table's ARN)."""
        if not isinstance(name, str):
            raise errors.validation(_NULL_TABLE_NAME)
        if not ctx.tables:
            ctx.tables.append(name)
        t = self.tables.get(name)
        if t is None and name.startswith("arn:"):
            _, _, short = name.partition(":table/")
            t = self.tables.get(short)
            if t is not None and t.arn != name:
                t = None
        return t

    def by_arn(self, arn: Any, ctx: Ctx) -> Table:
        for t in self.tables.values():
            if t.arn == arn:
                if not ctx.tables:
                    ctx.tables.append(t.name)
                return t
        raise errors.not_found(f"Requested resource not found: ResourcArn: {arn} not found")

    # ------------------------------------------------------------------ capacity
    def charge_write(self, plan: WritePlan, factor: float = 1.0) -> Any:
        cap = self.capacity
        if cap is None:
            return None
        name = plan.table.name
        charged: list[tuple[str, float, str]] = []
        for index, (units, part) in plan.gsi_units.items():
            th = cap.charge(name, index, "write", units * factor, part)
            if th is not None:
                break
            charged.append((index, units * factor, part))
        else:
            units = plan.table_units + sum(plan.lsi_units.values())
            th = cap.charge(name, None, "write", units * factor, plan.partition)
        if th is not None:
            # the write is refused as a whole: the indexes that accepted it give their units back
            for index, units, part in charged:
                cap.refund(name, index, "write", units, part)
        return th

    def condition_failed(self, t: Table, old: StoredItem | None, partition: str, on_fail: bool) -> ServiceError:
        """The error for a failed condition; the service still charges the write units of the item read."""
        if self.capacity is not None:
            th = self.capacity.charge(t.name, None, "write", write_units(0 if old is None else old.size), partition)
            if th is not None:
                return throttle_error(th)
        return errors.conditional_failed(old.item() if on_fail and old is not None else None)

    def charge_read(self, t: Table, index: str | None, units: float, partition: str) -> Any:
        if self.capacity is None:
            return None
        return self.capacity.charge(t.name, index, "read", units, partition)
