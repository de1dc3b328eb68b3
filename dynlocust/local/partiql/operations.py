"""The execution phase: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction over the endpoint's handlers."""

from __future__ import annotations

from typing import Any

from dynlocust.local import batches, errors, expressions, reads
from dynlocust.local.errors import ServiceError
from dynlocust.local.params import return_consumed
from dynlocust.local.partiql.ast import Statement
from dynlocust.local.partiql.messages import (
    BATCH_MAX,
    BATCH_SELECT_KEY,
    DUPLICATE,
    EXISTS_OUTSIDE,
    IN_TRANSACTION,
    MIXED_BATCH,
    MIXED_TRANSACTION,
    THROTTLE_CODES,
    TRANSACTION_MAX,
    TX_EXISTS_KEY,
    TX_INDEX_CHECK,
    TX_INDEX_READ,
    TX_SELECT_KEY,
)
from dynlocust.local.partiql.requests import Requests
from dynlocust.local.partiql.responses import add_units, batch_code, decode_token, encode_token, merge_consumed
from dynlocust.local.partiql.translate import DECOMPOSED, Emit, expression_params, residual
from dynlocust.local.state import Ctx, State


def execute_statement(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).execute_statement(req, ctx)


def batch_execute_statement(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).batch_execute_statement(req, ctx)


def execute_transaction(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).execute_transaction(req, ctx)


