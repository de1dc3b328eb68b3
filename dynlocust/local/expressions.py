"""DynamoDB's expression language for the local endpoint: conditions, filters, updates, projections, key conditions.

Each expression is parsed once into an immutable object whose evaluation is a tree of closures, so the server can
cache parsed expressions (keyed by expression, names and values) and evaluate them per item without re-parsing.
Error messages follow the service's ValidationException wording so clients see what DynamoDB would say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.local.attrvalues import (
    NumberRangeError,
    add_numbers,
    b_bytes,
    compare_values,
    item_size,
    try_compare,
    values_equal,
)
from dynlocust.local.limits import MAX_EXPRESSION_BYTES, MAX_EXPRESSION_NESTING

__all__ = [
    "Condition",
    "ExpressionError",
    "KeyCondition",
    "Projection",
    "Update",
    "compare_values",
    "item_size",
    "parse_condition",
    "parse_key_condition",
    "parse_projection",
    "parse_update",
]

AV = dict[str, Any]
Item = dict[str, AV]
Path = tuple[str | int, ...]
_Getter = Callable[[Item], AV | None]
_Pred = Callable[[Item], bool]


class ExpressionError(DynlocustError, ValueError):
    """An expression the service would reject with a ValidationException; str() is the service-style message."""

    def __init__(self, message: str, detected: bool = False) -> None:
        super().__init__(message)
        self.message = message
        # the service words some expression errors as "1 validation error detected: <message>"
        self.detected = detected


_UPDATE_TYPE_ERROR = "An operand in the update expression has an incorrect data type"
_MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
_INVALID_PATH = "The document path provided in the update expression is invalid for update"

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
_ATTRIBUTE_TYPES = ("S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M")
_COMPARATORS = frozenset(("=", "<>", "<", "<=", ">", ">="))
_BOOL_FUNCTIONS = frozenset(("attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains"))
_UPDATE_FUNCTIONS = frozenset(("if_not_exists", "list_append"))
_ALL_FUNCTIONS = _BOOL_FUNCTIONS | _UPDATE_FUNCTIONS | {"size"}
_CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")
_MAX_IN_OPERANDS = 100

_TOKEN_RE = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<hname>#[A-Za-z0-9_]+)|(?P<vname>:[A-Za-z0-9_]+)"
    r"|(?P<num>[0-9]+)|(?P<op><>|<=|>=|[=<>(),.\[\]+\-])"
)
_WS_RE = re.compile(r"\s*")


class _Token:
    __slots__ = ("kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int) -> None:
        self.kind = kind
        self.text = text
        self.pos = pos


def _fmt_path(path: Path) -> str:
    return ", ".join(f"[{s}]" if isinstance(s, int) else s for s in path)


def _fmt_av(av: AV) -> str:
    ((t, v),) = av.items()
    return f"{{{t}:{v}}}"


def _type_of(av: AV) -> str:
    for t in av:
        return t
    return ""


class _Operand:
    """One side of a comparison: a document path, a constant value, or size(path)."""

    __slots__ = ("const", "fn", "kind", "path")

    def __init__(self, kind: str, fn: _Getter, const: AV | None = None, path: Path | None = None) -> None:
        self.kind = kind
        self.fn = fn
        self.const = const
        self.path = path


def _getter(path: Path) -> _Getter:
    """Compile a document path into a function returning the attribute value at that path, or None."""
    first = path[0]
    if len(path) == 1:

        def get_top(item: Item) -> AV | None:
            return item.get(first)  # type: ignore[arg-type]  # a path starts with a name, never an index

        return get_top
    rest = path[1:]

    def get_nested(item: Item) -> AV | None:
        av = item.get(first)  # type: ignore[arg-type]  # a path starts with a name, never an index
        for seg in rest:
            if av is None:
                return None
            if seg.__class__ is int:
                lst = av.get("L")
                if lst is None or seg >= len(lst):
                    return None
                av = lst[seg]
            else:
                m = av.get("M")
                if m is None:
                    return None
                av = m.get(seg)
        return av

    return get_nested


def _const_getter(av: AV) -> _Getter:
    def get_const(item: Item) -> AV | None:
        return av

    return get_const


class _PathNode:
    """A node of the trie of document paths: its children, the path ending here, and the first path through it."""

    __slots__ = ("children", "end", "first")

    def __init__(self, first: Path) -> None:
        self.children: dict[str | int, _PathNode] = {}
        self.end: Path | None = None
        self.first = first


def _check_overlaps(paths: list[Path], label: str) -> None:
    """Refuse two paths where one is a prefix of the other, or that index one attribute both as map and as list.

    A trie makes this linear in the total path length; comparing every pair was quadratic, and a few thousand
    paths held the server's only loop for seconds.
    """

    def refuse(kind: str, p1: Path, p2: Path) -> ExpressionError:
        return ExpressionError(
            f"Invalid {label}: Two document paths {kind} with each other; must remove or rewrite one of "
            f"these paths; path one: [{_fmt_path(p1)}], path two: [{_fmt_path(p2)}]",
            detected=kind == "overlap",
        )

    root = _PathNode(())
    for path in paths:
        node = root
        for k, seg in enumerate(path):
            if node.end is not None:
                raise refuse("overlap", node.end, path)
            child = node.children.get(seg)
            if child is None:
                if k > 0:
                    for other_seg, other in node.children.items():
                        if type(other_seg) is not type(seg):
                            raise refuse("conflict", other.first, path)
                child = node.children[seg] = _PathNode(path)
            node = child
        if node.end is not None or node.children:
            raise refuse("overlap", node.end or node.first, path)
        node.end = path


class _Parser:
    """Recursive-descent parser shared by every expression kind; it compiles as it parses."""

    def __init__(
        self,
        expr: str,
        names: Mapping[str, str] | None,
        values: Mapping[str, AV] | None,
        label: str,
    ) -> None:
        self.expr = expr
        self.label = label
        self.names = names or {}
        self.values = values or {}
        self.used_names: set[str] = set()
        self.used_values: set[str] = set()
        if len(expr) > MAX_EXPRESSION_BYTES // 4:  # only then can its UTF-8 form exceed the limit
            size = len(expr.encode("utf-8", "surrogatepass"))
            if size > MAX_EXPRESSION_BYTES:
                raise self.error(f"Expression size has exceeded the maximum allowed size; expression size: {size}")
        self._last_group: tuple[int, int] | None = None  # token span of the last parenthesized condition
        if not expr or not expr.strip():
            raise self.error("The expression can not be empty;", detected=label == "UpdateExpression")
        self.toks = self._tokenize(expr)
        self.i = 0
        self.depth = 0

    def _tokenize(self, expr: str) -> list[_Token]:
        out: list[_Token] = []
        pos = 0
        n = len(expr)
        while True:
            pos = _WS_RE.match(expr, pos).end()  # type: ignore[union-attr]  # \s* matches anywhere
            if pos >= n:
                break
            m = _TOKEN_RE.match(expr, pos)
            if m is None:
                near = expr[out[-1].pos : pos + 1] if out else expr[pos]
                raise self.error(f'Syntax error; token: "{expr[pos]}", near: "{near}"')
            out.append(_Token(m.lastgroup or "", m.group(), pos))
            pos = m.end()
        out.append(_Token("eof", "<EOF>", n))
        return out

    # -- token helpers ------------------------------------------------------------------------------------------
    def error(self, message: str, detected: bool = False) -> ExpressionError:
        return ExpressionError(f"Invalid {self.label}: {message}", detected)

    def syntax_error(self) -> ExpressionError:
        """The service's syntax error: the offending token, and `near` it the text from the token before it to
        the token after it (as in 'token: "0", near: ", 0)"' from the service)."""
        tok = self.toks[self.i]
        last = tok if tok.kind == "eof" or self.toks[self.i + 1].kind == "eof" else self.toks[self.i + 1]
        end = last.pos + (0 if last.kind == "eof" else len(last.text))
        start = self.toks[self.i - 1].pos if self.i > 0 else tok.pos
        near = self.expr[start:end] if end > start else tok.text
        return self.error(f'Syntax error; token: "{tok.text}", near: "{near}"')

    def peek(self) -> _Token:
        return self.toks[self.i]

    def advance(self) -> _Token:
        tok = self.toks[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def at_op(self, op: str) -> bool:
        tok = self.toks[self.i]
        return tok.kind == "op" and tok.text == op

    def at_kw(self, word: str) -> bool:
        tok = self.toks[self.i]
        return tok.kind == "name" and tok.text.upper() == word

    def at_function(self) -> bool:
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        return self.toks[self.i].kind == "name" and nxt is not None and nxt.kind == "op" and nxt.text == "("

    def open_paren(self) -> None:
        """Consume "(" of a group or a function call; refuse nesting deep enough to exhaust the parser's stack."""
        self.expect_op("(")
        self.depth += 1
        if self.depth > MAX_EXPRESSION_NESTING:
            raise self.error(
                f"The expression has too many nested parentheses or function calls; the limit is "
                f"{MAX_EXPRESSION_NESTING}"
            )

    def close_paren(self) -> None:
        self.expect_op(")")
        self.depth -= 1

    def expect_op(self, op: str) -> None:
        if not self.at_op(op):
            raise self.syntax_error()
        self.i += 1

    def expect_kw(self, word: str) -> None:
        if not self.at_kw(word):
            raise self.syntax_error()
        self.i += 1

    def expect_eof(self) -> None:
        if self.peek().kind != "eof":
            raise self.syntax_error()

    # -- names, values, paths -----------------------------------------------------------------------------------
    def value(self, placeholder: str) -> AV:
        self.used_values.add(placeholder)
        av = self.values.get(placeholder)
        if av is None:
            raise self.error(
                "An expression attribute value used in expression is not defined; attribute value: " + placeholder
            )
        if not isinstance(av, dict) or len(av) != 1:
            raise self.error(f"Expression attribute value {placeholder} is not a valid attribute value: {av!r}")
        return av

    def name(self, placeholder: str) -> str:
        self.used_names.add(placeholder)
        name = self.names.get(placeholder)
        if name is None:
            raise self.error(
                "An expression attribute name used in the document path is not defined; attribute name: " + placeholder
            )
        return name

    def path_element(self) -> str:
        tok = self.advance()
        if tok.kind == "hname":
            return self.name(tok.text)
        if tok.kind == "name":
            if tok.text.upper() in _RESERVED:
                raise self.error(f"Attribute name is a reserved keyword; reserved keyword: {tok.text}")
            return tok.text
        self.i -= 1 if tok.kind != "eof" else 0
        raise self.syntax_error()

    def path(self) -> Path:
        segs: list[str | int] = [self.path_element()]
        while True:
            if self.at_op("."):
                self.i += 1
                segs.append(self.path_element())
            elif self.at_op("["):
                self.i += 1
                tok = self.peek()
                if tok.kind != "num":
                    raise self.syntax_error()
                self.i += 1
                segs.append(int(tok.text))
                self.expect_op("]")
            else:
                return tuple(segs)

    def function_args(self, parse_arg: Callable[[], _Operand]) -> list[_Operand]:
        self.open_paren()
        args = [parse_arg()]
        while self.at_op(","):
            self.i += 1
            args.append(parse_arg())
        self.close_paren()
        return args

    def check_arity(self, fname: str, args: list[_Operand], n: int) -> None:
        if len(args) != n:
            raise self.error(
                f"Incorrect number of operands for operator or function; operator or function: {fname}, "
                f"number of operands: {len(args)}"
            )

    def require_path(self, fname: str, arg: _Operand) -> Path:
        if arg.kind != "path" or arg.path is None:
            raise self.error(f"Operator or function requires a document path; operator or function: {fname}")
        return arg.path

    def check_const_type(self, fname: str, arg: _Operand, allowed: tuple[str, ...]) -> None:
        if arg.const is not None:
            t = _type_of(arg.const)
            if t not in allowed:
                raise self.error(
                    f"Incorrect operand type for operator or function; operator or function: {fname}, operand type: {t}"
                )

    # -- conditions ---------------------------------------------------------------------------------------------
    def operand(self) -> _Operand:
        tok = self.peek()
        if tok.kind == "vname":
            self.i += 1
            av = self.value(tok.text)
            return _Operand("value", _const_getter(av), const=av)
        if self.at_function():
            fname = tok.text
            if fname != "size":
                if fname in _ALL_FUNCTIONS:
                    raise self.error(
                        f"The function is not allowed to be used this way in an expression; function: {fname}"
                    )
                raise self.error(f"Invalid function name; function: {fname}")
            self.i += 1
            args = self.function_args(self.operand)
            self.check_arity("size", args, 1)
            return _Operand("size", _size_getter(_getter(self.require_path("size", args[0]))))
        if tok.kind in ("name", "hname"):
            path = self.path()
            return _Operand("path", _getter(path), path=path)
        raise self.syntax_error()

    def condition(self) -> _Pred:
        terms = [self.conjunction()]
        while self.at_kw("OR"):
            self.i += 1
            terms.append(self.conjunction())
        return _junction(terms, disjunction=True)

    def conjunction(self) -> _Pred:
        terms = [self.negation()]
        while self.at_kw("AND"):
            self.i += 1
            terms.append(self.negation())
        return _junction(terms, disjunction=False)

    def negation(self) -> _Pred:
        # a loop, not recursion: thousands of NOTs must cost no stack
        negated = False
        while self.at_kw("NOT"):
            self.i += 1
            negated = not negated
        inner = self.primary()
        return _not(inner) if negated else inner

    def primary(self) -> _Pred:
        if self.at_op("("):
            opened = self.i
            self.open_paren()
            inner = self.condition()
            # "((x))": a group whose whole content is another group is refused by the service
            if self._last_group == (opened + 1, self.i - 1):
                raise self.error("The expression has redundant parentheses;")
            self.close_paren()
            self._last_group = (opened, self.i - 1)
            return inner
        if self.at_function() and self.peek().text in _BOOL_FUNCTIONS:
            return self.bool_function()
        left = self.operand()
        tok = self.peek()
        if tok.kind == "op" and tok.text in _COMPARATORS:
            self.i += 1
            right = self.operand()
            return self.comparison(tok.text, left, right)
        if self.at_kw("BETWEEN"):
            self.i += 1
            lo = self.operand()
            self.expect_kw("AND")
            hi = self.operand()
            return self.between(left, lo, hi)
        if self.at_kw("IN"):
            self.i += 1
            self.expect_op("(")
            options = [self.operand()]
            while self.at_op(","):
                self.i += 1
                options.append(self.operand())
            self.expect_op(")")
            if len(options) > _MAX_IN_OPERANDS:
                raise self.error(
                    f"The IN operator is provided with too many operands; number of operands: {len(options)}"
                )
            return _in(left, options)
        if left.kind == "size" and tok.kind == "eof":
            raise self.error("The function is not allowed to be used this way in an expression; function: size")
        raise self.syntax_error()

    def comparison(self, op: str, left: _Operand, right: _Operand) -> _Pred:
        if op not in ("=", "<>"):
            for side in (left, right):
                self.check_const_type(op, side, ("S", "N", "B"))
        return _compare(op, left, right)

    def between(self, arg: _Operand, lo: _Operand, hi: _Operand) -> _Pred:
        for side in (arg, lo, hi):
            self.check_const_type("BETWEEN", side, ("S", "N", "B"))
        if lo.const is not None and hi.const is not None:
            r = try_compare(lo.const, hi.const)
            if r is None or r > 0:
                raise self.error(
                    "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
                    f"lower bound operand: AttributeValue: {_fmt_av(lo.const)}, "
                    f"upper bound operand: AttributeValue: {_fmt_av(hi.const)}"
                )
        return _between(arg.fn, lo.fn, hi.fn)

    def bool_function(self) -> _Pred:
        fname = self.advance().text
        args = self.function_args(self.operand)
        if fname in ("attribute_exists", "attribute_not_exists"):
            self.check_arity(fname, args, 1)
            g = _getter(self.require_path(fname, args[0]))
            if fname == "attribute_exists":
                return lambda item: g(item) is not None
            return lambda item: g(item) is None
        self.check_arity(fname, args, 2)
        if fname == "attribute_type":
            g = _getter(self.require_path(fname, args[0]))
            const = args[1].const
            if const is None:
                raise self.error(
                    "Incorrect operand type for operator or function; operator or function: attribute_type, "
                    f"operand type: {args[1].kind}"
                )
            self.check_const_type(fname, args[1], ("S",))
            wanted = const["S"]
            if wanted not in _ATTRIBUTE_TYPES:
                raise self.error(
                    f"Invalid attribute type name found; type: {wanted}, valid types: {{{','.join(_ATTRIBUTE_TYPES)}}}"
                )

            def has_type(item: Item) -> bool:
                av = g(item)
                return av is not None and wanted in av

            return has_type
        self.require_path(fname, args[0])
        if fname == "begins_with":
            self.check_const_type(fname, args[1], ("S", "B"))
            return _begins_with(args[0].fn, args[1].fn)
        return _contains(args[0].fn, args[1].fn)

    # -- update expressions -------------------------------------------------------------------------------------
    def update_operand(self) -> _Operand:
        tok = self.peek()
        if self.at_op("("):  # the service accepts parentheses around operands and sums: ((c[1]) + (b.a))
            self.i += 1
            inner = self.set_value_operand()
            self.expect_op(")")
            return inner
        if tok.kind == "vname":
            self.i += 1
            av = self.value(tok.text)
            return _Operand("value", _const_getter(av), const=av)
        if self.at_function():
            fname = tok.text
            if fname not in _UPDATE_FUNCTIONS:
                if fname in _ALL_FUNCTIONS:
                    raise self.error(f"The function is not allowed in an update expression; function: {fname}")
                raise self.error(f"Invalid function name; function: {fname}")
            self.i += 1
            args = self.function_args(self.update_operand)
            self.check_arity(fname, args, 2)
            if fname == "if_not_exists":
                self.require_path(fname, args[0])
                return _Operand("function", _if_not_exists(args[0].fn, args[1].fn))
            for a in args:
                self.check_const_type(fname, a, ("L",))
            return _Operand("function", _list_append(args[0].fn, args[1].fn))
        if tok.kind in ("name", "hname"):
            path = self.path()
            return _Operand("path", _getter(path), path=path)
        raise self.syntax_error()

    def set_value(self) -> _Getter:
        return self.set_value_operand().fn

    def set_value_operand(self) -> _Operand:
        left = self.update_operand()
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("+", "-"):
            self.i += 1
            right = self.update_operand()
            for side in (left, right):
                self.check_const_type(tok.text, side, ("N",))
            return _Operand("function", _arithmetic(left.fn, right.fn, tok.text == "-"))
        return left


