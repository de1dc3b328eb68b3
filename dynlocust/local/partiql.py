"""PartiQL for the local endpoint: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.

Why a translation and not an evaluator: DynamoDB runs a PartiQL statement as the data-plane operation it
stands for (a SELECT with equality on the partition key is a Query, with IN one Query per value, any other
SELECT a Scan; INSERT a PutItem that refuses an existing key, UPDATE an UpdateItem on an existing item, DELETE a
DeleteItem; a batch or transaction the same per statement), so it reads, charges capacity and throttles
exactly as those do. Each statement is parsed here into an operation request with expression placeholders and
run through the Backend's own handlers: one code path for validation, capacity, throttling and
ConsumedCapacity. The parser is a small recursive descent over the subset DynamoDB
documents (ql-reference.*): paths, literals, `?` parameters, comparisons, BETWEEN, IN, IS [NOT] MISSING/NULL,
begins_with/contains/attribute_type/size, SET/REMOVE with list_append/set_add/set_delete, RETURNING.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from dynlocust.local import batches, errors, expressions, items, reads
from dynlocust.local.errors import ServiceError
from dynlocust.local.params import return_consumed
from dynlocust.local.state import Ctx, State

STATEMENT_MAX = 8192  # "Length Constraints: Minimum length of 1. Maximum length of 8192." (API_ExecuteStatement)
BATCH_MAX = 25  # "a batch of up to 25 statements" (API_BatchExecuteStatement)
TRANSACTION_MAX = 100  # TransactStatements "Array Members: Minimum number of 1 item. Maximum number of 100 items."

THROTTLE_CODES = frozenset(("ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"))
# The service's wording: DynamoDB's PartiQL validation messages (as DynamoDB Local ships them), the refusal of
# multi-attribute GSI keys as pinned against the service, and moto's aws_verified tests.
DUPLICATE = "Duplicate primary key exists in table"
KEY_EQUALITY = "Where clause does not contain a mandatory equality on all key attributes"
PARAMS_MISMATCH = "Number of parameters in request and statement don't match."
BATCH_SELECT_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
NO_INDEX = "The table does not have the specified index"
ON_INDEX = "This operation is not supported on an index"
STAR_AND_OTHERS = "Other attributes should not be present in the projection when '*' is used."
EXISTS_OUTSIDE = "EXISTS can only be used in ExecuteTransaction write requests."
ITEM_SYNTAX = (
    "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement."
)
MULTI_ATTRIBUTE_KEYS = (
    "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."
)
TABLE_NAME = "Table name should be within the length [3, 255] and only contain 'a-z', 'A-Z', '0-9', '-', '_', '.'."
CONSISTENT_GSI = "Strongly consistent read is not supported on Global Secondary Indexes"
TX_INDEX_READ = "Reads on indices are not supported within transactions."
TX_INDEX_CHECK = "Operations on indices are not supported in transactions"
TX_EXISTS_KEY = "EXISTS() must contain a single item read with additional condition"
ORDER_BY_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
ORDER_BY_HASH = "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
TX_SELECT_KEY = "Select statements within ExecuteTransaction must specify the primary key in the where clause."
_DECOMPOSED = "_decomposed"  # not a request parameter: how _select_request hands over an IN on the partition key
MALFORMED = "Statement wasn't well formed, can't be processed: "  # the detail after it is dynlocust's
# the documentation states these rules without the service's wording; the sentences are dynlocust's
MIXED_BATCH = "A batch must consist of either read statements or write statements"
MIXED_TRANSACTION = "A transaction must consist of either read statements or write statements"

Path = list[str | int]
AV = dict[str, Any]


# ---------------------------------------------------------------------------------------------- syntax tree
@dataclass
class Name:
    """A document path: attribute names and list indexes."""

    path: Path


@dataclass
class Const:
    av: AV


@dataclass
class Node:
    """An operator or function: op is a comparison, AND, OR, NOT, BETWEEN, IN, IS, a function name, + or -."""

    op: str
    args: list[Any]
    flag: str = ""  # IS: MISSING | NULL | NOT MISSING | NOT NULL


@dataclass
class Statement:
    kind: str  # SELECT | INSERT | UPDATE | DELETE | EXISTS
    table: str
    index: str | None = None
    projection: list[Path] | None = None  # None = *
    where: Any = None
    item: AV | None = None
    sets: list[tuple[Path, Any]] = field(default_factory=list)
    removes: list[Path] = field(default_factory=list)
    returning: str | None = None
    order_by: Path | None = None
    descending: bool = False


# ---------------------------------------------------------------------------------------------- parser
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_TABLE = re.compile(r"[A-Za-z0-9_\-]+")
_TABLE_NAME = re.compile(r"[A-Za-z0-9_.\-]{3,255}")
# two-character operators first, so that "<=" is not read as "<"
_OPS = ("<<", ">>", "<=", ">=", "<>", "!=", *"=<>()[]{},.:?*+-;")
_RETURNING = {
    "ALL OLD": "ALL_OLD",
    "MODIFIED OLD": "UPDATED_OLD",
    "ALL NEW": "ALL_NEW",
    "MODIFIED NEW": "UPDATED_NEW",
}
_PREDICATES = {"begins_with": 2, "contains": 2, "attribute_type": 2, "exists": 1, "missing": 1}
_FUNCTIONS = ("size", "list_append", "set_add", "set_delete", "if_not_exists")


def _convertible(number: str) -> bool:
    """Whether the service's number conversion accepts the text: its exponent must fit 32 bits (pinned against
    the service: 1e99999999999 is refused as a literal and as a parameter before any range check)."""
    _, e, exponent = number.lower().partition("e")
    try:
        return not e or abs(int(exponent)) < 2**31
    except ValueError:
        return False


def _malformed(detail: str) -> ServiceError:
    return errors.validation(MALFORMED + detail)


class _Parser:
    """Tokens are read on demand so that a table name (which may hold '-') is read with its own rule."""

    def __init__(self, text: str, params: list[AV]) -> None:
        self.text = text
        self.pos = 0
        self.params = params
        self.used = 0

    # -- lexing
    def _skip(self) -> None:
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
        raise _malformed(f"unexpected character '{c}'")

    def _quoted(self, quote: str) -> str:
        t = self.text
        i = self.pos + 1
        out = []
        while True:
            j = t.find(quote, i)
            if j < 0:
                raise _malformed("unterminated quoted text")
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
            raise _malformed(f"expected {word!r}, found {found}")

    # -- statements
    def statement(self) -> Statement:
        kind, text = self.peek()
        word = text.upper() if kind == "id" else ""
        if word == "SELECT":
            st = self.select()
        elif word == "INSERT":
            st = self.insert()
        elif word == "UPDATE":
            st = self.update()
        elif word == "DELETE":
            st = self.delete()
        elif word == "EXISTS":
            self.next()
            self.expect("(")
            st = self.select()
            st.kind = "EXISTS"
            self.expect(")")
        else:
            raise _malformed("expected SELECT, INSERT, UPDATE, DELETE or EXISTS")
        self.accept(";")
        if self.peek()[0] != "eof":
            raise _malformed("Unexpected token after expression")
        if self.used != len(self.params):
            raise errors.validation(PARAMS_MISMATCH)
        return st

    def table(self) -> tuple[str, str | None]:
        """`name`, `"name"`, `name.index`, `"name"."index"`: a table name may hold '-' (and '.' when quoted)."""
        self._skip()
        names = []
        for _ in range(2):
            if self.text.startswith('"', self.pos):
                names.append(self._quoted('"'))
            else:
                m = _TABLE.match(self.text, self.pos)
                if not m:
                    raise _malformed("expected a table name")
                names.append(m.group())
                self.pos = m.end()
            if not self.text.startswith(".", self.pos):
                break
            self.pos += 1
        return names[0], (names[1] if len(names) > 1 else None)

    def select(self) -> Statement:
        self.expect("SELECT")
        paths: list[Path] = []
        star = False
        while True:
            if self.accept("*"):
                star = True
            else:
                paths.append(self.path())
            if not self.accept(","):
                break
        if star and paths:
            raise errors.validation(STAR_AND_OTHERS)
        self.expect("FROM")
        table, index = self.table()
        st = Statement("SELECT", table, index, None if star else paths)
        if self.accept("WHERE"):
            st.where = self.condition()
        if self.accept("ORDER"):
            self.expect("BY")
            st.order_by = self.path()
            if self.accept("DESC"):
                st.descending = True
            else:
                self.accept("ASC")
        return st

    def insert(self) -> Statement:
        self.expect("INSERT")
        self.expect("INTO")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        self.expect("VALUE")
        if self.peek() != ("op", "{") and self.peek() != ("op", "?"):
            raise errors.validation(ITEM_SYNTAX)
        item = self.value()
        if "M" not in item:
            raise errors.validation(ITEM_SYNTAX)
        if self.at("RETURNING"):
            raise errors.validation("RETURNING is not supported in INSERT")
        return Statement("INSERT", table, item=item["M"])

    def update(self) -> Statement:
        self.expect("UPDATE")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        st = Statement("UPDATE", table)
        while True:
            if self.accept("SET"):
                while True:
                    path = self.path()
                    self.expect("=")
                    st.sets.append((path, self.operand()))
                    if not self.accept(","):
                        break
            elif self.accept("REMOVE"):
                st.removes.append(self.path())
                while self.accept(","):
                    st.removes.append(self.path())
            else:
                break
        if not st.sets and not st.removes:
            raise _malformed("expected SET or REMOVE")
        self.expect("WHERE")
        st.where = self.condition()
        st.returning = self.returning()
        return st

    def delete(self) -> Statement:
        self.expect("DELETE")
        self.expect("FROM")
        table, index = self.table()
        if index is not None:
            raise errors.validation(ON_INDEX)
        st = Statement("DELETE", table)
        self.expect("WHERE")
        st.where = self.condition()
        st.returning = self.returning()
        if st.returning not in (None, "ALL_OLD"):
            said = next(k for k, v in _RETURNING.items() if v == st.returning)
            raise errors.validation(
                f"Invalid returning clause: RETURNING {said} *. "
                "Only RETURNING ALL OLD * is allowed in DELETE statements."
            )
        return st

    def returning(self) -> str | None:
        if not self.accept("RETURNING"):
            return None
        words = []
        for _ in range(2):
            words.append(self.next()[1].upper())
        rv = _RETURNING.get(" ".join(words))
        if rv is None:
            raise _malformed("Unexpected term")
        if not self.accept("*"):
            raise errors.validation("Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause")
        return rv

    # -- expressions
    def path(self) -> Path:
        kind, text = self.next()
        if kind not in ("id", "qid"):
            raise _malformed("Unexpected term" if kind == "eof" else f"expected an attribute name, found {text!r}")
        path: Path = [text]
        while True:
            if self.text.startswith(".", self.pos) and self.peek() == ("op", "."):
                self.next()
                kind, text = self.next()
                if kind not in ("id", "qid"):
                    raise _malformed(f"expected an attribute name after '.', found {text!r}")
                path.append(text)
            elif self.peek() == ("op", "["):
                self.next()
                kind, text = self.next()
                if kind == "num" and text.isdigit():
                    path.append(int(text))
                elif kind == "str":
                    path.append(text)
                else:
                    raise _malformed("expected a list index or a quoted key in [...]")
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
        if self.accept("NOT"):
            return Node("NOT", [self._not()])
        return self._predicate()

    def _predicate(self) -> Any:
        if self.accept("("):
            inner = self.condition()
            self.expect(")")
            return inner
        kind, text = self.peek()
        if kind == "id" and text.lower() in _PREDICATES:
            save = self.pos
            self.next()
            if self.accept("("):
                name = text.lower()
                args = [self.operand()]
                while self.accept(","):
                    args.append(self.operand())
                self.expect(")")
                if len(args) != _PREDICATES[name]:
                    raise errors.validation(f"Incorrect number of arguments for function {name}")
                return Node(name, args)
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
            if what not in ("MISSING", "NULL"):
                raise _malformed("expected MISSING or NULL after IS")
            return Node("IS", [left], ("NOT " if negated else "") + what)
        found = self.peek()[1] or "end of statement"
        raise _malformed(f"expected a comparison, found {found!r}")

    def operand(self) -> Any:
        left = self._operand()
        while self.at("+", "-"):
            op = self.next()[1]
            left = Node(op, [left, self._operand()])
        return left

    def _operand(self) -> Any:
        kind, text = self.peek()
        if kind == "id":
            save = self.pos
            self.next()
            if self.accept("("):
                if text.lower() not in _FUNCTIONS:
                    raise errors.validation(f"Unrecognized function: {text}")
                args = [self.operand()]
                while self.accept(","):
                    args.append(self.operand())
                self.expect(")")
                return Node(text.lower(), args)
            self.pos = save
        if kind == "id" and text.upper() == "MISSING":
            raise errors.validation("MISSING must be compared using IS operator")
        if kind in ("id", "qid") and text.upper() not in ("TRUE", "FALSE", "NULL", "MISSING"):
            return Name(self.path())
        return Const(self.value())

    def value(self) -> AV:
        kind, text = self.next()
        if kind == "str":
            return {"S": text}
        if kind == "num":
            if not _convertible(text):
                raise _malformed("")
            return {"N": text}
        if kind == "op" and text == "-":
            kind, text = self.next()
            if kind != "num":
                raise _malformed("expected a number after '-'")
            if not _convertible(text):
                raise _malformed("")
            return {"N": "-" + text}
        if kind == "op" and text == "?":
            self.used += 1
            if self.used > len(self.params):
                return {"NULL": True}  # counted; the mismatch is answered once the whole statement is read
            param = self.params[self.used - 1]
            if "N" in param and not _convertible(param["N"]):
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
                    k_kind, key = self.next()
                    if k_kind not in ("str", "qid", "id"):
                        raise _malformed("expected a quoted attribute name in {...}")
                    self.expect(":")
                    out[key] = self.value()
                    if not self.accept(","):
                        break
                self.expect("}")
            return {"M": out}
        if kind == "op" and text == "[":
            items = []
            if not self.accept("]"):
                items.append(self.value())
                while self.accept(","):
                    items.append(self.value())
                self.expect("]")
            return {"L": items}
        if kind == "op" and text == "<<":
            if self.accept(">>"):
                raise errors.validation("Empty bags are not supported")
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
            return {k + "S": [m[k] for m in members]}
        raise _malformed("Unexpected term" if kind == "eof" else f"expected a value, found {text!r}")


def parse(text: str, params: list[AV] | None = None) -> Statement:
    """A parsed statement with its parameters bound; ValidationException in the service's words otherwise."""
    return _Parser(text, list(params or ())).statement()


