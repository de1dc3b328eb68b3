"""ItemCollectionMetrics: the size of the item collections a write touched, for ReturnItemCollectionMetrics SIZE.

An item collection is what a table with local secondary indexes holds under one partition key value: its items and
their LSI entries. PutItem, UpdateItem and DeleteItem return one collection's metrics; BatchWriteItem and
TransactWriteItems a list per table, one entry per collection written (in the order first written). A table without
an LSI returns none. Sources: the API reference (ItemCollectionMetrics, and each operation's
ReturnItemCollectionMetrics); the AWS CLI's batch-write-item example (three puts to two partition keys answer two
entries, each `[0.0, 1.0]`).

The documentation leaves the estimate's bounds open ("do not rely on the precision or accuracy"); dynlocust's
choice: the collection's bytes (its items, and each LSI entry counted at its item's size) in whole GB rounded down,
and one more, so a collection under 1 GB is `[0.0, 1.0]` as in the CLI's example. Counting walks the collection,
so it costs only requests that ask for it.
"""

from __future__ import annotations

from typing import Any

from dynlocust.local.store import Table

GB = 1024**3


def requested(req: dict[str, Any]) -> bool:
    """Whether the request asks for ItemCollectionMetrics (its enum is checked with the other constraints)."""
    return req.get("ReturnItemCollectionMetrics") == "SIZE"


def metrics(t: Table, hk: Any, key: dict[str, Any]) -> dict[str, Any] | None:
    """The metrics of the collection `hk` of `t` as it is now (after the write); None when `t` has no LSI.

    `key` is the written item or its key (its partition key attribute names the collection)."""
    if not t.lsis:
        return None
    size = sum(stored.size for _, stored in t.base.query(hk, True))
    size += sum(stored.size for idx in t.lsis.values() for _, stored in idx.coll.query(hk, True))
    lower = float(size // GB)
    return {"ItemCollectionKey": {t.key.hash_attr: key[t.key.hash_attr]}, "SizeEstimateRangeGB": [lower, lower + 1.0]}


def per_table(written: list[tuple[Table, Any, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """BatchWriteItem's and TransactWriteItems' map: table name -> one entry per collection in `written`, a list of
    (table, hk, item or key) in the order written; tables without an LSI are left out."""
    out: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, Any]] = set()
    for t, hk, key in written:
        if (t.name, hk) in seen:
            continue
        seen.add((t.name, hk))
        entry = metrics(t, hk, key)
        if entry is not None:
            out.setdefault(t.name, []).append(entry)
    return out
