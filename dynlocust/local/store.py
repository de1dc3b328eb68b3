"""In-memory tables: items in wire format, kept ordered per partition so Query and Scan page like the service.

Why this shape: every collection (the table and each index) is a dict of partitions, each a sorted list of sort
keys plus a dict of items. Put/Get are dict lookups; Query is a bisect; Scan walks partitions in the order of a
hash token of the partition key (like the service's hash order), which also makes Segment/TotalSegments
contiguous token ranges and lets ExclusiveStartKey resume by bisecting.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gc
import hashlib
import itertools
import time
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from dynlocust.local import errors
from dynlocust.local.limits import HASH_KEY_MAX_BYTES, RANGE_KEY_MAX_BYTES

Item = dict[str, Any]

TOKEN_BITS = 32
_TOKEN_CODE = "I" if array("I").itemsize * 8 >= TOKEN_BITS else "L"  # array typecode of a token


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


try:  # CPython's own MD5: the same digest without OpenSSL's per-call lookup (half the cost of a token)
    from _md5 import md5 as _md5  # type: ignore[import-not-found]  # a private CPython module: no stub
except ImportError:  # a build without it
    _md5 = functools.partial(hashlib.md5, usedforsecurity=False)


def token_of(hk: Any) -> int:
    raw = hk if isinstance(hk, bytes) else str(hk).encode()
    return int.from_bytes(_md5(raw).digest()[:4], "big")


class Partition:
    __slots__ = ("hk", "items", "keys", "token")

    def __init__(self, hk: Any) -> None:
        self.hk = hk
        self.token = token_of(hk)
        self.keys: list[Any] = []
        self.items: dict[Any, Item] = {}


class TokenOrder:
    """The (token, hk) pairs of a collection's partitions, kept in order as partitions come and go.

    Why blocks: one flat sorted list costs an O(n) move per new partition, and sorting on demand costs
    O(n log n) per Scan page when puts and scans interleave. Blocks of at most `2 * LOAD` pairs, found by bisecting
    their last pairs, make an insert or a removal a move inside one block and a page a bisect then a walk.
    Why arrays: the tokens are bisected in contiguous machine integers, each block's and each block's last; a list of
    (token, hk) tuples made every step of a bisect two pointer chases to random memory, the largest part of a fresh
    key's PutItem in a large table. Hash keys are compared only between equal tokens.
    """

    LOAD = 512

    __slots__ = ("_hks", "_last_hks", "_last_toks", "_toks")

    def __init__(self) -> None:
        self._toks: list[array[int]] = []  # per block, its tokens in order
        self._hks: list[list[Any]] = []  # per block, the hash keys alongside
        self._last_toks: array[int] = array(_TOKEN_CODE)  # per block, its last pair's token
        self._last_hks: list[Any] = []  # ... and hash key

    def _block(self, tok: int, hk: Any, exact: bool) -> int:
        """The first block whose last pair is at or after (tok, hk); (tok,) alone when not `exact`."""
        last_toks = self._last_toks
        i = bisect_left(last_toks, tok)
        if exact:
            last_hks, n = self._last_hks, len(last_toks)
            while i < n and last_toks[i] == tok and last_hks[i] < hk:
                i += 1
        return i

    def _slot(self, b: int, tok: int, hk: Any, exact: bool) -> int:
        """The position of (tok, hk) in block `b`: the first pair at or after it."""
        toks = self._toks[b]
        j = bisect_left(toks, tok)
        if exact:
            hks, n = self._hks[b], len(toks)
            while j < n and toks[j] == tok and hks[j] < hk:
                j += 1
        return j

    def add(self, pair: tuple[int, Any]) -> None:
        tok, hk = pair
        if not self._toks:
            self._toks.append(array(_TOKEN_CODE, (tok,)))
            self._hks.append([hk])
            self._last_toks.append(tok)
            self._last_hks.append(hk)
            return
        i = self._block(tok, hk, True)
        if i == len(self._toks):
            i -= 1
            toks, hks = self._toks[i], self._hks[i]
            toks.append(tok)
            hks.append(hk)
            self._last_toks[i] = tok
            self._last_hks[i] = hk
        else:
            toks, hks = self._toks[i], self._hks[i]
            j = self._slot(i, tok, hk, True)
            toks.insert(j, tok)
            hks.insert(j, hk)
        if len(toks) > 2 * self.LOAD:
            half = len(toks) // 2
            self._toks[i : i + 1] = [toks[:half], toks[half:]]
            self._hks[i : i + 1] = [hks[:half], hks[half:]]
            self._last_toks[i : i + 1] = array(_TOKEN_CODE, (toks[half - 1], toks[-1]))
            self._last_hks[i : i + 1] = [hks[half - 1], hks[-1]]

    def remove(self, pair: tuple[int, Any]) -> None:
        tok, hk = pair
        i = self._block(tok, hk, True)
        if i == len(self._toks):
            return
        toks, hks = self._toks[i], self._hks[i]
        j = self._slot(i, tok, hk, True)
        if j == len(toks) or toks[j] != tok or hks[j] != hk:
            return
        del toks[j]
        del hks[j]
        if not toks:
            del self._toks[i]
            del self._hks[i]
            del self._last_toks[i]
            del self._last_hks[i]
        elif j == len(toks):
            self._last_toks[i] = toks[-1]
            self._last_hks[i] = hks[-1]

    def from_pair(self, pair: tuple[Any, ...]) -> Iterator[tuple[int, Any]]:
        """The pairs at or after `pair` (a bisect position; `(token,)` starts at a token), in order."""
        exact = len(pair) > 1
        tok, hk = pair[0], pair[1] if exact else None
        i = self._block(tok, hk, exact)
        if i == len(self._toks):
            return
        j = self._slot(i, tok, hk, exact)
        # indexes, not slices: the caller does not write while it iterates (one request at a time)
        for b in range(i, len(self._toks)):
            toks, hks = self._toks[b], self._hks[b]
            for k in range(j, len(toks)):
                yield toks[k], hks[k]
            j = 0


class Collection:
    """One ordered collection of items (the table itself, or one index)."""

    def __init__(self) -> None:
        self.parts: dict[Any, Partition] = {}
        self._order = TokenOrder()

    def get(self, hk: Any, sk: Any) -> Item | None:
        p = self.parts.get(hk)
        return None if p is None else p.items.get(sk)

    def put(self, hk: Any, sk: Any, item: Item) -> None:
        p = self.parts.get(hk)
        if p is None:
            p = self.parts[hk] = Partition(hk)
            self._order.add((p.token, hk))
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

    def query(self, hk: Any, forward: bool, start: Any = None) -> Iterator[tuple[Any, Item]]:
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
    ) -> Iterator[tuple[Any, Any, Item]]:
        """(hk, sk, item) in token order within the segment, strictly after `start` = (hk, sk) if given."""
        span = 1 << TOKEN_BITS
        lo_tok = segment * span // total
        hi_tok = (segment + 1) * span // total
        pairs: Iterator[tuple[int, Any]] = self._order.from_pair((lo_tok,))
        first_sk = None
        if start is not None:
            shk, first_sk = start
            pairs = self._order.from_pair((token_of(shk), shk))
            pairs, first = _peek(pairs)
            if first is None or first[1] != shk:
                first_sk = None
        for tok, hk in pairs:
            if tok >= hi_tok:
                break
            p = self.parts.get(hk)
            if p is None:
                continue
            keys = p.keys
            j = 0
            if first_sk is not None:
                j = bisect_right(keys, first_sk)
                first_sk = None
            for m in range(j, len(keys)):
                sk = keys[m]
                yield hk, sk, p.items[sk]


def _peek(pairs: Iterator[tuple[int, Any]]) -> tuple[Iterator[tuple[int, Any]], tuple[int, Any] | None]:
    first = next(pairs, None)
    return (pairs if first is None else itertools.chain((first,), pairs)), first


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
    base: Collection = field(default_factory=Collection)
    item_count: int = 0
    size_bytes: int = 0

    def status(self, now: float | None = None) -> str:
        return "ACTIVE" if (now if now is not None else time.monotonic()) >= self.active_at else "CREATING"

    def index(self, name: str) -> Index | None:
        return self.gsis.get(name) or self.lsis.get(name)
