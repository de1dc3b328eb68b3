"""Scaling keeps the shape: a scaled run throttles at the fraction of its ceiling the unscaled run it stands for does.

Each cell runs the capacity model twice on a fake clock: unscaled (capacity and time scale 1) and scaled the way
`--rate-scale s --duration-scale d` runs it (capacity_scale s, time_scale 1/d, offered rate x s, windows x d), with
the same item size, GSI, key distribution and arrival process (the generator's pacer: one send every 1/rate,
each to a key drawn at random, so a hot key's sends cluster). A write charges its GSI, then its table, and gives
the GSI its units back when the table refuses, as the endpoint's `State.charge_write` does.

Compared: the share of what was offered that was accepted over the second half of each window (after a burst, in
the steady state a throttle study reads), whole and per quarter. A tiny scaled run holds few requests (400 KB items
at x0.025 and x0.05 offer a couple per window), so the scaled side repeats its window on fresh tables until it has
offered about as many requests as the unscaled one; each repetition is an independent run of the same scaled
scenario.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from dataclasses import dataclass

import pytest

from dynlocust.local.capacity import CapacityModel
from dynlocust.local.capacity_resources import ResourceSpec

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t"
SIZES = {"100B": 1.0, "4KB": 4.0, "400KB": 400.0}  # write units of one item (1 per KB started)
OFFERED = (0.5, 0.9, 1.5)  # fractions of the table's documented capacity (4,000 WRU/s new on-demand; provisioned)
PROVISIONED_WCU = 1000.0
SCALES = ((0.025, 1.0), (0.025, 0.25), (0.025, 0.1), (0.025, 0.05))
MEASURE_S = 20.0  # unscaled seconds measured per run (x duration scale when scaled)
LIMIT_S = 470.0  # unscaled: measured before an on-demand table's first growth step (480 s of over-demand)
WAIT_S = 20_000.0  # unscaled: longest wait for the first throttle of an over-demanded table (a bent burst)
SETTLE_SENDS = 3
MAX_RUNS = 5000
MIN_OFFERED = 2000  # measured sends per cell and side, over as many runs as it takes
MIN_RUN_SENDS = 200  # measured sends of one run at least (within LIMIT_S)
HOT_FRACTION = 0.1  # the hot key: 10% of the sends
KEYS = 10_000
GSI_VALUES = 100


Tally = list[list[int]]


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@dataclass(frozen=True)
class Cell:
    size: str
    gsi: bool
    hot: bool
    billing: str
    offered: float

    @property
    def units(self) -> float:
        return SIZES[self.size]

    def rate(self) -> float:
        """Offered writes/s, unscaled."""
        capacity = 4000.0 if self.billing == "PAY_PER_REQUEST" else PROVISIONED_WCU
        return self.offered * capacity / self.units


def model_for(cell: Cell, capacity_scale: float, time_scale: float, clock: Clock) -> CapacityModel:
    model = CapacityModel(capacity_scale=capacity_scale, time_scale=time_scale, clock=clock)
    extra = {} if cell.billing == "PAY_PER_REQUEST" else {"read_capacity": 3000.0, "write_capacity": PROVISIONED_WCU}
    model.add_resource(ResourceSpec("t", None, ARN, cell.billing, **extra))
    if cell.gsi:
        model.add_resource(ResourceSpec("t", "g", f"{ARN}/index/g", cell.billing, **extra))
    return model


def measured_s(cell: Cell, capacity_scale: float, duration_scale: float) -> float:
    """Unscaled seconds one run measures: MEASURE_S, or long enough for MIN_RUN_SENDS scaled sends.

    Below the ceiling nothing changes with time, so it stays within LIMIT_S (more runs make up the count).
    Above it, a 400 KB table at x0.025 and x0.05 sends one request every 2.7 s and repeats its accept/refuse
    pattern every 16 sends: the steady state takes longer than the 480 s before its first growth step, so such
    a run and its unscaled reference both measure across growth, the same stretch after their first throttle.
    """
    wanted = max(MEASURE_S, MIN_RUN_SENDS / (cell.rate() * capacity_scale * duration_scale))
    return wanted if cell.offered > 1 else min(wanted, LIMIT_S)


def run_once(
    cell: Cell,
    capacity_scale: float,
    duration_scale: float,
    length_s: float,
    rng: random.Random,
    tally: list[list[int]],
) -> None:
    """One scaled run on a fresh table, added to ``tally`` as (offered, accepted) per quarter of what is measured.

    Below the ceiling everything is measured, from the start, for ``length_s`` (unscaled). Above it, the
    throttled state: from SETTLE_SENDS sends after the first throttle (a full bucket, however long the burst
    lasted; a few sends later, so the count does not start on a refusal) for ``length_s``.
    """
    clock = Clock()
    model = model_for(cell, capacity_scale, 1.0 / duration_scale, clock)
    rate = cell.rate() * capacity_scale
    length = length_s * duration_scale
    over = cell.offered > 1
    start, end = (math.inf, math.inf) if over else (0.0, length)
    units = cell.units
    sends: list[tuple[float, bool]] = []
    phase = rng.random() / rate  # where in its first interval the pacer's schedule starts
    for i in itertools.count():
        t = phase + i / rate
        if t >= end or t >= WAIT_S * duration_scale:
            break
        clock.t = t
        key = "hot" if cell.hot and rng.random() < HOT_FRACTION else f"k{rng.randrange(KEYS)}"
        if cell.gsi:
            gsi_key = f"g{zlib.crc32(key.encode()) % GSI_VALUES}"
            accepted = model.charge("t", "g", "write", units, gsi_key) is None
            if accepted and model.charge("t", None, "write", units, key) is not None:
                model.refund("t", "g", "write", units, gsi_key)
                accepted = False
        else:
            accepted = model.charge("t", None, "write", units, key) is None
        if not accepted and start == math.inf:
            start = t + SETTLE_SENDS / rate
            end = start + length
        if t >= start:
            sends.append((t, accepted))
    span = end - start
    for t, accepted in sends:
        q = tally[min(3, int((t - start) / span * 4))]
        q[0] += 1
        q[1] += accepted


def accepted_share(
    cell: Cell, capacity_scale: float, duration_scale: float, length_s: float, seed: int
) -> tuple[float, list[float]]:
    """(accepted / offered over what is measured, the same per quarter), over enough runs for MIN_OFFERED sends."""
    rng = random.Random(seed)
    tally = [[0, 0] for _ in range(4)]
    for _ in range(MAX_RUNS):
        run_once(cell, capacity_scale, duration_scale, length_s, rng, tally)
        if sum(o for o, _ in tally) >= MIN_OFFERED:
            break
    offered = sum(o for o, _ in tally)
    assert offered, f"{cell}: no throttle within {WAIT_S:g} s (unscaled) at x{capacity_scale:g}, x{duration_scale:g}"
    return sum(a for _, a in tally) / offered, [a / o for o, a in tally if o]


CELLS = [
    Cell(size, gsi, hot, billing, offered)
    for size in SIZES
    for gsi in (False, True)
    for hot in (False, True)
    for billing in ("PAY_PER_REQUEST", "PROVISIONED")
    for offered in OFFERED
]


def cell_id(cell: Cell) -> str:
    return "-".join(
        (
            cell.size,
            "gsi" if cell.gsi else "nogsi",
            "hot" if cell.hot else "uniform",
            cell.billing,
            f"x{cell.offered:g}",
        )
    )


_REFERENCE: dict[tuple[Cell, float], tuple[float, list[float]]] = {}


def reference(cell: Cell, length_s: float) -> tuple[float, list[float]]:
    """The unscaled run's accepted share over the same measured stretch (cached: cells share references)."""
    key = (cell, length_s if cell.offered > 1 else MEASURE_S)
    if key not in _REFERENCE:
        _REFERENCE[key] = accepted_share(cell, 1.0, 1.0, key[1], seed=1)
    return _REFERENCE[key]


@pytest.mark.parametrize("scale", SCALES, ids=[f"rate{s:g}-duration{d:g}" for s, d in SCALES])
@pytest.mark.parametrize("cell", CELLS, ids=cell_id)
def test_a_scaled_run_throttles_at_the_fraction_of_its_ceiling_the_unscaled_one_does(
    cell: Cell, scale: tuple[float, float]
) -> None:
    length = measured_s(cell, *scale)
    unscaled, unscaled_quarters = reference(cell, length)
    share, quarters = accepted_share(cell, *scale, length, seed=2)
    assert share == pytest.approx(unscaled, rel=0.02), (share, unscaled)
    # below the ceiling a quarter holds the whole run's share; above it, growth changes it along the run
    expected = unscaled_quarters if cell.offered > 1 else [unscaled] * 4
    assert all(q >= 0.9 * e for q, e in zip(quarters, expected, strict=False)), (quarters, expected)