# -- compiled condition pieces ----------------------------------------------------------------------------------
def _junction(terms: list[_Pred], disjunction: bool) -> _Pred:
    """OR (disjunction) or AND of the terms, flat: thousands of terms evaluate without one nested call per term."""
    if len(terms) == 1:
        return terms[0]
    if len(terms) == 2:
        a, b = terms
        return (lambda item: a(item) or b(item)) if disjunction else (lambda item: a(item) and b(item))
    preds = tuple(terms)
    combine = any if disjunction else all
    return lambda item: combine(p(item) for p in preds)


def _not(a: _Pred) -> _Pred:
    return lambda item: not a(item)


def _size_getter(g: _Getter) -> _Getter:
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


def _compare(op: str, left: _Operand, right: _Operand) -> _Pred:
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


def _between(g: _Getter, lo: _Getter, hi: _Getter) -> _Pred:
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


def _in(left: _Operand, options: list[_Operand]) -> _Pred:
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


def _begins_with(g: _Getter, prefix: _Getter) -> _Pred:
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


def _contains(g: _Getter, operand: _Getter) -> _Pred:
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


# -- compiled update pieces -------------------------------------------------------------------------------------
def _if_not_exists(g: _Getter, fallback: _Getter) -> _Getter:
    def if_not_exists(item: Item) -> AV | None:
        av = g(item)
        return av if av is not None else fallback(item)

    return if_not_exists


