"""The byte-bounded cache: entries and declared bytes both stay under their bounds, oldest dropped first."""

from __future__ import annotations

import pytest

from dynlocust.local.cache import BoundedCache


@pytest.mark.parametrize(
    ("max_entries", "max_bytes", "puts", "kept", "total"),
    [
        (3, 100, [("a", 10), ("b", 10), ("c", 10), ("d", 10)], ["b", "c", "d"], 30),  # entry bound
        (10, 25, [("a", 10), ("b", 10), ("c", 10)], ["b", "c"], 20),  # byte bound
        (10, 25, [("a", 10), ("big", 26)], ["a"], 10),  # larger than the whole budget: not kept
        (10, 25, [("a", 10), ("a", 20)], ["a"], 20),  # replaced: its old size is given back
        (10, 25, [("a", 5), ("b", 5), ("c", 25)], ["c"], 25),  # one entry filling the budget drops all others
    ],
)
def test_bounds(max_entries: int, max_bytes: int, puts: list[tuple[str, int]], kept: list[str], total: int) -> None:
    cache: BoundedCache[str] = BoundedCache(max_entries, max_bytes)
    for key, size in puts:
        cache.put(key, key.upper(), size)
    assert [k for k in ("a", "b", "c", "d", "big") if cache.get(k) is not None] == sorted(kept)
    assert all(cache.get(k) == k.upper() for k in kept)
    assert (len(cache), cache.bytes) == (len(kept), total)


def test_clear_gives_back_every_byte() -> None:
    cache: BoundedCache[int] = BoundedCache(4, 100)
    cache.put("a", 1, 40)
    cache.clear()
    assert (len(cache), cache.bytes, cache.get("a")) == (0, 0, None)