# ---------------------------------------------------------------------------------------------- translation
class _Emit:
    """Writes DynamoDB expression text with #n/:v placeholders for every name and value."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AV] = {}
        self._by_name: dict[str, str] = {}

    def name(self, n: str) -> str:
        ph = self._by_name.get(n)
        if ph is None:
            ph = self._by_name[n] = f"#n{len(self._by_name)}"
            self.names[ph] = n
        return ph

    def value(self, av: AV) -> str:
        ph = f":v{len(self.values)}"
        self.values[ph] = av
        return ph

    def path(self, path: Path) -> str:
        out = self.name(str(path[0]))
        for seg in path[1:]:
            out += f"[{seg}]" if isinstance(seg, int) else "." + self.name(seg)
        return out

    def operand(self, x: Any) -> str:
        if isinstance(x, Name):
            return self.path(x.path)
        if isinstance(x, Const):
            return self.value(x.av)
        if x.op in ("+", "-"):
            return f"{self.operand(x.args[0])} {x.op} {self.operand(x.args[1])}"
        if x.op in ("size", "list_append", "if_not_exists"):
            return f"{x.op}({', '.join(self.operand(a) for a in x.args)})"
        raise errors.validation(f"Unsupported function in this position: {x.op}")

    def condition(self, x: Any) -> str:
        if not isinstance(x, Node):
            raise _malformed("expected a condition")
        op, a = x.op, x.args
        if op in ("AND", "OR"):
            return f" {op} ".join(f"({self.condition(t)})" for t in a)
        if op == "NOT":
            return f"NOT ({self.condition(a[0])})"
        if op in ("=", "<>", "<", "<=", ">", ">="):
            return f"{self.operand(a[0])} {op} {self.operand(a[1])}"
        if op == "BETWEEN":
            return f"{self.operand(a[0])} BETWEEN {self.operand(a[1])} AND {self.operand(a[2])}"
        if op == "IN":
            return f"{self.operand(a[0])} IN ({', '.join(self.operand(o) for o in a[1:])})"
        if op in ("begins_with", "contains", "attribute_type"):
            return f"{op}({self.operand(a[0])}, {self.operand(a[1])})"
        if op in ("exists", "missing") or op == "IS":
            p = self.operand(a[0])
            flag = {"exists": "NOT MISSING", "missing": "MISSING"}.get(op, x.flag)
            if flag == "MISSING":
                return f"attribute_not_exists({p})"
            if flag == "NOT MISSING":
                return f"attribute_exists({p})"
            null = self.value({"S": "NULL"})
            if flag == "NULL":  # MISSING IS NULL holds in PartiQL
                return f"(attribute_not_exists({p}) OR attribute_type({p}, {null}))"
            return f"(attribute_exists({p}) AND NOT attribute_type({p}, {null}))"
        raise _malformed(f"{op} is not a condition")


def _conjuncts(where: Any) -> list[Any]:
    if where is None:
        return []
    if isinstance(where, Node) and where.op == "AND":
        return [t for a in where.args for t in _conjuncts(a)]
    return [where]


def _key_equalities(conjuncts: list[Any], attrs: list[str]) -> tuple[dict[str, AV], list[Any]]:
    """The `attr = value` conjuncts on the given top-level attributes, and the others."""
    key: dict[str, AV] = {}
    rest = []
    for c in conjuncts:
        if isinstance(c, Node) and c.op == "=":
            left, right = c.args
            if isinstance(right, Name) and isinstance(left, Const):
                left, right = right, left
            if (
                isinstance(left, Name)
                and isinstance(right, Const)
                and len(left.path) == 1
                and left.path[0] in attrs
                and left.path[0] not in key
            ):
                key[str(left.path[0])] = right.av
                continue
        rest.append(c)
    return key, rest


def _key_in(conjuncts: list[Any], attr: str, typ: str) -> tuple[list[AV] | None, list[Any]]:
    """The distinct values of an `attr IN [...]` conjunct whose values all have the key's type, and the others."""
    for i, c in enumerate(conjuncts):
        if not (isinstance(c, Node) and c.op == "IN" and isinstance(c.args[0], Name) and c.args[0].path == [attr]):
            continue
        options = c.args[1:]
        if all(isinstance(o, Const) and typ in o.av for o in options):
            distinct = {orjson.dumps(o.av, option=orjson.OPT_SORT_KEYS): o.av for o in options}
            return list(distinct.values()), conjuncts[:i] + conjuncts[i + 1 :]
    return None, conjuncts


