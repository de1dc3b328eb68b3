"""The evaluation phase of conditions: each operator compiled into a closure over an item."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from dynlocust.local.attrvalues import b_bytes, try_compare, values_equal
from dynlocust.local.expressions.parser import Operand
from dynlocust.local.expressions.paths import AV, Getter, Item, Pred


def junction(terms: list[Pred], disjunction: bool) -> Pred:
    """OR (disjunction) or AND of the terms, flat: thousands of terms evaluate without one nested call per term."""
    if len(terms) == 1:
        return terms[0]
    if len(terms) == 2:
        a, b = terms
        return (lambda item: a(item) or b(item)) if disjunction else (lambda item: a(item) and b(item))
    preds = tuple(terms)
    combine = any if disjunction else all
    return lambda item: combine(p(item) for p in preds)


def negation(a: Pred) -> Pred:
    return lambda item: not a(item)


def size_getter(g: Getter) -> Getter:
    def size(item: Item) -> AV | None:
        av = g(item)
        if av is None:
            return None
        ((t, v),) = av.items()
        if t == "S":
            n = len(v) if v.isascii() else len(v.encode("utf-8"))
        elif t == "B":
            n = len(b_bytes(v))
        elif t in ("SS", "NS", "BS", "L", "M"):
            n = len(v)
        else:
            return None
        return {"N": str(n)}

    return size


def compare(op: str, left: Operand, right: Operand) -> Pred:
    lf, rf = left.fn, right.fn
    const = right.const
    if const is not None and left.kind == "path":
        ((ct, cv),) = const.items()
        if op == "=" and ct in ("S", "BOOL", "NULL"):
            missing = object()

            def eq_scalar(item: Item) -> bool:
                a = lf(item)
                return a is not None and a.get(ct, missing) == cv

            return eq_scalar
        if op != "=" and op != "<>" and ct in ("S", "N"):
            key: Any = Decimal(cv) if ct == "N" else cv
            conv: Callable[[Any], Any] = Decimal if ct == "N" else str
            cmp = {
                "<": lambda x: x < key,
                "<=": lambda x: x <= key,
                ">": lambda x: x > key,
                ">=": lambda x: x >= key,
            }[op]

            def ordered_const(item: Item) -> bool:
                a = lf(item)
                if a is None:
                    return False
                v = a.get(ct)
                return v is not None and cmp(conv(v))

            return ordered_const
    if op == "=":

        def eq(item: Item) -> bool:
            a = lf(item)
            if a is None:
                return False
            b = rf(item)
            return b is not None and values_equal(a, b)

        return eq
    if op == "<>":

        def ne(item: Item) -> bool:
            a = lf(item)
            b = rf(item)
            return a is None or b is None or not values_equal(a, b)

        return ne
    test: Callable[[int], bool] = {
        "<": lambda r: r < 0,
        "<=": lambda r: r <= 0,
        ">": lambda r: r > 0,
        ">=": lambda r: r >= 0,
    }[op]

    def ordered(item: Item) -> bool:
        a = lf(item)
        if a is None:
            return False
        b = rf(item)
        if b is None:
            return False
        r = try_compare(a, b)
        return r is not None and test(r)

    return ordered


def between(g: Getter, lo: Getter, hi: Getter) -> Pred:
    def between(item: Item) -> bool:
        a = g(item)
        if a is None:
            return False
        lo_av, hi_av = lo(item), hi(item)
        if lo_av is None or hi_av is None:
            return False
        r1 = try_compare(lo_av, a)
        if r1 is None or r1 > 0:
            return False
        r2 = try_compare(a, hi_av)
        return r2 is not None and r2 <= 0

    return between


def in_list(left: Operand, options: list[Operand]) -> Pred:
    g = left.fn
    consts = [o.const for o in options]
    if all(c is not None and "S" in c for c in consts):
        strings = frozenset(c["S"] for c in consts)  # type: ignore[index]  # all() above: none is None

        def in_strings(item: Item) -> bool:
            a = g(item)
            return a is not None and a.get("S") in strings

        return in_strings
    getters = [o.fn for o in options]

    def in_any(item: Item) -> bool:
        a = g(item)
        if a is None:
            return False
        for og in getters:
            b = og(item)
            if b is not None and values_equal(a, b):
                return True
        return False

    return in_any


def begins_with(g: Getter, prefix: Getter) -> Pred:
    def begins_with(item: Item) -> bool:
        a = g(item)
        p = prefix(item)
        if a is None or p is None:
            return False
        s = a.get("S")
        if s is not None:
            ps = p.get("S")
            return ps is not None and s.startswith(ps)
        b = a.get("B")
        pb = p.get("B")
        return b is not None and pb is not None and b_bytes(b).startswith(b_bytes(pb))

    return begins_with


def contains(g: Getter, operand: Getter) -> Pred:
    def contains(item: Item) -> bool:
        a = g(item)
        b = operand(item)
        if a is None or b is None:
            return False
        ((ta, va),) = a.items()
        ((tb, vb),) = b.items()
        if ta == "S" or ta == "SS":
            return tb == "S" and vb in va
        if ta == "NS":
            if tb != "N":
                return False
            d = Decimal(vb)
            return any(Decimal(x) == d for x in va)
        if ta == "BS":
            if tb != "B":
                return False
            raw = b_bytes(vb)
            return any(b_bytes(x) == raw for x in va)
        if ta == "L":
            return any(values_equal(x, b) for x in va)
        if ta == "B":
            return tb == "B" and b_bytes(vb) in b_bytes(va)
        return False

    return contains
