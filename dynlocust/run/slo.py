"""Service-level objectives per window: the pass/fail rules that set a run's exit code in CI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynlocust.scenario.model import Slo
from dynlocust.scenario.plan import window_number


def check_window(slos: Sequence[Slo], index: int, phase: str, summary: Mapping[str, Any]) -> list[str]:
    """The broken rules of one window, each as a sentence (empty: the window passes)."""
    broken: list[str] = []
    rate = float(summary["target_rate"])
    sent = max(int(summary["sent"]), 1)
    for slo in slos:
        if not slo.applies_to(index, phase, rate):
            continue
        throttle_ratio = (summary["throttled"] + summary.get("unprocessed_requests", 0)) / sent
        error_ratio = summary.get("errors", 0) / sent
        dropped_ratio = summary["dropped"] / max(int(summary["offered"]), 1)
        p50 = _ms(summary["latency"]["p50"])
        p99 = _ms(summary["latency"]["p99"])
        achieved = summary["accepted_per_s"] / rate if rate else 1.0
        checks = [
            ("throttle ratio", throttle_ratio, slo.max_throttle_ratio, "<="),
            ("error ratio", error_ratio, slo.max_error_ratio, "<="),
            ("dropped ratio", dropped_ratio, slo.max_dropped_ratio, "<="),
            ("p50 ms", p50, slo.max_p50_ms, "<="),
            ("p99 ms", p99, slo.max_p99_ms, "<="),
            ("achieved ratio", achieved, slo.min_achieved_ratio, ">="),
        ]
        for name, value, bound, op in checks:
            if bound is None or value is None:
                continue
            if (op == "<=" and value > bound) or (op == ">=" and value < bound):
                broken.append(f"window {window_number(index)}: {name} {value:.4g} is not {op} {bound:g}")
    return broken


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000.0
