"""Item sizes and consumed capacity units, following the service's documented rules.

Why here and not in the store: the same arithmetic feeds ReturnConsumedCapacity, the 400 KB item limit, the 1 MB
page limit and the capacity model's charges, so it must be one function each.
"""

from __future__ import annotations

import math
from typing import Any

ITEM_LIMIT = 400 * 1024
PAGE_LIMIT = 1024 * 1024
WRITE_UNIT = 1024
READ_UNIT = 4096


def number_size(text: str) -> int:
    """Bytes of a number: one per two significant digits, plus one (leading/trailing zeros trimmed)."""
    digits = text.lstrip("+-")
    if "e" in digits or "E" in digits:
        digits = digits.split("e")[0].split("E")[0]
    digits = digits.replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def _b64_len(text: str) -> int:
    n = len(text)
    if n == 0:
        return 0
    pad = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    return n * 3 // 4 - pad


def value_size(av: dict[str, Any]) -> int:
    """Bytes of one attribute value in wire format."""
    for kind, v in av.items():
        if kind == "S":
            return len(v) if v.isascii() else len(v.encode("utf-8"))
        if kind == "N":
            return number_size(v)
        if kind == "B":
            return _b64_len(v)
        if kind in ("BOOL", "NULL"):
            return 1
        if kind == "SS":
            return sum(len(s.encode("utf-8")) for s in v)
        if kind == "NS":
            return sum(number_size(s) for s in v)
        if kind == "BS":
            return sum(_b64_len(s) for s in v)
        if kind == "L":
            return 3 + sum(1 + value_size(e) for e in v)
        if kind == "M":
            return 3 + sum(1 + len(k.encode("utf-8")) + value_size(e) for k, e in v.items())
    return 0


def item_size(item: dict[str, Any] | None) -> int:
    """Bytes of an item: attribute name UTF-8 lengths plus value sizes."""
    if not item:
        return 0
    total = 0
    for name, av in item.items():
        total += (len(name) if name.isascii() else len(name.encode("utf-8"))) + value_size(av)
    return total


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

    def render(self, mode: str | None) -> dict[str, Any] | None:
        """The wire ConsumedCapacity object for ReturnConsumedCapacity=mode (None/NONE -> None)."""
        if mode not in ("TOTAL", "INDEXES"):
            return None
        key = "ReadCapacityUnits" if self.kind == "read" else "WriteCapacityUnits"
        out: dict[str, Any] = {"TableName": self.table, "CapacityUnits": self.total, key: self.total}
        if mode == "INDEXES":
            out["Table"] = {"CapacityUnits": self.table_units, key: self.table_units}
            if self.gsi:
                out["GlobalSecondaryIndexes"] = {n: {"CapacityUnits": u, key: u} for n, u in self.gsi.items()}
            if self.lsi:
                out["LocalSecondaryIndexes"] = {n: {"CapacityUnits": u, key: u} for n, u in self.lsi.items()}
        return out
