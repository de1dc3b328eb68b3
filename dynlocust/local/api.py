"""The operations of the local endpoint: control plane and data plane over the in-memory store.

Each handler takes the decoded JSON request and returns the JSON response dict, or raises ServiceError with
the service's code and wording. The expression language is delegated to `dynlocust.local.expressions` and
throttling to an optional capacity model (anything with `charge(table, index, kind, units, partition)`).
"""

from __future__ import annotations

import datetime
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from dynlocust.errors import ConfigurationError
from dynlocust.local import errors
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError
from dynlocust.local.limits import (
    BATCH_GET_MAX,
    BATCH_WRITE_MAX,
    DEFAULT_WARM,
    GSI_HASH_ATTRS_MAX,
    GSI_RANGE_ATTRS_MAX,
    HASH_KEY_MAX_BYTES,
    RANGE_KEY_MAX_BYTES,
    TRANSACT_ITEMS_MAX,
)
from dynlocust.local.partiql import PartiQL
from dynlocust.local.store import Collection, Index, Item, KeyDef, Table, check_key_sizes, comparable
from dynlocust.local.units import (
    ITEM_LIMIT,
    PAGE_LIMIT,
    Consumed,
    item_size,
    read_units,
    write_units,
)
from dynlocust.local.validation import check_create_table, check_param_types, serialization_error

_TABLE_NAME = re.compile(r"^[a-zA-Z0-9_.-]{3,255}$")
_AV_KINDS = frozenset(("S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"))
_KEY_TYPES = frozenset(("S", "N", "B"))
GSI_THROTTLE_TX = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. "
    "DynamoDB is automatically scaling your index so please try again shortly."
)
TABLE_THROTTLE_TX = (
    "Throughput exceeds the current capacity of your table or index. "
    "DynamoDB is automatically scaling your table or index so please try again shortly."
)
PTEE_TX = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
TRANSACTION_LIMIT = 4 * 1024 * 1024
TOKEN_TTL = 600.0


def _expressions() -> Any:
    # imported on first use: the module is written alongside this one and must not be needed at import time
    from dynlocust.local import expressions

    return expressions


@dataclass
class Ctx:
    """What one request touched, for the server's statistics."""

    tables: list[str] = field(default_factory=list)
    unprocessed: int = 0
    region: str = ""  # from the request's credential scope; "" = the endpoint's --region


def request_region(headers: dict[str, str]) -> str:
    """The region of a SigV4 request's credential scope (Credential=KEY/DATE/REGION/dynamodb/...), or ""."""
    auth = headers.get("authorization")
    if not auth:
        return ""
    start = auth.find("Credential=")
    if start < 0:
        return ""
    parts = auth[start + 11 : start + 200].split("/", 3)
    return parts[2] if len(parts) > 3 else ""


def throttle_error(th: Any) -> ServiceError:
    key = "throttlingReasons" if th.code == "ThrottlingException" else "ThrottlingReasons"
    return ServiceError(th.code, th.message, extra={key: [{"reason": th.reason, "resource": th.resource}]})


def _tx_reason(th: Any) -> dict[str, str]:
    if th.code == "ProvisionedThroughputExceededException":
        return {"Code": "ProvisionedThroughputExceeded", "Message": PTEE_TX}
    return {"Code": "ThrottlingError", "Message": GSI_THROTTLE_TX if "/index/" in th.resource else TABLE_THROTTLE_TX}


def _cancelled(reasons: list[dict[str, Any]]) -> ServiceError:
    codes = ", ".join(r["Code"] for r in reasons)
    return ServiceError(
        "TransactionCanceledException",
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
        extra={"CancellationReasons": reasons},
    )


TAGS_PAGE = 10  # ListTagsOfResource page size, as moto's test_list_table_tags_paginated records it
_EXPRESSION_PARAMS = (
    "ProjectionExpression",
    "FilterExpression",
    "KeyConditionExpression",
    "ConditionExpression",
    "UpdateExpression",
)


_EXPRESSION_SET = frozenset(_EXPRESSION_PARAMS)


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
        self.any = False
        texts = [v for p, v in req.items() if p in _EXPRESSION_SET and type(v) is str] if len(req) > 2 else []
        if texts and not all(t.strip() for t in texts):
            for p in _EXPRESSION_PARAMS:  # every expression's emptiness is checked before any is parsed
                v = req.get(p)
                if type(v) is str and not v.strip():
                    message = f"Invalid {p}: The expression can not be empty;"
                    raise (self._fail if p == "UpdateExpression" else errors.validation)(message)
        if self.names or self.values:
            self._precheck(texts)

    def _precheck(self, texts: list[str]) -> None:
        """What the service checks before parsing: key syntax, the values, names and values unused in the text."""
        for label, given, sigil in (("Names", self.names, "#"), ("Values", self.values, ":")):
            for k in given or ():
                if not k.startswith(sigil):
                    raise errors.validation(
                        f'ExpressionAttribute{label} contains invalid key: Syntax error; key: "{k}"'
                    )
        for k, av in (self.values or {}).items():
            Backend._check_av(av, k)
        joined = " ".join(texts)
        for label, given in (("Names", self.names), ("Values", self.values)):
            unused = sorted(k for k in given or () if not re.search(re.escape(k) + r"(?![A-Za-z0-9_])", joined))
            if unused and texts:
                raise self._fail(
                    f"Value provided in ExpressionAttribute{label} unused in expressions: keys: {{{', '.join(unused)}}}"
                )

    def _track(self, obj: Any) -> Any:
        self.any = True
        self.used_names |= obj.used_names
        self.used_values |= obj.used_values
        return obj

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        ex = _expressions()
        try:
            return self._track(fn(*args))
        except ex.ExpressionError as exc:
            raise (errors.detected if exc.detected else errors.validation)(str(exc)) from exc

    def condition(self, text: str | None, kind: str = "ConditionExpression") -> Any:
        if text is None:
            return None
        return self._call(_expressions().parse_condition, text, self.names, self.values, kind)

    def update(self, text: str | None) -> Any:
        if text is None:
            return None
        return self._call(_expressions().parse_update, text, self.names, self.values)

    def projection(self, text: str | None) -> Any:
        if text is None:
            return None
        return self._call(_expressions().parse_projection, text, self.names)

    def key_condition(self, text: str, key: KeyDef) -> Any:
        if key.multi:
            return self._call(
                _expressions().parse_multi_key_condition,
                text,
                self.names,
                self.values,
                [a for a, _ in key.hash_parts()],
                [a for a, _ in key.range_parts()],
            )
        return self._call(
            _expressions().parse_key_condition, text, self.names, self.values, key.hash_attr, key.range_attr
        )

    def finish(self) -> None:
        if not self.any:
            if self.names is not None:
                raise errors.validation("ExpressionAttributeNames can only be specified when using expressions")
            if self.values is not None:
                raise errors.validation("ExpressionAttributeValues can only be specified when using expressions")
            return
        if self.names:
            unused = sorted(set(self.names) - self.used_names)
            if unused:
                raise self._fail(
                    "Value provided in ExpressionAttributeNames unused in expressions: keys: {"
                    + ", ".join(unused)
                    + "}"
                )
        if self.values:
            unused = sorted(set(self.values) - self.used_values)
            if unused:
                raise self._fail(
                    "Value provided in ExpressionAttributeValues unused in expressions: keys: {"
                    + ", ".join(unused)
                    + "}"
                )


@dataclass
class WritePlan:
    """One item write, validated and priced, not yet applied."""

    table: Table
    hk: Any
    sk: Any
    partition: str
    old: Item | None
    new: Item | None
    entries: list[tuple[Index, Any, Any, int, int]]  # index, old entry, new entry, old/new projected size
    table_units: float
    gsi_units: dict[str, tuple[float, str]]
    lsi_units: dict[str, float]
    size_old: int
    size_new: int


def _check_number(text: Any) -> None:
    """A number the service would store: parseable, finite, at most 38 significant digits, within range."""
    if not isinstance(text, str):
        raise errors.serialization("NUMBER_VALUE cannot be converted to String")
    d = comparable({"N": text}, "N")
    if d == 0:
        return
    digits = d.as_tuple().digits
    significant = "".join(map(str, digits)).strip("0")
    if len(significant) > 38:
        raise errors.validation("Attempting to store more than 38 significant digits in a Number")
    adjusted = d.adjusted()
    if adjusted > 125:
        raise errors.validation(
            "Number overflow. Attempting to store a number with magnitude larger than supported range"
        )
    if adjusted < -130:
        raise errors.validation(
            "Number underflow. Attempting to store a number with magnitude smaller than supported range"
        )


