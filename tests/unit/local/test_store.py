from __future__ import annotations

import itertools
import random
from decimal import Decimal

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.store import Collection, TokenOrder, comparable, freeze_after_full_collections, token_of


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
        c.put("h", i, {"i": i})
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
            c.put(f"h{h}".encode(), s, {})
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
    order, reference = TokenOrder(), set()
    for _ in range(2000):
        pair = (rng.randrange(50), rng.randrange(20))
        if pair in reference and rng.random() < 0.5:
            order.remove(pair)
            reference.discard(pair)
        elif pair not in reference:
            order.add(pair)
            reference.add(pair)
        if rng.random() < 0.05:
            start = (rng.randrange(50), rng.randrange(20))
            assert list(order.from_pair(start)) == [p for p in sorted(reference) if p >= start]
    assert list(order.from_pair((0,))) == sorted(reference)
    order.remove((99, 99))  # absent: nothing happens
    assert list(order.from_pair((0,))) == sorted(reference)


def test_scan_sees_partitions_added_and_removed_between_pages() -> None:
    def place(hk: str) -> tuple[int, str]:
        return token_of(hk), hk

    c = Collection()
    for h in range(100):
        c.put(f"h{h}", 0, {"h": h})
    first = [hk for hk, _, _ in itertools.islice(c.scan(), 30)]
    assert first == sorted((f"h{h}" for h in range(100)), key=place)[:30]
    for h in range(100, 150):
        c.put(f"h{h}", 0, {"h": h})
    last = first[-1]
    c.remove(last, 0)  # the page's last partition is gone: the next page resumes after its place
    rest = [hk for hk, _, _ in c.scan(start=(last, 0))]
    now = sorted((f"h{h}" for h in range(150) if f"h{h}" != last), key=place)
    assert rest == [hk for hk in now if place(hk) > place(last)]


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