def _list_append(a: _Getter, b: _Getter) -> _Getter:
    def list_append(item: Item) -> AV | None:
        x, y = a(item), b(item)
        if x is None or y is None:
            raise ExpressionError(_MISSING_ATTRIBUTE)
        lx, ly = x.get("L"), y.get("L")
        if lx is None or ly is None:
            raise ExpressionError(_UPDATE_TYPE_ERROR)
        return {"L": lx + ly}

    return list_append


def _arithmetic(a: _Getter, b: _Getter, subtract: bool) -> _Getter:
    def arithmetic(item: Item) -> AV | None:
        x, y = a(item), b(item)
        if x is None or y is None:
            raise ExpressionError(_MISSING_ATTRIBUTE)
        nx, ny = x.get("N"), y.get("N")
        if nx is None or ny is None:
            raise ExpressionError(_UPDATE_TYPE_ERROR)
        try:
            return {"N": add_numbers(nx, ny, subtract)}
        except NumberRangeError as exc:
            raise ExpressionError(str(exc)) from None

    return arithmetic


def _set_in(av: AV, segs: Path, value: AV) -> AV:
    """Return a copy of av with value stored at segs (copy-on-write: the input is never mutated)."""
    seg = segs[0]
    if isinstance(seg, int):
        lst = av.get("L")
        if lst is None:
            raise ExpressionError(_INVALID_PATH)
        new_list = list(lst)
        if len(segs) == 1:
            if seg >= len(new_list):
                new_list.append(value)
            else:
                new_list[seg] = value
        else:
            if seg >= len(new_list):
                raise ExpressionError(_INVALID_PATH)
            new_list[seg] = _set_in(new_list[seg], segs[1:], value)
        return {"L": new_list}
    m = av.get("M")
    if m is None:
        raise ExpressionError(_INVALID_PATH)
    new_map = dict(m)
    if len(segs) == 1:
        new_map[seg] = value
    else:
        child = new_map.get(seg)
        if child is None:
            raise ExpressionError(_INVALID_PATH)
        new_map[seg] = _set_in(child, segs[1:], value)
    return {"M": new_map}


