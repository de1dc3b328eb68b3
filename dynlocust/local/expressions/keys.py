"""KeyConditionExpression: its grammar (a subset of conditions), the key schema's rules, and the range test."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dynlocust.local.attrvalues import try_compare, values_equal
from dynlocust.local.cache import BoundedCache, strings_size
from dynlocust.local.expressions.errors import ExpressionError
from dynlocust.local.expressions.evaluate import begins_with
from dynlocust.local.expressions.grammar import ALL_FUNCTIONS, COMPARATORS, ExpressionParser
from dynlocust.local.expressions.paths import AV, Item, Path, const_getter, fmt_av, fmt_path


class KeyCondition:
    """A parsed KeyConditionExpression: the partition key's value and an optional sort-key test.

    range_op is None, "=", "<", "<=", ">", ">=", "BETWEEN" or "begins_with" and range_values holds its operands, so
    the store can seek in its sorted keys instead of testing every item.
    """

    __slots__ = (
        "_match",
        "expression",
        "hash_key",
        "hash_value",
        "range_key",
        "range_op",
        "range_values",
        "used_names",
        "used_values",
    )

    def __init__(
        self,
        expression: str,
        hash_key: str,
        hash_value: AV,
        range_key: str | None,
        range_op: str | None,
        range_values: tuple[AV, ...],
        used_names: set[str] | frozenset[str],
        used_values: set[str] | frozenset[str],
    ) -> None:
        self.expression = expression
        self.hash_key = hash_key
        self.hash_value = hash_value
        self.range_key = range_key
        self.range_op = range_op
        self.range_values = range_values
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset(used_values)
        self._match = _range_matcher(range_op, range_values)

    def matches_range(self, av: AV | None) -> bool:
        """True when a sort-key value satisfies the sort-key condition (always true when there is none)."""
        return self._match(av)


def _range_matcher(op: str | None, vals: tuple[AV, ...]) -> Callable[[AV | None], bool]:
    if op is None:
        return lambda av: True
    if op == "=":
        c = vals[0]
        return lambda av: av is not None and values_equal(av, c)
    if op == "begins_with":
        pred = begins_with(lambda item: item.get("v"), const_getter(vals[0]))
        return lambda av: av is not None and pred({"v": av})
    if op == "BETWEEN":
        lo, hi = vals

        def between(av: AV | None) -> bool:
            if av is None:
                return False
            r1, r2 = try_compare(lo, av), try_compare(av, hi)
            return r1 is not None and r2 is not None and r1 <= 0 and r2 <= 0

        return between
    c = vals[0]
    test: Callable[[int], bool] = {
        "<": lambda r: r < 0,
        "<=": lambda r: r <= 0,
        ">": lambda r: r > 0,
        ">=": lambda r: r >= 0,
    }[op]

    def ordered(av: AV | None) -> bool:
        if av is None:
            return False
        r = try_compare(av, c)
        return r is not None and test(r)

    return ordered


#: A key condition comparing two attributes (`pk = sk`, `begins_with(a, b)`), as dynalite's tests record the service.
MULTIPLE_NAMES = "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"


def _key_part(p: ExpressionParser) -> list[tuple[str, str, tuple[AV, ...]]]:
    if p.at_kw("NOT"):
        raise p.error("Invalid operator used in KeyConditionExpression: NOT")
    if p.at_op("("):
        p.open_paren()
        parts = _key_parts(p)
        p.close_paren()
        return parts
    if p.at_function():
        fname = p.peek().text
        if fname != "begins_with":
            if fname in ALL_FUNCTIONS:
                raise p.error(f"Invalid operator used in KeyConditionExpression: {fname}")
            raise p.error(f"Invalid function name; function: {fname}")
        p.i += 1
        args = p.function_args(p.operand)
        p.check_arity(fname, args, 2)
        path = p.require_path(fname, args[0])
        if args[1].path is not None:
            raise ExpressionError(MULTIPLE_NAMES)
        if args[1].const is None:
            raise p.error(
                "Operator or function requires an expression attribute value; operator or function: begins_with"
            )
        p.check_const_type(fname, args[1], ("S", "B"))
        return [(_key_attr(p, path), "begins_with", (args[1].const,))]
    if p.peek().kind == "vname":
        return [_value_first(p)]
    path = p.path()
    tok = p.peek()
    if tok.kind == "op" and tok.text in COMPARATORS:
        if tok.text == "<>":
            raise p.error("Invalid operator used in KeyConditionExpression: <>")
        p.i += 1
        return [(_key_attr(p, path), tok.text, (_ordered(p, tok.text, _key_value(p)),))]
    if p.at_kw("BETWEEN"):
        p.i += 1
        lo = _ordered(p, "BETWEEN", _key_value(p))
        p.expect_kw("AND")
        hi = _ordered(p, "BETWEEN", _key_value(p))
        r = try_compare(lo, hi)
        if r is None or r > 0:
            raise p.error(
                "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
                f"lower bound operand: AttributeValue: {fmt_av(lo)}, upper bound operand: AttributeValue: "
                f"{fmt_av(hi)}"
            )
        return [(_key_attr(p, path), "BETWEEN", (lo, hi))]
    if p.at_kw("IN"):
        raise p.error("Invalid operator used in KeyConditionExpression: IN")
    raise p.syntax_error()


_MIRRORED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_ORDERED_TYPES = ("S", "N", "B")


def _value_first(p: ExpressionParser) -> tuple[str, str, tuple[AV, ...]]:
    """`:v = pk`, `:v < sk`: the value before the key, read as the key compared the other way (the service
    accepts it, as dynalite's recorded tests and issue 45 show)."""
    value = _key_value(p)
    tok = p.peek()
    if tok.kind != "op" or tok.text not in _MIRRORED:
        raise p.syntax_error()
    p.i += 1
    return (_key_attr(p, p.path()), _MIRRORED[tok.text], (_ordered(p, tok.text, value),))


def _ordered(p: ExpressionParser, op: str, value: AV) -> AV:
    """A value an ordering operator compares with a key: of a type with an order (S, N, B), else the service's
    "Incorrect operand type" (issue 45: `sk < :v` with a BOOL)."""
    if op != "=":
        t = next(iter(value), None) if isinstance(value, dict) else None
        if t not in _ORDERED_TYPES:
            raise p.error(
                f"Incorrect operand type for operator or function; operator or function: {op}, operand type: {t}"
            )
    return value


def _key_attr(p: ExpressionParser, path: Path) -> str:
    if len(path) != 1:
        raise p.error(f"Key conditions must use top-level attributes; found nested path: [{fmt_path(path)}]")
    return str(path[0])


def _key_value(p: ExpressionParser) -> AV:
    tok = p.peek()
    if tok.kind == "name" or tok.kind == "hname":
        p.path()  # a name the grammar refuses (a reserved word, a missing placeholder) is refused as such first
        raise ExpressionError(MULTIPLE_NAMES)
    if tok.kind != "vname":
        raise p.syntax_error()
    p.i += 1
    return p.value(tok.text)


def _key_parts(p: ExpressionParser) -> list[tuple[str, str, tuple[AV, ...]]]:
    parts = _key_part(p)
    while True:
        if p.at_kw("AND"):
            p.i += 1
            parts += _key_part(p)
        elif p.at_kw("OR"):
            raise p.error("Invalid operator used in KeyConditionExpression: OR")
        else:
            return parts


# (expression, names, hash key, range key) -> (hash value placeholder, range op, range value placeholders, used
# names, used values) of a key condition parsed before: a load test sends one expression with fresh values each time
_KeyShape = tuple[str, str | None, tuple[str, ...], frozenset[str], frozenset[str]]
KEY_SHAPES_MAX = 1024
KEY_SHAPES_MAX_BYTES = 1 << 20  # of the expressions' and names' strings (cache.strings_size)
key_shapes: BoundedCache[_KeyShape] = BoundedCache(KEY_SHAPES_MAX, KEY_SHAPES_MAX_BYTES)


def _one_value(av: object) -> bool:
    return isinstance(av, dict) and len(av) == 1


def parse_key_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    hash_key: str,
    range_key: str | None,
) -> KeyCondition:
    """Parse a KeyConditionExpression against a key schema (partition key hash_key, sort key range_key).

    A parse depends on the values only through their presence and form (one type each), except for BETWEEN
    (compares its bounds) and begins_with (checks the type), so for the other operators the placeholders found
    are remembered (a bounded cache) and the next request with the same text and names only looks its values up.
    """
    ck: tuple[object, ...] | None = (expr, tuple(names.items()) if names else None, hash_key, range_key)
    try:
        shape = key_shapes.get(ck) if ck is not None else None
    except TypeError:  # unhashable names: no cache
        ck, shape = None, None
    if shape is not None and values:
        hph, op, rphs, used_names, used_values = shape
        hv = values.get(hph)
        rvs = tuple(values.get(ph) for ph in rphs)
        ordered = op in (None, "=") or all(v is not None and next(iter(v), None) in _ORDERED_TYPES for v in rvs)
        if hv is not None and _one_value(hv) and all(v is not None and _one_value(v) for v in rvs) and ordered:
            return KeyCondition(
                expr, hash_key, hv, range_key, op, tuple(v for v in rvs if v is not None), used_names, used_values
            )
    kc = _parse_key_condition(expr, names, values, hash_key, range_key)
    if ck is not None and values and kc.range_op not in ("BETWEEN", "begins_with"):
        placeholder = {id(v): k for k, v in values.items()}
        hph_found = placeholder.get(id(kc.hash_value))
        rphs_found = [placeholder.get(id(v)) for v in kc.range_values]
        # only when each value object is one placeholder's: then the placeholders found are the ones parsed
        if len(placeholder) == len(values) and hph_found is not None:
            found = tuple(ph for ph in rphs_found if ph is not None)
            if len(found) == len(rphs_found):
                size = strings_size((expr, *names.keys(), *names.values())) if names else strings_size((expr,))
                key_shapes.put(ck, (hph_found, kc.range_op, found, kc.used_names, kc.used_values), size)
    return kc


