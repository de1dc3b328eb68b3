"""The backfill of a global secondary index that UpdateTable adds to a table holding items.

Why in slices: the service builds such an index in the background, the table serving meanwhile, the index CREATING
with `Backfilling: true` until every item was read (API reference, GlobalSecondaryIndexDescription). Filled in one
go, a 100,000-item table held every client for a second. A slice reads the table in its scan order for at most
SLICE_SECONDS of CPU; the first runs inside UpdateTable (a small table is then ACTIVE at once, as before), the rest
in the background between other requests. A write meanwhile changes the index only for an item the backfill has
passed (`Index.current`); an item still ahead is read as it is when the backfill gets there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dynlocust.local.errors import ServiceError
from dynlocust.local.store import Index, Table
from dynlocust.local.units import item_size

#: CPU a slice takes at most (dynlocust's choice): a client's request waits at most this long behind one.
SLICE_SECONDS = 0.002
#: Table items read between two looks at the clock.
_ITEMS_PER_CHECK = 64

Step = Callable[[], bool]


def start(tables: dict[str, Table], t: Table, idx: Index, background: Callable[[Step], None] | None) -> None:
    """Fill `idx` (just added to `t`, empty): one slice now, then `background(step)` runs step() until it answers
    True (None: the rest at once, for in-process callers without a server)."""
    idx.online = True
    idx.backfilling = True
    idx.backfilled_to = None
    name, coll = idx.name, idx.coll

    def step() -> bool:
        # UpdateTable replaces index objects with copies that share the collection: find the current one
        cur = t.gsis.get(name)
        if tables.get(t.name) is not t or cur is None or cur.coll is not coll:
            return True  # the table or the index was deleted meanwhile
        return fill(t, cur, SLICE_SECONDS if background is not None else None)

    if not step() and background is not None:
        background(step)


def fill(t: Table, idx: Index, seconds: float | None) -> bool:
    """Add the table's next items to `idx` for at most `seconds` of CPU (None: to the end); True once done."""
    deadline = None if seconds is None else time.thread_time() + seconds
    for n, (hk, sk, stored) in enumerate(t.base.scan(start=idx.backfilled_to), 1):
        idx.backfilled_to = (hk, sk)
        it = stored.item()
        try:
            e = idx.entry(it, t.key)
        except ServiceError:  # an item whose key the index refuses is left out, as the service leaves it out
            e = None
        if e is not None:
            idx.coll.put(e[0], e[1], stored)
            idx.count += 1
            idx.size += item_size(idx.project(it, t.key))
        if deadline is not None and n % _ITEMS_PER_CHECK == 0 and time.thread_time() > deadline:
            return False
    idx.backfilling = False
    idx.backfilled_to = None
    return True
