"""The pre-expression parameters (Expected, AttributeUpdates, KeyConditions, QueryFilter, ScanFilter,
ConditionalOperator) rewritten as expressions, so one evaluator serves both forms.
"""

from __future__ import annotations

from typing import Any

from dynlocust.local import errors

_LEGACY_OPS = {
    "EQ": "{a} = {v0}",
    "NE": "{a} <> {v0}",
    "LE": "{a} <= {v0}",
    "LT": "{a} < {v0}",
    "GE": "{a} >= {v0}",
    "GT": "{a} > {v0}",
    "NOT_NULL": "attribute_exists({a})",
    "NULL": "attribute_not_exists({a})",
    "CONTAINS": "contains({a}, {v0})",
    "NOT_CONTAINS": "NOT contains({a}, {v0})",
    "BEGINS_WITH": "begins_with({a}, {v0})",
    "IN": "{a} IN ({vs})",
    "BETWEEN": "{a} BETWEEN {v0} AND {v1}",
}
_ORDERED = ("S", "N", "B")
# the operand types each operator takes (EQ and NE take any), as the service checks them after their count
_LEGACY_TYPES = {
    "LT": _ORDERED,
    "LE": _ORDERED,
    "GT": _ORDERED,
    "GE": _ORDERED,
    "IN": _ORDERED,
    "BETWEEN": _ORDERED,
    "BEGINS_WITH": ("S", "B"),
    "CONTAINS": (*_ORDERED, "BOOL", "NULL"),
    "NOT_CONTAINS": (*_ORDERED, "BOOL", "NULL"),
}
#: The request member naming the expressions translate() built (the service's 4 KB limit is not theirs).
BUILT = "_built_from_legacy"
# Query's KeyConditions may come with these expressions (the mirror, QueryFilter with KeyConditionExpression, not)
_WITH_KEY_CONDITIONS = frozenset(("FilterExpression", "ProjectionExpression"))
_LEGACY_PARAMS = {
    "Expected": "ConditionExpression",
    "KeyConditions": "KeyConditionExpression",
    "QueryFilter": "FilterExpression",
    "ScanFilter": "FilterExpression",
    "AttributeUpdates": "UpdateExpression",
}


