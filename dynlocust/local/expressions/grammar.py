"""The grammar of conditions and update operands: parses and compiles in one pass (closures from evaluate)."""

from __future__ import annotations

from dynlocust.local.attrvalues import try_compare
from dynlocust.local.expressions.evaluate import (
    begins_with,
    between,
    compare,
    contains,
    in_list,
    junction,
    negation,
    size_getter,
)
from dynlocust.local.expressions.parser import Operand, Parser
from dynlocust.local.expressions.paths import Getter, Item, Pred, const_getter, fmt_av, fmt_path, getter
from dynlocust.local.expressions.update_ops import arithmetic, if_not_exists, list_append

_ATTRIBUTE_TYPES = ("S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M")
COMPARATORS = frozenset(("=", "<>", "<", "<=", ">", ">="))
_BOOL_FUNCTIONS = frozenset(("attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains"))
_UPDATE_FUNCTIONS = frozenset(("if_not_exists", "list_append"))
ALL_FUNCTIONS = _BOOL_FUNCTIONS | _UPDATE_FUNCTIONS | {"size"}
CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")
_MAX_IN_OPERANDS = 100


class ExpressionParser(Parser):
    """Recursive-descent parser of conditions and update operands; it compiles as it parses."""

    # -- conditions ---------------------------------------------------------------------------------------------
    def operand(self) -> Operand:
        tok = self.peek()
        if tok.kind == "vname":
            self.i += 1
            av = self.value(tok.text)
            return Operand("value", const_getter(av), const=av)
        if self.at_function():
            fname = tok.text
            if fname != "size":
                if fname in ALL_FUNCTIONS:
                    raise self.error(
                        f"The function is not allowed to be used this way in an expression; function: {fname}"
                    )
                raise self.error(f"Invalid function name; function: {fname}")
            self.i += 1
            args = self.function_args(self.operand)
            self.check_arity("size", args, 1)
            if args[0].kind != "value":  # the service takes size(:v) as it takes size(path)
                self.require_path("size", args[0])
            self.check_const_type("size", args[0], ("S", "B", "SS", "NS", "BS", "L", "M"))
            return Operand("size", size_getter(args[0].fn))
        if tok.kind in ("name", "hname"):
            path = self.path()
            return Operand("path", getter(path), path=path)
        raise self.syntax_error()

    def condition(self) -> Pred:
        terms = [self.conjunction()]
        while self.at_kw("OR"):
            self.i += 1
            terms.append(self.conjunction())
        return junction(terms, disjunction=True)

    def conjunction(self) -> Pred:
        terms = [self.negation()]
        while self.at_kw("AND"):
            self.i += 1
            terms.append(self.negation())
        return junction(terms, disjunction=False)

    def negation(self) -> Pred:
        # a loop, not recursion: thousands of NOTs must cost no stack
        negated = False
        while self.at_kw("NOT"):
            self.i += 1
            negated = not negated
        inner = self.primary()
        return negation(inner) if negated else inner

    def primary(self) -> Pred:
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
        if tok.kind == "op" and tok.text in COMPARATORS:
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
            return in_list(left, options)
        if left.kind == "size" and tok.kind == "eof":
            raise self.error("The function is not allowed to be used this way in an expression; function: size")
        raise self.syntax_error()

    def comparison(self, op: str, left: Operand, right: Operand) -> Pred:
        if op not in ("=", "<>"):
            for side in (left, right):
                self.check_const_type(op, side, ("S", "N", "B"))
        self.distinct(op, left, [right])
        return compare(op, left, right)

    def between(self, arg: Operand, lo: Operand, hi: Operand) -> Pred:
        for side in (arg, lo, hi):
            self.check_const_type("BETWEEN", side, ("S", "N", "B"))
        if lo.const is not None and hi.const is not None:
            r = try_compare(lo.const, hi.const)
            if r is None or r > 0:
                raise self.error(
                    "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
                    f"lower bound operand: AttributeValue: {fmt_av(lo.const)}, "
                    f"upper bound operand: AttributeValue: {fmt_av(hi.const)}"
                )
        return between(arg.fn, lo.fn, hi.fn)

    def bool_function(self) -> Pred:
        fname = self.advance().text
        args = self.function_args(self.operand)
        if fname in ("attribute_exists", "attribute_not_exists"):
            self.check_arity(fname, args, 1)
            g = getter(self.require_path(fname, args[0]))
            if fname == "attribute_exists":
                return lambda item: g(item) is not None
            return lambda item: g(item) is None
        self.check_arity(fname, args, 2)
        if fname == "attribute_type":
            g = getter(self.require_path(fname, args[0]))
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
        if fname == "begins_with":  # its first operand may be a value: begins_with(:s, a)
            if args[0].kind != "value":
                self.require_path(fname, args[0])
            for arg in args:
                self.check_const_type(fname, arg, ("S", "B"))
            self.distinct(fname, args[0], args[1:])
            return begins_with(args[0].fn, args[1].fn)
        self.require_path(fname, args[0])
        self.distinct(fname, args[0], args[1:])
        return contains(args[0].fn, args[1].fn)

    def distinct(self, op: str, first: Operand, rest: list[Operand]) -> None:
        """The service refuses an operator whose first operand is the same document path as another (a = a)."""
        if first.path is not None and any(o.path == first.path for o in rest):
            raise self.error(
                "The first operand must be distinct from the remaining operands for this operator or function; "
                f"operator: {op}, first operand: [{fmt_path(first.path)}]"
            )

    # -- update expressions -------------------------------------------------------------------------------------
    def update_operand(self) -> Operand:
        tok = self.peek()
        if self.at_op("("):  # the service accepts parentheses around operands and sums: ((c[1]) + (b.a))
            self.i += 1
            inner = self.set_value_operand()
            self.expect_op(")")
            return inner
        if tok.kind == "vname":
            self.i += 1
            av = self.value(tok.text)
            return Operand("value", const_getter(av), const=av)
        if self.at_function():
            fname = tok.text
            if fname not in _UPDATE_FUNCTIONS:
                if fname in ALL_FUNCTIONS:
                    raise self.error(f"The function is not allowed in an update expression; function: {fname}")
                raise self.error(f"Invalid function name; function: {fname}")
            self.i += 1
            args = self.function_args(self.update_operand)
            self.check_arity(fname, args, 2)
            if fname == "if_not_exists":
                self.require_path(fname, args[0])
                return Operand("function", if_not_exists(args[0].fn, args[1].fn))
            for a in args:
                self.check_const_type(fname, a, ("L",))
            return Operand("function", list_append(args[0].fn, args[1].fn))
        if tok.kind in ("name", "hname"):
            path = self.path()
            return Operand("path", getter(path), path=path)
        raise self.syntax_error()

    def set_value(self) -> Getter:
        return self.set_value_operand().fn

    def set_value_operand(self) -> Operand:
        left = self.update_operand()
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("+", "-"):
            self.i += 1
            right = self.update_operand()
            for side in (left, right):
                self.check_const_type(tok.text, side, ("N",))
            return Operand("function", arithmetic(left.fn, right.fn, tok.text == "-"))
        return left
