"""The endpoint gives the free pages of glibc's heap back: fragmentation must not grow its RSS (issue 29)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.local.heap import heap_trimmer

PROBE = """
import os, sys
from dynlocust.local.heap import heap_trimmer

def rss():
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

trim = heap_trimmer()
trim()
big, kept = [], []
start = rss()
for i in range(300):
    big.append(bytes([i % 256]) * 60_000)
    kept.append(bytes([i % 256]) * 600)
mid = rss()
del big
before = rss()
trim()
after = rss()
print(start, mid, before, after, len(kept))
"""


@pytest.mark.skipif(heap_trimmer() is None, reason="not glibc: no malloc_trim")
def test_trimming_releases_the_free_pages_between_live_allocations() -> None:
    # 60 KB buffers (under glibc's 128 KB mmap threshold: from the heap), each followed by a small one that stays:
    # freed, the buffers leave 18 MB of free pages that the heap cannot give back from its top. In a fresh process:
    # in a test session's heap the small ones can fill older holes instead, leave the buffers at the top, and
    # free() gives them back before the trim (make test-quick under stress-ng: RSS fell 16 MB at the del)
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    start, mid, before, after, kept = (int(v) for v in probe.stdout.split())
    assert mid - start > 9 * 2**20, (start, mid, before, after)  # the buffers were made
    assert before - after > 9 * 2**20, (start, mid, before, after)  # and only the trim gave their pages back
    assert kept == 300


def test_a_running_endpoint_trims_its_heap_until_it_stops() -> None:
    ep = serve_in_thread(capacity=None)
    trimmer = ep.server._trimmer
    try:
        assert trimmer is not None and not trimmer.dead
    finally:
        ep.stop()
    assert trimmer.dead
    assert ep.server._trimmer is None
