"""A cache bounded in bytes as well as in entries, for what the endpoint remembers between requests.

Why bytes: a load test repeats a few small expressions, so caching their parse pays; but one request may carry a
1.6 MB key (100,000 expression attribute names), and an entry bound alone then keeps hundreds of MB alive.
Entries are dropped oldest first; one larger than the whole budget is not kept at all.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

V = TypeVar("V")

#: What one str costs besides its characters: CPython's header of an ASCII str (49 B) and a container's slot (8 B).
STR_OVERHEAD = 57


def strings_size(strings: Iterable[str]) -> int:
    """The bytes that keeping these strings alive holds, roughly (ASCII text; one byte a character)."""
    return sum(len(s) + STR_OVERHEAD for s in strings)


class BoundedCache(Generic[V]):
    """A dict-like cache holding at most `max_entries` entries and `max_bytes` of their declared sizes."""

    __slots__ = ("_entries", "bytes", "max_bytes", "max_entries")

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: dict[Hashable, tuple[V, int]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | None:
        hit = self._entries.get(key)
        return None if hit is None else hit[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Keep value under key, counted as `size` bytes (the caller's estimate of the key and value's text)."""
        if size > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        while self._entries and (len(self._entries) >= self.max_entries or self.bytes + size > self.max_bytes):
            _, dropped = self._entries.pop(next(iter(self._entries)))
            self.bytes -= dropped
        self._entries[key] = (value, size)
        self.bytes += size

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0
