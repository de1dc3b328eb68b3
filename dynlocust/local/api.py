"""The operations of the local endpoint: one table from operation name to handler, and the dispatch around it.

Each handler takes the endpoint's `State`, the decoded JSON request and the request's `Ctx`, and returns the JSON
response dict or raises ServiceError with the service's code and wording. The handlers live in one module per job:
`control` (tables, indexes, tags, TTL), `policies` (resource-based policies), `items` (single-item reads and
writes), `reads` (Query, Scan), `batches` (batches and transactions) and `partiql` (statements run through those
handlers); `legacy` rewrites the pre-expression parameters and `params` checks the parameters they share. A new
operation is one line in OPERATIONS.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dynlocust.local import batches, control, errors, items, partiql, policies, reads
from dynlocust.local.attrvalues import INVALID_VALUES
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError
from dynlocust.local.shapes import Spec, check_request, operation_shapes
from dynlocust.local.state import Ctx, State
from dynlocust.local.validation import check_constraints

if TYPE_CHECKING:
    from dynlocust.local.capacity import CapacityModel

Handler = Callable[[State, dict[str, Any], Ctx], dict[str, Any]]

OPERATIONS: dict[str, Handler] = {
    "CreateTable": control.create_table,
    "DescribeTable": control.describe_table,
    "UpdateTable": control.update_table,
    "DeleteTable": control.delete_table,
    "ListTables": control.list_tables,
    "TagResource": control.tag_resource,
    "UntagResource": control.untag_resource,
    "ListTagsOfResource": control.list_tags,
    "DescribeEndpoints": control.describe_endpoints,
    "DescribeTimeToLive": control.describe_ttl,
    "DescribeLimits": control.describe_limits,
    "UpdateTimeToLive": control.update_ttl,
    "PutResourcePolicy": policies.put_resource_policy,
    "GetResourcePolicy": policies.get_resource_policy,
    "DeleteResourcePolicy": policies.delete_resource_policy,
    "PutItem": items.put_item,
    "GetItem": items.get_item,
    "DeleteItem": items.delete_item,
    "UpdateItem": items.update_item,
    "Query": reads.query,
    "Scan": reads.scan,
    "BatchWriteItem": batches.batch_write,
    "BatchGetItem": batches.batch_get,
    "TransactWriteItems": batches.transact_write,
    "TransactGetItems": batches.transact_get,
    "ExecuteStatement": partiql.execute_statement,
    "BatchExecuteStatement": partiql.batch_execute_statement,
    "ExecuteTransaction": partiql.execute_transaction,
}


class Backend:
    """One endpoint's state and its operations, each behind the checks every request gets."""

    def __init__(
        self, config: LocalConfig, capacity: CapacityModel | None = None, clock: Callable[[], float] = time.monotonic
    ):
        self.state = State(config, capacity, clock)
        shapes = operation_shapes()  # loaded now (~0.3 s), not by the first request
        self.ops: dict[str, Callable[[dict[str, Any], Ctx], dict[str, Any]]] = {
            op: self._dispatch(op, fn, shapes.get(op)) for op, fn in OPERATIONS.items()
        }

    @property
    def capacity(self) -> Any:
        return self.state.capacity

    def _dispatch(
        self, op: str, handler: Handler, shape: Spec | None
    ) -> Callable[[dict[str, Any], Ctx], dict[str, Any]]:
        """`handler` behind the check of its input's JSON types against the service model (the service's first
        check, at every depth), then of the model's top-level constraints (all listed in one message), working on
        the tables of the request's region."""
        state = self.state
        # PutItem, UpdateItem and DeleteItem word an invalid attribute value "1 validation error detected: ...";
        # the other operations give the bare sentence (as captured against the service)
        envelope = op in ("PutItem", "UpdateItem", "DeleteItem")

        def run(req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
            if shape is not None:
                try:
                    check_request(shape, req)
                except ServiceError as exc:
                    if envelope and exc.message.startswith(INVALID_VALUES):
                        raise errors.detected(exc.message) from None
                    raise
            check_constraints(op, req)
            state.use_region(ctx.region)
            return handler(state, req, ctx)

        return run
