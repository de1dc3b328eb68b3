"""In-memory tables: items kept encoded, ordered per partition so Query and Scan page like the service.

Why this shape: every collection (the table and each index) is a dict of partitions, each a sorted list of sort
keys plus a dict of items (a table without a sort key maps each partition straight to its one item). Put/Get are
dict lookups; Query is a bisect; Scan walks partitions in the order of a hash token of the partition key (like the
service's hash order), which also makes Segment/TotalSegments contiguous token ranges and lets ExclusiveStartKey
resume by bisecting.
"""

from __future__ import annotations

import base64
import binascii
import gc
import time
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import orjson

from dynlocust.local import errors
from dynlocust.local.limits import HASH_KEY_MAX_BYTES, RANGE_KEY_MAX_BYTES
from dynlocust.local.token_order import TOKEN_BITS, TokenOrder, token_of

Item = dict[str, Any]


class StoredItem(NamedTuple):
    """One stored item: its JSON encoding and its size, kept when it is written.

    Why encoded: as the decoded dicts of its request, a 1 KB item held about 2.5 KB of memory; its encoding holds
    little more than its size. A response carries it as it is (`wire`), so only a request that reads its attributes
    (a condition, a filter, a projection, an update, an index key) decodes it (`item`), and pages and capacity are
    priced from `size` without walking it.
    """

    raw: bytes
    size: int

    @classmethod
    def of(cls, item: Item, size: int) -> StoredItem:
        # copied: the bytes orjson returns keep its whole output buffer (8 KB for a 1 KB item) allocated
        return cls(bytes(memoryview(orjson.dumps(item))), size)

    def item(self) -> Item:
        """The item as a fresh dict (the caller may change it)."""
        return decoded(self.raw)

    def wire(self) -> orjson.Fragment:
        """The item in a response: its stored encoding, spliced in by orjson."""
        return orjson.Fragment(self.raw)


def decoded(raw: bytes) -> Item:
    """A stored item's encoding as a fresh dict."""
    return orjson.loads(raw)


def comparable(av: dict[str, Any], typ: str) -> Any:
    """The sortable Python value of a key attribute: S by UTF-8 bytes, N as Decimal, B by bytes."""
    v = av[typ]
    if typ == "S":
        return v.encode("utf-8")
    if typ == "N":
        try:
            d = Decimal(v)
        except InvalidOperation as exc:
            raise errors.validation(f"The parameter cannot be converted to a numeric value: {v}") from exc
        if not d.is_finite():
            raise errors.validation(f"The parameter cannot be converted to a numeric value: {v}")
        return d
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise errors.serialization("Base64 encoded length is expected a multiple of 4 bytes") from exc


def key_value(value: Any, typ: str) -> dict[str, Any]:
    """The attribute value of a key's `comparable` value: what a sort-key condition tests, without the item."""
    if typ == "S":
        return {"S": value.decode("utf-8")}
    if typ == "N":
        return {"N": str(value)}
    return {"B": base64.b64encode(value).decode("ascii")}


def check_key_sizes(hk: Any, sk: Any) -> None:
    """The documented key size limits, on the comparable values (bytes for S and B; numbers are always short)."""
    if isinstance(hk, bytes) and len(hk) > HASH_KEY_MAX_BYTES:
        raise errors.validation(
            "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit "
            f"of{HASH_KEY_MAX_BYTES} bytes"
        )
    if isinstance(sk, bytes) and len(sk) > RANGE_KEY_MAX_BYTES:
        raise errors.validation(
            "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size "
            f"limit of {RANGE_KEY_MAX_BYTES} bytes"
        )


def freeze_after_full_collections() -> None:
    """Keep the cyclic garbage collector's full passes from walking the stored items (for the endpoint's process).

    Why: a full collection walks every tracked object, and a stored item is a few dicts, so with 10^6 items each
    pass walks millions of objects and a PutItem's share of them grows with the table. After a full collection all
    that is left is reachable, so `gc.freeze()` then hides nothing collectable; items deleted later hold no cycles
    and are freed by reference counting as before.
    """
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


class Partition:
    __slots__ = ("hk", "items", "keys", "token")

    def __init__(self, hk: Any) -> None:
        self.hk = hk
        self.token = token_of(hk)
        self.keys: list[Any] = []
        self.items: dict[Any, StoredItem] = {}