def _parse_key_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    hash_key: str,
    range_key: str | None,
) -> KeyCondition:
    p = ExpressionParser(expr, names, values, "KeyConditionExpression")
    parts = _key_parts(p)
    p.expect_eof()
    attrs = [a for a, _, _ in parts]
    # two conditions on one key are named as such, whatever their count: `pk = :p AND sk > :a AND sk < :b`
    if len(set(attrs)) != len(attrs):
        raise p.error("KeyConditionExpressions must only contain one condition per key")
    key_count = 1 if range_key is None else 2
    if len(parts) > 2:  # worded as issue 45 records the service (dynalite's older record: "length 1 or 2 only")
        raise ExpressionError(
            f"The number of query conditions ({len(parts)}) exceeds the number of key attributes defined in the "
            f"schema ({key_count})"
        )
    hash_parts = [x for x in parts if x[0] == hash_key]
    if not hash_parts:
        raise ExpressionError(f"Query condition missed key schema element: {hash_key}")
    _, hop, hvals = hash_parts[0]
    if hop != "=":
        raise ExpressionError("Query key condition not supported")
    range_op: str | None = None
    range_values: tuple[AV, ...] = ()
    for attr, op, vals in parts:
        if attr == hash_key:
            continue
        if range_key is None:
            raise ExpressionError("Query key condition not supported")
        if attr != range_key:
            raise ExpressionError(f"Query condition missed key schema element: {range_key}")
        range_op, range_values = op, vals
    return KeyCondition(expr, hash_key, hvals[0], range_key, range_op, range_values, p.used_names, p.used_values)


