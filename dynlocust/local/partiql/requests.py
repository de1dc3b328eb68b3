"""The translation phase: a parsed statement and its table as a PutItem, UpdateItem, DeleteItem, Query or Scan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from dynlocust.local import errors, items
from dynlocust.local.errors import ServiceError
from dynlocust.local.partiql.ast import AV, Const, Name, Node, Path, Statement
from dynlocust.local.partiql.lexer import VALID_TABLE_NAME
from dynlocust.local.partiql.messages import (
    CONSISTENT_GSI,
    DUPLICATE,
    KEY_EQUALITY,
    MULTI_ATTRIBUTE_KEYS,
    NO_INDEX,
    NOT_PROJECTED,
    ORDER_BY_HASH,
    ORDER_BY_WHERE,
    SET_ARGUMENTS,
    SET_FIRST,
    SET_SECOND,
    STATEMENT_MAX,
    TABLE_NAME,
)
from dynlocust.local.partiql.parser import parse
from dynlocust.local.partiql.translate import (
    DECOMPOSED,
    Emit,
    conjuncts_of,
    expression_params,
    key_equalities,
    key_in,
    residual,
)
from dynlocust.local.state import Ctx, State


def _check_set_function(x: Node, path: Path) -> None:
    """`SET p = set_add(p, <<...>>)`: two arguments, the first the path assigned, the second a set; the service
    points at the function's name, and for the second argument's type at the first argument."""
    function = x.op.upper()
    if len(x.args) != 2:
        raise errors.validation(SET_ARGUMENTS.format(function=function) + x.at[0])
    if not isinstance(x.args[0], Name) or x.args[0].path != path:
        raise errors.validation(SET_FIRST.format(function=function) + x.at[0])
    if not isinstance(x.args[1], Const) or next(iter(x.args[1].av)) not in ("SS", "NS", "BS"):
        raise errors.validation(SET_SECOND.format(function=function) + x.at[1])


class Requests:
    """A statement (parsed, its table checked) as the request of the data-plane operation it stands for."""

    _WRITES: ClassVar[dict[str, Callable[[State, dict[str, Any], Ctx], dict[str, Any]]]] = {
        "Put": items.put_item,
        "Update": items.update_item,
        "Delete": items.delete_item,
    }

    def __init__(self, state: State) -> None:
        self.state = state

    # -- helpers
    @staticmethod
    def _statement_text(body: dict[str, Any]) -> str:
        where = "statement"
        text = body.get("Statement")
        if not isinstance(text, str):
            raise errors.detected(f"Value null at '{where}' failed to satisfy constraint: Member must not be null")
        if not 1 <= len(text) <= STATEMENT_MAX:
            raise errors.detected(
                f"Value '{text[:64]}' at '{where}' failed to satisfy constraint: Member must have length "
                + ("greater than or equal to 1" if not text else f"less than or equal to {STATEMENT_MAX}")
            )
        return text

    @staticmethod
    def _params(body: dict[str, Any]) -> list[AV]:
        params = body.get("Parameters")
        if params is None:
            return []
        if not params:
            raise errors.detected(
                "Value '[]' at 'parameters' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        return list(params)

    @staticmethod
    def _statements(req: dict[str, Any], member: str, most: int) -> list[dict[str, Any]]:
        """A batch's or transaction's list of statements, 1 to `most` of them (the shapes were checked before)."""
        statements = req.get(member)
        wire = member[0].lower() + member[1:]
        if not statements:
            raise errors.detected(
                f"Value null at '{wire}' failed to satisfy constraint: Member must not be null"
                if statements is None
                else f"Value '[]' at '{wire}' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        if len(statements) > most:
            raise errors.detected(
                f"Value at '{wire}' failed to satisfy constraint: Member must have length less than or equal to {most}"
            )
        return list(statements)

    def _parse(self, body: dict[str, Any]) -> Statement:
        return parse(self._statement_text(body), self._params(body))

    def _table(self, st: Statement, ctx: Any) -> Any:
        if not VALID_TABLE_NAME.fullmatch(st.table):
            raise errors.validation(TABLE_NAME)
        t = self.state.table({"TableName": st.table}, ctx)
        if st.index is not None:
            idx = t.index(st.index)
            if idx is None:
                raise errors.validation(NO_INDEX)
            if idx.key.multi:
                raise errors.validation(MULTI_ATTRIBUTE_KEYS)
        return t

    def _full_key(self, st: Statement, t: Any, message: str = KEY_EQUALITY) -> tuple[dict[str, AV], list[Any]]:
        key, rest = key_equalities(conjuncts_of(st.where), t.key.names())
        if set(key) != set(t.key.names()):
            raise errors.validation(message)
        self._check_key_types(t, key)
        if st.kind in ("UPDATE", "DELETE"):
            again = next(iter(key_equalities(rest, t.key.names())[0]), None)
            if again is not None:
                raise errors.validation(
                    f"Multiple conditions on same key {again}. Only single item Update/Insert/Delete are supported"
                )
        return key, rest

    @staticmethod
    def _check_key_types(t: Any, values: dict[str, AV], absent: bool = False) -> None:
        """The key attributes of an INSERT's item or a WHERE: present and of the schema's type."""
        for attr, typ in ((t.key.hash_attr, t.key.hash_type), (t.key.range_attr, t.key.range_type)):
            if attr is None:
                continue
            av = values.get(attr)
            if av is None:
                if absent:
                    raise errors.validation(f"Key attribute should be present in the item: Key {attr}")
                continue
            if typ not in av:
                raise errors.validation(
                    f"Key attribute's data type should match its data type in table's schema: Key {attr}"
                )

    def _write_request(self, st: Statement, t: Any) -> tuple[str, dict[str, Any]]:
        """(kind, request) of INSERT/UPDATE/DELETE as the PutItem/UpdateItem/DeleteItem it stands for."""
        emit = Emit()
        req: dict[str, Any] = {"TableName": t.name}
        if st.kind == "INSERT":
            assert st.item is not None
            self._check_key_types(t, st.item, absent=True)
            req["Item"] = st.item
            req["ConditionExpression"] = f"attribute_not_exists({emit.name(t.key.hash_attr)})"
            return "Put", expression_params(emit, req)
        key, rest = self._full_key(st, t)
        req["Key"] = key
        if st.kind == "UPDATE":
            clauses: dict[str, list[str]] = {"SET": [], "REMOVE": [], "ADD": [], "DELETE": []}
            for path, x in st.sets:
                target = emit.path(path)
                if isinstance(x, Node) and x.op in ("set_add", "set_delete"):
                    _check_set_function(x, path)
                    clauses["ADD" if x.op == "set_add" else "DELETE"].append(f"{target} {emit.operand(x.args[1])}")
                else:
                    clauses["SET"].append(f"{target} = {emit.operand(x)}")
            clauses["REMOVE"] = [emit.path(p) for p in st.removes]
            req["UpdateExpression"] = " ".join(f"{k} {', '.join(v)}" for k, v in clauses.items() if v)
            # UPDATE changes an existing item: one that does not exist fails the statement's condition
            cond = residual(emit, rest, f"attribute_exists({emit.name(t.key.hash_attr)})")
            kind = "Update"
        else:
            # the WHERE's other terms are a condition on the item; a missing item is a no-op, its condition never
            # evaluated (as a public conformance suite's PartiQL tests record the service, eu-west-2)
            cond = residual(emit, rest)
            if cond is not None:  # each term is parenthesised already: group them only when there are several
                cond = (
                    f"attribute_not_exists({emit.name(t.key.hash_attr)}) OR {cond if len(rest) == 1 else f'({cond})'}"
                )
            kind = "Delete"
        if cond is not None:
            req["ConditionExpression"] = cond
        if st.returning:
            req["ReturnValues"] = st.returning
        return kind, expression_params(emit, req)

    def _select_request(self, st: Statement, t: Any, body: dict[str, Any], need_key: str | None) -> dict[str, Any]:
        """A SELECT as a Query (equality on the partition key of the table or index) or a Scan; `need_key`:
        the message when the full primary key must be given (batches and transactions). A partition key given
        by `IN [...]` is one Query per value, as the service decomposes it: the request then carries them
        under DECOMPOSED (the placeholder of the partition key's value, and the values)."""
        emit = Emit()
        req: dict[str, Any] = {"TableName": t.name}
        if st.index is not None:
            req["IndexName"] = st.index
        if st.projection is not None:
            req["ProjectionExpression"] = ", ".join(emit.path(p) for p in st.projection)
        conjuncts = conjuncts_of(st.where)
        idx = None if st.index is None else t.index(st.index)
        keydef = t.key if idx is None else idx.key
        if idx is not None and idx.kind == "GSI" and body.get("ConsistentRead"):
            raise errors.validation(CONSISTENT_GSI)
        if idx is not None and idx.kind == "GSI" and idx.projection_type != "ALL" and st.projection is not None:
            # a GSI holds only what it projects: the service cannot fetch the rest from the table (an LSI can)
            kept = idx.key_names(t.key) | set(idx.non_key)
            missing = dict.fromkeys(p[0] for p in st.projection if p[0] not in kept)
            if missing:
                raise errors.validation(NOT_PROJECTED.format(index=idx.name, names=", ".join(map(str, missing))))
        if st.order_by is not None:
            self._check_order_by(st, keydef)
        if need_key is not None and self._full_key(st, t, need_key)[1]:
            raise errors.validation(need_key)  # a read by key names the key alone (pinned for attribute_exists)
        kce = None
        rest = conjuncts
        decomposed: list[AV] | None = None
        if not keydef.multi:
            hkey, rest = key_equalities(conjuncts, [keydef.hash_attr])
            hav = hkey.get(keydef.hash_attr)
            if hav is None:
                decomposed, rest = key_in(conjuncts, keydef.hash_attr, keydef.hash_type)
                hav = decomposed[0] if decomposed else None
            if hav is not None and keydef.hash_type in hav:
                placeholder = emit.value(hav)
                if decomposed is not None:
                    req[DECOMPOSED] = (placeholder, decomposed)
                kce = f"{emit.path([keydef.hash_attr])} = {placeholder}"
                range_cond, rest = self._range_condition(emit, rest, keydef)
                if range_cond:
                    kce += " AND " + range_cond
            else:
                rest = conjuncts
        filt = residual(emit, rest)
        if kce is not None:
            req["KeyConditionExpression"] = kce
            req["ScanIndexForward"] = not st.descending
        if filt is not None:
            req["FilterExpression"] = filt
        for p in ("ConsistentRead", "Limit", "ReturnConsumedCapacity"):
            if body.get(p) is not None:
                req[p] = body[p]
        return expression_params(emit, req)

    @staticmethod
    def _check_order_by(st: Statement, keydef: Any) -> None:
        """ORDER BY sorts one partition, as a Query does: it needs the WHERE to name the partition key."""
        if st.where is None:
            raise errors.validation(ORDER_BY_WHERE)
        if not key_equalities(conjuncts_of(st.where), [keydef.hash_attr])[0]:
            raise errors.validation(ORDER_BY_HASH)
        assert st.order_by is not None
        if st.order_by not in ([keydef.hash_attr], [keydef.range_attr]):
            shown = ".".join(str(seg) for seg in st.order_by)
            raise errors.validation(f"Variable reference {shown} in ORDER BY clause must be part of the primary key")

    @staticmethod
    def _range_condition(emit: Emit, conjuncts: list[Any], keydef: Any) -> tuple[str | None, list[Any]]:
        """The first conjunct usable as the sort key's part of a KeyConditionExpression, and the others."""
        attr, typ = keydef.range_attr, keydef.range_type
        if attr is None:
            return None, conjuncts
        for i, c in enumerate(conjuncts):
            if not isinstance(c, Node) or not c.args or not isinstance(c.args[0], Name) or c.args[0].path != [attr]:
                continue
            consts = c.args[1:]
            if not consts or not all(isinstance(a, Const) and typ in a.av for a in consts):
                continue
            ok = (c.op in ("=", "<", "<=", ">", ">=") and len(consts) == 1) or (c.op == "BETWEEN")
            ok = ok or (c.op == "begins_with" and typ in ("S", "B"))
            if ok:
                return emit.condition(c), conjuncts[:i] + conjuncts[i + 1 :]
        return None, conjuncts

    def _run_write(self, st: Statement, t: Any, ctx: Any, extra: dict[str, Any]) -> Any:
        kind, req = self._write_request(st, t)
        req.update(extra)
        try:
            return self._WRITES[kind](self.state, req, ctx)
        except ServiceError as exc:
            if st.kind == "INSERT" and exc.code == "ConditionalCheckFailedException":
                raise ServiceError("DuplicateItemException", DUPLICATE) from exc
            raise
