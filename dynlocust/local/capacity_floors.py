"""Scaling floors: a scaled bucket keeps room for a few of the largest requests it has seen, so a scaled run
throttles at the same fraction of its ceiling as the run it stands for (`dynlocust.local.capacity`'s docstring)."""

from __future__ import annotations

from collections.abc import Callable

from dynlocust.local.capacity_figures import (
    BURST_S,
    MAX_CAP_BURST_S,
    MIN_TOLERANCE_COSTS,
    MIN_TOLERANCE_S,
    PARTITION_BURST_S,
    PROVISIONED_CREDIT_S,
    PROVISIONED_START_CREDIT_S,
)
from dynlocust.local.capacity_resources import Lane, Resource, kind_of


class ScalingFloors:
    """The tolerances of a `CapacityModel`'s buckets, floored where scaling would leave no room."""

    capacity_scale: float
    time_scale: float
    _clock: Callable[[], float]
    _notify: Callable[[str], None] | None
    _bin: float
    _grace: float
    _peak_window: float
    _cause_window: float

    def _shared_tolerance(self, res: Resource) -> None:
        """The on-demand budget's burst: BURST_S of the baseline in units, as a tolerance at the current ceiling,
        with room for MIN_TOLERANCE_COSTS of the costliest request of either kind."""
        write, read = res.write, res.read
        unscaled_s = BURST_S * res.base_write * self.capacity_scale * write.inv
        costliest = max(write.big, read.big * read.inv / write.inv)  # in write units
        write.budget.tol = self._tolerance(res, write, "burst (reads and writes)", unscaled_s, write.inv, costliest)

    def _tolerance(self, res: Resource, lane: Lane, bucket: str, unscaled_s: float, inv: float, big: float) -> float:
        """`unscaled_s / time_scale`, unless that leaves no room for MIN_TOLERANCE_COSTS requests of `big`
        units (at `inv` s per unit) or for MIN_TOLERANCE_S of arrival jitter; then the floor, at most what the
        unscaled bucket holds in units (`unscaled_s / capacity_scale`). Both factors 1: `unscaled_s` exactly.

        A floor that bends the scaled figure is said once per bucket through `notify` (and kept in `bent`).
        """
        scaled = unscaled_s / self.time_scale
        floor = min(unscaled_s / self.capacity_scale, max(MIN_TOLERANCE_S, MIN_TOLERANCE_COSTS * big * inv))
        if floor <= scaled * (1 + 1e-9):
            return scaled
        rate = 1.0 / inv
        name = f"{kind_of(lane, res).lower()} {bucket}"
        if name not in res.bent:
            self._say(
                res,
                name,
                f"{floor * rate:.4g} units ({floor:.3g} s at {rate:.4g} units/s), not the scaled "
                f"{scaled * rate:.4g} units ({scaled:.3g} s): room for {MIN_TOLERANCE_COSTS:g} requests of "
                f"{big:.4g} units and {MIN_TOLERANCE_S:g} s of arrival jitter, so throttles keep their fraction "
                "of the ceiling; bursts last longer than scaled",
            )
        return floor

    def _say(self, res: Resource, name: str, what: str) -> None:
        """Say once per resource and figure that a scaling floor bent it (kept in the snapshot's "floors")."""
        where = res.spec.table + (f" index {res.spec.index}" if res.spec.index else "")
        text = f"capacity floor: {where} {name} is {what}"
        res.bent[name] = text
        if self._notify is not None:
            self._notify(text)

    def _grow_floors(self, res: Resource, lane: Lane, units: float) -> None:
        """A request larger than any before on this lane: widen the buckets whose floor counts request sizes.

        A wider tolerance with the same TAT is more room at once (the unscaled bucket would have had it)."""
        lane.big = units
        if res.on_demand:
            self._shared_tolerance(res)
        else:
            budget = lane.budget
            tol = self._tolerance(res, lane, "burst credit", PROVISIONED_CREDIT_S, lane.inv, units)
            if not lane.ok:  # the first request: the start credit is reckoned in its size
                budget.tat = min(budget.tat, self._clock() + tol - self._start_credit(res, lane))
            budget.tol = tol
        lane.part_tol = self._tolerance(res, lane, "partition burst", PARTITION_BURST_S, lane.part_inv, units)
        if lane.max_inv:
            lane.max_tol = self._tolerance(res, lane, "maximum burst", MAX_CAP_BURST_S, lane.max_inv, units)

    def _start_credit(self, res: Resource, lane: Lane) -> float:
        """A new provisioned resource's credit: PROVISIONED_START_CREDIT_S, floored like a tolerance."""
        return self._tolerance(res, lane, "start credit", PROVISIONED_START_CREDIT_S, lane.inv, lane.big)