def _in_range(rows: Iterator[tuple[Any, Item]], kc: Any, range_attr: str | None) -> Iterator[Item]:
    """Items of a partition that satisfy the range condition.

    Every range condition (=, <, <=, >, >=, BETWEEN, begins_with) selects one contiguous run of the sort order,
    so the walk stops at the first miss after a hit instead of reading the rest of the partition.
    """
    if range_attr is None:
        for _, item in rows:
            yield item
        return
    hit = False
    for _, item in rows:
        if kc.matches_range(item.get(range_attr)):
            hit = True
            yield item
        elif hit:
            return


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
_LEGACY_PARAMS = {
    "Expected": "ConditionExpression",
    "KeyConditions": "KeyConditionExpression",
    "QueryFilter": "FilterExpression",
    "ScanFilter": "FilterExpression",
    "AttributeUpdates": "UpdateExpression",
}


class _Legacy:
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
                raise serialization_error(c, "map")
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
                raise serialization_error(u, "map")
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


def _legacy(req: dict[str, Any], *names: str) -> dict[str, Any]:
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
    if expr_params:
        raise errors.validation(
            "Can not use both expression and non-expression parameters in the same request: Non-expression "
            f"parameters: {{{', '.join(present)}}} Expression parameters: {{{', '.join(expr_params)}}}"
        )
    for k in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        if k in req:
            raise errors.validation(f"{k} can only be specified when using expressions")
    out = dict(req)
    lg = _Legacy()
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
        out["ExpressionAttributeNames"] = lg.names
    if lg.values:
        out["ExpressionAttributeValues"] = lg.values
    return out


