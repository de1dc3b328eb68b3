"""ConditionExpression and FilterExpression: a parsed condition, reusable across requests."""

from __future__ import annotations

from collections.abc import Mapping

from dynlocust.local.expressions.grammar import ExpressionParser
from dynlocust.local.expressions.paths import AV, EMPTY, Item, Pred


class Condition:
    """A parsed ConditionExpression or FilterExpression; evaluate() is safe to call from many requests."""

    __slots__ = ("_fn", "expression", "heads", "used_names", "used_values")

    def __init__(self, expression: str, fn: Pred, used_names: set[str], used_values: set[str], heads: set[str]) -> None:
        self.expression = expression
        self.heads: frozenset[str] = frozenset(heads)  # the top-level attributes it reads
        self._fn = fn
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset(used_values)

    def evaluate(self, item: Item | None) -> bool:
        """True when the condition holds for item (None or {} is an item that does not exist)."""
        return bool(self._fn(item if item is not None else EMPTY))


def parse_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    kind: str = "ConditionExpression",
    sized: bool = True,
) -> Condition:
    """Parse a ConditionExpression (or, with kind="FilterExpression", a filter) into a reusable Condition."""
    p = ExpressionParser(expr, names, values, kind, sized)
    fn = p.condition()
    p.expect_eof()
    return Condition(expr, fn, p.used_names, p.used_values, p.heads)
