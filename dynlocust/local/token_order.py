"""The order of a collection's partitions by hash token: what Scan walks and Segment/TotalSegments split.

`TokenOrder` keeps (token, hash key) pairs with each partition's value in blocks of machine-integer arrays (see its
docstring for why), for `dynlocust.local.store`'s collections.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import Any

TOKEN_BITS = 32
_TOKEN_CODE = "I" if array("I").itemsize * 8 >= TOKEN_BITS else "L"  # array typecode of a token
_SIZE_CODE = "I" if array("I").itemsize >= 4 else "L"  # of an item size (at most 400 KB)


try:  # CPython's own MD5: the same digest without OpenSSL's per-call lookup (half the cost of a token)
    from _md5 import md5 as _md5  # type: ignore[import-not-found]  # a private CPython module: no stub
except ImportError:  # a build without it
    _md5 = functools.partial(hashlib.md5, usedforsecurity=False)


def token_of(hk: Any) -> int:
    raw = hk if isinstance(hk, bytes) else str(hk).encode()
    return int.from_bytes(_md5(raw).digest()[:4], "big")


class TokenOrder:
    """The (token, hk) pairs of a collection's partitions, each with its value, kept in order as partitions come and go.

    Why blocks: one flat sorted list costs an O(n) move per new partition, and sorting on demand costs
    O(n log n) per Scan page when puts and scans interleave. Blocks of at most `2 * LOAD` pairs, found by bisecting
    their last pairs, make an insert or a removal a move inside one block and a page a bisect then a walk.
    Why arrays: the tokens are bisected in contiguous machine integers, each block's and each block's last; a list of
    (token, hk) tuples made every step of a bisect two pointer chases to random memory, the largest part of a fresh
    key's PutItem in a large table. Hash keys are compared only between equal tokens.
    Why values: a Scan reads each partition (or item's encoding and size) from the block it walks; looking each up
    by its hash key in the collection's dict cost three reads of random memory per item, and made a page of a
    10^6-item table 10x dearer.
    """

    LOAD = 512

    __slots__ = ("_hks", "_last_hks", "_last_toks", "_sizes", "_toks", "_vals")

    def __init__(self) -> None:
        self._toks: list[array[int]] = []  # per block, its tokens in order
        self._hks: list[list[Any]] = []  # per block, the hash keys alongside
        self._vals: list[list[Any]] = []  # per block, the values alongside
        self._sizes: list[array[int]] = []  # ... and their sizes
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

    def _find(self, tok: int, hk: Any) -> tuple[int, int] | None:
        """(block, position) of the pair (tok, hk), or None when it is not there."""
        i = self._block(tok, hk, True)
        if i == len(self._toks):
            return None
        j = self._slot(i, tok, hk, True)
        toks = self._toks[i]
        if j == len(toks) or toks[j] != tok or self._hks[i][j] != hk:
            return None
        return i, j

    def add(self, pair: tuple[int, Any], value: Any = None, size: int = 0) -> None:
        """Insert a pair that is not there yet, with its value and size."""
        tok, hk = pair
        if not self._toks:
            self._toks.append(array(_TOKEN_CODE, (tok,)))
            self._hks.append([hk])
            self._vals.append([value])
            self._sizes.append(array(_SIZE_CODE, (size,)))
            self._last_toks.append(tok)
            self._last_hks.append(hk)
            return
        i = self._block(tok, hk, True)
        if i == len(self._toks):
            i -= 1
            toks, hks, vals, sizes = self._toks[i], self._hks[i], self._vals[i], self._sizes[i]
            toks.append(tok)
            hks.append(hk)
            vals.append(value)
            sizes.append(size)
            self._last_toks[i] = tok
            self._last_hks[i] = hk
        else:
            toks, hks, vals, sizes = self._toks[i], self._hks[i], self._vals[i], self._sizes[i]
            j = self._slot(i, tok, hk, True)
            toks.insert(j, tok)
            hks.insert(j, hk)
            vals.insert(j, value)
            sizes.insert(j, size)
        if len(toks) > 2 * self.LOAD:
            half = len(toks) // 2
            self._toks[i : i + 1] = [toks[:half], toks[half:]]
            self._hks[i : i + 1] = [hks[:half], hks[half:]]
            self._vals[i : i + 1] = [vals[:half], vals[half:]]
            self._sizes[i : i + 1] = [sizes[:half], sizes[half:]]
            self._last_toks[i : i + 1] = array(_TOKEN_CODE, (toks[half - 1], toks[-1]))
            self._last_hks[i : i + 1] = [hks[half - 1], hks[-1]]

    def replace(self, pair: tuple[int, Any], value: Any, size: int = 0) -> None:
        """Give a pair that is there (the caller knows) a new value and size.

        Why not `_find`: a token is nearly always its partition's alone, and then where it is says which pair it is;
        comparing hash keys read each one's memory, a cache miss on every overwrite in a large table.
        """
        tok = pair[0]
        i = bisect_left(self._last_toks, tok)
        toks = self._toks[i] if i < len(self._toks) else None
        j = -1 if toks is None else bisect_left(toks, tok)
        if toks is None or toks[j] != tok or (j + 1 < len(toks) and toks[j + 1] == tok) or self._last_toks[i] == tok:
            at = self._find(*pair)  # a token shared, or the last of its block: compare the hash keys
            if at is None:
                return
            i, j = at
        self._vals[i][j] = value
        self._sizes[i][j] = size

    def remove(self, pair: tuple[int, Any]) -> None:
        at = self._find(*pair)
        if at is None:
            return
        i, j = at
        toks, hks = self._toks[i], self._hks[i]
        del toks[j]
        del hks[j]
        del self._vals[i][j]
        del self._sizes[i][j]
        if not toks:
            del self._toks[i]
            del self._hks[i]
            del self._vals[i]
            del self._sizes[i]
            del self._last_toks[i]
            del self._last_hks[i]
        elif j == len(toks):
            self._last_toks[i] = toks[-1]
            self._last_hks[i] = hks[-1]

    def from_pair(self, pair: tuple[Any, ...]) -> Iterator[tuple[int, Any, Any]]:
        """(token, hk, value) at or after `pair` (a bisect position; `(token,)` starts at a token), in order."""
        exact = len(pair) > 1
        tok, hk = pair[0], pair[1] if exact else None
        i = self._block(tok, hk, exact)
        if i == len(self._toks):
            return
        j = self._slot(i, tok, hk, exact)
        # indexes, not slices: the caller does not write while it iterates (one request at a time)
        for b in range(i, len(self._toks)):
            toks, hks, vals = self._toks[b], self._hks[b], self._vals[b]
            for k in range(j, len(toks)):
                yield toks[k], hks[k], vals[k]
            j = 0

    def values_from(self, pair: tuple[Any, ...], hi_tok: int, skip: int) -> Iterator[tuple[Any, int]]:
        """(value, size) from `pair` on, but the first `skip`, up to the token `hi_tok` (excluded): what a Scan of
        one-item partitions reads, without touching the hash keys or the values' own memory."""
        exact = len(pair) > 1
        tok, hk = pair[0], pair[1] if exact else None
        i = self._block(tok, hk, exact)
        if i == len(self._toks):
            return
        j = self._slot(i, tok, hk, exact) + skip
        for b in range(i, len(self._toks)):
            toks, vals, sizes = self._toks[b], self._vals[b], self._sizes[b]
            for k in range(j, len(toks)):
                if toks[k] >= hi_tok:
                    return
                yield vals[k], sizes[k]
            j = 0

    def page(
        self, pair: tuple[Any, ...], skip: int, hi_tok: int, limit: int | None, max_bytes: int
    ) -> tuple[list[Any], int, bool]:
        """A Scan page of one-item partitions: the values from `pair` on (but the first `skip`) up to the token
        `hi_tok` (excluded), at most `limit` of them and as many as fit in `max_bytes` by their sizes (at least one):
        (values, their total size, whether the page stopped before the segment's end).

        Why whole runs: a page's cut is found in the sizes arrays and its values are taken by slices, so no Python
        code touches an item; reading each item's memory one by one, a cache and TLB miss each in a large table,
        was what made a page of a 10^6-item table dearer than one of 10^4.
        """
        exact = len(pair) > 1
        tok, hk = pair[0], pair[1] if exact else None
        i = self._block(tok, hk, exact)
        if i == len(self._toks):
            return [], 0, False
        j = self._slot(i, tok, hk, exact) + skip
        room = -1 if limit is None else limit
        out: list[Any] = []
        total = 0
        for b in range(i, len(self._toks)):
            toks = self._toks[b]
            end = len(toks)
            j = min(j, end)
            ends_here = toks[-1] >= hi_tok
            if ends_here:
                end = bisect_left(toks, hi_tok, j)
            stop = end if room < 0 else min(end, j + room)
            if stop > j:
                reached = list(itertools.accumulate(self._sizes[b][j:stop], initial=total))
                fit = max(bisect_right(reached, max_bytes) - 1, 0 if out else 1)
                out += self._vals[b][j : j + fit]
                total = reached[fit]
                if fit < stop - j:
                    return out, total, True  # the next item does not fit
                if room >= 0:
                    room -= fit
                    if room == 0:
                        return out, total, True  # the service gives a LastEvaluatedKey at the Limit
            if ends_here:
                return out, total, False
            j = 0
        return out, total, False

    def scan_from(
        self, segment: int, total: int, start: tuple[Any, Any] | None
    ) -> tuple[Iterator[tuple[int, Any, Any]], int, Any]:
        """Where a Scan of `segment` of `total` starts: (entries from there, the token that ends the segment, the sort
        key to resume after in the first partition, or None to read it whole)."""
        span = 1 << TOKEN_BITS
        hi_tok = (segment + 1) * span // total
        if start is None:
            return self.from_pair((segment * span // total,)), hi_tok, None
        shk, first_sk = start
        entries, first = _peek(self.from_pair((token_of(shk), shk)))
        return entries, hi_tok, (first_sk if first is not None and first[1] == shk else None)


def _peek(
    entries: Iterator[tuple[int, Any, Any]],
) -> tuple[Iterator[tuple[int, Any, Any]], tuple[int, Any, Any] | None]:
    first = next(entries, None)
    return (entries if first is None else itertools.chain((first,), entries)), first
