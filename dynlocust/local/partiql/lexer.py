"""PartiQL's tokens, read on demand from the statement's text."""

from __future__ import annotations

import re

from dynlocust.local import errors
from dynlocust.local.errors import ServiceError
from dynlocust.local.limits import MAX_EXPRESSION_NESTING
from dynlocust.local.partiql.ast import AV
from dynlocust.local.partiql.messages import AT, MALFORMED, TOO_DEEP

_SPACE = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)+", re.S)
_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
TABLE_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
VALID_TABLE_NAME = re.compile(r"[A-Za-z0-9_.\-]{3,255}")
# two-character operators first, so that "<=" is not read as "<"
_OPS = ("<<", ">>", "<=", ">=", "<>", "!=", *"=<>()[]{},.:?*+-;")


def convertible(number: str) -> bool:
    """Whether the service's number conversion accepts the text: its exponent must fit 32 bits (pinned against
    the service: 1e99999999999 is refused as a literal and as a parameter before any range check)."""
    _, e, exponent = number.lower().partition("e")
    try:
        return not e or abs(int(exponent)) < 2**31
    except ValueError:
        return False


def malformed(detail: str) -> ServiceError:
    return errors.validation(MALFORMED + detail)


class Lexer:
    """Tokens are read on demand so that a table name (which may hold '-') is read with its own rule."""

    def __init__(self, text: str, params: list[AV]) -> None:
        self.text = text
        self.pos = 0
        self.params = params
        self.used = 0
        self.assigning = False  # in the value of an UPDATE's SET, where set_add and set_delete are functions
        self.depth = 0  # parentheses, NOTs and function calls open around the token being read

    def nest(self) -> None:
        """Enter a parenthesis, a NOT or a function call; refuse nesting deep enough to cost the parser its stack
        (and the server its CPU) before recursing into it."""
        self.depth += 1
        if self.depth > MAX_EXPRESSION_NESTING:
            raise malformed(TOO_DEEP.format(limit=MAX_EXPRESSION_NESTING))

    # -- positions
    def span(self) -> tuple[int, int]:
        """(offset, length) of the next token, a quoted one with its quotes."""
        self.peek()
        start = self.pos
        self.next()
        end, self.pos = self.pos, start
        return start, end - start

    def position(self, offset: int, length: int) -> str:
        """The service's suffix for a token: ` at <line>:<column>:<length>`, in characters counted from 1."""
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return AT.format(line=line, column=column, length=length)

    def next_at(self) -> str:
        """The position suffix of the next token."""
        return self.position(*self.span())

    # -- lexing
    def _skip(self) -> None:
        """Past white space and comments: `--` to the end of the line, `/* ... */`."""
        m = _SPACE.match(self.text, self.pos)
        if m:
            self.pos = m.end()

    def peek(self) -> tuple[str, str]:
        """(kind, text) of the next token without consuming it; kinds: eof, str, qid, num, id, op."""
        self._skip()
        t, i = self.text, self.pos
        if i >= len(t):
            return "eof", ""
        c = t[i]
        if c in "'\"":
            return ("str" if c == "'" else "qid"), c
        m = _NUMBER.match(t, i)
        if m:
            return "num", m.group()
        m = _IDENT.match(t, i)
        if m:
            return "id", m.group()
        for op in _OPS:
            if t.startswith(op, i):
                return "op", op
        if c == "#" or t.startswith("/*", i):  # a '#' comment, an unterminated '/*': no detail (issue 45)
            raise malformed("")
        raise malformed(f"unexpected character '{c}'")

    def _quoted(self, quote: str) -> str:
        t = self.text
        i = self.pos + 1
        out = []
        while True:
            j = t.find(quote, i)
            if j < 0:
                raise malformed("unterminated quoted text")
            out.append(t[i:j])
            if t.startswith(quote * 2, j):
                out.append(quote)
                i = j + 2
                continue
            self.pos = j + 1
            return "".join(out)

    def next(self) -> tuple[str, str]:
        kind, text = self.peek()
        if kind in ("str", "qid"):
            return kind, self._quoted(text)
        self.pos += len(text)
        return kind, text

    def at(self, *words: str) -> bool:
        kind, text = self.peek()
        return (kind == "id" and text.upper() in words) or (kind == "op" and text in words)

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.next()
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.accept(word):
            kind, text = self.peek()
            found = "end of statement" if kind == "eof" else repr(text)
            raise malformed(f"expected {word!r}, found {found}")
