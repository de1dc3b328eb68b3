"""UpdateExpression: the SET, REMOVE, ADD and DELETE clauses parsed, then applied to an item."""

from __future__ import annotations

from collections.abc import Mapping

from dynlocust.local.attrvalues import NumberRangeError
from dynlocust.local.expressions.errors import MISSING_ATTRIBUTE, UPDATE_TYPE_ERROR, ExpressionError
from dynlocust.local.expressions.grammar import CLAUSES, ExpressionParser
from dynlocust.local.expressions.paths import AV, EMPTY, Getter, Item, Path, check_overlaps, getter, type_of
from dynlocust.local.expressions.projection import Projection
from dynlocust.local.expressions.update_ops import (
    number_sum,
    remove_path,
    set_difference,
    set_path,
    set_union,
)


def _path_order(path: Path) -> tuple[tuple[int, str | int], ...]:
    """A sort key of document paths: names before list indexes, indexes by number."""
    return tuple((1, s) if isinstance(s, int) else (0, s) for s in path)


_TYPE_WORDS = {
    "S": "STRING",
    "N": "NUMBER",
    "B": "BINARY",
    "BOOL": "BOOLEAN",
    "NULL": "NULL",
    "L": "LIST",
    "M": "MAP",
    "SS": "SET",
    "NS": "SET",
    "BS": "SET",
}


class Update:
    """A parsed UpdateExpression; apply() returns a new item and never mutates its input."""

    __slots__ = (
        "_adds",
        "_deletes",
        "_removes",
        "_sets",
        "expression",
        "updated",
        "updated_paths",
        "used_names",
        "used_values",
        "writes_values",
    )

    def __init__(
        self,
        expression: str,
        sets: list[tuple[Path, Getter]],
        removes: list[Path],
        adds: list[tuple[Path, AV]],
        deletes: list[tuple[Path, AV]],
        used_names: set[str],
        used_values: set[str],
    ) -> None:
        self.expression = expression
        # list elements set past a list's end are appended in index order, whatever the order they are written in
        self._sets = tuple(sorted(sets, key=lambda s: _path_order(s[0])))
        # only SET and ADD give an item values: REMOVE and DELETE alone never create one
        self.writes_values = bool(sets or adds)
        # Several list indexes removed from one list all refer to the original list: remove the highest first.
        self._removes = tuple(sorted(removes, key=_path_order, reverse=True))
        self._adds = tuple((path, getter(path), av) for path, av in adds)
        self._deletes = tuple((path, getter(path), av) for path, av in deletes)
        targets = [p for p, _ in sets] + removes + [p for p, _ in adds] + [p for p, _ in deletes]
        self.updated_paths: frozenset[str] = frozenset(str(p[0]) for p in targets)
        # UPDATED_OLD / UPDATED_NEW return exactly the updated document paths, nested as in the item
        self.updated = Projection(expression, targets, set())
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset(used_values)

    def apply(self, item: Item | None, missing: bool = False) -> Item:
        """Apply every action, reading operands from the item as it was before the update; on a `missing` item
        (item holds only its key) REMOVE and DELETE have nothing to act on and are no-ops, whatever the path."""
        old: Item = item if item is not None else EMPTY
        new: Item = dict(old)
        if self._sets:
            computed = []
            for path, fn in self._sets:
                v = fn(old)
                if v is None:
                    raise ExpressionError(MISSING_ATTRIBUTE)
                computed.append((path, v))
            for path, v in computed:
                set_path(new, path, v)
        if missing:
            return self._add(new)
        for path in self._removes:
            remove_path(new, path)
        new = self._add(new)
        for path, get, av in self._deletes:
            ((t, v),) = av.items()
            cur = get(new)
            if cur is None:
                if len(path) > 1:
                    remove_path(new, path)  # raises when the parent is missing or not a container
                continue
            cur_v = cur.get(t)
            if cur_v is None:
                raise ExpressionError(UPDATE_TYPE_ERROR)
            remaining = set_difference(t, cur_v, v)
            if remaining:
                set_path(new, path, {t: remaining})
            else:
                remove_path(new, path)
        return new

    def _add(self, new: Item) -> Item:
        for path, get, av in self._adds:
            ((t, v),) = av.items()
            cur = get(new)
            if cur is None:
                set_path(new, path, av)
                continue
            cur_v = cur.get(t)
            if cur_v is None:
                raise ExpressionError(UPDATE_TYPE_ERROR)
            if t == "N":
                try:
                    set_path(new, path, {"N": number_sum(cur_v, v)})
                except NumberRangeError as exc:
                    raise ExpressionError(str(exc)) from None
            else:
                set_path(new, path, {t: set_union(t, cur_v, v)})
        return new


def parse_update(
    expr: str, names: Mapping[str, str] | None, values: Mapping[str, AV] | None, sized: bool = True
) -> Update:
    """Parse an UpdateExpression (SET, REMOVE, ADD, DELETE clauses, each at most once)."""
    p = ExpressionParser(expr, names, values, "UpdateExpression", sized)
    seen: set[str] = set()
    sets: list[tuple[Path, Getter]] = []
    removes: list[Path] = []
    adds: list[tuple[Path, AV]] = []
    deletes: list[tuple[Path, AV]] = []
    while p.peek().kind != "eof":
        tok = p.peek()
        clause = tok.text.upper()
        if tok.kind != "name" or clause not in CLAUSES:
            raise p.syntax_error()
        if clause in seen:
            raise p.error(f'The "{clause}" section can only be used once in an update expression;', True)
        seen.add(clause)
        p.i += 1
        while True:
            path = p.path()
            if clause == "SET":
                p.expect_op("=")
                sets.append((path, p.set_value()))
            elif clause == "REMOVE":
                removes.append(path)
            else:
                vt = p.peek()
                if vt.kind != "vname":
                    raise p.syntax_error()
                p.i += 1
                av = p.value(vt.text)
                t = type_of(av)
                allowed = ("N", "SS", "NS", "BS") if clause == "ADD" else ("SS", "NS", "BS")
                if t not in allowed:
                    raise p.error(
                        f"Incorrect operand type for operator or function; operator or function: operator: {clause}, "
                        f"operand type: {_TYPE_WORDS.get(t, t)}"
                    )
                (adds if clause == "ADD" else deletes).append((path, av))
            if not p.at_op(","):
                break
            p.i += 1
    targets = [s[0] for s in sets] + removes + [a[0] for a in adds] + [d[0] for d in deletes]
    check_overlaps(targets, "UpdateExpression")
    return Update(expr, sets, removes, adds, deletes, p.used_names, p.used_values)
