"""SLO rules per window: which apply, which break, and the sentence each broken one reads as."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.run.slo import check_window
from dynlocust.scenario.model import Slo


def summary(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "target_rate": 100.0,
        "offered": 1000,
        "sent": 1000,
        "accepted_per_s": 95.0,
        "throttled": 50,
        "unprocessed_requests": 0,
        "errors": 0,
        "dropped": 0,
        "latency": {"p50": 0.004, "p99": 0.020},
    }
    base.update(over)
    return base


@pytest.mark.parametrize(
    ("slo", "broken"),
    [
        (Slo(max_throttle_ratio=0.0), ["window 3: throttle ratio 0.05 is not <= 0"]),
        (Slo(max_throttle_ratio=0.1), []),
        (Slo(max_p99_ms=10), ["window 3: p99 ms 20 is not <= 10"]),
        (Slo(max_p50_ms=10), []),
        (Slo(min_achieved_ratio=0.99), ["window 3: achieved ratio 0.95 is not >= 0.99"]),
        (Slo(max_error_ratio=0.0), []),
        (Slo(max_throttle_ratio=0.0, applies_below_rate=100), []),  # rate 100 is not below 100
        (Slo(max_throttle_ratio=0.0, applies_from_rate=200), []),
        (Slo(window=1, max_throttle_ratio=0.0), []),
        (Slo(window="ramp", max_throttle_ratio=0.0), ["window 3: throttle ratio 0.05 is not <= 0"]),
    ],
)
def test_rules(slo: Slo, broken: list[str]) -> None:
    # the window of index 2 is the third: people read it as "window 3"
    assert check_window([slo], 2, "ramp", summary()) == broken


def test_unprocessed_batches_count_as_throttles_and_empty_windows_do_not_divide_by_zero() -> None:
    assert check_window([Slo(max_throttle_ratio=0.0)], 0, "p", summary(throttled=0, unprocessed_requests=3))
    empty = summary(sent=0, offered=0, throttled=0, accepted_per_s=0.0, latency={"p50": None, "p99": None})
    assert check_window([Slo(max_throttle_ratio=0.0, max_p99_ms=1)], 0, "p", empty) == []
