"""Money from capacity units. Prices are configuration (a `Prices` value), never constants inside code paths."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prices:
    """US dollars per million request units (on-demand, Standard table class)."""

    write_per_million: float = 0.625
    read_per_million: float = 0.125


US_EAST_1 = Prices()
"""us-east-1 on-demand prices since the November 2024 cut."""


def dollars(read_units: float, write_units: float, prices: Prices = US_EAST_1) -> float:
    return (read_units * prices.read_per_million + write_units * prices.write_per_million) / 1e6
