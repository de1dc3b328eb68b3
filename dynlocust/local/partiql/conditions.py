"""The grammar of PartiQL's paths, conditions, operands and literal values."""

from __future__ import annotations

from typing import Any

from dynlocust.local import errors
from dynlocust.local.attrvalues import NESTING_MESSAGE, check_value
from dynlocust.local.limits import MAX_NESTING_LEVELS
from dynlocust.local.partiql.ast import AV, Const, Name, Node, Path
from dynlocust.local.partiql.lexer import Lexer, convertible, malformed
from dynlocust.local.partiql.messages import (
    DOT_COMPONENT,
    EMPTY_BAG,
    NEEDS_PATH,
    OPERAND_COUNT,
    UNRECOGNIZED_FUNCTION,
    UNSUPPORTED_TYPE,
)

_PREDICATES = {
    "begins_with": 2,
    "contains": 2,
    "attribute_type": 2,
    "missing": 1,
    "attribute_exists": 1,
    "attribute_not_exists": 1,
}
# IS [NOT] <type>: PartiQL's type names and the attribute type each tests (MISSING and NULL are their own tests)
IS_TYPES = {
    "BOOL": "BOOL",
    "BOOLEAN": "BOOL",
    "STRING": "S",
    "NUMBER": "N",
    "BINARY": "B",
    "BLOB": "B",
    "LIST": "L",
    "MAP": "M",
    "STRUCT": "M",
    "TUPLE": "M",
}
_FUNCTIONS = ("size", "list_append", "if_not_exists")
_SET_FUNCTIONS = ("set_add", "set_delete")  # only as the value a SET assigns: elsewhere no function is so named
_PATH_FUNCTIONS = ("attribute_exists", "attribute_not_exists")  # their operand must be a path
# Words PartiQL's parser refuses after a path's '.': `m.inner` pinned against the service by a public conformance
# suite (eu-west-2, 2026). Only that one: other keywords are common attribute names (`m.value`, `m.end`), and a
# statement the service accepts must not be refused on a guess
_RESERVED = frozenset(("inner",))


