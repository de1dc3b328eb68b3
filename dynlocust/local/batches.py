"""BatchWriteItem, BatchGetItem, TransactWriteItems and TransactGetItems: many items in one request.

Every item of a request is checked and planned before any is applied; a transaction is all or nothing
(TransactionCanceledException with one reason per action), a batch answers what it could not do as unprocessed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from dynlocust.dynamodb import MAX_BATCH_BYTES, MAX_TRANSACT_BYTES
from dynlocust.local import errors, item_collections, params
from dynlocust.local.errors import ServiceError
from dynlocust.local.items import account, apply, item_key, key_of, plan_write, required_item, updated
from dynlocust.local.limits import BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_ITEMS_MAX
from dynlocust.local.params import Exprs
from dynlocust.local.state import Ctx, State, throttle_error
from dynlocust.local.store import Item, StoredItem, WritePlan
from dynlocust.local.units import ITEM_LIMIT, Consumed, item_size, read_units, write_units

GSI_THROTTLE_TX = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)
TABLE_THROTTLE_TX = (
    "Throughput exceeds the current capacity of your table or index. "
    "DynamoDB is automatically scaling your table or index so please try again shortly."
)
PTEE_TX = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
TRANSACTION_LIMIT = MAX_TRANSACT_BYTES


def _tx_reason(th: Any) -> dict[str, str]:
    if th.code == "ProvisionedThroughputExceededException":
        return {"Code": "ProvisionedThroughputExceeded", "Message": PTEE_TX}
    return {"Code": "ThrottlingError", "Message": GSI_THROTTLE_TX if "/index/" in th.resource else TABLE_THROTTLE_TX}


def _cancelled(reasons: list[dict[str, Any]]) -> ServiceError:
    codes = ", ".join(r["Code"] for r in reasons)
    return ServiceError(
        "TransactionCanceledException",
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
        extra={"CancellationReasons": reasons},
    )


_PUT_KEY_ERRORS = (
    "One or more parameter values were invalid: Missing the key ",
    "One or more parameter values were invalid: Type mismatch for key ",
)


def _put_key(t: Any, item: Item) -> tuple[Any, Any, str]:
    """A PutRequest's key: a missing key attribute, or one of another type, is worded as a wrong key (as
    dynalite's tests record the service), not as PutItem words it."""
    try:
        return item_key(t, item)
    except ServiceError as exc:
        if exc.message.startswith(_PUT_KEY_ERRORS):
            raise errors.validation("The provided key element does not match the schema") from None
        raise


