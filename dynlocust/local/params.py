"""The request parameters every data-plane operation shares, checked as the service checks them.

Expressions (`Exprs`: parsed once per request, every name and value given must be used), ReturnValues,
ReturnValuesOnConditionCheckFailure, ReturnConsumedCapacity and projections. The attribute values themselves are
checked once, with the request's JSON types (shapes, attrvalues.check_value), before any handler runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dynlocust.local import errors, expressions, legacy
from dynlocust.local.cache import BoundedCache, strings_size
from dynlocust.local.store import Item, KeyDef

_EXPRESSION_PARAMS = (
    "ProjectionExpression",
    "FilterExpression",
    "KeyConditionExpression",
    "ConditionExpression",
    "UpdateExpression",
)


_EXPRESSION_SET = frozenset(_EXPRESSION_PARAMS)


_PLACEHOLDER_RE = re.compile(r"[#:][A-Za-z0-9_]+")
_UNUSED_MAX = 1024
_UNUSED_MAX_BYTES = 1 << 20  # of the texts and keys: one request may carry 100,000 names (7 MB kept)
_unused_cache: BoundedCache[tuple[str, ...]] = BoundedCache(_UNUSED_MAX, _UNUSED_MAX_BYTES)


def _unused(joined: str, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The placeholders of `keys` that the expressions' text `joined` does not mention, sorted.

    One scan of the text for every placeholder it holds, then one set lookup per key: linear in the request's size
    (a search per key compiled a regex per key: 100,000 unused names cost seconds). Cached, bounded in bytes: a load
    test repeats its expressions."""
    ck = (joined, keys)
    hit = _unused_cache.get(ck)
    if hit is not None:
        return hit
    mentioned = set(_PLACEHOLDER_RE.findall(joined))
    out = tuple(sorted(k for k in keys if k not in mentioned and not _odd_key_mentioned(k, joined)))
    _unused_cache.put(ck, out, strings_size((joined, *keys)))
    return out


def _odd_key_mentioned(key: str, joined: str) -> bool:
    """Whether a key unlike any placeholder token (say "#a-b") appears in the text, not followed by a name
    character: a substring test first, so only a key that appears costs a regex."""
    return (
        key in joined
        and _PLACEHOLDER_RE.fullmatch(key) is None
        and re.search(re.escape(key) + r"(?![A-Za-z0-9_])", joined) is not None
    )


