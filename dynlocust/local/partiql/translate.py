"""A statement's tree written as the expressions (with placeholders) of the data-plane request it stands for."""

from __future__ import annotations

from typing import Any

import orjson

from dynlocust.local import errors
from dynlocust.local.partiql.ast import AV, Const, Name, Node, Path
from dynlocust.local.partiql.conditions import IS_TYPES
from dynlocust.local.partiql.lexer import malformed

DECOMPOSED = "_decomposed"  # not a request parameter: how _select_request hands over an IN on the partition key


class Emit:
    """Writes DynamoDB expression text with #n/:v placeholders for every name and value."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AV] = {}
        self._by_name: dict[str, str] = {}

    def name(self, n: str) -> str:
        ph = self._by_name.get(n)
        if ph is None:
            ph = self._by_name[n] = f"#n{len(self._by_name)}"
            self.names[ph] = n
        return ph

    def value(self, av: AV) -> str:
        ph = f":v{len(self.values)}"
        self.values[ph] = av
        return ph

    def path(self, path: Path) -> str:
        out = self.name(str(path[0]))
        for seg in path[1:]:
            out += f"[{seg}]" if isinstance(seg, int) else "." + self.name(seg)
        return out

    def operand(self, x: Any) -> str:
        if isinstance(x, Name):
            return self.path(x.path)
        if isinstance(x, Const):
            return self.value(x.av)
        if x.op in ("+", "-"):
            return f"{self.operand(x.args[0])} {x.op} {self.operand(x.args[1])}"
        if x.op in ("size", "list_append", "if_not_exists"):
            return f"{x.op}({', '.join(self.operand(a) for a in x.args)})"
        raise errors.validation(f"Unsupported function in this position: {x.op}")

    def condition(self, x: Any) -> str:
        if not isinstance(x, Node):
            raise malformed("expected a condition")
        op, a = x.op, x.args
        if op in ("AND", "OR"):
            return f" {op} ".join(f"({self.condition(t)})" for t in a)
        if op == "NOT":
            return f"NOT ({self.condition(a[0])})"
        if op in ("=", "<>", "<", "<=", ">", ">="):
            return f"{self.operand(a[0])} {op} {self.operand(a[1])}"
        if op == "BETWEEN":
            return f"{self.operand(a[0])} BETWEEN {self.operand(a[1])} AND {self.operand(a[2])}"
        if op == "IN":
            return f"{self.operand(a[0])} IN ({', '.join(self.operand(o) for o in a[1:])})"
        if op in ("begins_with", "contains", "attribute_type"):
            return f"{op}({self.operand(a[0])}, {self.operand(a[1])})"
        if op in _EXISTENCE or op == "IS":
            p = self.operand(a[0])
            flag = _EXISTENCE.get(op, x.flag)
            negated, _, what = flag.rpartition(" ")
            if what in IS_TYPES:
                test = f"attribute_type({p}, {self.value({'S': IS_TYPES[what]})})"
                return f"NOT {test}" if negated else test
            if flag == "MISSING":
                return f"attribute_not_exists({p})"
            if flag == "NOT MISSING":
                return f"attribute_exists({p})"
            null = self.value({"S": "NULL"})
            if flag == "NULL":  # MISSING IS NULL holds in PartiQL
                return f"attribute_not_exists({p}) OR attribute_type({p}, {null})"
            # no parentheses of its own: every caller wraps a condition in them, and "((...))" is refused
            return f"attribute_exists({p}) AND NOT attribute_type({p}, {null})"
        raise malformed(f"{op} is not a condition")


_EXISTENCE = {
    "attribute_exists": "NOT MISSING",
    "missing": "MISSING",
    "attribute_not_exists": "MISSING",
}


def conjuncts_of(where: Any) -> list[Any]:
    if where is None:
        return []
    if isinstance(where, Node) and where.op == "AND":
        return [t for a in where.args for t in conjuncts_of(a)]
    return [where]


def key_equalities(conjuncts: list[Any], attrs: list[str]) -> tuple[dict[str, AV], list[Any]]:
    """The `attr = value` conjuncts on the given top-level attributes, and the others."""
    key: dict[str, AV] = {}
    rest = []
    for c in conjuncts:
        if isinstance(c, Node) and c.op == "=":
            left, right = c.args
            if isinstance(right, Name) and isinstance(left, Const):
                left, right = right, left
            if (
                isinstance(left, Name)
                and isinstance(right, Const)
                and len(left.path) == 1
                and left.path[0] in attrs
                and left.path[0] not in key
            ):
                key[str(left.path[0])] = right.av
                continue
        rest.append(c)
    return key, rest


def key_in(conjuncts: list[Any], attr: str, typ: str) -> tuple[list[AV] | None, list[Any]]:
    """The distinct values of an `attr IN [...]` conjunct whose values all have the key's type, and the others."""
    for i, c in enumerate(conjuncts):
        if not (isinstance(c, Node) and c.op == "IN" and isinstance(c.args[0], Name) and c.args[0].path == [attr]):
            continue
        options = c.args[1:]
        if all(isinstance(o, Const) and typ in o.av for o in options):
            distinct = {orjson.dumps(o.av, option=orjson.OPT_SORT_KEYS): o.av for o in options}
            return list(distinct.values()), conjuncts[:i] + conjuncts[i + 1 :]
    return None, conjuncts


def residual(emit: Emit, rest: list[Any], *extra: str) -> str | None:
    parts = [*extra, *(f"({emit.condition(c)})" for c in rest)]
    return " AND ".join(parts) if parts else None


def expression_params(emit: Emit, req: dict[str, Any]) -> dict[str, Any]:
    if emit.names:
        req["ExpressionAttributeNames"] = emit.names
    if emit.values:
        req["ExpressionAttributeValues"] = emit.values
    return req