def _set_path(item: Item, path: Path, value: AV) -> None:
    top = path[0]
    assert isinstance(top, str)
    if len(path) == 1:
        item[top] = value
        return
    cur = item.get(top)
    if cur is None:
        raise ExpressionError(_INVALID_PATH)
    item[top] = _set_in(cur, path[1:], value)


def _remove_in(av: AV, segs: Path) -> AV:
    """Return a copy of av without segs; a missing last element is a no-op, a missing parent an error."""
    seg = segs[0]
    last = len(segs) == 1
    if isinstance(seg, int):
        lst = av.get("L")
        if lst is None:
            raise ExpressionError(_INVALID_PATH)
        if seg >= len(lst):
            if last:
                return av
            raise ExpressionError(_INVALID_PATH)
        new_list = list(lst)
        if last:
            del new_list[seg]
        else:
            new_list[seg] = _remove_in(new_list[seg], segs[1:])
        return {"L": new_list}
    m = av.get("M")
    if m is None:
        raise ExpressionError(_INVALID_PATH)
    if seg not in m:
        if last:
            return av
        raise ExpressionError(_INVALID_PATH)
    new_map = dict(m)
    if last:
        del new_map[seg]
    else:
        new_map[seg] = _remove_in(new_map[seg], segs[1:])
    return {"M": new_map}