class _Holds(dict[str, Any]):
    """A mapping that answers every key with one value: for a parse that checks only the syntax."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self._value = value

    def __bool__(self) -> bool:
        return True

    def get(self, key: Any, default: Any = None) -> Any:
        return self._value


_SYNTAX = ": Syntax error; "


def _syntax_error_first(req: dict[str, Any]) -> None:
    """Raise an expression's syntax error, which the service reports before unused placeholders (`a IN ()`).

    Every placeholder parses as defined, so only what the grammar refuses is raised here."""
    names, values = _Holds("x"), _Holds({"S": "x"})
    parsers: dict[str, Callable[[str], Any]] = {
        "ProjectionExpression": lambda text: expressions.parse_projection(text, names),
        "UpdateExpression": lambda text: expressions.parse_update(text, names, values, False),
    }
    for member in _EXPRESSION_PARAMS:
        text = req.get(member)
        if type(text) is not str:
            continue
        parse = parsers.get(member, lambda text, m=member: expressions.parse_condition(text, names, values, m, False))
        try:
            parse(text)
        except expressions.ExpressionError as exc:
            if _SYNTAX in exc.message:
                raise errors.validation(exc.message) from None


class Exprs:
    """Parses one request's expressions and checks that every name and value given was used."""

    def __init__(self, req: dict[str, Any], single_write: bool = False) -> None:
        # PutItem, UpdateItem and DeleteItem word these request checks "1 validation error detected: ..."
        self._fail = errors.detected if single_write else errors.validation
        self.names: dict[str, str] | None = req.get("ExpressionAttributeNames")
        self.values: dict[str, dict] | None = req.get("ExpressionAttributeValues")
        if self.values is not None and not self.values:
            raise self._fail("ExpressionAttributeValues must not be empty")
        if self.names is not None and not self.names:
            raise self._fail("ExpressionAttributeNames must not be empty")
        self.used_names: set[str] = set()
        self.used_values: set[str] = set()
        self._built: frozenset[str] = req.get(legacy.BUILT, frozenset())
        self.any = False
        texts = [v for p, v in req.items() if p in _EXPRESSION_SET and type(v) is str] if len(req) > 2 else []
        if texts and not all(t.strip() for t in texts):
            for p in _EXPRESSION_PARAMS:  # every expression's emptiness is checked before any is parsed
                v = req.get(p)
                if type(v) is str and not v.strip():
                    message = f"Invalid {p}: The expression can not be empty;"
                    raise (self._fail if p == "UpdateExpression" else errors.validation)(message)
        if self.names or self.values:
            self._precheck(texts, req)

    def _precheck(self, texts: list[str], req: dict[str, Any]) -> None:
        """What the service checks before parsing: key syntax, the values, names and values unused in the text."""
        for label, given, sigil in (("Names", self.names, "#"), ("Values", self.values, ":")):
            for k in given or ():
                if not k.startswith(sigil):
                    raise errors.validation(
                        f'ExpressionAttribute{label} contains invalid key: Syntax error; key: "{k}"'
                    )
        for k, name in (self.names or {}).items():
            if not name:
                raise errors.validation(
                    f"ExpressionAttributeNames contains invalid value: Empty attribute name for key {k}"
                )
        joined = " ".join(texts)
        for label, given in (("Names", self.names), ("Values", self.values)):
            unused = _unused(joined, tuple(given)) if given else ()
            if unused and texts:
                _syntax_error_first(req)
                raise self._fail(
                    f"Value provided in ExpressionAttribute{label} unused in expressions: keys: {{{', '.join(unused)}}}"
                )

    def _track(self, obj: Any) -> Any:
        self.any = True
        self.used_names |= obj.used_names
        self.used_values |= obj.used_values
        return obj

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return self._track(fn(*args))
        except expressions.ExpressionError as exc:
            raise (errors.detected if exc.detected else errors.validation)(str(exc)) from exc

    def condition(self, text: str | None, kind: str = "ConditionExpression") -> Any:
        if text is None:
            return None
        member = "FilterExpression" if kind == "FilterExpression" else "ConditionExpression"
        sized = member not in self._built
        return self._call(expressions.parse_condition, text, self.names, self.values, kind, sized)

    def update(self, text: str | None) -> Any:
        if text is None:
            return None
        sized = "UpdateExpression" not in self._built
        return self._call(expressions.parse_update, text, self.names, self.values, sized)

    def projection(self, text: str | None) -> Any:
        if text is None:
            return None
        return self._call(expressions.parse_projection, text, self.names)

    def key_condition(self, text: str, key: KeyDef) -> Any:
        if key.multi:
            return self._call(
                expressions.parse_multi_key_condition,
                text,
                self.names,
                self.values,
                [a for a, _ in key.hash_parts()],
                [a for a, _ in key.range_parts()],
            )
        return self._call(expressions.parse_key_condition, text, self.names, self.values, key.hash_attr, key.range_attr)

    def finish(self) -> None:
        if not self.any:
            if self.names is not None:
                raise errors.validation("ExpressionAttributeNames can only be specified when using expressions")
            if self.values is not None:
                raise errors.validation("ExpressionAttributeValues can only be specified when using expressions")
            return
        if self.names and not self.used_names.issuperset(self.names):
            unused = sorted(set(self.names) - self.used_names)
            if unused:
                raise self._fail(
                    "Value provided in ExpressionAttributeNames unused in expressions: keys: {"
                    + ", ".join(unused)
                    + "}"
                )
        if self.values and not self.used_values.issuperset(self.values):
            unused = sorted(set(self.values) - self.used_values)
            if unused:
                raise self._fail(
                    "Value provided in ExpressionAttributeValues unused in expressions: keys: {"
                    + ", ".join(unused)
                    + "}"
                )


def return_values(req: dict[str, Any], allowed: tuple[str, ...]) -> str:
    """ReturnValues (its enum checked by validation.check_constraints): PutItem and DeleteItem take only ALL_OLD
    and NONE, refused as "1 validation error detected: ReturnValues can only be ALL_OLD or NONE" (issue 45, from
    suites run against the service; dynalite's tests record the bare sentence), before the table lookup."""
    rv = req.get("ReturnValues", "NONE")
    if rv not in allowed:
        raise errors.detected("ReturnValues can only be " + " or ".join(reversed(allowed)))
    return rv


def return_on_fail(req: dict[str, Any]) -> bool:
    """ReturnValuesOnConditionCheckFailure; checked here too for a transaction's actions (nested members)."""
    v = req.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if v not in ("NONE", "ALL_OLD"):
        raise errors.validation(
            "1 validation error detected: Value '"
            + str(v)
            + "' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: "
            "Member must satisfy enum value set: [ALL_OLD, NONE]"
        )
    return v == "ALL_OLD"


def return_consumed(req: dict[str, Any]) -> str | None:
    """ReturnConsumedCapacity (its values checked by validation.check_constraints); None for NONE."""
    mode = req.get("ReturnConsumedCapacity", "NONE")
    return None if mode == "NONE" else mode


def projector(req: dict[str, Any], ex: Exprs) -> Callable[[Item], Item] | None:
    proj = ex.projection(req.get("ProjectionExpression"))
    atg = req.get("AttributesToGet")
    if proj is not None and atg is not None:
        raise errors.validation(
            "Can not use both expression and non-expression parameters in the same request: "
            "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"
        )
    if proj is not None:
        return proj.apply
    if atg is not None:
        names = list(atg)
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise errors.validation(
                    f"One or more parameter values were invalid: Duplicate value in attribute name: {n}"
                )
            seen.add(n)
        return lambda it: {n: it[n] for n in names if n in it}
    return None
