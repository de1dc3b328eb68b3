"""The parsing phase's base: a cursor over the tokens, placeholders resolved and recorded, document paths."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dynlocust.local.expressions.errors import ExpressionError
from dynlocust.local.expressions.lexer import RESERVED, Token, tokenize
from dynlocust.local.expressions.paths import AV, Getter, Path, type_of
from dynlocust.local.limits import MAX_EXPRESSION_BYTES, MAX_EXPRESSION_NESTING


class Operand:
    """One side of a comparison: a document path, a constant value, or size(path)."""

    __slots__ = ("const", "fn", "kind", "path")

    def __init__(self, kind: str, fn: Getter, const: AV | None = None, path: Path | None = None) -> None:
        self.kind = kind
        self.fn = fn
        self.const = const
        self.path = path


class Parser:
    """The cursor over one expression's tokens, its names and values, and the checks every grammar shares."""

    def __init__(
        self,
        expr: str,
        names: Mapping[str, str] | None,
        values: Mapping[str, AV] | None,
        label: str,
        sized: bool = True,
    ) -> None:
        """`sized`: whether the service's 4 KB limit applies (not to what the endpoint builds from legacy
        parameters: 200 AttributeUpdates are valid, their expression is longer)."""
        self.expr = expr
        self.label = label
        self.names = names or {}
        self.values = values or {}
        self.used_names: set[str] = set()
        self.heads: set[str] = set()  # the top-level attribute of every document path
        self.used_values: set[str] = set()
        if sized and len(expr) > MAX_EXPRESSION_BYTES // 4:  # only then can its UTF-8 form exceed the limit
            size = len(expr.encode("utf-8", "surrogatepass"))
            if size > MAX_EXPRESSION_BYTES:
                raise self.error(f"Expression size has exceeded the maximum allowed size; expression size: {size}")
        self._last_group: tuple[int, int] | None = None  # token span of the last parenthesized condition
        if not expr or not expr.strip():
            raise self.error("The expression can not be empty;", detected=label == "UpdateExpression")
        self.toks = tokenize(expr, self.error)
        self.i = 0
        self.depth = 0

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

    def peek(self) -> Token:
        return self.toks[self.i]

    def advance(self) -> Token:
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
            if tok.text.upper() in RESERVED:
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
                self.heads.add(str(segs[0]))
                return tuple(segs)

    def function_args(self, parse_arg: Callable[[], Operand]) -> list[Operand]:
        self.open_paren()
        args = [parse_arg()]
        while self.at_op(","):
            self.i += 1
            args.append(parse_arg())
        self.close_paren()
        return args

    def check_arity(self, fname: str, args: list[Operand], n: int) -> None:
        if len(args) != n:
            raise self.error(
                f"Incorrect number of operands for operator or function; operator or function: {fname}, "
                f"number of operands: {len(args)}"
            )

    def require_path(self, fname: str, arg: Operand) -> Path:
        if arg.kind != "path" or arg.path is None:
            raise self.error(f"Operator or function requires a document path; operator or function: {fname}")
        return arg.path

    def check_const_type(self, fname: str, arg: Operand, allowed: tuple[str, ...]) -> None:
        if arg.const is not None:
            t = type_of(arg.const)
            if t not in allowed:
                raise self.error(
                    f"Incorrect operand type for operator or function; operator or function: {fname}, operand type: {t}"
                )