def batch_write(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    rcc = params.return_consumed(req)
    request_items: dict[str, Any] = req["RequestItems"]  # 1 or more tables of 1 to 25 requests: check_constraints
    if sum(len(v) for v in request_items.values()) > BATCH_WRITE_MAX:  # 25 over all tables: the service's own
        raise errors.validation("Too many items requested for the BatchWriteItem call")
    plans: list[tuple[str, dict[str, Any], WritePlan]] = []
    for name, reqs in request_items.items():
        t = st.table(req, ctx, name)
        seen: set[tuple[Any, Any]] = set()
        for wr in reqs:
            if "PutRequest" in wr:
                item = required_item(wr["PutRequest"], f"requestItems.{name}.member.putRequest.item")
                hk, sk, part = _put_key(t, item)
                new: Item | None = item
            elif "DeleteRequest" in wr:
                hk, sk, part = key_of(t, wr["DeleteRequest"].get("Key"))
                new = None
            else:
                raise errors.validation("Supplied request must contain exactly one of PutRequest or DeleteRequest")
            if (hk, sk) in seen:
                raise errors.validation("Provided list of item keys contains duplicates")
            seen.add((hk, sk))
            plans.append((name, wr, plan_write(t, hk, sk, part, t.base.get(hk, sk), new)))
    unprocessed: dict[str, list[dict[str, Any]]] = {}
    consumed: dict[str, Consumed] = {}
    written: list[tuple[Any, Any, Item]] = []  # (table, hk, item or key) of each write done
    first_throttle = None
    for name, wr, plan in plans:
        th = st.charge_write(plan)
        if th is not None:
            first_throttle = first_throttle or th
            unprocessed.setdefault(name, []).append(wr)
            continue
        # re-read: an earlier write in this batch cannot touch the same key, so old is still current
        apply(plan)
        account(plan, consumed.setdefault(name, Consumed(name, "write")))
        body = next(iter(wr.values()))
        written.append((plan.table, plan.hk, body.get("Item") or body["Key"]))
    n_un = sum(len(v) for v in unprocessed.values())
    ctx.unprocessed = n_un
    if first_throttle is not None and n_un == len(plans):
        raise throttle_error(first_throttle)
    out: dict[str, Any] = {"UnprocessedItems": unprocessed}
    if rcc:
        out["ConsumedCapacity"] = [(consumed.get(n) or Consumed(n, "write")).render(rcc) for n in request_items]
    return _with_metrics(req, written, out)


def _with_metrics(req: dict[str, Any], written: list[tuple[Any, Any, Item]], out: dict[str, Any]) -> dict[str, Any]:
    """`out` with the ItemCollectionMetrics of the collections written, when asked for and there are any."""
    if item_collections.requested(req) and (metrics := item_collections.per_table(written)):
        out["ItemCollectionMetrics"] = metrics
    return out


def batch_get(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    rcc = params.return_consumed(req)
    request_items: dict[str, Any] = req["RequestItems"]  # present, not empty: validation.check_constraints
    total = sum(len(v.get("Keys") or []) for v in request_items.values())
    for name, spec in request_items.items():
        if len(spec.get("Keys") or []) > BATCH_GET_MAX:
            raise errors.detected(
                f"Value at 'requestItems.{name}.member.keys' failed to satisfy constraint: "
                f"Member must have length less than or equal to {BATCH_GET_MAX}"
            )
    if total > BATCH_GET_MAX:
        raise errors.validation("Too many items requested for the BatchGetItem call")
    jobs = []
    for name, spec in request_items.items():
        # the request's own checks come before the table lookup, as in the service
        ex = Exprs(spec)
        project = params.projector(spec, ex)
        ex.finish()
        keys = spec.get("Keys") or []
        if not keys:
            raise errors.validation(
                "1 validation error detected: Value at 'requestItems." + name + ".member.keys' failed to "
                "satisfy constraint: Member must have length greater than or equal to 1"
            )
        t = st.table(req, ctx, name)
        seen: set[tuple[Any, Any]] = set()
        parsed = []
        for k in keys:
            hk, sk, part = key_of(t, k)
            if (hk, sk) in seen:
                raise errors.validation("Provided list of item keys contains duplicates")
            seen.add((hk, sk))
            parsed.append((k, hk, sk, part))
        jobs.append((name, t, spec, project, parsed))
    responses: dict[str, list[Any]] = {}
    unprocessed: dict[str, dict[str, Any]] = {}
    consumed: dict[str, Consumed] = {}
    first_throttle = None
    n_un = 0
    size_total = 0
    for name, t, spec, project, parsed in jobs:
        consistent = bool(spec.get("ConsistentRead", False))
        got = responses.setdefault(name, [])
        for k, hk, sk, part in parsed:
            item = t.base.get(hk, sk)
            sz = 0 if item is None else item.size
            units = read_units(sz, consistent)
            th = st.charge_read(t, None, units, part) if size_total + sz <= MAX_BATCH_BYTES else True
            if th is not None:
                if th is not True:
                    first_throttle = first_throttle or th
                left = unprocessed.setdefault(name, {**{k2: v for k2, v in spec.items() if k2 != "Keys"}, "Keys": []})
                left["Keys"].append(k)
                n_un += 1
                continue
            size_total += sz
            consumed.setdefault(name, Consumed(name, "read")).add_table(units)
            if item is not None:
                got.append(project(item.item()) if project else item.wire())
    ctx.unprocessed = n_un
    if first_throttle is not None and n_un == total:
        raise throttle_error(first_throttle)
    out: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": unprocessed}
    if rcc:
        out["ConsumedCapacity"] = [(consumed.get(n) or Consumed(n, "read")).render(rcc) for n in request_items]
    return out


def _key_misfit(exc: ServiceError) -> bool:
    """A key of the wrong type or shape for its table: the service cancels the transaction for it, where an
    empty key value stays a request error (moto's aws_verified test_transaction_with_empty_key)."""
    return exc.code == "ValidationException" and (
        exc.message == "The provided key element does not match the schema"
        or exc.message.startswith("One or more parameter values were invalid: Type mismatch for key")
    )


def transact_write(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    rcc = params.return_consumed(req)
    actions = _transact_items(req)
    token = req.get("ClientRequestToken")
    fingerprint = b""
    if token is not None:
        # a digest, not the request: a token is kept 10 minutes, and a transaction can be 4 MB
        fingerprint = hashlib.sha256(orjson.dumps(actions, option=orjson.OPT_SORT_KEYS)).digest()
        seen_digest = st.tokens.digest(token, st.clock())
        if seen_digest is not None:
            if seen_digest != fingerprint:
                raise ServiceError(
                    "IdempotentParameterMismatchException",
                    "Specified idempotent token was used with different request parameters",
                )
            for action in actions:
                if isinstance(action, dict) and action:
                    name = next(iter(action.values())).get("TableName")
                    if isinstance(name, str) and not ctx.tables:
                        ctx.tables.append(name)
            return {}
    sizes = [item_size(a["Put"].get("Item")) for a in actions if isinstance(a, dict) and isinstance(a.get("Put"), dict)]
    if any(size > ITEM_LIMIT for size in sizes):  # an item over 400 KB is named as such first (issue 45)
        raise errors.validation("Item size has exceeded the maximum allowed size")
    if sum(sizes) > TRANSACTION_LIMIT:
        raise errors.validation("Transaction request cannot be larger than 4 MB")
    reasons: list[dict[str, Any]] = []
    plans: list[WritePlan | None] = []
    seen: set[tuple[str, Any, Any]] = set()
    prepared: list[tuple[Any, ...]] = []
    key_errors: dict[int, str] = {}
    for action in actions:
        if not isinstance(action, dict) or len(action) != 1:
            raise errors.validation("TransactItems can only contain one of Check, Put, Update or Delete")
        kind, body = next(iter(action.items()))
        if kind not in ("Put", "Update", "Delete", "ConditionCheck"):
            raise errors.validation("TransactItems can only contain one of Check, Put, Update or Delete")
        t = st.table(body, ctx)
        ex = Exprs(body)
        update = ex.update(body.get("UpdateExpression")) if kind == "Update" else None
        cond = ex.condition(body.get("ConditionExpression"))
        if kind == "ConditionCheck" and cond is None:
            raise errors.validation("The ConditionExpression parameter is required for ConditionCheck")
        if kind == "Update" and update is None:
            raise errors.validation("The UpdateExpression parameter is required for Update")
        ex.finish()
        on_fail = params.return_on_fail(body)
        item = required_item(body, "transactItems.member.put.item") if kind == "Put" else None
        try:
            if item is not None:
                hk, sk, part = item_key(t, item)
            else:
                hk, sk, part = key_of(t, body.get("Key"))
        except ServiceError as exc:
            if not _key_misfit(exc):
                raise
            # a key that does not fit the table cancels the transaction: a ValidationError reason for its action
            key_errors[len(prepared)] = exc.message
            prepared.append((kind, body, t, cond, update, on_fail, None, None, ""))
            continue
        if (t.name, hk, sk) in seen:
            raise errors.validation("Transaction request cannot include multiple operations on one item")
        seen.add((t.name, hk, sk))
        prepared.append((kind, body, t, cond, update, on_fail, hk, sk, part))
    failed = False
    for n, (kind, body, t, cond, update, on_fail, hk, sk, part) in enumerate(prepared):
        if n in key_errors:
            reasons.append({"Code": "ValidationError", "Message": key_errors[n]})
            plans.append(None)
            failed = True
            continue
        old = t.base.get(hk, sk)
        old_item = None if old is None else old.item()
        if cond is not None and not cond.evaluate(old_item):
            r: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
            if on_fail and old_item:
                r["Item"] = old_item
            reasons.append(r)
            plans.append(None)
            failed = True
            continue
        try:
            if kind == "Put":
                new: Item | None = body["Item"]
            elif kind == "Delete":
                new = None
            elif kind == "Update":
                new = updated(t, body["Key"], old_item, update)
            else:
                new = old_item
            plan = None if kind == "ConditionCheck" else plan_write(t, hk, sk, part, old, new, old_item=old_item)
        except ServiceError as exc:
            if exc.code != "ValidationException":
                raise
            reasons.append({"Code": "ValidationError", "Message": exc.message})
            plans.append(None)
            failed = True
            continue
        reasons.append({"Code": "None"})
        plans.append(plan)
    if failed:
        raise _cancelled(reasons)
    for i, plan in enumerate(plans):
        if plan is None:
            t, hk, sk, part = prepared[i][2], prepared[i][6], prepared[i][7], prepared[i][8]
            units = 2.0 * write_units(_size(t.base.get(hk, sk)))
            th = None if st.capacity is None else st.capacity.charge(t.name, None, "write", units, part)
        else:
            th = st.charge_write(plan, 2.0)
        if th is not None:
            reasons = [{"Code": "None"} for _ in actions]
            reasons[i] = _tx_reason(th)
            raise _cancelled(reasons)
    consumed: dict[str, Consumed] = {}
    written: list[tuple[Any, Any, Item]] = []
    for i, plan in enumerate(plans):
        if plan is not None:
            apply(plan)
            account(plan, consumed.setdefault(plan.table.name, Consumed(plan.table.name, "write")), 2.0)
            body = prepared[i][1]
            written.append((plan.table, plan.hk, body.get("Item") or body["Key"]))
        else:
            t = prepared[i][2]
            old = t.base.get(prepared[i][6], prepared[i][7])
            consumed.setdefault(t.name, Consumed(t.name, "write")).add_table(2.0 * write_units(_size(old)))
    if token is not None:
        st.tokens.remember(token, fingerprint, st.clock())
    out: dict[str, Any] = {}
    if rcc:
        out["ConsumedCapacity"] = [c.render(rcc, per_kind=True) for c in consumed.values()]
    return _with_metrics(req, written, out)


def transact_get(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    rcc = params.return_consumed(req)
    actions = _transact_items(req)
    prepared: list[tuple[Any, ...]] = []
    seen: set[tuple[str, Any, Any]] = set()
    for action in actions:
        body = action.get("Get") if isinstance(action, dict) else None
        if body is None:
            raise errors.validation("TransactItems can only contain Get")
        t = st.table(body, ctx)
        ex = Exprs(body)
        project = params.projector(body, ex)
        ex.finish()
        hk, sk, part = key_of(t, body.get("Key"))
        if (t.name, hk, sk) in seen:
            raise errors.validation("Transaction request cannot include multiple operations on one item")
        seen.add((t.name, hk, sk))
        prepared.append((t, project, t.base.get(hk, sk), part))
    for i, (t, _p, item, part) in enumerate(prepared):
        th = st.charge_read(t, None, 2.0 * read_units(_size(item), True), part)
        if th is not None:
            reasons = [{"Code": "None"} for _ in actions]
            reasons[i] = _tx_reason(th)
            raise _cancelled(reasons)
    responses: list[dict[str, Any]] = []
    consumed: dict[str, Consumed] = {}
    for t, project, stored, _part in prepared:
        consumed.setdefault(t.name, Consumed(t.name, "read")).add_table(2.0 * read_units(_size(stored), True))
        if stored is None:
            responses.append({})
            continue
        # decoded: ExecuteTransaction's SELECTs test their conditions on what this returns
        got = stored.item()
        responses.append({"Item": project(got) if project else got})
    out: dict[str, Any] = {"Responses": responses}
    if rcc:
        out["ConsumedCapacity"] = [c.render(rcc, per_kind=True) for c in consumed.values()]
    return out


def _size(stored: StoredItem | None) -> int:
    return 0 if stored is None else stored.size


def _transact_items(req: dict[str, Any]) -> list[Any]:
    """TransactItems as the service checks them: present, non-empty, at most 100 actions."""
    actions = req.get("TransactItems")
    if not isinstance(actions, list) or not actions:
        raise errors.validation(
            "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: "
            "Member must not be null"
        )
    if len(actions) > TRANSACT_ITEMS_MAX:
        raise errors.validation(
            "1 validation error detected at 'transactItems' failed to satisfy constraint: "
            "Member must have length less than or equal to 100."
        )
    return actions