def _residual(emit: _Emit, rest: list[Any], *extra: str) -> str | None:
    parts = [*extra, *(f"({emit.condition(c)})" for c in rest)]
    return " AND ".join(parts) if parts else None


def _expression_params(emit: _Emit, req: dict[str, Any]) -> dict[str, Any]:
    if emit.names:
        req["ExpressionAttributeNames"] = emit.names
    if emit.values:
        req["ExpressionAttributeValues"] = emit.values
    return req


def _request_hash(req: dict[str, Any]) -> str:
    """What a NextToken is bound to: the statement and its parameters (the service refuses it elsewhere)."""
    basis = orjson.dumps([req.get("Statement"), req.get("Parameters")], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(basis).hexdigest()[:16]


def _encode_token(last_key: AV | None, req: dict[str, Any], part: int = 0) -> str:
    """Where the next page starts: the last key read (if any) in the `part`-th query of a decomposed SELECT."""
    return base64.urlsafe_b64encode(orjson.dumps({"k": last_key, "i": part, "h": _request_hash(req)})).decode()


def _decode_token(token: str, req: dict[str, Any]) -> tuple[AV | None, int]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        last_key, part, bound = data["k"], int(data["i"]), data["h"]
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise errors.validation("Invalid NextToken") from exc
    if bound != _request_hash(req):
        raise errors.validation("NextToken does not match request")
    return last_key, part


def _batch_code(exc: ServiceError) -> str:
    """BatchStatementError.Code from an exception code (the API's enum drops 'Exception', says 'Error')."""
    code = exc.code.removesuffix("Exception")
    return {
        "Validation": "ValidationError",
        "Throttling": "ThrottlingError",
        "InternalServer": "InternalServerError",
    }.get(code, code)


def _merge_consumed(into: dict[str, dict[str, Any]], cc: dict[str, Any] | None) -> None:
    """Adds one statement's ConsumedCapacity into the per-table totals of a batch."""
    if cc:
        _add_units(into.setdefault(cc["TableName"], {}), cc)


def _add_units(into: dict[str, Any], more: dict[str, Any]) -> None:
    for k, v in more.items():
        if isinstance(v, dict):
            _add_units(into.setdefault(k, {}), v)
        else:
            into[k] = v if k == "TableName" else into.get(k, 0.0) + v


# ---------------------------------------------------------------------------------------------- operations
def execute_statement(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).execute_statement(req, ctx)


def batch_execute_statement(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).batch_execute_statement(req, ctx)


def execute_transaction(state: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return PartiQL(state).execute_transaction(req, ctx)


class PartiQL:
    """The three PartiQL operations over one endpoint's state; each statement runs through the endpoint's own
    handlers (items, reads, batches), so checks, capacity and throttling are theirs."""

    _WRITES: ClassVar[dict[str, Callable[[State, dict[str, Any], Ctx], dict[str, Any]]]] = {
        "Put": items.put_item,
        "Update": items.update_item,
        "Delete": items.delete_item,
    }

    def __init__(self, state: State) -> None:
        self.state = state

    # -- helpers
    @staticmethod
    def _statement_text(body: dict[str, Any]) -> str:
        where = "statement"
        text = body.get("Statement")
        if not isinstance(text, str):
            raise errors.detected(f"Value null at '{where}' failed to satisfy constraint: Member must not be null")
        if not 1 <= len(text) <= STATEMENT_MAX:
            raise errors.detected(
                f"Value '{text[:64]}' at '{where}' failed to satisfy constraint: Member must have length "
                + ("greater than or equal to 1" if not text else f"less than or equal to {STATEMENT_MAX}")
            )
        return text

    @staticmethod
    def _params(body: dict[str, Any]) -> list[AV]:
        params = body.get("Parameters")
        if params is None:
            return []
        if not params:
            raise errors.detected(
                "Value '[]' at 'parameters' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        return list(params)

    @staticmethod
    def _statements(req: dict[str, Any], member: str, most: int) -> list[dict[str, Any]]:
        """A batch's or transaction's list of statements, 1 to `most` of them (the shapes were checked before)."""
        statements = req.get(member)
        wire = member[0].lower() + member[1:]
        if not statements:
            raise errors.detected(
                f"Value null at '{wire}' failed to satisfy constraint: Member must not be null"
                if statements is None
                else f"Value '[]' at '{wire}' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        if len(statements) > most:
            raise errors.detected(
                f"Value at '{wire}' failed to satisfy constraint: Member must have length less than or equal to {most}"
            )
        return list(statements)

    def _parse(self, body: dict[str, Any]) -> Statement:
        return parse(self._statement_text(body), self._params(body))

    def _table(self, st: Statement, ctx: Any) -> Any:
        if not _TABLE_NAME.fullmatch(st.table):
            raise errors.validation(TABLE_NAME)
        t = self.state.table({"TableName": st.table}, ctx)
        if st.index is not None:
            idx = t.index(st.index)
            if idx is None:
                raise errors.validation(NO_INDEX)
            if idx.key.multi:
                raise errors.validation(MULTI_ATTRIBUTE_KEYS)
        return t

    def _full_key(self, st: Statement, t: Any, message: str = KEY_EQUALITY) -> tuple[dict[str, AV], list[Any]]:
        key, rest = _key_equalities(_conjuncts(st.where), t.key.names())
        if set(key) != set(t.key.names()):
            raise errors.validation(message)
        self._check_key_types(t, key)
        if st.kind in ("UPDATE", "DELETE"):
            again = next(iter(_key_equalities(rest, t.key.names())[0]), None)
            if again is not None:
                raise errors.validation(
                    f"Multiple conditions on same key {again}. Only single item Update/Insert/Delete are supported"
                )
        return key, rest

    @staticmethod
    def _check_key_types(t: Any, values: dict[str, AV], absent: bool = False) -> None:
        """The key attributes of an INSERT's item or a WHERE: present and of the schema's type."""
        for attr, typ in ((t.key.hash_attr, t.key.hash_type), (t.key.range_attr, t.key.range_type)):
            if attr is None:
                continue
            av = values.get(attr)
            if av is None:
                if absent:
                    raise errors.validation(f"Key attribute should be present in the item: Key {attr}")
                continue
            if typ not in av:
                raise errors.validation(
                    f"Key attribute's data type should match its data type in table's schema: Key {attr}"
                )

    def _write_request(self, st: Statement, t: Any) -> tuple[str, dict[str, Any]]:
        """(kind, request) of INSERT/UPDATE/DELETE as the PutItem/UpdateItem/DeleteItem it stands for."""
        emit = _Emit()
        req: dict[str, Any] = {"TableName": t.name}
        if st.kind == "INSERT":
            assert st.item is not None
            self._check_key_types(t, st.item, absent=True)
            req["Item"] = st.item
            req["ConditionExpression"] = f"attribute_not_exists({emit.name(t.key.hash_attr)})"
            return "Put", _expression_params(emit, req)
        key, rest = self._full_key(st, t)
        req["Key"] = key
        if st.kind == "UPDATE":
            clauses: dict[str, list[str]] = {"SET": [], "REMOVE": [], "ADD": [], "DELETE": []}
            for path, x in st.sets:
                target = emit.path(path)
                if isinstance(x, Node) and x.op in ("set_add", "set_delete"):
                    op = x.op[4:].upper()
                    if len(x.args) != 2:
                        raise errors.validation(f"SET_{op} must have exactly two arguments")
                    if not isinstance(x.args[0], Name) or x.args[0].path != path:
                        raise errors.validation(f"The first argument to SET_{op} must equal the assignment value")
                    if not isinstance(x.args[1], Const) or next(iter(x.args[1].av)) not in ("SS", "NS", "BS"):
                        raise errors.validation(f"The second argument to SET_{op} must be a value with type SET")
                    clauses["ADD" if x.op == "set_add" else "DELETE"].append(f"{target} {emit.operand(x.args[1])}")
                else:
                    clauses["SET"].append(f"{target} = {emit.operand(x)}")
            clauses["REMOVE"] = [emit.path(p) for p in st.removes]
            req["UpdateExpression"] = " ".join(f"{k} {', '.join(v)}" for k, v in clauses.items() if v)
            # UPDATE changes an existing item: one that does not exist fails the statement's condition
            cond = _residual(emit, rest, f"attribute_exists({emit.name(t.key.hash_attr)})")
            kind = "Update"
        else:
            cond = _residual(emit, rest)
            kind = "Delete"
        if cond is not None:
            req["ConditionExpression"] = cond
        if st.returning:
            req["ReturnValues"] = st.returning
        return kind, _expression_params(emit, req)

    def _select_request(self, st: Statement, t: Any, body: dict[str, Any], need_key: str | None) -> dict[str, Any]:
        """A SELECT as a Query (equality on the partition key of the table or index) or a Scan; `need_key`:
        the message when the full primary key must be given (batches and transactions). A partition key given
        by `IN [...]` is one Query per value, as the service decomposes it: the request then carries them
        under _DECOMPOSED (the placeholder of the partition key's value, and the values)."""
        emit = _Emit()
        req: dict[str, Any] = {"TableName": t.name}
        if st.index is not None:
            req["IndexName"] = st.index
        if st.projection is not None:
            req["ProjectionExpression"] = ", ".join(emit.path(p) for p in st.projection)
        conjuncts = _conjuncts(st.where)
        idx = None if st.index is None else t.index(st.index)
        keydef = t.key if idx is None else idx.key
        if idx is not None and idx.kind == "GSI" and body.get("ConsistentRead"):
            raise errors.validation(CONSISTENT_GSI)
        if st.order_by is not None:
            self._check_order_by(st, keydef)
        if need_key is not None:
            self._full_key(st, t, need_key)
        kce = None
        rest = conjuncts
        decomposed: list[AV] | None = None
        if not keydef.multi:
            hkey, rest = _key_equalities(conjuncts, [keydef.hash_attr])
            hav = hkey.get(keydef.hash_attr)
            if hav is None:
                decomposed, rest = _key_in(conjuncts, keydef.hash_attr, keydef.hash_type)
                hav = decomposed[0] if decomposed else None
            if hav is not None and keydef.hash_type in hav:
                placeholder = emit.value(hav)
                if decomposed is not None:
                    req[_DECOMPOSED] = (placeholder, decomposed)
                kce = f"{emit.path([keydef.hash_attr])} = {placeholder}"
                range_cond, rest = self._range_condition(emit, rest, keydef)
                if range_cond:
                    kce += " AND " + range_cond
            else:
                rest = conjuncts
        filt = _residual(emit, rest)
        if kce is not None:
            req["KeyConditionExpression"] = kce
            req["ScanIndexForward"] = not st.descending
        if filt is not None:
            req["FilterExpression"] = filt
        for p in ("ConsistentRead", "Limit", "ReturnConsumedCapacity"):
            if body.get(p) is not None:
                req[p] = body[p]
        return _expression_params(emit, req)

    @staticmethod
    def _check_order_by(st: Statement, keydef: Any) -> None:
        """ORDER BY sorts one partition, as a Query does: it needs the WHERE to name the partition key."""
        if st.where is None:
            raise errors.validation(ORDER_BY_WHERE)
        if not _key_equalities(_conjuncts(st.where), [keydef.hash_attr])[0]:
            raise errors.validation(ORDER_BY_HASH)
        assert st.order_by is not None
        if st.order_by not in ([keydef.hash_attr], [keydef.range_attr]):
            shown = ".".join(str(seg) for seg in st.order_by)
            raise errors.validation(f"Variable reference {shown} in ORDER BY clause must be part of the primary key")

    @staticmethod
    def _range_condition(emit: _Emit, conjuncts: list[Any], keydef: Any) -> tuple[str | None, list[Any]]:
        """The first conjunct usable as the sort key's part of a KeyConditionExpression, and the others."""
        attr, typ = keydef.range_attr, keydef.range_type
        if attr is None:
            return None, conjuncts
        for i, c in enumerate(conjuncts):
            if not isinstance(c, Node) or not c.args or not isinstance(c.args[0], Name) or c.args[0].path != [attr]:
                continue
            consts = c.args[1:]
            if not consts or not all(isinstance(a, Const) and typ in a.av for a in consts):
                continue
            ok = (c.op in ("=", "<", "<=", ">", ">=") and len(consts) == 1) or (c.op == "BETWEEN")
            ok = ok or (c.op == "begins_with" and typ in ("S", "B"))
            if ok:
                return emit.condition(c), conjuncts[:i] + conjuncts[i + 1 :]
        return None, conjuncts

    def _run_write(self, st: Statement, t: Any, ctx: Any, extra: dict[str, Any]) -> Any:
        kind, req = self._write_request(st, t)
        req.update(extra)
        try:
            return self._WRITES[kind](self.state, req, ctx)
        except ServiceError as exc:
            if st.kind == "INSERT" and exc.code == "ConditionalCheckFailedException":
                raise ServiceError("DuplicateItemException", DUPLICATE) from exc
            raise

    # -- ExecuteStatement
    def execute_statement(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        st = self._parse(req)
        if st.kind == "EXISTS":
            raise errors.validation(EXISTS_OUTSIDE)
        t = self._table(st, ctx)
        if st.kind == "SELECT":
            return self._select(st, t, req, ctx)
        extra: dict[str, Any] = {
            p: req[p] for p in ("ReturnConsumedCapacity", "ReturnValuesOnConditionCheckFailure") if p in req
        }
        res = self._run_write(st, t, ctx, extra)
        out = {"Items": [res["Attributes"]] if res.get("Attributes") else []}
        if "ConsumedCapacity" in res:
            out["ConsumedCapacity"] = res["ConsumedCapacity"]
        return out

    def _select(self, st: Statement, t: Any, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """One page of a SELECT: a Scan, a Query, or the Queries of an IN on the partition key one after the
        other, with Limit counting the items read by all of them and NextToken naming where the next page starts."""
        read = self._select_request(st, t, req, None)
        placeholder, values = read.pop(_DECOMPOSED, ("", [{}]))
        last_key, part = (None, 0) if req.get("NextToken") is None else _decode_token(req["NextToken"], req)
        limit = read.get("Limit")
        op = reads.query if "KeyConditionExpression" in read else reads.scan
        out: dict[str, Any] = {"Items": []}
        consumed: dict[str, Any] = {}
        evaluated = 0
        for i in range(part, len(values)):
            one = dict(read)
            if placeholder:
                one["ExpressionAttributeValues"] = {**read["ExpressionAttributeValues"], placeholder: values[i]}
            if last_key is not None:
                one["ExclusiveStartKey"], last_key = last_key, None
            if limit is not None:
                one["Limit"] = limit - evaluated
            res = op(self.state, one, ctx)
            out["Items"] += res.get("Items", [])
            evaluated += res.get("ScannedCount", 0)
            _add_units(consumed, res.get("ConsumedCapacity") or {})
            if "LastEvaluatedKey" in res:
                out["NextToken"] = _encode_token(res["LastEvaluatedKey"], req, i)
                break
            if limit is not None and evaluated >= limit and i + 1 < len(values):
                out["NextToken"] = _encode_token(None, req, i + 1)
                break
        if consumed:
            out["ConsumedCapacity"] = consumed
        return out

    # -- BatchExecuteStatement
    def batch_execute_statement(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        statements = self._statements(req, "Statements", BATCH_MAX)
        rcc = return_consumed(req)
        parsed: list[Statement | ServiceError] = []
        for body in statements:
            try:
                parsed.append(self._parse(body))
            except ServiceError as exc:  # a statement's own error is answered in its response
                parsed.append(exc)
        kinds = {p.kind == "SELECT" for p in parsed if isinstance(p, Statement)}
        if len(kinds) > 1:  # "The entire batch must consist of either read statements or write statements"
            raise errors.validation(MIXED_BATCH)
        consumed: dict[str, dict[str, Any]] = {}
        responses = [self._batch_one(st, body, ctx, rcc, consumed) for st, body in zip(parsed, statements, strict=True)]
        # the endpoint's statistics count a throttled statement as BatchWriteItem counts an unprocessed item
        ctx.unprocessed = sum(1 for r in responses if r.get("Error", {}).get("Code") in THROTTLE_CODES)
        out: dict[str, Any] = {"Responses": responses}
        if rcc:
            out["ConsumedCapacity"] = list(consumed.values())
        return out

    def _batch_one(
        self, st: Statement | ServiceError, body: dict[str, Any], ctx: Any, rcc: str | None, consumed: dict[str, Any]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            if isinstance(st, ServiceError):
                raise st
            if st.kind == "EXISTS":
                raise errors.validation(EXISTS_OUTSIDE)
            t = self._table(st, ctx)
            out["TableName"] = t.name
            extra = {"ReturnConsumedCapacity": rcc} if rcc else {}
            if st.kind == "SELECT":
                read = self._select_request(st, t, body, BATCH_SELECT_KEY)
                read.pop(_DECOMPOSED, None)  # the full key is given: one item at most
                read.update(extra)
                res = reads.query(self.state, read, ctx)
                if res.get("Items"):
                    out["Item"] = res["Items"][0]
            else:
                on_fail = body.get("ReturnValuesOnConditionCheckFailure")
                if on_fail is not None:
                    extra["ReturnValuesOnConditionCheckFailure"] = on_fail
                res = self._run_write(st, t, ctx, extra)
            _merge_consumed(consumed, res.get("ConsumedCapacity"))
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                out.pop("TableName", None)
            error: dict[str, Any] = {"Code": _batch_code(exc), "Message": exc.message}
            if "Item" in exc.extra:
                error["Item"] = exc.extra["Item"]
            out["Error"] = error
        return out

    # -- ExecuteTransaction
    def execute_transaction(self, req: dict[str, Any], ctx: Any) -> dict[str, Any]:
        statements = self._statements(req, "TransactStatements", TRANSACTION_MAX)
        parsed = []
        for body in statements:
            st = self._parse(body)
            parsed.append((st, self._table(st, ctx), body))
        reads = [st.kind == "SELECT" for st, _, _ in parsed]
        if any(reads) and not all(reads):
            raise errors.validation(MIXED_TRANSACTION)
        extra = {p: req[p] for p in ("ReturnConsumedCapacity",) if p in req}
        if all(reads):
            return self._transact_reads(parsed, ctx, extra)
        actions = []
        for st, t, body in parsed:
            if st.kind == "EXISTS":
                if st.index is not None:
                    raise errors.validation(TX_INDEX_CHECK)
                key, rest = self._full_key(st, t, TX_EXISTS_KEY)
                emit = _Emit()
                cond = _residual(emit, rest, f"attribute_exists({emit.name(t.key.hash_attr)})")
                actions.append(
                    {
                        "ConditionCheck": _expression_params(
                            emit, {"TableName": t.name, "Key": key, "ConditionExpression": cond}
                        )
                    }
                )
                continue
            kind, action = self._write_request(st, t)
            action.pop("ReturnValues", None)
            on_fail = body.get("ReturnValuesOnConditionCheckFailure")
            if on_fail is not None:
                action["ReturnValuesOnConditionCheckFailure"] = on_fail
            actions.append({kind: action})
        tx: dict[str, Any] = {"TransactItems": actions, **extra}
        if req.get("ClientRequestToken") is not None:
            tx["ClientRequestToken"] = req["ClientRequestToken"]
        try:
            res = batches.transact_write(self.state, tx, ctx)
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            raise self._duplicates(exc, [st for st, _, _ in parsed]) from exc
        return {k: v for k, v in res.items() if k == "ConsumedCapacity"}

    def _transact_reads(self, parsed: list[Any], ctx: Any, extra: dict[str, Any]) -> dict[str, Any]:
        """SELECTs by primary key as TransactGetItems; other conditions and the projection are applied after the
        read (they may name attributes outside the projection), and parsed before it."""
        gets = []
        shapes = []
        for st, t, _body in parsed:
            if st.index is not None:
                raise errors.validation(TX_INDEX_READ)
            key, rest = self._full_key(st, t, TX_SELECT_KEY)
            gets.append({"Get": {"TableName": t.name, "Key": key}})
            emit = _Emit()
            text = _residual(emit, rest)
            try:
                cond = None if text is None else expressions.parse_condition(text, emit.names, emit.values)
                pe = _Emit()
                paths = None if st.projection is None else ", ".join(pe.path(p) for p in st.projection)
                projection = None if paths is None else expressions.parse_projection(paths, pe.names)
            except expressions.ExpressionError as exc:
                raise errors.validation(exc.message) from exc
            shapes.append((cond, projection))
        res = batches.transact_get(self.state, {"TransactItems": gets, **extra}, ctx)
        responses = []
        for r, (cond, projection) in zip(res["Responses"], shapes, strict=True):
            item = r.get("Item")
            if item is not None and cond is not None and not cond.evaluate(item):
                item = None
            if item is not None and projection is not None:
                item = projection.apply(item)
            responses.append({"Item": item} if item is not None else {})
        out: dict[str, Any] = {"Responses": responses}
        if "ConsumedCapacity" in res:
            out["ConsumedCapacity"] = res["ConsumedCapacity"]
        return out

    @staticmethod
    def _duplicates(exc: ServiceError, statements: list[Statement]) -> ServiceError:
        """An INSERT whose key exists is cancelled as DuplicateItem, not as a failed condition."""
        reasons = [dict(r) for r in exc.extra.get("CancellationReasons", [])]
        for r, st in zip(reasons, statements, strict=False):
            if st.kind == "INSERT" and r.get("Code") == "ConditionalCheckFailed":
                r.clear()
                r.update({"Code": "DuplicateItem", "Message": DUPLICATE})
        codes = ", ".join(r["Code"] for r in reasons)
        return ServiceError(
            "TransactionCanceledException",
            f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
            extra={**exc.extra, "CancellationReasons": reasons},
        )