def _remove_path(item: Item, path: Path) -> None:
    top = path[0]
    assert isinstance(top, str)
    if len(path) == 1:
        item.pop(top, None)
        return
    cur = item.get(top)
    if cur is None:
        raise ExpressionError(_INVALID_PATH)
    item[top] = _remove_in(cur, path[1:])


def _set_union(t: str, existing: list[Any], extra: list[Any]) -> list[Any]:
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
    return existing + [x for x in dict.fromkeys(extra) if x not in present]


def _set_difference(t: str, existing: list[Any], removed: list[Any]) -> list[Any]:
    if t == "NS":
        gone = {Decimal(x) for x in removed}
        return [x for x in existing if Decimal(x) not in gone]
    gone_set = set(removed)
    return [x for x in existing if x not in gone_set]


# -- public objects ---------------------------------------------------------------------------------------------
class Condition:
    """A parsed ConditionExpression or FilterExpression; evaluate() is safe to call from many requests."""

    __slots__ = ("_fn", "expression", "used_names", "used_values")

    def __init__(self, expression: str, fn: _Pred, used_names: set[str], used_values: set[str]) -> None:
        self.expression = expression
        self._fn = fn
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset(used_values)

    def evaluate(self, item: Item | None) -> bool:
        """True when the condition holds for item (None or {} is an item that does not exist)."""
        return bool(self._fn(item if item is not None else _EMPTY))


_EMPTY: Item = {}


def parse_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    kind: str = "ConditionExpression",
) -> Condition:
    """Parse a ConditionExpression (or, with kind="FilterExpression", a filter) into a reusable Condition."""
    p = _Parser(expr, names, values, kind)
    fn = p.condition()
    p.expect_eof()
    return Condition(expr, fn, p.used_names, p.used_values)


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
    )

    def __init__(
        self,
        expression: str,
        sets: list[tuple[Path, _Getter]],
        removes: list[Path],
        adds: list[tuple[Path, AV]],
        deletes: list[tuple[Path, AV]],
        used_names: set[str],
        used_values: set[str],
    ) -> None:
        self.expression = expression
        self._sets = tuple(sets)
        # Several list indexes removed from one list all refer to the original list: remove the highest first.
        self._removes = tuple(
            sorted(removes, key=lambda p: tuple((1, s) if isinstance(s, int) else (0, s) for s in p), reverse=True)
        )
        self._adds = tuple((path, _getter(path), av) for path, av in adds)
        self._deletes = tuple((path, _getter(path), av) for path, av in deletes)
        targets = [p for p, _ in sets] + removes + [p for p, _ in adds] + [p for p, _ in deletes]
        self.updated_paths: frozenset[str] = frozenset(str(p[0]) for p in targets)
        # UPDATED_OLD / UPDATED_NEW return exactly the updated document paths, nested as in the item
        self.updated = Projection(expression, targets, set())
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset(used_values)

    def apply(self, item: Item | None) -> Item:
        """Apply every action, reading operands from the item as it was before the update."""
        old: Item = item if item is not None else _EMPTY
        new: Item = dict(old)
        if self._sets:
            computed = []
            for path, fn in self._sets:
                v = fn(old)
                if v is None:
                    raise ExpressionError(_MISSING_ATTRIBUTE)
                computed.append((path, v))
            for path, v in computed:
                _set_path(new, path, v)
        for path in self._removes:
            _remove_path(new, path)
        for path, get, av in self._adds:
            ((t, v),) = av.items()
            cur = get(new)
            if cur is None:
                _set_path(new, path, av)
                continue
            cur_v = cur.get(t)
            if cur_v is None:
                raise ExpressionError(_UPDATE_TYPE_ERROR)
            if t == "N":
                try:
                    _set_path(new, path, {"N": add_numbers(cur_v, v)})
                except NumberRangeError as exc:
                    raise ExpressionError(str(exc)) from None
            else:
                _set_path(new, path, {t: _set_union(t, cur_v, v)})
        for path, get, av in self._deletes:
            ((t, v),) = av.items()
            cur = get(new)
            if cur is None:
                if len(path) > 1:
                    _remove_path(new, path)  # raises when the parent is missing or not a container
                continue
            cur_v = cur.get(t)
            if cur_v is None:
                raise ExpressionError(_UPDATE_TYPE_ERROR)
            remaining = _set_difference(t, cur_v, v)
            if remaining:
                _set_path(new, path, {t: remaining})
            else:
                _remove_path(new, path)
        return new


