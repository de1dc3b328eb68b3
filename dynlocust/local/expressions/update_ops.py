"""The evaluation phase of updates: update functions, arithmetic, and copy-on-write writes into an item."""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

from dynlocust.local.attrvalues import NumberRangeError, add_numbers, sorted_members
from dynlocust.local.expressions.errors import INVALID_PATH, MISSING_ATTRIBUTE, UPDATE_TYPE_ERROR, ExpressionError
from dynlocust.local.expressions.paths import AV, Getter, Item, Path


def if_not_exists(g: Getter, fallback: Getter) -> Getter:
    def if_not_exists(item: Item) -> AV | None:
        av = g(item)
        return av if av is not None else fallback(item)

    return if_not_exists


def list_append(a: Getter, b: Getter) -> Getter:
    def list_append(item: Item) -> AV | None:
        x, y = a(item), b(item)
        if x is None or y is None:
            raise ExpressionError(MISSING_ATTRIBUTE)
        lx, ly = x.get("L"), y.get("L")
        if lx is None or ly is None:
            raise ExpressionError(UPDATE_TYPE_ERROR)
        return {"L": lx + ly}

    return list_append


# 38 digits, trapping a rounded result: the widest exact sum of two stored numbers (1E125 + 1E-130) has 256 digits
_EXACT = decimal.Context(prec=38, Emax=999, Emin=-999, traps=[decimal.Inexact])
PRECISION_LOST = "Attempting to store more than 38 significant digits in a Number"


def number_sum(a: str, b: str, subtract: bool = False) -> str:
    """a + b (or a - b) as the service stores it; a sum that would need more than 38 digits is refused, not
    rounded (1E38 + 1), as the service refuses it."""
    try:
        (_EXACT.subtract if subtract else _EXACT.add)(Decimal(a), Decimal(b))
    except decimal.Inexact:
        raise ExpressionError(PRECISION_LOST) from None
    return add_numbers(a, b, subtract)


def arithmetic(a: Getter, b: Getter, subtract: bool) -> Getter:
    def arithmetic(item: Item) -> AV | None:
        x, y = a(item), b(item)
        if x is None or y is None:
            raise ExpressionError(MISSING_ATTRIBUTE)
        nx, ny = x.get("N"), y.get("N")
        if nx is None or ny is None:
            raise ExpressionError(UPDATE_TYPE_ERROR)
        try:
            return {"N": number_sum(nx, ny, subtract)}
        except NumberRangeError as exc:
            raise ExpressionError(str(exc)) from None

    return arithmetic


def _set_in(av: AV, segs: Path, value: AV) -> AV:
    """Return a copy of av with value stored at segs (copy-on-write: the input is never mutated)."""
    seg = segs[0]
    if isinstance(seg, int):
        lst = av.get("L")
        if lst is None:
            raise ExpressionError(INVALID_PATH)
        new_list = list(lst)
        if len(segs) == 1:
            if seg >= len(new_list):
                new_list.append(value)
            else:
                new_list[seg] = value
        else:
            if seg >= len(new_list):
                raise ExpressionError(INVALID_PATH)
            new_list[seg] = _set_in(new_list[seg], segs[1:], value)
        return {"L": new_list}
    m = av.get("M")
    if m is None:
        raise ExpressionError(INVALID_PATH)
    new_map = dict(m)
    if len(segs) == 1:
        new_map[seg] = value
    else:
        child = new_map.get(seg)
        if child is None:
            raise ExpressionError(INVALID_PATH)
        new_map[seg] = _set_in(child, segs[1:], value)
    return {"M": new_map}


def set_path(item: Item, path: Path, value: AV) -> None:
    top = path[0]
    assert isinstance(top, str)
    if len(path) == 1:
        item[top] = value
        return
    cur = item.get(top)
    if cur is None:
        raise ExpressionError(INVALID_PATH)
    item[top] = _set_in(cur, path[1:], value)


def _remove_in(av: AV, segs: Path) -> AV:
    """Return a copy of av without segs; a missing last element is a no-op, a missing parent an error."""
    seg = segs[0]
    last = len(segs) == 1
    if isinstance(seg, int):
        lst = av.get("L")
        if lst is None:
            raise ExpressionError(INVALID_PATH)
        if seg >= len(lst):
            if last:
                return av
            raise ExpressionError(INVALID_PATH)
        new_list = list(lst)
        if last:
            del new_list[seg]
        else:
            new_list[seg] = _remove_in(new_list[seg], segs[1:])
        return {"L": new_list}
    m = av.get("M")
    if m is None:
        raise ExpressionError(INVALID_PATH)
    if seg not in m:
        if last:
            return av
        raise ExpressionError(INVALID_PATH)
    new_map = dict(m)
    if last:
        del new_map[seg]
    else:
        new_map[seg] = _remove_in(new_map[seg], segs[1:])
    return {"M": new_map}


def remove_path(item: Item, path: Path) -> None:
    top = path[0]
    assert isinstance(top, str)
    if len(path) == 1:
        item.pop(top, None)
        return
    cur = item.get(top)
    if cur is None:
        raise ExpressionError(INVALID_PATH)
    item[top] = _remove_in(cur, path[1:])


def set_union(t: str, existing: list[Any], extra: list[Any]) -> list[Any]:
    if t == "NS":
        seen = {Decimal(x) for x in existing}
        out = list(existing)
        for x in extra:
            d = Decimal(x)
            if d not in seen:
                seen.add(d)
                out.append(x)
        return out
    present = set(existing)
    return sorted_members(t, existing + [x for x in dict.fromkeys(extra) if x not in present])


def set_difference(t: str, existing: list[Any], removed: list[Any]) -> list[Any]:
    if t == "NS":
        gone = {Decimal(x) for x in removed}
        return [x for x in existing if Decimal(x) not in gone]
    gone_set = set(removed)
    return [x for x in existing if x not in gone_set]