class MultiKeyCondition(KeyCondition):
    """A KeyConditionExpression on a multi-attribute GSI key: every partition attribute with "=", then sort
    attributes left to right, "=" on all but the last given one (which may use any sort-key operator)."""

    __slots__ = ("hash_values", "matchers")

    def __init__(
        self,
        expression: str,
        hash_parts: list[tuple[str, AV]],
        matchers: list[tuple[str, Callable[[AV | None], bool]]],
        used_names: set[str],
        used_values: set[str],
    ) -> None:
        super().__init__(expression, hash_parts[0][0], hash_parts[0][1], None, None, (), used_names, used_values)
        self.hash_values = tuple(av for _, av in hash_parts)
        self.matchers = tuple(matchers)

    def matches_item(self, item: Item) -> bool:
        return all(m(item.get(attr)) for attr, m in self.matchers)


def parse_multi_key_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    hash_keys: list[str],
    range_keys: list[str],
) -> MultiKeyCondition:
    """Parse a KeyConditionExpression against a multi-attribute key (up to 4 partition and 4 sort attributes)."""
    p = ExpressionParser(expr, names, values, "KeyConditionExpression")
    parts = _key_parts(p)
    p.expect_eof()
    by_attr: dict[str, tuple[str, tuple[AV, ...]]] = {}
    for attr, op, vals in parts:
        if attr in by_attr:
            raise p.error("KeyConditionExpressions must only contain one condition per key")
        by_attr[attr] = (op, vals)
    for h in hash_keys:
        if h not in by_attr:
            raise ExpressionError(f"Query condition missed key schema element: {h}")
        if by_attr[h][0] != "=":
            raise ExpressionError("Query key condition not supported")
    for attr in by_attr:
        if attr not in hash_keys and attr not in range_keys:
            raise ExpressionError(f"Query condition missed key schema element: {attr}")
    given = [r for r in range_keys if r in by_attr]
    if given != range_keys[: len(given)]:  # a gap before a sort attribute with a condition (issue 45's wording)
        last = given[-1]
        missing = [r for r in range_keys[: range_keys.index(last)] if r not in by_attr]
        raise ExpressionError(
            f"RANGE key attributes {', '.join(missing)} must have equality conditions specified in the query because "
            f"a condition is present on key attribute {last}"
        )
    for r in given[:-1]:
        if by_attr[r][0] != "=":
            raise ExpressionError(
                f"Query key condition not supported: only the last sort key condition may use {by_attr[r][0]}; key: {r}"
            )
    matchers = [(r, _range_matcher(*by_attr[r])) for r in given]
    hash_parts = [(h, by_attr[h][1][0]) for h in hash_keys]
    return MultiKeyCondition(expr, hash_parts, matchers, p.used_names, p.used_values)