class Collection:
    """One ordered collection of items (the table itself, or one index): partitions of items sorted by sort key."""

    def __init__(self) -> None:
        self.parts: dict[Any, Partition] = {}
        self._order = TokenOrder()

    def get(self, hk: Any, sk: Any) -> StoredItem | None:
        p = self.parts.get(hk)
        return None if p is None else p.items.get(sk)

    def put(self, hk: Any, sk: Any, item: StoredItem) -> None:
        p = self.parts.get(hk)
        if p is None:
            p = self.parts[hk] = Partition(hk)
            self._order.add((p.token, hk), p)
        if sk not in p.items:
            insort(p.keys, sk)
        p.items[sk] = item

    def remove(self, hk: Any, sk: Any) -> None:
        p = self.parts.get(hk)
        if p is None or sk not in p.items:
            return
        del p.items[sk]
        del p.keys[bisect_left(p.keys, sk)]
        if not p.items:
            del self.parts[hk]
            self._order.remove((p.token, hk))

    def query(self, hk: Any, forward: bool, start: Any = None) -> Iterator[tuple[Any, StoredItem]]:
        """Items of one partition in sort order, strictly after (or before, backwards) `start` if given."""
        p = self.parts.get(hk)
        if p is None:
            return
        # indexes, not slices: a page reads a few items of what may be a very large partition; the caller does
        # not write while it iterates (one request at a time)
        keys, items = p.keys, p.items
        if forward:
            for i in range(0 if start is None else bisect_right(keys, start), len(keys)):
                sk = keys[i]
                yield sk, items[sk]
        else:
            for i in range((len(keys) if start is None else bisect_left(keys, start)) - 1, -1, -1):
                sk = keys[i]
                yield sk, items[sk]

    def scan(
        self, segment: int = 0, total: int = 1, start: tuple[Any, Any] | None = None
    ) -> Iterator[tuple[Any, Any, StoredItem]]:
        """(hk, sk, item) in token order within the segment, strictly after `start` = (hk, sk) if given."""
        entries, hi_tok, first_sk = self._order.scan_from(segment, total, start)
        for tok, hk, p in entries:
            if tok >= hi_tok:
                break
            keys = p.keys
            j = 0
            if first_sk is not None:
                j = bisect_right(keys, first_sk)
                first_sk = None
            for m in range(j, len(keys)):
                sk = keys[m]
                yield hk, sk, p.items[sk]

    def scan_items(
        self, segment: int = 0, total: int = 1, start: tuple[Any, Any] | None = None
    ) -> Iterator[tuple[bytes, int]]:
        """(encoding, size) of the items of scan(), alone."""
        for _, _, item in self.scan(segment, total, start):
            yield item

    def scan_page(
        self, segment: int, total: int, start: tuple[Any, Any] | None, limit: int | None, max_bytes: int
    ) -> tuple[list[bytes], int, bool] | None:
        """A whole Scan page's encodings without reading the items one by one (see `HashCollection`), or None: a
        collection of sorted partitions is read item by item."""
        return None