class ConditionParser(Lexer):
    """Paths, conditions, operands and values: what a WHERE clause, a SET and an item literal are made of."""

    def path(self) -> Path:
        kind, text = self.next()
        if kind not in ("id", "qid"):
            raise malformed("Unexpected term" if kind == "eof" else f"expected an attribute name, found {text!r}")
        path: Path = [text]
        while True:
            if self.text.startswith(".", self.pos) and self.peek() == ("op", "."):
                self.next()
                kind, text = self.next()
                if kind == "id" and text.lower() in _RESERVED:
                    raise malformed(DOT_COMPONENT)
                if kind not in ("id", "qid"):
                    raise malformed(f"expected an attribute name after '.', found {text!r}")
                path.append(text)
            elif self.peek() == ("op", "["):
                self.next()
                kind, text = self.next()
                if kind == "num" and text.isdigit():
                    path.append(int(text))
                elif kind == "str":
                    path.append(text)
                else:
                    raise malformed("expected a list index or a quoted key in [...]")
                self.expect("]")
            else:
                return path

    def condition(self) -> Any:
        terms = [self._and()]
        while self.accept("OR"):
            terms.append(self._and())
        return terms[0] if len(terms) == 1 else Node("OR", terms)

    def _and(self) -> Any:
        terms = [self._not()]
        while self.accept("AND"):
            terms.append(self._not())
        return terms[0] if len(terms) == 1 else Node("AND", terms)

    def _not(self) -> Any:
        nots = 0
        while self.accept("NOT"):  # a loop, not recursion: thousands of NOTs must cost no stack
            self.nest()
            nots += 1
        x = self._predicate()
        for _ in range(nots):
            x = Node("NOT", [x])
        self.depth -= nots
        return x

    def _predicate(self) -> Any:
        if self.accept("("):
            self.nest()
            inner = self.condition()
            self.expect(")")
            self.depth -= 1
            return inner
        kind, text = self.peek()
        if kind == "id" and text.lower() in _PREDICATES:
            save = self.pos
            self.next()
            if self.accept("("):
                name = text.lower()
                args, _ = self._arguments()
                if len(args) != _PREDICATES[name]:
                    raise errors.validation(OPERAND_COUNT.format(name=name, count=len(args)))
                if name in _PATH_FUNCTIONS and not isinstance(args[0], Name):
                    raise errors.validation(NEEDS_PATH.format(name=name))
                return self._compared_to_truth(Node(name, args))
            self.pos = save
        left = self.operand()
        if self.at("=", "<>", "!=", "<", "<=", ">", ">="):
            op = self.next()[1]
            return Node("<>" if op == "!=" else op, [left, self.operand()])
        if self.accept("BETWEEN"):
            lo = self.operand()
            self.expect("AND")
            return Node("BETWEEN", [left, lo, self.operand()])
        if self.accept("IN"):
            close = "]" if self.accept("[") else ")"
            if close == ")":
                self.expect("(")
            options = [self.operand()]
            while self.accept(","):
                options.append(self.operand())
            self.expect(close)
            return Node("IN", [left, *options])
        if self.accept("IS"):
            negated = self.accept("NOT")
            kind, text = self.next()
            what = text.upper()
            if what not in ("MISSING", "NULL") and what not in IS_TYPES:
                raise malformed("expected MISSING, NULL or a type name after IS")
            return Node("IS", [left], ("NOT " if negated else "") + what)
        found = self.peek()[1] or "end of statement"
        raise malformed(f"expected a comparison, found {found!r}")

    def _compared_to_truth(self, test: Node) -> Node:
        """A predicate compared with a boolean literal, `attribute_exists(a) = true` (the service accepts it, issue
        45): the predicate itself, or its negation."""
        save = self.pos
        if self.at("=", "<>", "!="):
            equal = self.next()[1] == "="
            if self.at("TRUE", "FALSE"):
                truth = self.next()[1].upper() == "TRUE"
                return test if truth == equal else Node("NOT", [test])
        self.pos = save
        return test

    def operand(self) -> Any:
        left = self._operand()
        while self.at("+", "-"):
            op = self.next()[1]
            left = Node(op, [left, self._operand()])
        return left

    def _arguments(self) -> tuple[list[Any], list[str]]:
        """A function's arguments after its '(' through its ')', and the position of each one's first token; none
        is allowed, for the count to be told."""
        args: list[Any] = []
        spans: list[str] = []
        self.nest()
        if not self.accept(")"):
            while True:
                spans.append(self.next_at())
                args.append(self.operand())
                if not self.accept(","):
                    break
            self.expect(")")
        self.depth -= 1
        return args, spans

    def _operand(self) -> Any:
        kind, text = self.peek()
        if kind == "id":
            save = self.pos
            at = self.next_at()
            self.next()
            if self.accept("("):
                name = text.lower()
                if name not in _FUNCTIONS and not (self.assigning and name in _SET_FUNCTIONS):
                    raise errors.validation(UNRECOGNIZED_FUNCTION.format(name=name) + at)
                args, spans = self._arguments()
                return Node(name, args, at=[at, *spans])
            self.pos = save
        if kind == "id" and text.upper() == "MISSING":
            raise errors.validation("MISSING must be compared using IS operator")
        if kind in ("id", "qid") and text.upper() not in ("TRUE", "FALSE", "NULL", "MISSING"):
            return Name(self.path())
        return Const(self.value())

    def value(self, key: str | None = "root", level: int = 1) -> AV:
        """A literal value; `key` names where it sits in the service's words: `root` is an attribute's value, None
        an INSERT's item (whose attributes' values are each `root`). `level` is its nesting level (an attribute's
        value is 1, the item 0): past the service's 32 the literal is refused as PutItem refuses such an item,
        before the parser recurses into it."""
        if level > MAX_NESTING_LEVELS:
            raise errors.validation(NESTING_MESSAGE)
        if self.peek()[0] == "id":
            at = self.next_at()
            kind, text = self.next()
            if self.peek() == ("op", "("):
                raise errors.validation(UNSUPPORTED_TYPE.format(what=text.lower(), key=key or "root") + at)
        else:
            kind, text = self.next()
        if kind == "str":
            return {"S": text}
        if kind == "num":
            if not convertible(text):
                raise malformed("")
            return _checked({"N": text})
        if kind == "op" and text == "-":
            kind, text = self.next()
            if kind != "num":
                raise malformed("expected a number after '-'")
            if not convertible(text):
                raise malformed("")
            return _checked({"N": "-" + text})
        if kind == "op" and text == "?":
            self.used += 1
            if self.used > len(self.params):
                return {"NULL": True}  # counted; the mismatch is answered once the whole statement is read
            param = self.params[self.used - 1]
            if "N" in param and not convertible(param["N"]):
                raise errors.validation(f"The parameter cannot be converted to a numeric value: {param['N']}")
            return param
        if kind == "id":
            word = text.upper()
            if word in ("TRUE", "FALSE"):
                return {"BOOL": word == "TRUE"}
            if word == "NULL":
                return {"NULL": True}
        if kind == "op" and text == "{":
            out: AV = {}
            if not self.accept("}"):
                while True:
                    k_kind, name = self.next()
                    if k_kind not in ("str", "qid", "id"):
                        raise malformed("expected a quoted attribute name in {...}")
                    self.expect(":")
                    out[name] = self.value("root" if key is None else f"{key}.{name}", level + 1)
                    if not self.accept(","):
                        break
                self.expect("}")
            return {"M": out}
        if kind == "op" and text == "[":
            items = []
            if not self.accept("]"):
                items.append(self.value(f"{key or 'root'}[0]", level + 1))
                while self.accept(","):
                    items.append(self.value(f"{key or 'root'}[{len(items)}]", level + 1))
                self.expect("]")
            return {"L": items}
        if kind == "op" and text == "<<":
            if self.accept(">>"):
                raise errors.validation(EMPTY_BAG)
            members = [self.value()]
            while self.accept(","):
                members.append(self.value())
            self.expect(">>")
            kinds = {next(iter(m)) for m in members}
            if len(kinds) != 1 or not kinds <= {"S", "N"}:
                raise errors.validation(
                    "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags"
                )
            (k,) = kinds
            return _checked({k + "S": [m[k] for m in members]})
        raise malformed("Unexpected term" if kind == "eof" else f"expected a value, found {text!r}")


def _checked(av: AV) -> AV:
    """A literal number or bag, checked as an attribute value of the API is: 38 significant digits, the magnitude
    range, no duplicate members (1 and 1.0 are one number); numbers come back normalised (`1e3` -> `1000`)."""
    check_value(av)
    return av
