from __future__ import annotations

import itertools
import random
from decimal import Decimal
from typing import Any

import orjson
import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.store import (
    Collection,
    HashCollection,
    KeyDef,
    StoredItem,
    Table,
    comparable,
    freeze_after_full_collections,
)
from dynlocust.local.token_order import TokenOrder, token_of


def stored(n: int) -> StoredItem:
    return StoredItem.of({"n": {"N": str(n)}}, 1 + len(str(n)))


def test_comparable_orders_like_the_service() -> None:
    assert comparable({"S": "Z"}, "S") < comparable({"S": "a"}, "S")  # UTF-8 bytes, not locale
    assert comparable({"S": "z"}, "S") < comparable({"S": "é"}, "S")
    assert comparable({"N": "9"}, "N") < comparable({"N": "10"}, "N")
    assert comparable({"N": "1.0"}, "N") == Decimal(1)
    assert comparable({"B": "AQ=="}, "B") < comparable({"B": "Ag=="}, "B")


def test_comparable_rejects_bad_numbers() -> None:
    with pytest.raises(ServiceError) as exc:
        comparable({"N": "abc"}, "N")
    assert exc.value.code == "ValidationException"


def test_query_forward_backward_and_start() -> None:
    c = Collection()
    for i in (3, 1, 2, 5):
        c.put("h", i, stored(i))
    assert [sk for sk, _ in c.query("h", True)] == [1, 2, 3, 5]
    assert [sk for sk, _ in c.query("h", False)] == [5, 3, 2, 1]
    assert [sk for sk, _ in c.query("h", True, 2)] == [3, 5]
    assert [sk for sk, _ in c.query("h", False, 3)] == [2, 1]
    c.remove("h", 3)
    assert [sk for sk, _ in c.query("h", True)] == [1, 2, 5]
    assert list(c.query("missing", True)) == []


def test_scan_segments_partition_the_table_and_resume() -> None:
    c = Collection()
    for h in range(200):
        for s in range(2):
            c.put(f"h{h}".encode(), s, stored(s))
    full = [(h, s) for h, s, _ in c.scan()]
    assert len(full) == 400
    parts = [[(h, s) for h, s, _ in c.scan(seg, 4)] for seg in range(4)]
    assert sorted(x for p in parts for x in p) == sorted(full)
    assert all(p for p in parts)
    resumed = [(h, s) for h, s, _ in c.scan(start=full[99])]
    assert resumed == full[100:]