class HashCollection(Collection):
    """The items of a table without a sort key: each partition is its one item (its sort key is always 0).

    Why apart: a partition's sorted keys and dict cost about 350 bytes, a third of a 1 KB item, for nothing when a
    partition can hold only one item.
    """

    def __init__(self) -> None:
        self.items: dict[Any, StoredItem] = {}
        self._order = TokenOrder()

    def get(self, hk: Any, sk: Any) -> StoredItem | None:
        return self.items.get(hk)

    def put(self, hk: Any, sk: Any, item: StoredItem) -> None:
        items = self.items
        if hk in items:
            self._order.replace((token_of(hk), hk), item.raw, item.size)
        else:
            self._order.add((token_of(hk), hk), item.raw, item.size)
        items[hk] = item

    def remove(self, hk: Any, sk: Any) -> None:
        if self.items.pop(hk, None) is not None:
            self._order.remove((token_of(hk), hk))

    def query(self, hk: Any, forward: bool, start: Any = None) -> Iterator[tuple[Any, StoredItem]]:
        item = self.items.get(hk)
        if item is not None and start is None:  # nothing follows the one item
            yield 0, item

    def scan(
        self, segment: int = 0, total: int = 1, start: tuple[Any, Any] | None = None
    ) -> Iterator[tuple[Any, Any, StoredItem]]:
        entries, hi_tok, first_sk = self._order.scan_from(segment, total, start)
        if first_sk is not None:  # the start item itself: skip it
            next(entries, None)
        items = self.items
        for tok, hk, _ in entries:
            if tok >= hi_tok:
                break
            yield hk, 0, items[hk]

    def scan_items(
        self, segment: int = 0, total: int = 1, start: tuple[Any, Any] | None = None
    ) -> Iterator[tuple[bytes, int]]:
        # from the blocks' own lists: reading each item's hash key or StoredItem cost a read of random memory
        span = 1 << TOKEN_BITS
        hi_tok = (segment + 1) * span // total
        if start is None:
            return self._order.values_from((segment * span // total,), hi_tok, 0)
        shk = start[0]
        return self._order.values_from((token_of(shk), shk), hi_tok, 1 if shk in self.items else 0)

    def scan_page(
        self, segment: int, total: int, start: tuple[Any, Any] | None, limit: int | None, max_bytes: int
    ) -> tuple[list[bytes], int, bool]:
        """(encodings, their total size, whether more follow in the segment) of the page of scan_items() that
        holds at most `limit` items and `max_bytes` by their sizes (at least one item)."""
        span = 1 << TOKEN_BITS
        hi_tok = (segment + 1) * span // total
        if start is None:
            return self._order.page((segment * span // total,), 0, hi_tok, limit, max_bytes)
        shk = start[0]
        return self._order.page((token_of(shk), shk), 1 if shk in self.items else 0, hi_tok, limit, max_bytes)


def collection(ranged: bool) -> Collection:
    """A table's own collection: partitions of sorted items with a sort key, one item per partition without."""
    return Collection() if ranged else HashCollection()


@dataclass
class KeyDef:
    """A key schema. GSIs may have multi-attribute keys: the attributes after the first go in more_hash/more_range."""

    hash_attr: str
    hash_type: str
    range_attr: str | None = None
    range_type: str | None = None
    more_hash: tuple[tuple[str, str], ...] = ()
    more_range: tuple[tuple[str, str], ...] = ()

    def names(self) -> list[str]:
        if self.more_hash or self.more_range:
            return [a for a, _ in self.hash_parts()] + [a for a, _ in self.range_parts()]
        return [self.hash_attr] if self.range_attr is None else [self.hash_attr, self.range_attr]

    def hash_parts(self) -> list[tuple[str, str]]:
        return [(self.hash_attr, self.hash_type), *self.more_hash]

    def range_parts(self) -> list[tuple[str, str]]:
        return [] if self.range_attr is None else [(self.range_attr, str(self.range_type)), *self.more_range]

    @property
    def multi(self) -> bool:
        return bool(self.more_hash or self.more_range)


@dataclass
class Index:
    """A GSI or LSI: its key, its projection and its own ordered collection of (references to) items."""

    name: str
    kind: str  # "GSI" | "LSI"
    key: KeyDef
    projection_type: str
    non_key: list[str]
    arn: str
    provisioned: dict[str, Any] | None = None
    on_demand: dict[str, Any] | None = None
    warm: dict[str, Any] | None = None
    coll: Collection = field(default_factory=Collection)
    count: int = 0
    size: int = 0
    online: bool = False  # added by UpdateTable: DescribeTable shows its Backfilling (see backfill.py)
    backfilling: bool = False
    backfilled_to: tuple[Any, Any] | None = None  # (hk, sk) of the last table item the backfill read

    def current(self, hk: Any, sk: Any) -> bool:
        """Whether a write of the table's item (hk, sk) changes this index now: always, unless a backfill has yet to
        reach the item in the table's scan order; it then reads the item as it is when it gets there."""
        if not self.backfilling:
            return True
        done = self.backfilled_to
        return done is not None and (token_of(hk), hk, sk) <= (token_of(done[0]), done[0], done[1])

    def entry(self, item: Item, table_key: KeyDef, update: bool = False) -> tuple[Any, Any] | None:
        """(hk, sk) of the item in this index, or None when the item lacks the index key."""
        k = self.key
        if k.multi:
            return self._multi_entry(item, table_key, update)
        hav = item.get(k.hash_attr)
        if hav is None:
            return None
        if k.hash_type not in hav:
            raise errors.validation(self._mismatch(k.hash_attr, k.hash_type, hav))
        if hav[k.hash_type] == "":
            raise errors.validation(self._empty(k.hash_attr, update))
        rcmp: Any = None
        if k.range_attr is not None:
            rav = item.get(k.range_attr)
            if rav is None:
                return None
            if k.range_type not in rav:
                raise errors.validation(self._mismatch(k.range_attr, str(k.range_type), rav))
            if rav[str(k.range_type)] == "":
                raise errors.validation(self._empty(k.range_attr, update))
            rcmp = comparable(rav, str(k.range_type))
        ihk = comparable(hav, k.hash_type)
        check_key_sizes(ihk, rcmp)
        t_hk = comparable(item[table_key.hash_attr], table_key.hash_type)
        t_sk = (
            comparable(item[table_key.range_attr], str(table_key.range_type)) if table_key.range_attr is not None else 0
        )
        return ihk, (rcmp, t_hk, t_sk)

    def _multi_entry(self, item: Item, table_key: KeyDef, update: bool) -> tuple[Any, Any] | None:
        """Like entry() for a multi-attribute key: (tuple of partition values, (tuple of sort values, table key));
        an item lacking any key attribute is not in the index."""
        out: list[tuple[Any, ...]] = []
        for parts in (self.key.hash_parts(), self.key.range_parts()):
            values = []
            for attr, typ in parts:
                av = item.get(attr)
                if av is None:
                    return None
                if typ not in av:
                    raise errors.validation(self._mismatch(attr, typ, av))
                if av[typ] == "":
                    raise errors.validation(self._empty(attr, update))
                values.append(comparable(av, typ))
            out.append(tuple(values))
        t_hk = comparable(item[table_key.hash_attr], table_key.hash_type)
        t_sk = (
            comparable(item[table_key.range_attr], str(table_key.range_type)) if table_key.range_attr is not None else 0
        )
        return out[0], (out[1] or None, t_hk, t_sk)

    def _empty(self, attr: str, update: bool = False) -> str:
        if update:  # UpdateItem words it without naming the index
            return (
                "One or more parameter values are not valid. The update expression attempted to update a secondary "
                "index key to a value that is not supported. The AttributeValue for a key attribute cannot contain "
                "an empty string value."
            )
        return (
            "One or more parameter values are not valid. A value specified for a secondary index key is not "
            "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
            f"IndexName: {self.name}, IndexKey: {attr}"
        )

    def _mismatch(self, attr: str, expected: str, av: dict[str, Any]) -> str:
        actual = next(iter(av), "?")
        return (
            "One or more parameter values were invalid: Type mismatch for Index Key "
            f"{attr} Expected: {expected} Actual: {actual} IndexName: {self.name}"
        )

    def key_names(self, table_key: KeyDef) -> set[str]:
        return set(table_key.names()) | set(self.key.names())

    def project(self, item: Item, table_key: KeyDef) -> Item:
        if self.projection_type == "ALL":
            return item
        keep = self.key_names(table_key)
        if self.projection_type == "INCLUDE":
            keep |= set(self.non_key)
        return {k: v for k, v in item.items() if k in keep}


@dataclass
class Table:
    """One table: definition, state and data."""

    name: str
    arn: str
    table_id: str
    key: KeyDef
    attribute_definitions: list[dict[str, str]]
    billing_mode: str
    provisioned: dict[str, Any] | None
    created: float
    active_at: float
    gsis: dict[str, Index] = field(default_factory=dict)
    lsis: dict[str, Index] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    on_demand: dict[str, Any] | None = None
    warm: dict[str, Any] | None = None
    deletion_protection: bool = False
    table_class: str | None = None
    stream_spec: dict[str, Any] | None = None
    stream_label: str | None = None  # LatestStreamLabel: set when a stream is enabled
    sse: dict[str, Any] | None = None  # SSEDescription when SSESpecification enabled KMS encryption
    pay_per_request_since: float | None = None  # LastUpdateToPayPerRequestDateTime
    policy: tuple[str, str] | None = None  # its resource-based policy and that policy's revision ID (policies.py)
    base: Collection = field(init=False)
    item_count: int = 0
    size_bytes: int = 0

    def __post_init__(self) -> None:
        self.base = collection(self.key.range_attr is not None)

    def status(self, now: float | None = None) -> str:
        return "ACTIVE" if (now if now is not None else time.monotonic()) >= self.active_at else "CREATING"

    def index(self, name: str) -> Index | None:
        return self.gsis.get(name) or self.lsis.get(name)


@dataclass
class WritePlan:
    """One item write, validated and priced, not yet applied."""

    table: Table
    hk: Any
    sk: Any
    partition: str
    old: StoredItem | None
    new: Item | None
    entries: list[tuple[Index, Any, Any, int, int]]  # index, old entry, new entry, old/new projected size
    table_units: float
    gsi_units: dict[str, tuple[float, str]]
    lsi_units: dict[str, float]
    size_old: int
    size_new: int
