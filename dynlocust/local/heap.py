"""Giving the free pages of glibc's heap back to the system, once a minute, in the endpoint's process.

Why: a request allocates and frees several buffers over pymalloc's 512 bytes (the 64 KB socket read, the body,
the response, a stored item's JSON), and glibc serves those from its heap. Freed, their pages stay resident, and
as long-lived items land between them the heap fragments: under `bench_endpoint_soak.py` the heap's RSS grew while
malloc's bytes in use stayed flat. `malloc_trim(0)` releases every whole free page inside the heap, not only at its
top (malloc_trim(3): "Since glibc 2.8 this function frees memory in all arenas and in all chunks with whole free
pages"). It took about a millisecond on a fragmented 20 MB heap, so once a minute costs nothing that shows, and
what fragmentation keeps resident is then what one minute of requests touches, not what all of them did.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

#: Seconds between two trims of the heap.
TRIM_INTERVAL_S = 60.0


def heap_trimmer() -> Callable[[], int] | None:
    """A call that trims glibc's heap (1 if it released memory), or None when the C library is not glibc."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # musl, macOS: no malloc_trim, nothing to do
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return functools.partial(trim, 0)


def keep_heap_trimmed(interval: float = TRIM_INTERVAL_S) -> None:
    """Trim the heap every `interval` seconds, for ever (a greenlet of the endpoint's hub; killed when it stops)."""
    import gevent

    trim = heap_trimmer()
    if trim is None:
        return
    while True:
        gevent.sleep(interval)
        trim()