def parse_update(expr: str, names: Mapping[str, str] | None, values: Mapping[str, AV] | None) -> Update:
    """Parse an UpdateExpression (SET, REMOVE, ADD, DELETE clauses, each at most once)."""
    p = _Parser(expr, names, values, "UpdateExpression")
    seen: set[str] = set()
    sets: list[tuple[Path, _Getter]] = []
    removes: list[Path] = []
    adds: list[tuple[Path, AV]] = []
    deletes: list[tuple[Path, AV]] = []
    while p.peek().kind != "eof":
        tok = p.peek()
        clause = tok.text.upper()
        if tok.kind != "name" or clause not in _CLAUSES:
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
                t = _type_of(av)
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
    _check_overlaps(targets, "UpdateExpression")
    return Update(expr, sets, removes, adds, deletes, p.used_names, p.used_values)


_Trie = dict[str | int, "_Trie | None"]


def _project_av(av: AV, trie: _Trie) -> AV | None:
    m = av.get("M")
    if m is not None:
        out: dict[str, AV] = {}
        for k, sub in trie.items():
            if isinstance(k, str) and k in m:
                if sub is None:
                    out[k] = m[k]
                else:
                    r = _project_av(m[k], sub)
                    if r is not None:
                        out[k] = r
        return {"M": out} if out else None
    lst = av.get("L")
    if lst is not None:
        res: list[AV] = []
        for k in sorted(k for k in trie if isinstance(k, int)):
            if k < len(lst):
                sub = trie[k]
                if sub is None:
                    res.append(lst[k])
                else:
                    r = _project_av(lst[k], sub)
                    if r is not None:
                        res.append(r)
        return {"L": res} if res else None
    return None


class Projection:
    """A parsed ProjectionExpression; apply() keeps the nesting of the projected paths."""

    __slots__ = ("_top", "_trie", "expression", "paths", "used_names", "used_values")

    def __init__(self, expression: str, paths: list[Path], used_names: set[str]) -> None:
        self.expression = expression
        self.paths: tuple[Path, ...] = tuple(paths)
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset()
        trie: _Trie = {}
        for path in paths:
            node = trie
            for seg in path[:-1]:
                nxt = node.setdefault(seg, {})
                assert nxt is not None
                node = nxt
            node[path[-1]] = None
        self._trie = trie
        self._top: tuple[str, ...] | None = tuple(str(p[0]) for p in paths) if all(len(p) == 1 for p in paths) else None

    def apply(self, item: Item) -> Item:
        """Return a new item holding only the projected paths that exist in item."""
        if self._top is not None:
            return {k: item[k] for k in self._top if k in item}
        out: Item = {}
        for k, sub in self._trie.items():
            av = item.get(k)  # type: ignore[arg-type]  # the trie's top level holds names only
            if av is None:
                continue
            if sub is None:
                out[k] = av  # type: ignore[index]  # a name (top level of the trie)
            else:
                r = _project_av(av, sub)
                if r is not None:
                    out[k] = r  # type: ignore[index]  # a name (top level of the trie)
        return out


def parse_projection(expr: str, names: Mapping[str, str] | None) -> Projection:
    """Parse a ProjectionExpression: comma-separated document paths."""
    p = _Parser(expr, names, None, "ProjectionExpression")
    paths = [p.path()]
    while p.at_op(","):
        p.i += 1
        paths.append(p.path())
    p.expect_eof()
    _check_overlaps(paths, "ProjectionExpression")
    return Projection(expr, paths, p.used_names)


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
        pred = _begins_with(lambda item: item.get("v"), _const_getter(vals[0]))
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


def _key_part(p: _Parser) -> list[tuple[str, str, tuple[AV, ...]]]:
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
            if fname in _ALL_FUNCTIONS:
                raise p.error(f"Invalid operator used in KeyConditionExpression: {fname}")
            raise p.error(f"Invalid function name; function: {fname}")
        p.i += 1
        args = p.function_args(p.operand)
        p.check_arity(fname, args, 2)
        path = p.require_path(fname, args[0])
        if args[1].const is None:
            raise p.error(
                "Operator or function requires an expression attribute value; operator or function: begins_with"
            )
        p.check_const_type(fname, args[1], ("S", "B"))
        return [(_key_attr(p, path), "begins_with", (args[1].const,))]
    path = p.path()
    tok = p.peek()
    if tok.kind == "op" and tok.text in _COMPARATORS:
        if tok.text == "<>":
            raise p.error("Invalid operator used in KeyConditionExpression: <>")
        p.i += 1
        return [(_key_attr(p, path), tok.text, (_key_value(p),))]
    if p.at_kw("BETWEEN"):
        p.i += 1
        lo = _key_value(p)
        p.expect_kw("AND")
        hi = _key_value(p)
        r = try_compare(lo, hi)
        if r is None or r > 0:
            raise p.error(
                "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
                f"lower bound operand: AttributeValue: {_fmt_av(lo)}, upper bound operand: AttributeValue: "
                f"{_fmt_av(hi)}"
            )
        return [(_key_attr(p, path), "BETWEEN", (lo, hi))]
    if p.at_kw("IN"):
        raise p.error("Invalid operator used in KeyConditionExpression: IN")
    raise p.syntax_error()


