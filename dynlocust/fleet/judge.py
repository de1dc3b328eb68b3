"""The fleet's judge: a window's merged tally becomes its closed window, with a verdict and its SLOs checked.

The noun here is the *judge* (`WindowJudge`): it decides once, per window, what limited it (`dynlocust.run.verdict`),
which SLOs failed (`dynlocust.run.slo`) and what it cost; `FleetMerge` only hands it windows merged exactly.
`inconclusive` is the one rule for a run whose windows could not be judged (exit 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynlocust.cost import Prices
from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.saturation import Saturation, Thresholds, combine
from dynlocust.run.slo import check_window
from dynlocust.run.tally import WindowStats
from dynlocust.run.verdict import Verdict, verdict
from dynlocust.scenario.model import Scenario
from dynlocust.scenario.plan import Window


@dataclass(frozen=True)
class WindowJudge:
    """Judges each merged window of one run against its plan, its SLOs and the fleet's saturation thresholds."""

    scenario: Scenario
    thresholds: Thresholds
    """Applied to the fleet's summed counts of each window (each worker judges its own part with its own)."""
    prices: Prices

    def judge(
        self,
        window: Window,
        stats: WindowStats,
        *,
        observed: bool,
        saturations: Mapping[int, Saturation],
        workers: dict[str, dict[str, Any]],
        missing: list[int],
        rebalanced: list[int],
    ) -> ClosedWindow:
        """The fleet's closed window of `window`; `observed` False when no worker's part was merged into it."""
        saturation = combine(saturations, self.thresholds)
        summary = stats.report_summary(self.prices)
        detail = verdict(stats if observed else None, saturation, planned=window.requests)
        return ClosedWindow(
            stats,
            window.phase,
            summary,
            saturation,
            verdict_detail=detail,
            slo_failures=check_window(self.scenario.slos, window.index, window.phase, summary),
            workers=workers,
            missing_workers=missing,
            rebalanced=rebalanced,
        )


JUDGED_SHARE = 0.5
"""A run is *inconclusive* when fewer than this share of its planned windows could be judged.

A window is judged when its strongest verdict is what the service did (`ok`, `throttled`, `errors`), or when
it is `partial` but ran at least `PARTIAL_RAN` of its schedule (`Verdict.judged`). A `client-bound`, `not-run` or mostly
unrun window says nothing about the table. The conclusion reads a ceiling off the ramp of steps, so with fewer than
half of them judged it cannot tell where the limit is: CI must not pass such a run (exit 8).
"""


def window_judged(detail: Verdict | None) -> bool:
    """Whether a closed window's verdict says something about the service (`Verdict.judged`)."""
    return detail is not None and detail.judged


def inconclusive(details: Sequence[Verdict | None], planned: int) -> bool:
    """Whether too few of a run's `planned` windows were judged to conclude anything: the fleet's rule for exit 8."""
    judged = sum(1 for d in details if window_judged(d))
    return planned > 0 and judged < JUDGED_SHARE * planned
