"""Consumed capacity units and the service's size limits, following its documented rules.

Why here and not in the store: the same arithmetic feeds ReturnConsumedCapacity, the 400 KB item limit, the 1 MB
page limit and the capacity model's charges, so it must be one function each. Item sizes themselves are computed
in `attrvalues` (re-exported here) so that expressions' `size()` and the limits agree.
"""

from __future__ import annotations

import math
from typing import Any

from dynlocust.dynamodb import MAX_ITEM_SIZE
from dynlocust.local.attrvalues import item_size, number_size, value_size

__all__ = ["item_size", "number_size", "read_units", "value_size", "write_units"]

ITEM_LIMIT = MAX_ITEM_SIZE
PAGE_LIMIT = 1024 * 1024
WRITE_UNIT = 1024
READ_UNIT = 4096


def write_units(size: int) -> float:
    """One unit per 1 KB started, at least one."""
    return float(max(1, math.ceil(size / WRITE_UNIT)))


def read_units(size: int, consistent: bool) -> float:
    """One unit per 4 KB started (at least one) for a strongly consistent read, half for eventual."""
    units = float(max(1, math.ceil(size / READ_UNIT)))
    return units if consistent else units / 2


class Consumed:
    """Accumulates units per table and per index for one response's ConsumedCapacity."""

    __slots__ = ("gsi", "kind", "lsi", "table", "table_units")

    def __init__(self, table: str, kind: str) -> None:
        self.table = table
        self.kind = kind  # "read" | "write"
        self.table_units = 0.0
        self.gsi: dict[str, float] = {}
        self.lsi: dict[str, float] = {}

    def add_table(self, units: float) -> None:
        self.table_units += units

    def add_gsi(self, index: str, units: float) -> None:
        self.gsi[index] = self.gsi.get(index, 0.0) + units

    def add_lsi(self, index: str, units: float) -> None:
        self.lsi[index] = self.lsi.get(index, 0.0) + units

    @property
    def total(self) -> float:
        return self.table_units + sum(self.gsi.values()) + sum(self.lsi.values())

    def render(self, mode: str | None, per_kind: bool = False) -> dict[str, Any] | None:
        """The wire ConsumedCapacity object for ReturnConsumedCapacity=mode (None/NONE -> None).

        TOTAL is TableName and CapacityUnits; INDEXES adds a Capacity object for the table (there even when it
        consumed nothing, as on a read of an index) and one for each index written or read. Only transactions
        (`per_kind`) also carry ReadCapacityUnits/WriteCapacityUnits, at the top and in each Capacity object.
        Sources: the AWS CLI's examples (query, example 5: `"Table": {"CapacityUnits": 0.0}` beside the index read;
        batch-write-item: INDEXES without WriteCapacityUnits), dynalite's tests recorded against the service
        (BatchGetItem, Scan), moto's test_consumed_capacity_get_unknown_item and test_valid_transact_get_items.
        """
        if mode not in ("TOTAL", "INDEXES"):
            return None
        key = "ReadCapacityUnits" if self.kind == "read" else "WriteCapacityUnits"

        def capacity(units: float) -> dict[str, float]:
            return {"CapacityUnits": units, key: units} if per_kind else {"CapacityUnits": units}

        out: dict[str, Any] = {"TableName": self.table, **capacity(self.total)}
        if mode == "INDEXES":
            out["Table"] = capacity(self.table_units)
            if self.gsi:
                out["GlobalSecondaryIndexes"] = {n: capacity(u) for n, u in self.gsi.items()}
            if self.lsi:
                out["LocalSecondaryIndexes"] = {n: capacity(u) for n, u in self.lsi.items()}
        return out