def _key_attr(p: _Parser, path: Path) -> str:
    if len(path) != 1:
        raise p.error(f"Key conditions must use top-level attributes; found nested path: [{_fmt_path(path)}]")
    return str(path[0])


def _key_value(p: _Parser) -> AV:
    tok = p.peek()
    if tok.kind != "vname":
        raise p.syntax_error()
    p.i += 1
    return p.value(tok.text)


def _key_parts(p: _Parser) -> list[tuple[str, str, tuple[AV, ...]]]:
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
_key_shapes: dict[tuple[object, ...], _KeyShape] = {}
KEY_SHAPES_MAX = 1024


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
        shape = _key_shapes.get(ck) if ck is not None else None
    except TypeError:  # unhashable names: no cache
        ck, shape = None, None
    if shape is not None and values:
        hph, op, rphs, used_names, used_values = shape
        hv = values.get(hph)
        rvs = tuple(values.get(ph) for ph in rphs)
        if hv is not None and _one_value(hv) and all(v is not None and _one_value(v) for v in rvs):
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
                if len(_key_shapes) >= KEY_SHAPES_MAX:
                    del _key_shapes[next(iter(_key_shapes))]
                _key_shapes[ck] = (hph_found, kc.range_op, found, kc.used_names, kc.used_values)
    return kc


def _parse_key_condition(
    expr: str,
    names: Mapping[str, str] | None,
    values: Mapping[str, AV] | None,
    hash_key: str,
    range_key: str | None,
) -> KeyCondition:
    p = _Parser(expr, names, values, "KeyConditionExpression")
    parts = _key_parts(p)
    p.expect_eof()
    if len(parts) > 2:
        raise ExpressionError("Conditions can be of length 1 or 2 only")
    attrs = [a for a, _, _ in parts]
    if len(set(attrs)) != len(attrs):
        raise p.error("KeyConditionExpressions must only contain one condition per key")
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
    p = _Parser(expr, names, values, "KeyConditionExpression")
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
    if given != range_keys[: len(given)]:
        missing = next(r for r in range_keys if r not in by_attr)
        raise ExpressionError(f"Query condition missed key schema element: {missing}")
    for r in given[:-1]:
        if by_attr[r][0] != "=":
            raise ExpressionError(
                f"Query key condition not supported: only the last sort key condition may use {by_attr[r][0]}; key: {r}"
            )
    matchers = [(r, _range_matcher(*by_attr[r])) for r in given]
    hash_parts = [(h, by_attr[h][1][0]) for h in hash_keys]
    return MultiKeyCondition(expr, hash_parts, matchers, p.used_names, p.used_values)