class PartiQL(Requests):
    """The three PartiQL operations over one endpoint's state; each statement runs through the endpoint's own
    handlers (items, reads, batches), so checks, capacity and throttling are theirs."""

    # -- ExecuteStatement
    def execute_statement(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        st = self._parse(req)
        if st.kind == "EXISTS":
            raise errors.validation(EXISTS_OUTSIDE)
        t = self._table(st, ctx)
        if st.kind == "SELECT":
            return self._select(st, t, req, ctx)
        extra: dict[str, Any] = {
            p: req[p] for p in ("ReturnConsumedCapacity", "ReturnValuesOnConditionCheckFailure") if p in req
        }
        res = self._run_write(st, t, ctx, extra)
        out = {"Items": [res["Attributes"]] if res.get("Attributes") else []}
        if "ConsumedCapacity" in res:
            out["ConsumedCapacity"] = res["ConsumedCapacity"]
        return out

    def _select(self, st: Statement, t: Any, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """One page of a SELECT: a Scan, a Query, or the Queries of an IN on the partition key one after the
        other, with Limit counting the items read by all of them and NextToken naming where the next page starts."""
        read = self._select_request(st, t, req, None)
        placeholder, values = read.pop(DECOMPOSED, ("", [{}]))
        last_key, part = (None, 0) if req.get("NextToken") is None else decode_token(req["NextToken"], req)
        limit = read.get("Limit")
        op = reads.query if "KeyConditionExpression" in read else reads.scan
        out: dict[str, Any] = {"Items": []}
        consumed: dict[str, Any] = {}
        evaluated = 0
        for i in range(part, len(values)):
            one = dict(read)
            if placeholder:
                one["ExpressionAttributeValues"] = {**read["ExpressionAttributeValues"], placeholder: values[i]}
            if last_key is not None:
                one["ExclusiveStartKey"], last_key = last_key, None
            if limit is not None:
                one["Limit"] = limit - evaluated
            res = op(self.state, one, ctx)
            out["Items"] += res.get("Items", [])
            evaluated += res.get("ScannedCount", 0)
            add_units(consumed, res.get("ConsumedCapacity") or {})
            if "LastEvaluatedKey" in res:
                out["NextToken"] = encode_token(res["LastEvaluatedKey"], req, i)
                break
            if limit is not None and evaluated >= limit and i + 1 < len(values):
                out["NextToken"] = encode_token(None, req, i + 1)
                break
        if consumed:
            out["ConsumedCapacity"] = consumed
        return out

    # -- BatchExecuteStatement
    def batch_execute_statement(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        statements = self._statements(req, "Statements", BATCH_MAX)
        rcc = return_consumed(req)
        parsed: list[Statement | ServiceError] = []
        for body in statements:
            try:
                parsed.append(self._parse(body))
            except ServiceError as exc:  # a statement's own error is answered in its response
                parsed.append(exc)
        kinds = {p.kind == "SELECT" for p in parsed if isinstance(p, Statement)}
        if len(kinds) > 1:  # "The entire batch must consist of either read statements or write statements"
            raise errors.validation(MIXED_BATCH)
        consumed: dict[str, dict[str, Any]] = {}
        responses = [self._batch_one(st, body, ctx, rcc, consumed) for st, body in zip(parsed, statements, strict=True)]
        # the endpoint's statistics count a throttled statement as BatchWriteItem counts an unprocessed item
        ctx.unprocessed = sum(1 for r in responses if r.get("Error", {}).get("Code") in THROTTLE_CODES)
        out: dict[str, Any] = {"Responses": responses}
        if rcc:
            out["ConsumedCapacity"] = list(consumed.values())
        return out

    def _batch_one(
        self, st: Statement | ServiceError, body: dict[str, Any], ctx: Any, rcc: str | None, consumed: dict[str, Any]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            if isinstance(st, ServiceError):
                raise st
            if st.kind == "EXISTS":
                raise errors.validation(EXISTS_OUTSIDE)
            t = self._table(st, ctx)
            out["TableName"] = t.name
            extra = {"ReturnConsumedCapacity": rcc} if rcc else {}
            if st.kind == "SELECT":
                read = self._select_request(st, t, body, BATCH_SELECT_KEY)
                read.pop(DECOMPOSED, None)  # the full key is given: one item at most
                read.update(extra)
                res = reads.query(self.state, read, ctx)
                if res.get("Items"):
                    out["Item"] = res["Items"][0]
            else:
                on_fail = body.get("ReturnValuesOnConditionCheckFailure")
                if on_fail is not None:
                    extra["ReturnValuesOnConditionCheckFailure"] = on_fail
                res = self._run_write(st, t, ctx, extra)
            merge_consumed(consumed, res.get("ConsumedCapacity"))
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                out.pop("TableName", None)
            error: dict[str, Any] = {"Code": batch_code(exc), "Message": exc.message}
            if "Item" in exc.extra:
                error["Item"] = exc.extra["Item"]
            out["Error"] = error
        return out

    # -- ExecuteTransaction
    def execute_transaction(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        statements = self._statements(req, "TransactStatements", TRANSACTION_MAX)
        parsed = []
        for body in statements:
            st = self._parse(body)
            parsed.append((st, self._table(st, ctx), body))
        reads = [st.kind == "SELECT" for st, _, _ in parsed]
        if any(reads) and not all(reads):
            raise errors.validation(MIXED_TRANSACTION)
        extra = {p: req[p] for p in ("ReturnConsumedCapacity",) if p in req}
        if all(reads):
            return self._transact_reads(parsed, ctx, extra)
        actions = []
        for i, (st, t, body) in enumerate(parsed):
            if st.kind == "EXISTS":
                if st.index is not None:
                    raise errors.validation(TX_INDEX_CHECK)
                refused = IN_TRANSACTION.format(index=i, message=TX_EXISTS_KEY)
                key, rest = self._full_key(st, t, refused)
                if not rest:  # a check of the key alone
                    raise errors.validation(refused)
                emit = Emit()
                cond = residual(emit, rest, f"attribute_exists({emit.name(t.key.hash_attr)})")
                actions.append(
                    {
                        "ConditionCheck": expression_params(
                            emit, {"TableName": t.name, "Key": key, "ConditionExpression": cond}
                        )
                    }
                )
                continue
            kind, action = self._write_request(st, t)
            action.pop("ReturnValues", None)
            on_fail = body.get("ReturnValuesOnConditionCheckFailure")
            if on_fail is not None:
                action["ReturnValuesOnConditionCheckFailure"] = on_fail
            actions.append({kind: action})
        tx: dict[str, Any] = {"TransactItems": actions, **extra}
        if req.get("ClientRequestToken") is not None:
            tx["ClientRequestToken"] = req["ClientRequestToken"]
        try:
            res = batches.transact_write(self.state, tx, ctx)
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            raise self._duplicates(exc, [st for st, _, _ in parsed]) from exc
        # a transaction of writes answers an empty Responses list (the service sends it)
        return {"Responses": [], **{k: v for k, v in res.items() if k == "ConsumedCapacity"}}

    def _transact_reads(self, parsed: list[Any], ctx: Any, extra: dict[str, Any]) -> dict[str, Any]:
        """SELECTs by primary key as TransactGetItems: a WHERE names the key alone (DynamoDB Local refuses any other
        condition; the service was pinned refusing attribute_exists), and the projection is applied after the read."""
        gets = []
        projections = []
        for i, (st, t, _body) in enumerate(parsed):
            if st.index is not None:
                raise errors.validation(TX_INDEX_READ)
            refused = IN_TRANSACTION.format(index=i, message=TX_SELECT_KEY)
            key, rest = self._full_key(st, t, refused)
            if rest:
                raise errors.validation(refused)
            gets.append({"Get": {"TableName": t.name, "Key": key}})
            pe = Emit()
            paths = None if st.projection is None else ", ".join(pe.path(p) for p in st.projection)
            try:
                projections.append(None if paths is None else expressions.parse_projection(paths, pe.names))
            except expressions.ExpressionError as exc:
                raise errors.validation(exc.message) from exc
        res = batches.transact_get(self.state, {"TransactItems": gets, **extra}, ctx)
        responses = []
        for r, projection in zip(res["Responses"], projections, strict=True):
            item = r.get("Item")
            if item is not None and projection is not None:
                item = projection.apply(item)
            responses.append({"Item": item} if item is not None else {})
        out: dict[str, Any] = {"Responses": responses}
        if "ConsumedCapacity" in res:
            out["ConsumedCapacity"] = res["ConsumedCapacity"]
        return out

    @staticmethod
    def _duplicates(exc: ServiceError, statements: list[Statement]) -> ServiceError:
        """An INSERT whose key exists is cancelled as DuplicateItem, not as a failed condition."""
        reasons = [dict(r) for r in exc.extra.get("CancellationReasons", [])]
        for r, st in zip(reasons, statements, strict=False):
            if st.kind == "INSERT" and r.get("Code") == "ConditionalCheckFailed":
                r.clear()
                r.update({"Code": "DuplicateItem", "Message": DUPLICATE})
        codes = ", ".join(r["Code"] for r in reasons)
        return ServiceError(
            "TransactionCanceledException",
            f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
            extra={**exc.extra, "CancellationReasons": reasons},
        )