class _Rewriter:
    """Rewrites the pre-expression parameters into expressions, so one evaluator serves both."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def name(self, attr: str) -> str:
        key = f"#legacy{len(self.names)}"
        self.names[key] = attr
        return key

    def value(self, av: Any) -> str:
        key = f":legacy{len(self.values)}"
        self.values[key] = av
        return key

    def conditions(self, conds: Any, joiner: str, parens: bool = True) -> str:
        parts = []
        for attr, c in (conds or {}).items():
            if not isinstance(c, dict):
                raise errors.wrong_json_type(c, "structure")
            a = self.name(attr)
            if "ComparisonOperator" in c:
                op = c["ComparisonOperator"]
                tmpl = _LEGACY_OPS.get(op)
                if tmpl is None:
                    raise errors.validation(f"Unsupported operator on ExpectedAttributeValue: {op}")
                given = c.get("AttributeValueList")
                if given is None and "Value" in c:  # Value stands for a one-element AttributeValueList
                    given = [c["Value"]]
                vals = [self.value(v) for v in given or []]
                need = {"NULL": 0, "NOT_NULL": 0, "BETWEEN": 2}.get(op, 1)
                if (op != "IN" and len(vals) != need) or (op == "IN" and not vals):
                    raise errors.validation(
                        f"One or more parameter values were invalid: Invalid number of argument(s) for the {op} "
                        "ComparisonOperator"
                    )
                for av in given or []:
                    kind = next(iter(av), "") if isinstance(av, dict) else ""
                    if op in _LEGACY_TYPES and kind not in _LEGACY_TYPES[op]:
                        raise errors.validation(
                            f"One or more parameter values were invalid: ComparisonOperator {op} is not valid for "
                            f"{kind} AttributeValue type"
                        )
                parts.append(
                    tmpl.format(
                        a=a, v0=vals[0] if vals else "", v1=vals[1] if len(vals) > 1 else "", vs=", ".join(vals)
                    )
                )
            elif c.get("Exists") is False:
                if "Value" in c:
                    raise errors.validation(
                        "One or more parameter values were invalid: Value cannot be used when Exists is false "
                        f"for Attribute: {attr}"
                    )
                parts.append(f"attribute_not_exists({a})")
            elif "Value" in c:
                parts.append(f"{a} = {self.value(c['Value'])}")
            else:
                raise errors.validation(
                    "One or more parameter values were invalid: Value must be provided when Exists is true "
                    f"for Attribute: {attr}"
                )
        return f" {joiner} ".join(f"({p})" if parens else p for p in parts)

    def updates(self, updates: Any) -> str:
        sets, removes, adds, deletes = [], [], [], []
        for attr, u in (updates or {}).items():
            if not isinstance(u, dict):
                raise errors.wrong_json_type(u, "structure")
            a = self.name(attr)
            action = u.get("Action", "PUT")
            if action in ("PUT", "ADD") and not isinstance(u.get("Value"), dict):
                raise errors.validation(
                    "One or more parameter values were invalid: Only DELETE action is allowed when no attribute "
                    f"value is specified for attribute: {attr}"
                )
            if action == "PUT":
                sets.append(f"{a} = {self.value(u['Value'])}")
            elif action == "ADD" and isinstance(u.get("Value"), dict) and "L" in u["Value"]:
                # legacy ADD appends to a list (UpdateExpression's ADD takes only numbers and sets)
                empty = self.value({"L": []})
                sets.append(f"{a} = list_append(if_not_exists({a}, {empty}), {self.value(u['Value'])})")
            elif action == "ADD":
                adds.append(f"{a} {self.value(u['Value'])}")
            elif action == "DELETE" and "Value" in u:
                deletes.append(f"{a} {self.value(u['Value'])}")
            elif action == "DELETE":
                removes.append(a)
            else:
                raise errors.validation(f"Unknown AttributeAction: {action}")
        clauses = [
            f"{kw} {', '.join(items)}"
            for kw, items in (("SET", sets), ("REMOVE", removes), ("ADD", adds), ("DELETE", deletes))
            if items
        ]
        return " ".join(clauses)


def translate(req: dict[str, Any], *names: str) -> dict[str, Any]:
    """`req` with its legacy parameters (Expected, KeyConditions, ...) rewritten as expressions."""
    present = [n for n in names if n in req and n != "ConditionalOperator"]
    if not present:
        return req
    expr_params = [
        k
        for k in (
            "ConditionExpression",
            "KeyConditionExpression",
            "FilterExpression",
            "UpdateExpression",
            "ProjectionExpression",
        )
        if k in req
    ]
    mixed = present == ["KeyConditions"] and set(expr_params) <= _WITH_KEY_CONDITIONS
    if expr_params and not mixed:
        raise errors.validation(
            "Can not use both expression and non-expression parameters in the same request: Non-expression "
            f"parameters: {{{', '.join(present)}}} Expression parameters: {{{', '.join(expr_params)}}}"
        )
    for k in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        if k in req and not expr_params:
            raise errors.validation(f"{k} can only be specified when using expressions")
    out = dict(req)
    lg = _Rewriter()
    joiner = req.get("ConditionalOperator", "AND")
    if joiner not in ("AND", "OR"):
        raise errors.validation(f"Unknown ConditionalOperator: {joiner}")
    for n in present:
        text = (
            lg.updates(out.pop(n))
            if n == "AttributeUpdates"
            else lg.conditions(out.pop(n), "AND", parens=False)
            if n == "KeyConditions"
            else lg.conditions(out.pop(n), joiner)
        )
        if text:
            out[_LEGACY_PARAMS[n]] = text
    out.pop("ConditionalOperator", None)
    if lg.names:
        out["ExpressionAttributeNames"] = {**req.get("ExpressionAttributeNames", {}), **lg.names}
    if lg.values:
        out["ExpressionAttributeValues"] = {**req.get("ExpressionAttributeValues", {}), **lg.values}
    out[BUILT] = frozenset(_LEGACY_PARAMS[n] for n in present)
    return out