# DynamoDB reserved words (developer guide, "Reserved words in DynamoDB"): bare use as a name is an error.
_RESERVED_TEXT = """
    ABORT ABSOLUTE ACTION ADD AFTER AGENT AGGREGATE ALL ALLOCATE ALTER ANALYZE AND ANY ARCHIVE ARE ARRAY
    AS ASC ASCII ASENSITIVE ASSERTION ASYMMETRIC AT ATOMIC ATTACH ATTRIBUTE AUTH AUTHORIZATION AUTHORIZE
    AUTO AVG BACK BACKUP BASE BATCH BEFORE BEGIN BETWEEN BIGINT BINARY BIT BLOB BLOCK BOOLEAN BOTH
    BREADTH BUCKET BULK BY BYTE CALL CALLED CALLING CAPACITY CASCADE CASCADED CASE CAST CATALOG CHAR
    CHARACTER CHECK CLASS CLOB CLOSE CLUSTER CLUSTERED CLUSTERING CLUSTERS COALESCE COLLATE COLLATION
    COLLECTION COLUMN COLUMNS COMBINE COMMENT COMMIT COMPACT COMPILE COMPRESS CONDITION CONFLICT CONNECT
    CONNECTION CONSISTENCY CONSISTENT CONSTRAINT CONSTRAINTS CONSTRUCTOR CONSUMED CONTINUE CONVERT COPY
    CORRESPONDING COUNT COUNTER CREATE CROSS CUBE CURRENT CURSOR CYCLE DATA DATABASE DATE DATETIME DAY
    DEALLOCATE DEC DECIMAL DECLARE DEFAULT DEFERRABLE DEFERRED DEFINE DEFINED DEFINITION DELETE
    DELIMITED DEPTH DEREF DESC DESCRIBE DESCRIPTOR DETACH DETERMINISTIC DIAGNOSTICS DIRECTORIES DISABLE
    DISCONNECT DISTINCT DISTRIBUTE DO DOMAIN DOUBLE DROP DUMP DURATION DYNAMIC EACH ELEMENT ELSE ELSEIF
    EMPTY ENABLE END EQUAL EQUALS ERROR ESCAPE ESCAPED EVAL EVALUATE EXCEEDED EXCEPT EXCEPTION
    EXCEPTIONS EXCLUSIVE EXEC EXECUTE EXISTS EXIT EXPLAIN EXPLODE EXPORT EXPRESSION EXTENDED EXTERNAL
    EXTRACT FAIL FALSE FAMILY FETCH FIELDS FILE FILTER FILTERING FINAL FINISH FIRST FIXED FLATTERN FLOAT
    FOR FORCE FOREIGN FORMAT FORWARD FOUND FREE FROM FULL FUNCTION FUNCTIONS GENERAL GENERATE GET GLOB
    GLOBAL GO GOTO GRANT GREATER GROUP GROUPING HANDLER HASH HAVE HAVING HEAP HIDDEN HOLD HOUR
    IDENTIFIED IDENTITY IF IGNORE IMMEDIATE IMPORT IN INCLUDING INCLUSIVE INCREMENT INCREMENTAL INDEX
    INDEXED INDEXES INDICATOR INFINITE INITIALLY INLINE INNER INNTER INOUT INPUT INSENSITIVE INSERT
    INSTEAD INT INTEGER INTERSECT INTERVAL INTO INVALIDATE IS ISOLATION ITEM ITEMS ITERATE JOIN KEY KEYS
    LAG LANGUAGE LARGE LAST LATERAL LEAD LEADING LEAVE LEFT LENGTH LESS LEVEL LIKE LIMIT LIMITED LINES
    LIST LOAD LOCAL LOCALTIME LOCALTIMESTAMP LOCATION LOCATOR LOCK LOCKS LOG LOGED LONG LOOP LOWER MAP
    MATCH MATERIALIZED MAX MAXLEN MEMBER MERGE METHOD METRICS MIN MINUS MINUTE MISSING MOD MODE MODIFIES
    MODIFY MODULE MONTH MULTI MULTISET NAME NAMES NATIONAL NATURAL NCHAR NCLOB NEW NEXT NO NONE NOT NULL
    NULLIF NUMBER NUMERIC OBJECT OF OFFLINE OFFSET OLD ON ONLINE ONLY OPAQUE OPEN OPERATOR OPTION OR
    ORDER ORDINALITY OTHER OTHERS OUT OUTER OUTPUT OVER OVERLAPS OVERRIDE OWNER PAD PARALLEL PARAMETER
    PARAMETERS PARTIAL PARTITION PARTITIONED PARTITIONS PATH PERCENT PERCENTILE PERMISSION PERMISSIONS
    PIPE PIPELINED PLAN POOL POSITION PRECISION PREPARE PRESERVE PRIMARY PRIOR PRIVATE PRIVILEGES
    PROCEDURE PROCESSED PROJECT PROJECTION PROPERTY PROVISIONING PUBLIC PUT QUERY QUIT QUORUM RAISE
    RANDOM RANGE RANK RAW READ READS REAL REBUILD RECORD RECURSIVE REDUCE REF REFERENCE REFERENCES
    REFERENCING REGEXP REGION REINDEX RELATIVE RELEASE REMAINDER RENAME REPEAT REPLACE REQUEST RESET
    RESIGNAL RESOURCE RESPONSE RESTORE RESTRICT RESULT RETURN RETURNING RETURNS REVERSE REVOKE RIGHT
    ROLE ROLES ROLLBACK ROLLUP ROUTINE ROW ROWS RULE RULES SAMPLE SATISFIES SAVE SAVEPOINT SCAN SCHEMA
    SCOPE SCROLL SEARCH SECOND SECTION SEGMENT SEGMENTS SELECT SELF SEMI SENSITIVE SEPARATE SEQUENCE
    SERIALIZABLE SESSION SET SETS SHARD SHARE SHARED SHORT SHOW SIGNAL SIMILAR SIZE SKEWED SMALLINT
    SNAPSHOT SOME SOURCE SPACE SPACES SPARSE SPECIFIC SPECIFICTYPE SPLIT SQL SQLCODE SQLERROR
    SQLEXCEPTION SQLSTATE SQLWARNING START STATE STATIC STATUS STORAGE STORE STORED STREAM STRING STRUCT
    STYLE SUB SUBMULTISET SUBPARTITION SUBSTRING SUBTYPE SUM SUPER SYMMETRIC SYNONYM SYSTEM TABLE
    TABLESAMPLE TEMP TEMPORARY TERMINATED TEXT THAN THEN THROUGHPUT TIME TIMESTAMP TIMEZONE TINYINT TO
    TOKEN TOTAL TOUCH TRAILING TRANSACTION TRANSFORM TRANSLATE TRANSLATION TREAT TRIGGER TRIM TRUE
    TRUNCATE TTL TUPLE TYPE UNDER UNDO UNION UNIQUE UNIT UNKNOWN UNLOGGED UNNEST UNPROCESSED UNSIGNED
    UNTIL UPDATE UPPER URL USAGE USE USER USERS USING UUID VACUUM VALUE VALUED VALUES VARCHAR VARIABLE
    VARIANCE VARINT VARYING VIEW VIEWS VIRTUAL VOID WAIT WHEN WHENEVER WHERE WHILE WINDOW WITH WITHIN
    WITHOUT WORK WRAPPED WRITE YEAR ZONE
"""
_RESERVED = frozenset(_RESERVED_TEXT.split())
