from __future__ import annotations

from decimal import Decimal

import pytest

from dynlocust.local.errors import ServiceError
from dynlocust.local.store import Collection, comparable


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
