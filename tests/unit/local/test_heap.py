"""The endpoint gives the free pages of glibc's heap back: fragmentation must not grow its RSS (issue 29)."""

from __future__ import annotations

import os

import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.local.heap import heap_trimmer


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(heap_trimmer() is None, reason="not glibc: no malloc_trim")
def test_trimming_releases_the_free_pages_between_live_allocations() -> None:
    trim = heap_trimmer()
    assert trim is not None
    trim()
    # 60 KB buffers (under glibc's 128 KB mmap threshold: from the heap), each followed by a small one that stays:
    # freed, the buffers leave 18 MB of free pages that the heap cannot give back from its top
    big, kept = [], []
    start = _rss()
    for i in range(300):
        big.append(bytes([i % 256]) * 60_000)
        kept.append(bytes([i % 256]) * 600)
    mid = _rss()
    del big
    before = _rss()
    trim()
    after = _rss()
    assert before - after > 9 * 2**20, (start, mid, before, after)
    assert len(kept) == 300


def test_a_running_endpoint_trims_its_heap_until_it_stops() -> None:
    ep = serve_in_thread(capacity=None)
    trimmer = ep.server._trimmer
    try:
        assert trimmer is not None and not trimmer.dead
    finally:
        ep.stop()
    assert trimmer.dead
    assert ep.server._trimmer is None
