"""The measured experiment replayed at scaled rate (and time) through real runs against the local endpoint.

Scale 0.01: the 1,000 -> 8,000 writes/s study becomes 10 -> 80 writes/s, the 4,130 writes/s ceiling 41.3/s. Rates,
accepted counts and throttles are asserted on the run's results and on the server's own counters.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dynlocust.local.embedded import LocalEndpoint
from tests.support.runs import run_dynlocust
from tests.support.scenarios import scenario_yaml

SCALE = 0.01
CEILING = 4130 * SCALE

_RATES = ((10, 5), (20, 5), (30, 5), (40, 5), (50, 8), (15, 5), (60, 6), (15, 5), (80, 6))
STEPS = scenario_yaml(
    "ceiling",
    "steps: [" + ", ".join(f"{{rate: {rate}, window: {window}s}}" for rate, window in _RATES) + "]",
    target="{local: {capacity_scale: 0.01}}",
    transport=None,
    item_size=900,
    concurrency=10,
)


def counts(window: dict) -> tuple[int, int]:
    return window["summary"]["accepted"], window["summary"]["throttled"]


@pytest.mark.slow
def test_write_ceiling_replay(tmp_path: Path) -> None:
    scenario = tmp_path / "ceiling.yaml"
    scenario.write_text(STEPS)
    endpoint = LocalEndpoint(capacity_scale=SCALE).start()
    try:
        result = run_dynlocust(scenario, tmp_path, "--host", endpoint.url, run_id="ceiling")
        server = endpoint.stats()["tables"]["t-ceiling"]["PutItem"]
    finally:
        endpoint.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    windows = {w["target_rate"]: w for w in result.windows if w["target_rate"] != 15}

    # up to the baseline (4,000 -> 40/s) everything is accepted
    for rate in (10, 20, 30, 40):
        assert windows[rate]["summary"]["throttled"] == 0, rate
        assert windows[rate]["summary"]["accepted"] == windows[rate]["summary"]["sent"]

    # above it: a burst, then the ceiling, whatever the offered rate; the higher the rate, the sooner it bites
    firsts = {rate: windows[rate]["summary"]["first_throttle_s"] for rate in (50, 60, 80)}
    assert firsts[80] < firsts[60] < firsts[50], firsts
    assert firsts[80] == pytest.approx(0.88, abs=0.3)
    assert 2.5 < firsts[50] < 5.0
    for rate in (50, 60, 80):
        bins = windows[rate]["bins"]
        settled = bins[int(firsts[rate]) + 1 :]  # after the burst: accepted per 1 s bin is the ceiling
        accepted = sum(b["by_kind"].get("ok", 0) for b in settled)
        assert accepted / len(settled) == pytest.approx(CEILING, rel=0.03), (rate, accepted)
        assert windows[rate]["summary"]["throttled_by"].keys() == {
            "ThrottlingException|TableWriteKeyRangeThroughputExceeded"
        }

    # the server agrees with the client, request for request
    accepted = sum(w["summary"]["accepted"] for w in result.windows)
    throttled = sum(w["summary"]["throttled"] for w in result.windows)
    assert (server["ok"], server["throttled"]) == (accepted, throttled)


@contextmanager
def watch_capacity(endpoint: LocalEndpoint, table: str, every_s: float = 0.5) -> Iterator[list[dict]]:
    """Poll the server's capacity snapshot of `table` while the run lives (its teardown deletes the table)."""
    seen: list[dict] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(every_s):
            snap = endpoint.stats().get("capacity", {}).get(table)
            if snap is not None:
                seen.append(snap)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield seen
    finally:
        stop.set()
        poller.join(timeout=5)


SOAK = scenario_yaml(
    "soak",
    "hold: {rate: 80, duration: 36s, window: 2s}",
    target="{local: {capacity_scale: 0.01, time_scale: 60}}",
    transport=None,
    item_size=900,
    concurrency=10,
)


@pytest.mark.slow
def test_growth_under_sustained_over_demand(tmp_path: Path) -> None:
    """34 minutes at 8,000 offered in 34 s (time scale 60): steps of ~1,000/s, the first after 8 minutes."""
    scenario = tmp_path / "soak.yaml"
    scenario.write_text(SOAK)
    endpoint = LocalEndpoint(capacity_scale=SCALE, time_scale=60).start()
    try:
        with watch_capacity(endpoint, "t-soak") as seen:
            result = run_dynlocust(scenario, tmp_path, "--host", endpoint.url, run_id="soak")
        server = endpoint.stats()["tables"]["t-soak"]["PutItem"]
    finally:
        endpoint.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    assert seen, "the server's stats never showed the table's capacity"
    capacity = seen[-1]
    rates = [w["summary"]["accepted"] / w["duration"] for w in result.windows]
    # the first ceiling holds for 8 (scaled) minutes
    assert all(r == pytest.approx(CEILING, rel=0.05) for r in rates[1:4]), rates
    # after 34 (scaled) minutes the table accepts ~7,000/s (x 0.01), still below the 80 offered
    assert 65 <= rates[17] <= 75, rates
    # growth comes in steps, never above twice the previous peak, never beyond the offered rate
    assert max(rates) <= 80 and all(b <= 2 * max(rates[: i + 1]) for i, b in enumerate(rates[1:]))
    levels = sorted({round(r / 10) * 10 for r in rates[1:]})
    assert 40 in levels and 70 in levels and len(levels) >= 4, rates

    # the server's own view: three steps of 1,000/s (x 0.01), 10 s (10 scaled minutes) apart, the first 8 s
    # after the first throttle (table creation precedes the load by the run's setup time)
    steps = capacity["steps"]
    assert [round(s["write_ceiling"], 1) for s in steps] == [51.3, 61.3, 71.3], capacity
    at = [s["after_s"] for s in steps]
    assert at[0] >= 8.0 and all(9.9 <= b - a <= 11.0 for a, b in itertools.pairwise(at)), at
    # between steps the accepted rate is the ceiling (windows are 2 s; the steps fall in windows 4, 9 and 14)
    for window, ceiling in ((slice(5, 9), 51.3), (slice(10, 14), 61.3), (slice(15, 18), 71.3)):
        assert all(r == pytest.approx(ceiling, rel=0.05) for r in rates[window]), (ceiling, rates)
    assert capacity["throttled"].keys() == {"TableWriteKeyRangeThroughputExceeded"}
    accepted = sum(w["summary"]["accepted"] for w in result.windows)
    throttled = sum(w["summary"]["throttled"] for w in result.windows)
    assert (server["ok"], server["throttled"]) == (accepted, throttled)
