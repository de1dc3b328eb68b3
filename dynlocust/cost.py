"""Money from capacity units. Prices are configuration (a `Prices` value), never constants inside code paths."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prices:
    """US dollars per million request units (on-demand) and per capacity unit-hour (provisioned), Standard class."""

    write_per_million: float = 0.625
    read_per_million: float = 0.125
    write_unit_hour: float = 0.00065
    read_unit_hour: float = 0.00013
    as_of: str = "2024-11-01"
    """The date these prices took effect: prices change, so a plan built on them prints it."""
    source: str = (
        "Amazon DynamoDB pricing, us-east-1, Standard table class (aws.amazon.com/dynamodb/pricing): on-demand "
        "$0.625 per million write request units and $0.125 per million read request units since the price "
        "reduction of 1 November 2024; provisioned $0.00065 per WCU-hour and $0.00013 per RCU-hour"
    )


US_EAST_1 = Prices()
"""us-east-1 prices: on-demand since the November 2024 cut; provisioned WCU/RCU-hours as published."""


def dollars(read_units: float, write_units: float, prices: Prices = US_EAST_1) -> float:
    return (read_units * prices.read_per_million + write_units * prices.write_per_million) / 1e6


def provisioned_dollars(
    read_per_second: float, write_per_second: float, seconds: float, prices: Prices = US_EAST_1
) -> float:
    """Capacity provisioned at these units per second for `seconds`, billed by the (started) hour as AWS does."""
    hours = -(-seconds // 3600) if seconds > 0 else 0
    return (read_per_second * prices.read_unit_hour + write_per_second * prices.write_unit_hour) * hours