def test_token_order_stays_sorted_through_adds_removals_and_block_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TokenOrder, "LOAD", 4)  # blocks split and empty out many times over
    rng = random.Random(7)
    order, reference = TokenOrder(), dict[Any, Any]()  # pair -> its value
    for step in range(3000):
        pair = (rng.randrange(50), rng.randrange(20))
        roll = rng.random()
        if pair in reference and roll < 0.4:
            order.remove(pair)
            del reference[pair]
        elif pair in reference and roll < 0.6:
            order.replace(pair, step, step % 7)  # each value and size stay with their own pair through the moves
            reference[pair] = step
        elif pair not in reference:
            order.add(pair, step, step % 7)
            reference[pair] = step
        if rng.random() < 0.05:
            start = (rng.randrange(50), rng.randrange(20))
            expected = [(*p, reference[p]) for p in sorted(reference) if p >= start]
            assert list(order.from_pair(start)) == expected
    everything = [(*p, reference[p]) for p in sorted(reference)]
    assert list(order.from_pair((0,))) == everything
    sized = [(reference[p], reference[p] % 7) for p in sorted(reference)]
    assert list(order.values_from((0,), 1 << 32, 0)) == sized
    assert list(order.values_from((0,), 25, 0)) == [
        v for p, v in zip(sorted(reference), sized, strict=True) if p < (25,)
    ]
    middle = sorted(reference)[len(reference) // 2]
    assert list(order.values_from(middle, 1 << 32, 1)) == sized[len(reference) // 2 + 1 :]
    order.remove((99, 99))  # absent: nothing happens
    order.replace((99, 99), "x")
    assert list(order.from_pair((0,))) == everything


def test_token_order_replaces_the_value_of_its_own_pair_when_tokens_are_unique_or_shared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(TokenOrder, "LOAD", 4)
    rng = random.Random(11)
    # mostly unique tokens (found by position alone), some shared by two hash keys (found by comparing them),
    # some the last of their block
    pairs = sorted({(rng.randrange(1 << 32), 0) for _ in range(300)} | {(7, 1), (7, 2), (9, 1)})
    order = TokenOrder()
    for n, pair in enumerate(rng.sample(pairs, len(pairs))):
        order.add(pair, ("old", n), 1)
    for pair in pairs:
        order.replace(pair, pair, pair[1] + 2)
    assert list(order.from_pair((0,))) == [(*p, p) for p in pairs]
    assert list(order.values_from((0,), 1 << 32, 0)) == [(p, p[1] + 2) for p in pairs]


def test_a_scan_page_cut_from_the_sizes_is_the_one_read_item_by_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """`page` takes whole runs of a block; read one by one, a page stops before the item that would pass the bytes,
    or at the Limit (saying more follow even at the segment's end)."""

    def one_by_one(start: tuple[Any, ...], skip: int, hi: int, limit: int | None, most: int) -> Any:
        out: list[Any] = []
        total = 0
        for value, size in order.values_from(start, hi, skip):
            if out and total + size > most:
                return out, total, True
            out.append(value)
            total += size
            if limit is not None and len(out) >= limit:
                return out, total, True
        return out, total, False

    monkeypatch.setattr(TokenOrder, "LOAD", 4)  # pages span many blocks
    rng = random.Random(5)
    order = TokenOrder()
    pairs = sorted({(rng.randrange(1000), rng.randrange(3)) for _ in range(300)})
    for n, pair in enumerate(rng.sample(pairs, len(pairs))):
        order.add(pair, n, rng.randrange(1, 40))
    starts: list[tuple[Any, ...]] = [(0,), (2000,), pairs[0], pairs[-1], (pairs[50][0], 9), *rng.sample(pairs, 20)]
    for start in starts:
        for skip in (0, 1):
            for hi in (1 << 32, 500, start[0] + 1):
                for limit in (None, 1, 3, 10, 1000):
                    for most in (1, 39, 100, 1 << 20):
                        assert order.page(start, skip, hi, limit, most) == one_by_one(start, skip, hi, limit, most)
    assert TokenOrder().page((0,), 0, 1 << 32, None, 100) == ([], 0, False)


@pytest.mark.parametrize("kind", [Collection, HashCollection])
def test_scan_sees_partitions_added_and_removed_between_pages(kind: type[Collection]) -> None:
    def place(hk: str) -> tuple[int, str]:
        return token_of(hk), hk

    c = kind()
    for h in range(100):
        c.put(f"h{h}", 0, stored(h))
    first = [hk for hk, _, _ in itertools.islice(c.scan(), 30)]
    assert first == sorted((f"h{h}" for h in range(100)), key=place)[:30]
    for h in range(100, 150):
        c.put(f"h{h}", 0, stored(h))
    last = first[-1]
    c.remove(last, 0)  # the page's last partition is gone: the next page resumes after its place
    rest = [hk for hk, _, _ in c.scan(start=(last, 0))]
    now = sorted((f"h{h}" for h in range(150) if f"h{h}" != last), key=place)
    assert rest == [hk for hk in now if place(hk) > place(last)]


@pytest.mark.parametrize("kind", [Collection, HashCollection])
def test_one_item_partitions_read_alike_in_both_collections(kind: type[Collection]) -> None:
    """A table without a sort key keeps each partition as its one item: every read answers as the general shape."""
    c = kind()
    for h in range(40):
        c.put(f"h{h}".encode(), 0, stored(h))
    c.put(b"h7", 0, stored(700))  # a replacement: still one partition
    c.remove(b"h9", 0)
    c.remove(b"absent", 0)  # nothing happens
    assert c.get(b"h7", 0) == stored(700)
    assert c.get(b"h9", 0) is None
    assert [sk for sk, _ in c.query(b"h7", True)] == [0]
    assert [sk for sk, _ in c.query(b"h7", False)] == [0]
    assert list(c.query(b"h7", True, 0)) == []  # nothing after the one item
    assert list(c.query(b"h9", True)) == []
    full = [(hk, sk) for hk, sk, _ in c.scan()]
    assert len(full) == 39 and len(set(full)) == 39
    assert [(hk, sk) for hk, sk, _ in c.scan(start=full[10])] == full[11:]
    segments = [[(hk, sk) for hk, sk, _ in c.scan(seg, 3)] for seg in range(3)]
    assert [x for seg in segments for x in seg] == full
    # the Scan's own walk reads (encoding, size) alike, from every start: a key there, a key since removed
    assert list(c.scan_items()) == [tuple(it) for _, _, it in c.scan()]
    for seg in range(3):
        assert list(c.scan_items(seg, 3)) == [tuple(it) for _, _, it in c.scan(seg, 3)]
    c.remove(full[20][0], 0)
    for start in (full[10], full[20], full[-1]):
        assert list(c.scan_items(start=start)) == [tuple(it) for _, _, it in c.scan(start=start)]
    assert [tuple(it) for _, _, it in c.scan(start=full[20])] == [tuple(c.get(hk, 0) or ()) for hk, _ in full[21:]]
    page_starts: list[tuple[Any, Any] | None] = [None, full[10], full[20], full[-3], full[-1]]
    for page_start in page_starts:  # a whole page, cut by the store without sort keys
        read = list(c.scan_items(start=page_start))[:5]
        whole = ([raw for raw, _ in read], sum(size for _, size in read), len(read) == 5)
        assert c.scan_page(0, 1, page_start, 5, 1 << 20) == (None if kind is Collection else whole)


def test_a_table_without_a_sort_key_stores_one_item_per_partition() -> None:
    def table(key: KeyDef) -> Table:
        return Table("t", "arn", "id", key, [], "PAY_PER_REQUEST", None, 0.0, 0.0)

    assert type(table(KeyDef("pk", "S")).base) is HashCollection
    assert type(table(KeyDef("pk", "S", "sk", "N")).base) is Collection


@pytest.mark.parametrize(
    "item",
    [
        {"pk": {"S": "é"}, "n": {"N": "1.50"}},
        {"b": {"B": "AQ=="}, "ss": {"SS": ["a", "b"]}, "m": {"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}]}}}},
    ],
)
def test_a_stored_item_answers_as_its_encoding_and_decodes_to_a_fresh_copy(item: dict[str, object]) -> None:
    s = StoredItem.of(item, 123)
    assert s.size == 123
    assert orjson.dumps({"Item": s.wire()}) == orjson.dumps({"Item": item})
    copy = s.item()
    assert copy == item
    copy.clear()  # the caller's to change: the stored item is not
    assert s.item() == item


def test_full_collections_freeze_their_survivors_and_still_collect_garbage() -> None:
    import gc
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self  # a cycle: only the collector can free it

    before = list(gc.callbacks)
    try:
        freeze_after_full_collections()
        freeze_after_full_collections()  # idempotent
        assert len(gc.callbacks) == len(before) + 1
        kept = Node()
        garbage = Node()
        gone = weakref.ref(garbage)
        del garbage
        gc.collect()
        assert gone() is None  # the pass collected the cycle before freezing what survived
        assert gc.get_freeze_count() > 0
        assert gc.is_tracked(kept)
    finally:
        gc.callbacks[:] = before
        gc.unfreeze()
