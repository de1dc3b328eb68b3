"""On-demand growth: the ceiling a table or GSI has grown to under sustained over-demand, in sudden steps, and
the throttle reasons that go with it (`dynlocust.local.capacity`'s docstring gives the figures' sources)."""

from __future__ import annotations

from dynlocust.local.capacity_figures import (
    FIRST_HOLD_S,
    GRACE_REFILLS,
    GROWTH_STEP,
    NEXT_HOLD_S,
    ON_DEMAND_INDEX_MESSAGE,
    ON_DEMAND_TABLE_MESSAGE,
    PRUNE_ABOVE,
    TABLE_QUOTA,
)
from dynlocust.local.capacity_floors import ScalingFloors
from dynlocust.local.capacity_resources import Resource, Throttle, kind_of


class OnDemandGrowth(ScalingFloors):
    """A `CapacityModel`'s on-demand ceilings: rolled per bin, stepped up after a hold, applied to the lanes."""

    def _apply_ceilings(self, res: Resource, now: float) -> None:
        """Set on-demand costs and ceiling reasons from the grown ceilings (and the per-table quota).

        Outstanding debt is kept in units, not seconds, so a step up takes effect at once.
        """
        old_inv = res.write.inv
        cs = self.capacity_scale
        spec = res.spec
        prefix = "Index" if spec.index else "Table"
        message = ON_DEMAND_INDEX_MESSAGE if spec.index else ON_DEMAND_TABLE_MESSAGE
        for lane, level_rate in ((res.read, res.ceil_read), (res.write, res.ceil_write)):
            quota_bound = level_rate >= TABLE_QUOTA
            lane.inv = 1.0 / (min(level_rate, TABLE_QUOTA) * cs)
            limit = "AccountLimitExceeded" if quota_bound else "KeyRangeThroughputExceeded"
            lane.t_ceiling = Throttle("ThrottlingException", f"{prefix}{kind_of(lane, res)}{limit}", spec.arn, message)
        budget = res.write.budget
        if old_inv and budget.tat > now:
            budget.tat = now + (budget.tat - now) * res.write.inv / old_inv
        self._shared_tolerance(res)

    def _roll(self, res: Resource, now: float) -> None:
        """Close the one-second bin: over-demand run, growth step, peak; prune idle partition entries."""
        binlen = self._bin
        if res.on_demand:
            # Peak accepted write-equivalent rate (unscaled units per clock second) over 10 s windows, so the
            # burst of the first second does not count as a peak. Before any step: the bin was charged at the
            # old cost.
            res.win_used += res.bin_used / res.write.inv / self.capacity_scale
            span = res.bin_end - res.win_start
            if span >= self._peak_window - 1e-9:
                rate = res.win_used / span
                if rate > res.peak:
                    res.peak = rate
                res.win_used = 0.0
                res.win_start = -1.0
            if res.bin_over:
                if res.od_since < 0 or res.bin_start - res.last_od > self._od_grace(res):
                    res.od_since = res.bin_start
                    res.last_od = res.bin_start
                # Unscaled seconds credited towards growth, bridged pauses included (as the hold timer counts).
                res.od_seconds += (res.bin_end - res.last_od) * self.time_scale
                res.last_od = res.bin_end
                hold = (FIRST_HOLD_S if res.level == 0 else NEXT_HOLD_S) / self.time_scale
                if res.bin_end - res.od_since >= hold - 1e-9:
                    self._step(res, now)
                    res.od_since = res.bin_end
            elif res.od_since >= 0 and now - res.last_od > self._od_grace(res):
                res.od_since = -1.0
        if now - res.offer_start >= self._cause_window:
            # a quiet spell longer than a window leaves nothing offered in the window before
            recent = now - res.offer_start < 2 * self._cause_window
            res.offer_span = now - res.offer_start if recent else 0.0
            for lane in (res.read, res.write):
                lane.offered_prev = lane.offered if recent else 0.0
                lane.offered = 0.0
            res.offer_start = now
        for lane in (res.read, res.write):
            if len(lane.parts) > PRUNE_ABOVE:
                lane.parts = {k: v for k, v in lane.parts.items() if v > now}
        res.bin_start = res.bin_end if now < res.bin_end + binlen else now
        res.bin_end = res.bin_start + binlen
        if res.win_start < 0:
            res.win_start = res.bin_start
        res.bin_used = 0.0
        res.bin_over = False

    def _od_grace(self, res: Resource) -> float:
        """The quiet spell an over-demand run survives: GRACE_S scaled (floored at MIN_GRACE_S), and at least the
        time the ceiling takes to refill MIN_TOLERANCE_COSTS of the largest requests (at a small capacity scale a
        few 400 KB writes are seconds apart, so over-demand shows only in every few bins)."""
        write, read = res.write, res.read
        refill = GRACE_REFILLS * max(write.big * write.inv, read.big * read.inv)
        if refill <= self._grace:
            return self._grace
        if "over-demand grace" not in res.bent:
            self._say(
                res,
                "over-demand grace",
                f"{refill:.3g} s, not the scaled {self._grace:.3g} s: {GRACE_REFILLS:g} refills of its largest request "
                f"({max(write.big, read.big * read.inv / write.inv):.4g} write units), so sparse large requests "
                "over the ceiling still count as one over-demand run (growth); a pause resets it later than scaled",
            )
        return refill

    def _step(self, res: Resource, now: float) -> None:
        """One sudden growth step, never beyond twice the peak accepted write-equivalent rate (unscaled)."""
        peak = res.peak
        if min(res.ceil_read, res.ceil_write) >= TABLE_QUOTA:
            return
        target = min(res.ceil_write + GROWTH_STEP * res.base_write, 2.0 * peak)
        if target <= res.ceil_write:
            return
        ratio = target / res.ceil_write
        res.level += 1
        res.ceil_write = target
        res.ceil_read *= ratio
        res.steps.append((res.bin_end, target * self.capacity_scale))
        self._apply_ceilings(res, now)