class Backend:
    """All tables of one endpoint and the operations on them (single-threaded: gevent, no preemption)."""

    def __init__(self, config: LocalConfig, capacity: Any = None, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.capacity = capacity
        self.clock = clock
        self.tables: dict[str, Table] = {}
        self.ops: dict[str, Callable[[dict[str, Any], Ctx], dict[str, Any]]] = {
            "CreateTable": self.create_table,
            "DescribeTable": self.describe_table,
            "UpdateTable": self.update_table,
            "DeleteTable": self.delete_table,
            "ListTables": self.list_tables,
            "TagResource": self.tag_resource,
            "UntagResource": self.untag_resource,
            "ListTagsOfResource": self.list_tags,
            "DescribeEndpoints": self.describe_endpoints,
            "DescribeTimeToLive": self.describe_ttl,
            "DescribeLimits": self.describe_limits,
            "UpdateTimeToLive": self.update_ttl,
            "PutItem": self.put_item,
            "GetItem": self.get_item,
            "DeleteItem": self.delete_item,
            "UpdateItem": self.update_item,
            "Query": self.query,
            "Scan": self.scan,
            "BatchWriteItem": self.batch_write,
            "BatchGetItem": self.batch_get,
            "TransactWriteItems": self.transact_write,
            "TransactGetItems": self.transact_get,
            **PartiQL(self).operations(),
        }
        self.ops = {op: self._dispatch(fn) for op, fn in self.ops.items()}
        self._ttl: dict[str, dict[str, Any]] = {}
        # tables live in a region, as in the service: each request works on its credential scope's region
        self.region = config.region
        self._regions: dict[str, tuple[dict[str, Table], dict[str, dict[str, Any]]]] = {
            config.region: (self.tables, self._ttl)
        }
        self._tokens: dict[str, tuple[bytes, float]] = {}  # ClientRequestToken -> (request, expiry)

    # ------------------------------------------------------------------ helpers
    def _dispatch(
        self, handler: Callable[[dict[str, Any], Ctx], dict[str, Any]]
    ) -> Callable[[dict[str, Any], Ctx], Any]:
        """`handler` behind the check of its parameters' JSON types (the service's first check), working on the
        tables of the request's region."""

        def run(req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
            check_param_types(req)
            region = ctx.region or self.config.region
            if region != self.region:
                self.tables, self._ttl = self._regions.setdefault(region, ({}, {}))
                self.region = region
            return handler(req, ctx)

        return run

    def table_arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{self.config.account_id}:table/{name}"

    def _table(self, req: dict[str, Any], ctx: Ctx, name: str | None = None) -> Table:
        """An ACTIVE table for the data plane; missing or still CREATING -> ResourceNotFoundException."""
        name = name if name is not None else req.get("TableName")
        if not isinstance(name, str):
            raise errors.validation(
                "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: "
                "Member must not be null"
            )
        if not ctx.tables:
            ctx.tables.append(name)
        t = self.tables.get(name)
        if t is None and name.startswith("arn:"):
            t = self._named_by_arn(name)
        if t is None or t.active_at > self.clock():
            raise errors.not_found()
        return t

    def _named_by_arn(self, arn: str) -> Table | None:
        """The table a TableName given as the table's ARN names (every operation that takes TableName accepts it)."""
        _, _, name = arn.partition(":table/")
        t = self.tables.get(name)
        return t if t is not None and t.arn == arn else None

    def _any_table(self, name: Any, ctx: Ctx) -> Table:
        if not isinstance(name, str):
            raise errors.validation(
                "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: "
                "Member must not be null"
            )
        if not ctx.tables:
            ctx.tables.append(name)
        t = self.tables.get(name)
        if t is None and name.startswith("arn:"):
            t = self._named_by_arn(name)
        if t is None:
            raise errors.not_found(f"Requested resource not found: Table: {name} not found")
        return t

    @staticmethod
    def _check_item(item: Any) -> None:
        if not isinstance(item, dict):
            raise errors.validation("One or more parameter values were invalid: Item must be a map")
        for name, av in item.items():
            Backend._check_av(av, name)

    @staticmethod
    def _check_av(av: Any, name: str) -> None:
        if not isinstance(av, dict) or len(av) != 1:
            raise errors.validation(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "
                "supported datatypes"
                if isinstance(av, dict) and av
                else "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
            )
        for kind, v in av.items():
            if kind not in _AV_KINDS:
                raise errors.serialization(f"Unexpected field type: {kind}")
            if kind in ("SS", "NS", "BS"):
                if not v:
                    label = {"SS": "string", "NS": "number", "BS": "binary"}[kind]
                    raise errors.detected(
                        f"One or more parameter values were invalid: An {label} set  may not be empty"
                    )
                if len(set(v)) != len(v):
                    raise errors.validation(
                        f"One or more parameter values were invalid: Input collection {v} contains duplicates."
                    )
                if kind == "NS":
                    for n in v:
                        _check_number(n)
            elif kind == "N":
                _check_number(v)
            elif kind == "M":
                for k, e in v.items():
                    Backend._check_av(e, k)
            elif kind == "L":
                for e in v:
                    Backend._check_av(e, name)

    @staticmethod
    def _item_key(t: Table, item: Item) -> tuple[Any, Any, str]:
        """(hk, sk, partition string) of a full item; errors worded as for PutItem."""
        k = t.key
        out = []
        for attr, typ in ((k.hash_attr, k.hash_type), (k.range_attr, k.range_type)):
            if attr is None or typ is None:
                out.append(0)
                continue
            av = item.get(attr)
            if av is None:
                raise errors.validation(
                    f"One or more parameter values were invalid: Missing the key {attr} in the item"
                )
            if typ not in av:
                actual = next(iter(av), "?")
                raise errors.validation(
                    "One or more parameter values were invalid: Type mismatch for key "
                    f"{attr} expected: {typ} actual: {actual}"
                )
            if av[typ] == "":
                raise errors.validation(
                    "One or more parameter values are not valid. The AttributeValue for a key attribute "
                    f"cannot contain an empty {'string' if typ == 'S' else 'binary'} value. Key: {attr}"
                )
            out.append(comparable(av, typ))
        hk, sk = out
        if (type(hk) is bytes and len(hk) > HASH_KEY_MAX_BYTES) or (
            type(sk) is bytes and len(sk) > RANGE_KEY_MAX_BYTES
        ):
            check_key_sizes(hk, sk)  # inline test first: this runs on every write
        return out[0], out[1], str(item[k.hash_attr][k.hash_type])

    @staticmethod
    def _key(t: Table, key: Any, what: str = "") -> tuple[Any, Any, str]:
        """(hk, sk, partition) of a Key parameter; anything but exactly the key -> the service's error."""
        k = t.key
        bad = errors.validation(what + "The provided key element does not match the schema")
        if not isinstance(key, dict) or len(key) != (1 if k.range_attr is None else 2):
            raise bad
        hav = key.get(k.hash_attr)
        if not isinstance(hav, dict) or k.hash_type not in hav:
            raise bad
        sk: Any = 0
        if k.range_attr is not None:
            rav = key.get(k.range_attr)
            if not isinstance(rav, dict) or str(k.range_type) not in rav:
                raise bad
            if rav[str(k.range_type)] == "":
                raise errors.validation(
                    "One or more parameter values are not valid. The AttributeValue for a key attribute "
                    f"cannot contain an empty string value. Key: {k.range_attr}"
                )
            sk = comparable(rav, str(k.range_type))
        if hav[k.hash_type] == "":
            raise errors.validation(
                "One or more parameter values are not valid. The AttributeValue for a key attribute "
                f"cannot contain an empty string value. Key: {k.hash_attr}"
            )
        hk = comparable(hav, k.hash_type)
        if (type(hk) is bytes and len(hk) > HASH_KEY_MAX_BYTES) or (
            type(sk) is bytes and len(sk) > RANGE_KEY_MAX_BYTES
        ):
            check_key_sizes(hk, sk)
        return hk, sk, str(hav[k.hash_type])

    def _plan(
        self, t: Table, hk: Any, sk: Any, partition: str, old: Item | None, new: Item | None, update: bool = False
    ) -> WritePlan:
        size_old = item_size(old)
        size_new = item_size(new)
        if size_new > ITEM_LIMIT:
            raise errors.validation(f"Item size {'to update ' if update else ''}has exceeded the maximum allowed size")
        entries: list[tuple[Index, Any, Any, int, int]] = []
        gsi_units: dict[str, tuple[float, str]] = {}
        lsi_units: dict[str, float] = {}
        for group in (t.gsis, t.lsis):
            for idx in group.values():
                oe = idx.entry(old, t.key) if old else None
                ne = idx.entry(new, t.key, update) if new else None
                if oe is None and ne is None:
                    continue
                po = idx.project(old, t.key) if oe is not None and old is not None else None
                pn = idx.project(new, t.key) if ne is not None and new is not None else None
                so = (size_old if po is old else item_size(po)) if po is not None else 0
                sn = (size_new if pn is new else item_size(pn)) if pn is not None else 0
                entries.append((idx, oe, ne, so, sn))
                units = 0.0
                if po is None:
                    units = write_units(sn)
                elif pn is None:
                    units = write_units(so)
                elif oe != ne:
                    units = write_units(so) + write_units(sn)
                elif po != pn:
                    units = write_units(max(so, sn))
                if units:
                    if idx.kind == "GSI":
                        src = new if ne is not None else old
                        assert src is not None
                        hav = src[idx.key.hash_attr]
                        gsi_units[idx.name] = (units, str(hav[idx.key.hash_type]))
                    else:
                        lsi_units[idx.name] = units
        table_units = write_units(max(size_old, size_new))
        return WritePlan(t, hk, sk, partition, old, new, entries, table_units, gsi_units, lsi_units, size_old, size_new)

    def _charge_write(self, plan: WritePlan, factor: float = 1.0) -> Any:
        cap = self.capacity
        if cap is None:
            return None
        name = plan.table.name
        for index, (units, part) in plan.gsi_units.items():
            th = cap.charge(name, index, "write", units * factor, part)
            if th is not None:
                return th
        units = plan.table_units + sum(plan.lsi_units.values())
        return cap.charge(name, None, "write", units * factor, plan.partition)

    def _condition_failed(self, t: Table, old: Item | None, partition: str, on_fail: bool) -> ServiceError:
        """The error for a failed condition; the service still charges the write units of the item read."""
        if self.capacity is not None:
            th = self.capacity.charge(t.name, None, "write", write_units(item_size(old)), partition)
            if th is not None:
                return throttle_error(th)
        return errors.conditional_failed(old if on_fail else None)

    def _charge_read(self, t: Table, index: str | None, units: float, partition: str) -> Any:
        if self.capacity is None:
            return None
        return self.capacity.charge(t.name, index, "read", units, partition)

    @staticmethod
    def _account(plan: WritePlan, consumed: Consumed, factor: float = 1.0) -> None:
        consumed.add_table(plan.table_units * factor)
        for name, (units, _) in plan.gsi_units.items():
            consumed.add_gsi(name, units * factor)
        for name, units in plan.lsi_units.items():
            consumed.add_lsi(name, units * factor)

    @staticmethod
    def _apply(plan: WritePlan) -> None:
        t = plan.table
        old, new = plan.old, plan.new
        if old is not None:
            t.size_bytes -= plan.size_old
            t.item_count -= 1
        if new is None:
            t.base.remove(plan.hk, plan.sk)
        else:
            t.base.put(plan.hk, plan.sk, new)
            t.size_bytes += plan.size_new
            t.item_count += 1
        for idx, oe, ne, so, sn in plan.entries:
            if oe is not None:
                idx.coll.remove(oe[0], oe[1])
                idx.count -= 1
                idx.size -= so
            if ne is not None and new is not None:
                idx.coll.put(ne[0], ne[1], new)
                idx.count += 1
                idx.size += sn

    @staticmethod
    def _return_values(req: dict[str, Any], allowed: tuple[str, ...]) -> str:
        rv = req.get("ReturnValues", "NONE")
        if rv not in allowed:
            raise errors.validation("Return values set to invalid value")
        return rv

    @staticmethod
    def _on_fail(req: dict[str, Any]) -> bool:
        v = req.get("ReturnValuesOnConditionCheckFailure", "NONE")
        if v not in ("NONE", "ALL_OLD"):
            raise errors.validation(
                "1 validation error detected: Value '"
                + str(v)
                + "' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: "
                "Member must satisfy enum value set: [ALL_OLD, NONE]"
            )
        return v == "ALL_OLD"

    @staticmethod
    def _rcc(req: dict[str, Any]) -> str | None:
        mode = req.get("ReturnConsumedCapacity", "NONE")
        if mode not in ("NONE", "TOTAL", "INDEXES"):
            raise errors.validation(
                "1 validation error detected: Value '"
                + str(mode)
                + "' at 'returnConsumedCapacity' failed to satisfy constraint: "
                "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"
            )
        return None if mode == "NONE" else mode

    # ------------------------------------------------------------------ control plane
    def _key_schema(self, schema: Any, defs: dict[str, str], where: str, multi: bool = False) -> KeyDef:
        """A KeyDef from a KeySchema; a GSI (`multi`) may name up to 4 HASH then up to 4 RANGE attributes."""
        most = 2 * GSI_HASH_ATTRS_MAX if multi else 2
        if not isinstance(schema, list) or not 1 <= len(schema) <= most:
            raise errors.validation(f"1 validation error detected: Value at '{where}' failed to satisfy constraint")
        hashes: list[str] = []
        ranges: list[str] = []
        for el in schema:
            kind, name = el.get("KeyType"), el.get("AttributeName")
            if kind == "HASH" and not ranges and len(hashes) < (GSI_HASH_ATTRS_MAX if multi else 1):
                hashes.append(name)
            elif kind == "RANGE" and hashes and len(ranges) < (GSI_RANGE_ATTRS_MAX if multi else 1):
                ranges.append(name)
            elif not hashes:
                raise errors.validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
            else:
                raise errors.validation("Invalid KeySchema: Some index key attribute have no definition")
        if len(set(hashes + ranges)) != len(hashes) + len(ranges):
            raise errors.validation("Invalid KeySchema: Some index key attribute have no definition")
        missing = [a for a in hashes + ranges if a not in defs]
        if missing:
            raise errors.validation(
                "One or more parameter values were invalid: Some index key attributes are not defined in "
                f"AttributeDefinitions. Keys: [{', '.join(missing)}], AttributeDefinitions: [{', '.join(defs)}]"
            )
        range_attr = ranges[0] if ranges else None
        return KeyDef(
            hashes[0],
            defs[hashes[0]],
            range_attr,
            defs[range_attr] if range_attr else None,
            more_hash=tuple((a, defs[a]) for a in hashes[1:]),
            more_range=tuple((a, defs[a]) for a in ranges[1:]),
        )

    @staticmethod
    def _projection(p: Any) -> tuple[str, list[str]]:
        p = p or {}
        ptype = p.get("ProjectionType", "ALL")
        if ptype not in ("ALL", "KEYS_ONLY", "INCLUDE"):
            raise errors.validation(f"Unknown ProjectionType: {ptype}")
        non_key = list(p.get("NonKeyAttributes") or [])
        if ptype != "INCLUDE" and non_key:
            raise errors.validation(
                "One or more parameter values were invalid: ProjectionType is "
                f"{ptype}, but NonKeyAttributes is specified"
            )
        return ptype, non_key

    @staticmethod
    def _throughput(pt: Any, billing: str, what: str) -> dict[str, Any] | None:
        if billing == "PAY_PER_REQUEST":
            if pt:
                raise errors.validation(
                    "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits "
                    "can be specified when BillingMode is PAY_PER_REQUEST"
                )
            return None
        if not pt or "ReadCapacityUnits" not in pt or "WriteCapacityUnits" not in pt:
            raise errors.validation(
                "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both "
                f"be specified when BillingMode is PROVISIONED{what}"
            )
        for k in ("ReadCapacityUnits", "WriteCapacityUnits"):
            if not isinstance(pt[k], int) or pt[k] < 1:
                raise errors.validation(
                    "One or more parameter values were invalid: Provisioned throughput for "
                    f"{k.replace('CapacityUnits', '')} capacity units must be at least 1"
                )
        return {"ReadCapacityUnits": pt["ReadCapacityUnits"], "WriteCapacityUnits": pt["WriteCapacityUnits"]}

    def _make_gsi(self, t: Table, g: dict[str, Any], defs: dict[str, str], billing: str) -> Index:
        name = g.get("IndexName")
        if not isinstance(name, str) or not _TABLE_NAME.match(name):
            raise errors.validation(f"Invalid index name: {name}")
        key = self._key_schema(g.get("KeySchema"), defs, "globalSecondaryIndexes.member.keySchema", multi=True)
        ptype, non_key = self._projection(g.get("Projection"))
        prov = self._throughput(g.get("ProvisionedThroughput"), billing, f" for index {name}")
        return Index(
            name=name,
            kind="GSI",
            key=key,
            projection_type=ptype,
            non_key=non_key,
            arn=f"{t.arn}/index/{name}",
            provisioned=prov,
            on_demand=g.get("OnDemandThroughput"),
            warm=g.get("WarmThroughput"),
        )

    def _spec(self, t: Table, idx: Index | None) -> Any:
        from dynlocust.local.capacity import ResourceSpec

        src_prov = idx.provisioned if idx is not None else t.provisioned
        od = (idx.on_demand if idx is not None else t.on_demand) or {}
        warm = (idx.warm if idx is not None else t.warm) or {}

        def num(d: dict[str, Any], k: str) -> float | None:
            v = d.get(k)
            return None if v is None or v == -1 else float(v)

        return ResourceSpec(
            table=t.name,
            index=idx.name if idx is not None else None,
            arn=idx.arn if idx is not None else t.arn,
            billing_mode=t.billing_mode,
            read_capacity=num(src_prov or {}, "ReadCapacityUnits"),
            write_capacity=num(src_prov or {}, "WriteCapacityUnits"),
            warm_read=num(warm, "ReadUnitsPerSecond"),
            warm_write=num(warm, "WriteUnitsPerSecond"),
            max_read=num(od, "MaxReadRequestUnits"),
            max_write=num(od, "MaxWriteRequestUnits"),
        )

    def create_table(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        name = req.get("TableName")
        if not isinstance(name, str) or not _TABLE_NAME.match(name):
            rule = (
                "Member must have length greater than or equal to 3"
                if isinstance(name, str) and len(name) < 3
                else "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
            )
            raise errors.validation(
                f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: {rule}"
            )
        ctx.tables.append(name)
        check_create_table(req)
        defs_list = req.get("AttributeDefinitions") or []
        defs: dict[str, str] = {}
        for d in defs_list:
            if d.get("AttributeType") not in _KEY_TYPES:
                raise errors.validation(
                    f"1 validation error detected: Value '{d.get('AttributeType')}' at "
                    "'attributeDefinitions.member.attributeType' failed to satisfy constraint: "
                    "Member must satisfy enum value set: [B, N, S]"
                )
            defs[d["AttributeName"]] = d["AttributeType"]
        key = self._key_schema(req.get("KeySchema"), defs, "keySchema")
        billing = req.get("BillingMode", "PROVISIONED")
        if billing not in ("PROVISIONED", "PAY_PER_REQUEST"):
            raise errors.validation(f"Unknown BillingMode: {billing}")
        prov = self._throughput(req.get("ProvisionedThroughput"), billing, "")
        if name in self.tables:
            raise errors.in_use(f"Table already exists: {name}")
        now = self.clock()
        t = Table(
            name=name,
            arn=self.table_arn(name),
            table_id=str(uuid.uuid4()),
            key=key,
            attribute_definitions=[dict(d) for d in defs_list],
            billing_mode=billing,
            provisioned=prov,
            created=time.time(),
            active_at=now + self.config.create_delay,
            tags={tg["Key"]: tg["Value"] for tg in req.get("Tags") or []},
            on_demand=req.get("OnDemandThroughput"),
            warm=req.get("WarmThroughput"),
            deletion_protection=bool(req.get("DeletionProtectionEnabled", False)),
            table_class=req.get("TableClass"),
            stream_spec=req.get("StreamSpecification"),
            sse=self._sse(req.get("SSESpecification")),
        )
        self._set_stream(t, req.get("StreamSpecification"))
        if billing == "PAY_PER_REQUEST":
            t.pay_per_request_since = t.created
        used = set(key.names())
        for g in req.get("GlobalSecondaryIndexes") or []:
            idx = self._make_gsi(t, g, defs, billing)
            if idx.name in t.gsis:
                raise errors.validation(f"One or more parameter values were invalid: Duplicate index name: {idx.name}")
            t.gsis[idx.name] = idx
            used |= set(idx.key.names())
        for li in req.get("LocalSecondaryIndexes") or []:
            lname = li.get("IndexName")
            lkey = self._key_schema(li.get("KeySchema"), defs, "localSecondaryIndexes.member.keySchema")
            if key.range_attr is None:
                raise errors.validation(
                    "One or more parameter values were invalid: Table KeySchema does not have a range key, "
                    "which is required when specifying a LocalSecondaryIndex"
                )
            if lkey.hash_attr != key.hash_attr or lkey.range_attr is None:
                raise errors.validation(
                    "One or more parameter values were invalid: Index KeySchema does not have the same leading "
                    "hash key as table KeySchema for index: "
                    + str(lname)
                    + ". index hash key: "
                    + lkey.hash_attr
                    + ", table hash key: "
                    + key.hash_attr
                )
            ptype, non_key = self._projection(li.get("Projection"))
            t.lsis[lname] = Index(lname, "LSI", lkey, ptype, non_key, f"{t.arn}/index/{lname}")
            used |= set(lkey.names())
        if set(defs) - used:
            raise errors.validation(
                "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly "
                "match number of attributes defined in AttributeDefinitions"
            )
        if self.capacity is not None:
            try:
                self.capacity.add_resource(self._spec(t, None))
                for idx in t.gsis.values():
                    self.capacity.add_resource(self._spec(t, idx))
            except ConfigurationError as exc:
                self.capacity.remove_table(t.name)
                raise errors.validation(f"One or more parameter values were invalid: {exc}") from exc
        self.tables[name] = t
        return {"TableDescription": self.describe(t)}

    def _sse(self, spec: Any) -> dict[str, Any] | None:
        """SSEDescription for an SSESpecification asking for KMS encryption (the default, owned key needs none)."""
        if not isinstance(spec, dict) or not spec.get("Enabled"):
            return None
        default = f"arn:aws:kms:{self.region}:{self.config.account_id}:key/{uuid.uuid4()}"
        key = spec.get("KMSMasterKeyId") or default
        return {"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key}

    @staticmethod
    def _set_stream(t: Table, spec: Any) -> None:
        """A stream enabled now gets a new label (the service labels a stream with its creation time)."""
        if isinstance(spec, dict) and spec.get("StreamEnabled"):
            t.stream_label = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]

    def describe(self, t: Table, status: str | None = None) -> dict[str, Any]:
        st = status or t.status(self.clock())

        def pt(p: dict[str, Any] | None) -> dict[str, Any]:
            out = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
            if p:
                out.update(p)
            return out

        d: dict[str, Any] = {
            "AttributeDefinitions": t.attribute_definitions,
            "TableName": t.name,
            "KeySchema": self._schema(t.key),
            "TableStatus": st,
            "CreationDateTime": t.created,
            "ProvisionedThroughput": pt(t.provisioned),
            "TableSizeBytes": t.size_bytes,
            "ItemCount": t.item_count,
            "TableArn": t.arn,
            "TableId": t.table_id,
            "DeletionProtectionEnabled": t.deletion_protection,
        }
        d["BillingModeSummary"] = {"BillingMode": t.billing_mode}
        if t.pay_per_request_since is not None:
            d["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] = t.pay_per_request_since
        if t.sse:
            d["SSEDescription"] = t.sse
        if t.on_demand:
            d["OnDemandThroughput"] = t.on_demand
        warm = t.warm or (DEFAULT_WARM if t.billing_mode == "PAY_PER_REQUEST" else None)
        if warm:
            d["WarmThroughput"] = {**warm, "Status": "ACTIVE" if st == "ACTIVE" else "UPDATING"}
        if t.table_class:
            d["TableClassSummary"] = {"TableClass": t.table_class}
        if t.stream_spec and t.stream_spec.get("StreamEnabled"):
            d["StreamSpecification"] = t.stream_spec
        if t.stream_label:
            d["LatestStreamLabel"] = t.stream_label
            d["LatestStreamArn"] = f"{t.arn}/stream/{t.stream_label}"
        if t.gsis:
            gl = []
            for idx in t.gsis.values():
                g = self._index_desc(t, idx)
                g["IndexStatus"] = "ACTIVE" if st == "ACTIVE" else "CREATING"
                g["ProvisionedThroughput"] = pt(idx.provisioned)
                if idx.on_demand:
                    g["OnDemandThroughput"] = idx.on_demand
                gw = idx.warm or (DEFAULT_WARM if t.billing_mode == "PAY_PER_REQUEST" else None)
                if gw:
                    g["WarmThroughput"] = {**gw, "Status": "ACTIVE"}
                gl.append(g)
            d["GlobalSecondaryIndexes"] = gl
        if t.lsis:
            d["LocalSecondaryIndexes"] = [self._index_desc(t, idx) for idx in t.lsis.values()]
        return d

    @staticmethod
    def _schema(k: KeyDef) -> list[dict[str, str]]:
        out = [{"AttributeName": a, "KeyType": "HASH"} for a, _ in k.hash_parts()]
        out += [{"AttributeName": a, "KeyType": "RANGE"} for a, _ in k.range_parts()]
        return out

    def _index_desc(self, t: Table, idx: Index) -> dict[str, Any]:
        proj: dict[str, Any] = {"ProjectionType": idx.projection_type}
        if idx.projection_type == "INCLUDE":
            proj["NonKeyAttributes"] = idx.non_key
        count, size = idx.count, idx.size
        return {
            "IndexName": idx.name,
            "KeySchema": self._schema(idx.key),
            "Projection": proj,
            "IndexSizeBytes": size,
            "ItemCount": count,
            "IndexArn": idx.arn,
        }

    def describe_table(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._any_table(req.get("TableName"), ctx)
        return {"Table": self.describe(t)}

    def delete_table(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._any_table(req.get("TableName"), ctx)
        if t.status(self.clock()) != "ACTIVE":
            raise errors.in_use(f"Attempt to change a resource which is still in use: Table is being created: {t.name}")
        if t.deletion_protection:
            raise errors.detected(f"Table '{t.name}' can't be deleted while DeletionProtectionEnabled is set to True")
        del self.tables[t.name]
        self._ttl.pop(t.name, None)
        if self.capacity is not None:
            self.capacity.remove_table(t.name)
        return {"TableDescription": self.describe(t, "DELETING")}

    def update_table(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._any_table(req.get("TableName"), ctx)
        if t.status(self.clock()) != "ACTIVE":
            raise errors.in_use(f"Attempt to change a resource which is still in use: Table is being created: {t.name}")
        defs = {d["AttributeName"]: d["AttributeType"] for d in t.attribute_definitions}
        for d in req.get("AttributeDefinitions") or []:
            if d["AttributeName"] not in defs:
                t.attribute_definitions.append(dict(d))
            defs[d["AttributeName"]] = d["AttributeType"]
        billing = req.get("BillingMode", t.billing_mode)
        changed: set[str | None] = set()
        if billing != t.billing_mode or "ProvisionedThroughput" in req:
            t.provisioned = self._throughput(req.get("ProvisionedThroughput"), billing, "")
            if billing != t.billing_mode:
                t.billing_mode = billing
                if billing == "PAY_PER_REQUEST":
                    t.pay_per_request_since = time.time()
                changed |= {None, *t.gsis}
            changed.add(None)
        if "OnDemandThroughput" in req:
            t.on_demand = {**(t.on_demand or {}), **req["OnDemandThroughput"]}
            changed.add(None)
        if "WarmThroughput" in req:
            t.warm = {**(t.warm or {}), **req["WarmThroughput"]}
            changed.add(None)
        if "DeletionProtectionEnabled" in req:
            t.deletion_protection = bool(req["DeletionProtectionEnabled"])
        if "StreamSpecification" in req:
            t.stream_spec = req["StreamSpecification"]
            self._set_stream(t, t.stream_spec)
        if "TableClass" in req:
            t.table_class = req["TableClass"]
        created: list[Index] = []
        for upd in req.get("GlobalSecondaryIndexUpdates") or []:
            if "Create" in upd:
                idx = self._make_gsi(t, upd["Create"], defs, t.billing_mode)
                if idx.name in t.gsis:
                    raise errors.validation(
                        f"One or more parameter values were invalid: Index already exists: {idx.name}"
                    )
                for hk, p in t.base.parts.items():
                    del hk
                    for it in p.items.values():
                        try:
                            e = idx.entry(it, t.key)
                        except ServiceError:  # the backfill leaves out items whose keys the index refuses
                            continue
                        if e is not None:
                            idx.coll.put(e[0], e[1], it)
                            idx.count += 1
                            idx.size += item_size(idx.project(it, t.key))
                t.gsis[idx.name] = idx
                created.append(idx)
            elif "Update" in upd:
                u = upd["Update"]
                idx2 = t.gsis.get(u.get("IndexName"))
                if idx2 is None:
                    raise errors.not_found(f"Requested resource not found: Index: {u.get('IndexName')} not found")
                if "ProvisionedThroughput" in u:
                    idx2.provisioned = self._throughput(u["ProvisionedThroughput"], t.billing_mode, "")
                if "OnDemandThroughput" in u:
                    idx2.on_demand = {**(idx2.on_demand or {}), **u["OnDemandThroughput"]}
                if "WarmThroughput" in u:
                    idx2.warm = {**(idx2.warm or {}), **u["WarmThroughput"]}
                changed.add(idx2.name)
            elif "Delete" in upd:
                iname = upd["Delete"].get("IndexName")
                if iname not in t.gsis:
                    raise errors.not_found(f"Requested resource not found: Index: {iname} not found")
                del t.gsis[iname]
        if self.capacity is not None:
            try:
                for idx in created:
                    self.capacity.add_resource(self._spec(t, idx))
                for c in changed:
                    if c is None:
                        self.capacity.update_resource(self._spec(t, None))
                    elif c in t.gsis:
                        self.capacity.update_resource(self._spec(t, t.gsis[c]))
            except ConfigurationError as exc:
                raise errors.validation(f"One or more parameter values were invalid: {exc}") from exc
        return {"TableDescription": self.describe(t)}

    def list_tables(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        limit = req.get("Limit", 100)
        if not isinstance(limit, int) or not 1 <= limit <= 100:
            raise errors.validation(
                f"1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: "
                "Member must have value less than or equal to 100"
            )
        names = sorted(self.tables)
        start = req.get("ExclusiveStartTableName")
        if start is not None:
            names = [n for n in names if n > start]
        out: dict[str, Any] = {"TableNames": names[:limit]}
        if len(names) > limit:
            out["LastEvaluatedTableName"] = names[limit - 1]
        return out

    def _by_arn(self, arn: Any, ctx: Ctx) -> Table:
        for t in self.tables.values():
            if t.arn == arn:
                if not ctx.tables:
                    ctx.tables.append(t.name)
                return t
        raise errors.not_found(f"Requested resource not found: ResourcArn: {arn} not found")

    def tag_resource(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._by_arn(req.get("ResourceArn"), ctx)
        for tg in req.get("Tags") or []:
            t.tags[tg["Key"]] = tg["Value"]
        return {}

    def untag_resource(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._by_arn(req.get("ResourceArn"), ctx)
        for k in req.get("TagKeys") or []:
            t.tags.pop(k, None)
        return {}

    def list_tags(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        """Tags in pages of TAGS_PAGE; NextToken is the position of the next page (opaque to clients)."""
        t = self._by_arn(req.get("ResourceArn"), ctx)
        token = req.get("NextToken")
        start = int(token) if isinstance(token, str) and token.isdigit() else 0
        tags = list(t.tags.items())
        out: dict[str, Any] = {"Tags": [{"Key": k, "Value": v} for k, v in tags[start : start + TAGS_PAGE]]}
        if start + TAGS_PAGE < len(tags):
            out["NextToken"] = str(start + TAGS_PAGE)
        return out

    def describe_endpoints(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        return {"Endpoints": [{"Address": f"{self.config.host}:{self.config.port}", "CachePeriodInMinutes": 1440}]}

    def describe_limits(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        """The default account and table quotas (40,000 read and write units per table)."""
        return {
            "AccountMaxReadCapacityUnits": 80000,
            "AccountMaxWriteCapacityUnits": 80000,
            "TableMaxReadCapacityUnits": 40000,
            "TableMaxWriteCapacityUnits": 40000,
        }

    def describe_ttl(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._any_table(req.get("TableName"), ctx)
        return {"TimeToLiveDescription": self._ttl.get(t.name, {"TimeToLiveStatus": "DISABLED"})}

    def update_ttl(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._any_table(req.get("TableName"), ctx)
        spec = req.get("TimeToLiveSpecification") or {}
        enabled = bool(spec.get("Enabled"))
        self._ttl[t.name] = (
            {"TimeToLiveStatus": "ENABLED", "AttributeName": spec.get("AttributeName")}
            if enabled
            else {"TimeToLiveStatus": "DISABLED"}
        )
        return {"TimeToLiveSpecification": spec}

    # ------------------------------------------------------------------ single-item data plane
    def put_item(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        req = _legacy(req, "Expected", "ConditionalOperator")
        t = self._table(req, ctx)
        item: Item = req.get("Item")  # type: ignore[assignment]  # checked on the next line
        self._check_item(item)
        rv = self._return_values(req, ("NONE", "ALL_OLD"))
        rcc = self._rcc(req)
        on_fail = self._on_fail(req)
        ex = Exprs(req, single_write=True)
        cond = ex.condition(req.get("ConditionExpression"))
        ex.finish()
        hk, sk, part = self._item_key(t, item)
        old = t.base.get(hk, sk)
        if cond is not None and not cond.evaluate(old):
            raise self._condition_failed(t, old, part, on_fail)
        plan = self._plan(t, hk, sk, part, old, item)
        th = self._charge_write(plan)
        if th is not None:
            raise throttle_error(th)
        self._apply(plan)
        return self._write_answer(t, plan, old, rv, rcc)

    def delete_item(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        req = _legacy(req, "Expected", "ConditionalOperator")
        t = self._table(req, ctx)
        rv = self._return_values(req, ("NONE", "ALL_OLD"))
        rcc = self._rcc(req)
        on_fail = self._on_fail(req)
        ex = Exprs(req, single_write=True)
        cond = ex.condition(req.get("ConditionExpression"))
        ex.finish()
        hk, sk, part = self._key(t, req.get("Key"))
        old = t.base.get(hk, sk)
        if cond is not None and not cond.evaluate(old):
            raise self._condition_failed(t, old, part, on_fail)
        plan = self._plan(t, hk, sk, part, old, None)
        th = self._charge_write(plan)
        if th is not None:
            raise throttle_error(th)
        if old is not None:
            self._apply(plan)
        return self._write_answer(t, plan, old, rv, rcc)

    def _write_answer(self, t: Table, plan: WritePlan, old: Item | None, rv: str, rcc: str | None) -> dict[str, Any]:
        """PutItem's and DeleteItem's response: the old item when asked for, and the consumed capacity."""
        out: dict[str, Any] = {}
        if rv == "ALL_OLD" and old:
            out["Attributes"] = old
        if rcc:
            c = Consumed(t.name, "write")
            self._account(plan, c)
            out["ConsumedCapacity"] = c.render(rcc)
        return out

    def _updated(self, t: Table, key: Item, old: Item | None, update: Any) -> Item:
        base = dict(old) if old is not None else dict(key)
        if update is None:
            return base
        ex = _expressions()
        touched = set(update.updated_paths) & set(t.key.names())
        if touched:
            attr = sorted(touched)[0]
            raise errors.validation(
                f"One or more parameter values were invalid: Cannot update attribute {attr}. "
                "This attribute is part of the key"
            )
        try:
            return update.apply(base)
        except ex.ExpressionError as exc:
            raise (errors.detected if exc.detected else errors.validation)(str(exc)) from exc

    def update_item(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        req = _legacy(req, "Expected", "ConditionalOperator", "AttributeUpdates")
        t = self._table(req, ctx)
        rv = self._return_values(req, ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"))
        rcc = self._rcc(req)
        on_fail = self._on_fail(req)
        ex = Exprs(req, single_write=True)
        update = ex.update(req.get("UpdateExpression"))
        cond = ex.condition(req.get("ConditionExpression"))
        ex.finish()
        key: Item = req.get("Key")  # type: ignore[assignment]  # checked by _key
        hk, sk, part = self._key(t, key)
        self._check_item(key)
        old = t.base.get(hk, sk)
        if cond is not None and not cond.evaluate(old):
            raise self._condition_failed(t, old, part, on_fail)
        new = self._updated(t, key, old, update)
        plan = self._plan(t, hk, sk, part, old, new, update=True)
        th = self._charge_write(plan)
        if th is not None:
            raise throttle_error(th)
        self._apply(plan)
        out: dict[str, Any] = {}
        attrs: Item | None = None
        if rv == "ALL_OLD":
            attrs = old
        elif rv == "ALL_NEW":
            attrs = new
        elif rv in ("UPDATED_OLD", "UPDATED_NEW"):
            src = (old or {}) if rv == "UPDATED_OLD" else new
            attrs = update.updated.apply(src) if update is not None else None
        if attrs:
            out["Attributes"] = attrs
        if rcc:
            c = Consumed(t.name, "write")
            self._account(plan, c)
            out["ConsumedCapacity"] = c.render(rcc)
        return out

    def _projector(self, req: dict[str, Any], ex: Exprs) -> Callable[[Item], Item] | None:
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
            return lambda it: {n: it[n] for n in names if n in it}
        return None

    def get_item(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        t = self._table(req, ctx)
        rcc = self._rcc(req)
        ex = Exprs(req)
        project = self._projector(req, ex)
        ex.finish()
        hk, sk, part = self._key(t, req.get("Key"))
        consistent = bool(req.get("ConsistentRead", False))
        item = t.base.get(hk, sk)
        units = read_units(item_size(item), consistent)
        th = self._charge_read(t, None, units, part)
        if th is not None:
            raise throttle_error(th)
        out: dict[str, Any] = {}
        if item is not None:
            out["Item"] = project(item) if project else item
        if rcc:
            c = Consumed(t.name, "read")
            c.add_table(units)
            out["ConsumedCapacity"] = c.render(rcc)
        return out

    # ------------------------------------------------------------------ query and scan
    def _select(self, req: dict[str, Any], idx: Index | None, has_projection: bool) -> str:
        select = req.get("Select")
        if select is None:
            if has_projection:
                return "SPECIFIC_ATTRIBUTES"
            return "ALL_PROJECTED_ATTRIBUTES" if idx is not None else "ALL_ATTRIBUTES"
        if select not in ("ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", "SPECIFIC_ATTRIBUTES", "COUNT"):
            raise errors.validation(
                f"1 validation error detected: Value '{select}' at 'select' failed to satisfy constraint: "
                "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
                "ALL_PROJECTED_ATTRIBUTES]"
            )
        if has_projection and select != "SPECIFIC_ATTRIBUTES":
            what = "AttributesToGet" if "AttributesToGet" in req else "ProjectionExpression"
            raise errors.detected(
                f"Cannot specify the {what} when choosing to get " + (select if select != "COUNT" else "only the Count")
            )
        if select == "SPECIFIC_ATTRIBUTES" and not has_projection:
            raise errors.detected(
                "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
            )
        if select == "ALL_PROJECTED_ATTRIBUTES" and idx is None:
            raise errors.detected("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
        if select == "ALL_ATTRIBUTES" and idx is not None and idx.kind == "GSI" and idx.projection_type != "ALL":
            raise errors.validation(
                "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for "
                f"global secondary index {idx.name} because its projection type is not ALL"
            )
        return select

    def _read_target(self, req: dict[str, Any], t: Table) -> tuple[Index | None, Collection, KeyDef]:
        iname = req.get("IndexName")
        if iname is None:
            return None, t.base, t.key
        idx = t.index(iname)
        if idx is None:
            raise errors.validation(f"The table does not have the specified index: {iname}")
        if idx.kind == "GSI" and req.get("ConsistentRead"):
            raise errors.validation("Consistent reads are not supported on global secondary indexes")
        return idx, idx.coll, idx.key

    def _start(self, t: Table, idx: Index | None, esk: Any) -> tuple[Any, Any]:
        if idx is None:
            hk, sk, _ = self._key(t, esk, "The provided starting key is invalid: ")
            return hk, sk
        if not isinstance(esk, dict):
            raise errors.validation("The provided starting key is invalid")
        self._key(t, {n: esk[n] for n in t.key.names() if n in esk}, "The provided starting key is invalid: ")
        e = idx.entry(esk, t.key)
        if e is None or set(esk) != idx.key_names(t.key):
            raise errors.validation(
                "The provided starting key is invalid: The provided key element does not match the schema"
            )
        return e

    def _last_key(self, t: Table, idx: Index | None, item: Item) -> Item:
        names = t.key.names() if idx is None else sorted(idx.key_names(t.key))
        return {n: item[n] for n in names}

    def _page(
        self,
        req: dict[str, Any],
        t: Table,
        idx: Index | None,
        rows: Iterator[Item],
        filt: Any,
        project: Callable[[Item], Item] | None,
        select: str,
    ) -> tuple[dict[str, Any], int, Item | None]:
        """One page: (response fields, bytes read, first item read)."""
        limit = req.get("Limit")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise errors.validation(
                f"1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: "
                "Member must have value greater than or equal to 1"
            )
        items: list[Item] = []
        scanned = 0
        size = 0
        last: Item | None = None
        prev: Item | None = None
        first: Item | None = None
        count_only = select == "COUNT"
        # an LSI query may ask for attributes outside the projection: the service fetches them from the table
        fetch_full = idx is None or (idx.kind == "LSI" and (select == "ALL_ATTRIBUTES" or project is not None))
        for raw in rows:
            view = raw if fetch_full or idx is None else idx.project(raw, t.key)
            sz = item_size(view)
            if prev is not None and size + sz > PAGE_LIMIT:
                last = self._last_key(t, idx, prev)
                break
            scanned += 1
            size += sz
            if prev is None:
                first = raw
            prev = raw
            if filt is None or filt.evaluate(view):
                if not count_only:
                    items.append(project(view) if project else view)
                else:
                    items.append(view)
            if limit is not None and scanned >= limit:
                last = self._last_key(t, idx, raw)
                break
        out: dict[str, Any] = {}
        if not count_only:
            out["Items"] = items
        out["Count"] = len(items)
        out["ScannedCount"] = scanned
        if last is not None:
            out["LastEvaluatedKey"] = last
        return out, size, first

    def query(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        req = _legacy(req, "KeyConditions", "QueryFilter", "ConditionalOperator")
        t = self._table(req, ctx)
        rcc = self._rcc(req)
        idx, coll, key = self._read_target(req, t)
        kce = req.get("KeyConditionExpression")
        if kce is None:
            raise errors.validation(
                "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."
            )
        ex = Exprs(req)
        kc = ex.key_condition(kce, key)
        filt = ex.condition(req.get("FilterExpression"), "FilterExpression")
        project = self._projector(req, ex)
        ex.finish()
        select = self._select(req, idx, project is not None)
        hav = kc.hash_value
        if key.hash_type not in hav:
            raise errors.validation(
                "One or more parameter values were invalid: Condition parameter type does not match schema type"
            )
        for attr, av in ((key.hash_attr, hav), *((key.range_attr, v) for v in kc.range_values or ())):
            if av.get("S") == "" or av.get("B") == "":
                raise errors.validation(
                    "One or more parameter values are not valid. The AttributeValue for a key attribute "
                    f"cannot contain an empty string value. Key: {attr}"
                )
        if key.multi:
            for (attr, typ), av in zip(key.hash_parts(), kc.hash_values, strict=True):
                if typ not in av:
                    raise errors.validation(
                        "One or more parameter values were invalid: Condition parameter type does not match schema "
                        f"type; key: {attr}"
                    )
            hk: Any = tuple(comparable(av, typ) for (_, typ), av in zip(key.hash_parts(), kc.hash_values, strict=True))
        else:
            hk = comparable(hav, key.hash_type)
        forward = req.get("ScanIndexForward", True)
        start = None
        esk = req.get("ExclusiveStartKey")
        if esk is not None:
            shk, start = self._start(t, idx, esk)
            if shk != hk:
                raise errors.validation(
                    "The provided starting key is invalid: The provided key element does not match the schema"
                )
        if key.multi:
            rows: Iterator[Item] = (item for _, item in coll.query(hk, forward, start) if kc.matches_item(item))
        else:
            rows = _in_range(coll.query(hk, forward, start), kc, key.range_attr)
        out, size, _first = self._page(req, t, idx, rows, filt, project, select)
        consistent = bool(req.get("ConsistentRead", False))
        units = read_units(size, consistent)
        th = self._charge_read(
            t, idx.name if idx is not None and idx.kind == "GSI" else None, units, str(hav[key.hash_type])
        )
        if th is not None:
            raise throttle_error(th)
        if rcc:
            out["ConsumedCapacity"] = self._read_consumed(t, idx, units).render(rcc)
        return out

    @staticmethod
    def _read_consumed(t: Table, idx: Index | None, units: float) -> Consumed:
        c = Consumed(t.name, "read")
        if idx is None:
            c.add_table(units)
        elif idx.kind == "GSI":
            c.add_gsi(idx.name, units)
        else:
            c.add_lsi(idx.name, units)
        return c

    def scan(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        req = _legacy(req, "ScanFilter", "ConditionalOperator")
        t = self._table(req, ctx)
        rcc = self._rcc(req)
        idx, coll, key = self._read_target(req, t)
        ex = Exprs(req)
        filt = ex.condition(req.get("FilterExpression"), "FilterExpression")
        project = self._projector(req, ex)
        ex.finish()
        select = self._select(req, idx, project is not None)
        segment, total = req.get("Segment"), req.get("TotalSegments")
        if (segment is None) != (total is None):
            raise errors.validation(
                "The TotalSegments parameter is required but was not present in the request when Segment "
                "parameter is present"
                if total is None
                else "The Segment parameter is required but was not present in the request when parameter "
                "TotalSegments is present"
            )
        if total is not None:
            if not isinstance(total, int) or not 1 <= total <= 1000000:
                raise errors.validation(
                    f"1 validation error detected: Value '{total}' at 'totalSegments' failed to satisfy constraint: "
                    "Member must have value less than or equal to 1000000"
                )
            if not isinstance(segment, int) or not 0 <= segment < total:
                raise errors.validation(
                    "The Segment parameter is zero-based and must be less than parameter TotalSegments"
                )
        start = None
        esk = req.get("ExclusiveStartKey")
        if esk is not None:
            start = self._start(t, idx, esk)
        rows = (it for _, _, it in coll.scan(segment or 0, total or 1, start))
        out, size, first = self._page(req, t, idx, rows, filt, project, select)
        consistent = bool(req.get("ConsistentRead", False))
        units = read_units(size, consistent)
        # a scan page walks partitions in token order: charge it to the partition it started in
        part = "" if first is None else str(next(iter(first[key.hash_attr].values())))
        th = self._charge_read(t, idx.name if idx is not None and idx.kind == "GSI" else None, units, part)
        if th is not None:
            raise throttle_error(th)
        if rcc:
            out["ConsumedCapacity"] = self._read_consumed(t, idx, units).render(rcc)
        return out

    # ------------------------------------------------------------------ batches
    def batch_write(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        rcc = self._rcc(req)
        request_items = _request_items(req)
        total = sum(len(v) for v in request_items.values())
        if total > BATCH_WRITE_MAX:
            raise errors.validation("Too many items requested for the BatchWriteItem call")
        if total == 0:
            raise errors.validation(
                "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: "
                "Map value must satisfy constraint: [Member must have length greater than or equal to 1]"
            )
        plans: list[tuple[str, dict[str, Any], WritePlan]] = []
        for name, reqs in request_items.items():
            t = self._table(req, ctx, name)
            seen: set[tuple[Any, Any]] = set()
            for wr in reqs:
                if "PutRequest" in wr:
                    item = wr["PutRequest"].get("Item")
                    self._check_item(item)
                    hk, sk, part = self._item_key(t, item)
                    new: Item | None = item
                elif "DeleteRequest" in wr:
                    hk, sk, part = self._key(t, wr["DeleteRequest"].get("Key"))
                    new = None
                else:
                    raise errors.validation("Supplied request must contain exactly one of PutRequest or DeleteRequest")
                if (hk, sk) in seen:
                    raise errors.validation("Provided list of item keys contains duplicates")
                seen.add((hk, sk))
                plans.append((name, wr, self._plan(t, hk, sk, part, t.base.get(hk, sk), new)))
        unprocessed: dict[str, list[dict[str, Any]]] = {}
        consumed: dict[str, Consumed] = {}
        first_throttle = None
        for name, wr, plan in plans:
            th = self._charge_write(plan)
            if th is not None:
                first_throttle = first_throttle or th
                unprocessed.setdefault(name, []).append(wr)
                continue
            # re-read: an earlier write in this batch cannot touch the same key, so old is still current
            self._apply(plan)
            self._account(plan, consumed.setdefault(name, Consumed(name, "write")))
        n_un = sum(len(v) for v in unprocessed.values())
        ctx.unprocessed = n_un
        if first_throttle is not None and n_un == len(plans):
            raise throttle_error(first_throttle)
        out: dict[str, Any] = {"UnprocessedItems": unprocessed}
        if rcc:
            out["ConsumedCapacity"] = [(consumed.get(n) or Consumed(n, "write")).render(rcc) for n in request_items]
        return out

    def batch_get(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        rcc = self._rcc(req)
        request_items = _request_items(req)
        total = sum(len(v.get("Keys") or []) for v in request_items.values())
        for name, spec in request_items.items():
            if len(spec.get("Keys") or []) > BATCH_GET_MAX:
                raise errors.detected(
                    f"Value at 'requestItems.{name}.member.keys' failed to satisfy constraint: "
                    f"Member must have length less than or equal to {BATCH_GET_MAX}"
                )
        if total > BATCH_GET_MAX:
            raise errors.validation("Too many items requested for the BatchGetItem call")
        jobs = []
        for name, spec in request_items.items():
            # the request's own checks come before the table lookup, as in the service
            ex = Exprs(spec)
            project = self._projector(spec, ex)
            ex.finish()
            keys = spec.get("Keys") or []
            if not keys:
                raise errors.validation(
                    "1 validation error detected: Value at 'requestItems." + name + ".member.keys' failed to "
                    "satisfy constraint: Member must have length greater than or equal to 1"
                )
            t = self._table(req, ctx, name)
            seen: set[tuple[Any, Any]] = set()
            parsed = []
            for k in keys:
                hk, sk, part = self._key(t, k)
                if (hk, sk) in seen:
                    raise errors.validation("Provided list of item keys contains duplicates")
                seen.add((hk, sk))
                parsed.append((k, hk, sk, part))
            jobs.append((name, t, spec, project, parsed))
        responses: dict[str, list[Item]] = {}
        unprocessed: dict[str, dict[str, Any]] = {}
        consumed: dict[str, Consumed] = {}
        first_throttle = None
        n_un = 0
        size_total = 0
        for name, t, spec, project, parsed in jobs:
            consistent = bool(spec.get("ConsistentRead", False))
            got = responses.setdefault(name, [])
            for k, hk, sk, part in parsed:
                item = t.base.get(hk, sk)
                sz = item_size(item)
                units = read_units(sz, consistent)
                th = self._charge_read(t, None, units, part) if size_total + sz <= 16 * 1024 * 1024 else True
                if th is not None:
                    if th is not True:
                        first_throttle = first_throttle or th
                    left = unprocessed.setdefault(
                        name, {**{k2: v for k2, v in spec.items() if k2 != "Keys"}, "Keys": []}
                    )
                    left["Keys"].append(k)
                    n_un += 1
                    continue
                size_total += sz
                consumed.setdefault(name, Consumed(name, "read")).add_table(units)
                if item is not None:
                    got.append(project(item) if project else item)
        ctx.unprocessed = n_un
        if first_throttle is not None and n_un == total:
            raise throttle_error(first_throttle)
        out: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": unprocessed}
        if rcc:
            out["ConsumedCapacity"] = [(consumed.get(n) or Consumed(n, "read")).render(rcc) for n in request_items]
        return out

    # ------------------------------------------------------------------ transactions
    def transact_write(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        rcc = self._rcc(req)
        actions = _transact_items(req)
        token = req.get("ClientRequestToken")
        fingerprint = b""
        if token is not None:
            fingerprint = orjson.dumps(actions, option=orjson.OPT_SORT_KEYS)
            now = self.clock()
            self._tokens = (
                {k: v for k, v in self._tokens.items() if v[1] > now} if len(self._tokens) > 1000 else self._tokens
            )
            seen_token = self._tokens.get(token)
            if seen_token is not None and seen_token[1] > now:
                if seen_token[0] != fingerprint:
                    raise ServiceError(
                        "IdempotentParameterMismatchException",
                        "Specified idempotent token was used with different request parameters",
                    )
                for action in actions:
                    if isinstance(action, dict) and action:
                        name = next(iter(action.values())).get("TableName")
                        if isinstance(name, str) and not ctx.tables:
                            ctx.tables.append(name)
                return {}
        total_size = sum(
            item_size(a["Put"].get("Item")) for a in actions if isinstance(a, dict) and isinstance(a.get("Put"), dict)
        )
        if total_size > TRANSACTION_LIMIT:
            raise errors.validation("Transaction request cannot be larger than 4 MB")
        reasons: list[dict[str, Any]] = []
        plans: list[WritePlan | None] = []
        seen: set[tuple[str, Any, Any]] = set()
        prepared = []
        for action in actions:
            if not isinstance(action, dict) or len(action) != 1:
                raise errors.validation("TransactItems can only contain one of Check, Put, Update or Delete")
            kind, body = next(iter(action.items()))
            if kind not in ("Put", "Update", "Delete", "ConditionCheck"):
                raise errors.validation("TransactItems can only contain one of Check, Put, Update or Delete")
            t = self._table(body, ctx)
            ex = Exprs(body)
            update = ex.update(body.get("UpdateExpression")) if kind == "Update" else None
            cond = ex.condition(body.get("ConditionExpression"))
            if kind == "ConditionCheck" and cond is None:
                raise errors.validation("The ConditionExpression parameter is required for ConditionCheck")
            if kind == "Update" and update is None:
                raise errors.validation("The UpdateExpression parameter is required for Update")
            ex.finish()
            on_fail = self._on_fail(body)
            if kind == "Put":
                item = body.get("Item")
                self._check_item(item)
                hk, sk, part = self._item_key(t, item)
            else:
                hk, sk, part = self._key(t, body.get("Key"))
            if (t.name, hk, sk) in seen:
                raise errors.validation("Transaction request cannot include multiple operations on one item")
            seen.add((t.name, hk, sk))
            prepared.append((kind, body, t, cond, update, on_fail, hk, sk, part))
        failed = False
        for kind, body, t, cond, update, on_fail, hk, sk, part in prepared:
            old = t.base.get(hk, sk)
            if cond is not None and not cond.evaluate(old):
                r: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
                if on_fail and old:
                    r["Item"] = old
                reasons.append(r)
                plans.append(None)
                failed = True
                continue
            try:
                if kind == "Put":
                    new: Item | None = body["Item"]
                elif kind == "Delete":
                    new = None
                elif kind == "Update":
                    new = self._updated(t, body["Key"], old, update)
                else:
                    new = old
                plan = None if kind == "ConditionCheck" else self._plan(t, hk, sk, part, old, new)
            except ServiceError as exc:
                if exc.code != "ValidationException":
                    raise
                reasons.append({"Code": "ValidationError", "Message": exc.message})
                plans.append(None)
                failed = True
                continue
            reasons.append({"Code": "None"})
            plans.append(plan)
        if failed:
            raise _cancelled(reasons)
        for i, plan in enumerate(plans):
            if plan is None:
                t, hk, sk, part = prepared[i][2], prepared[i][6], prepared[i][7], prepared[i][8]
                units = 2.0 * write_units(item_size(t.base.get(hk, sk)))
                th = None if self.capacity is None else self.capacity.charge(t.name, None, "write", units, part)
            else:
                th = self._charge_write(plan, 2.0)
            if th is not None:
                reasons = [{"Code": "None"} for _ in actions]
                reasons[i] = _tx_reason(th)
                raise _cancelled(reasons)
        consumed: dict[str, Consumed] = {}
        for i, plan in enumerate(plans):
            if plan is not None:
                self._apply(plan)
                self._account(plan, consumed.setdefault(plan.table.name, Consumed(plan.table.name, "write")), 2.0)
            else:
                t = prepared[i][2]
                old = t.base.get(prepared[i][6], prepared[i][7])
                consumed.setdefault(t.name, Consumed(t.name, "write")).add_table(2.0 * write_units(item_size(old)))
        if token is not None:
            self._tokens[token] = (fingerprint, self.clock() + TOKEN_TTL)
        out: dict[str, Any] = {}
        if rcc:
            out["ConsumedCapacity"] = [c.render(rcc, per_kind=True) for c in consumed.values()]
        return out

    def transact_get(self, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
        rcc = self._rcc(req)
        actions = _transact_items(req)
        prepared = []
        seen: set[tuple[str, Any, Any]] = set()
        for action in actions:
            body = action.get("Get") if isinstance(action, dict) else None
            if body is None:
                raise errors.validation("TransactItems can only contain Get")
            t = self._table(body, ctx)
            ex = Exprs(body)
            project = self._projector(body, ex)
            ex.finish()
            hk, sk, part = self._key(t, body.get("Key"))
            if (t.name, hk, sk) in seen:
                raise errors.validation("Transaction request cannot include multiple operations on one item")
            seen.add((t.name, hk, sk))
            prepared.append((t, project, t.base.get(hk, sk), part))
        for i, (t, _p, item, part) in enumerate(prepared):
            th = self._charge_read(t, None, 2.0 * read_units(item_size(item), True), part)
            if th is not None:
                reasons = [{"Code": "None"} for _ in actions]
                reasons[i] = _tx_reason(th)
                raise _cancelled(reasons)
        responses = []
        consumed: dict[str, Consumed] = {}
        for t, project, item, _part in prepared:
            consumed.setdefault(t.name, Consumed(t.name, "read")).add_table(2.0 * read_units(item_size(item), True))
            responses.append({"Item": project(item) if project else item} if item is not None else {})
        out: dict[str, Any] = {"Responses": responses}
        if rcc:
            out["ConsumedCapacity"] = [c.render(rcc, per_kind=True) for c in consumed.values()]
        return out


def _transact_items(req: dict[str, Any]) -> list[Any]:
    """TransactItems as the service checks them: present, non-empty, at most 100 actions."""
    actions = req.get("TransactItems")
    if not isinstance(actions, list) or not actions:
        raise errors.validation(
            "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: "
            "Member must not be null"
        )
    if len(actions) > TRANSACT_ITEMS_MAX:
        raise errors.validation(
            "1 validation error detected at 'transactItems' failed to satisfy constraint: "
            "Member must have length less than or equal to 100."
        )
    return actions


def _request_items(req: dict[str, Any]) -> dict[str, Any]:
    """RequestItems of a batch call as the service checks them: a non-empty map of table name to requests."""
    request_items = req.get("RequestItems")
    if not isinstance(request_items, dict) or not request_items:
        raise errors.validation(
            "1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: "
            "Member must not be null"
        )
    return request_items
