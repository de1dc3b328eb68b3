"""Resource-based policies of tables: PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy.

A table holds at most one policy, kept as given, with its revision ID. The policy is stored, never enforced (the
endpoint authorises no request by IAM). Behaviour and wording are the service's as moto's aws_verified tests record
them (tests/test_dynamodb/test_dynamodb_resource_policy.py, run against the service):
- putting the policy a table already has is a no-op that returns its revision; another policy gets a new revision,
  and revisions are timestamps that compare as strings (dynlocust's: milliseconds since the epoch, increasing);
- ExpectedRevisionId must name the current revision, or be NO_POLICY when there is none; otherwise
  PolicyNotFoundException says which revision the table has;
- a table ARN naming no table is ResourceNotFoundException naming the table.
Where no record shows the service's words (an ExpectedRevisionId when there is no policy; deleting a policy that
is not there) the answer is GetResourcePolicy's "not found for the provided ResourceArn" sentence: dynlocust's choice.
"""

from __future__ import annotations

import time
from typing import Any

from dynlocust.local import errors
from dynlocust.local.control import required
from dynlocust.local.errors import ServiceError
from dynlocust.local.state import Ctx, State
from dynlocust.local.store import Table

NO_POLICY = "NO_POLICY"  # ExpectedRevisionId asking that the table have no policy yet
NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: "


def _not_found(message: str) -> ServiceError:
    return ServiceError("PolicyNotFoundException", NOT_FOUND + message)


def _table(st: State, req: dict[str, Any], ctx: Ctx) -> Table:
    """The table the ResourceArn names; a missing one is named by its table name, as the service names it."""
    arn = req["ResourceArn"]
    name = arn.partition(":table/")[2] if isinstance(arn, str) else ""
    t = st.tables.get(name)
    if t is None or t.arn != arn:
        raise errors.not_found(f"Requested resource not found: Table: {name or arn} not found")
    if not ctx.tables:
        ctx.tables.append(t.name)
    return t


def _check_expected(t: Table, expected: Any) -> None:
    """ExpectedRevisionId (when given) against the table's current revision."""
    current = t.policy[1] if t.policy is not None else None
    if expected is None or expected == current:
        return
    if expected == NO_POLICY and current is None:
        return
    if current is None:
        raise _not_found(t.arn)
    if expected == NO_POLICY:
        raise _not_found(
            f"Requested policy update expecting none to be present for table {t.name}, but a policy exists with "
            f"revision id {current}."
        )
    raise _not_found(
        f"Requested update for policy with revision id {expected}, but the policy associated to target table "
        f"{t.name} has revision id {current}."
    )


def put_resource_policy(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    required(req, "ResourceArn", "Policy")
    t = _table(st, req, ctx)
    _check_expected(t, req.get("ExpectedRevisionId"))
    policy = req["Policy"]
    if t.policy is None or t.policy[0] != policy:
        last = int(t.policy[1]) if t.policy is not None else 0
        t.policy = (policy, str(max(int(time.time() * 1000), last + 1)))
    return {"RevisionId": t.policy[1]}


def get_resource_policy(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    required(req, "ResourceArn")
    t = _table(st, req, ctx)
    if t.policy is None:
        raise _not_found(t.arn)
    return {"Policy": t.policy[0], "RevisionId": t.policy[1]}


def delete_resource_policy(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    required(req, "ResourceArn")
    t = _table(st, req, ctx)
    _check_expected(t, req.get("ExpectedRevisionId"))
    if t.policy is None:
        raise _not_found(t.arn)
    revision = t.policy[1]
    t.policy = None
    return {"RevisionId": revision}
