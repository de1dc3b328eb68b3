"""Every shipped scenario that targets the local endpoint keeps the promise its description makes, in a real run.

Each runs as `dynlocust run` with its own embedded endpoint, from a test-only copy whose windows are 0.4 times as
long (the shipped file is not edited). That is enough for every promise here: the local endpoint's per-key burst
is 1 s and its table burst 0.85 s, so a throttle shows within the first seconds of a window or not at all.
Latency bounds of the SLOs are not checked (timing on a shared machine); their throttle bounds are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from dynlocust.scenario import load_scenario, parse_duration
from tests.support.runs import ROOT, RunResult, run_dynlocust
from tests.support.scenarios import write_scenario

pytestmark = pytest.mark.slow

SHRINK = 0.4
LOCAL = [p for p in sorted((ROOT / "scenarios").glob("*.yaml")) if load_scenario(p).is_local]
WRITE_CEILING = 4130.0  # writes/s of a new on-demand table on the local endpoint, times capacity_scale


def shrunk(path: Path, directory: Path, factor: float = SHRINK) -> Path:
    """A copy of the scenario with every window (and hold) ``factor`` times as long."""
    doc = yaml.safe_load(path.read_text())

    def scale(mapping: dict[str, Any], key: str) -> None:
        if key in mapping:
            mapping[key] = f"{parse_duration(mapping[key]) * factor:g}s"

    for phase in doc["phases"]:
        if "ramp" in phase:
            scale(phase["ramp"], "window")
        for step in phase.get("steps", []):
            scale(step, "window")
        if "hold" in phase:
            scale(phase["hold"], "duration")
            scale(phase["hold"], "window")
    return write_scenario(directory, yaml.safe_dump(doc, sort_keys=False), path.name)


def throttled(window: dict[str, Any]) -> int:
    return int(window["summary"]["throttled"])


def quickstart(result: RunResult, capacity_scale: float) -> None:
    """'a ramp from 50 to 200 writes/s crosses the ceiling ... and shows throttles'; its SLO: none below 100/s."""
    ceiling = WRITE_CEILING * capacity_scale
    below = [w for w in result.windows if w["target_rate"] < 100]
    above = [w for w in result.windows if w["target_rate"] > 1.2 * ceiling]
    assert below and above
    assert [throttled(w) for w in below] == [0] * len(below)
    assert any(throttled(w) > 0 for w in above), [w["summary"] for w in above]


def hot_key(result: RunResult, capacity_scale: float) -> None:
    """'holds at 50 and 100 requests/s ... throttles at 200 with reason KeyRangeThroughputExceeded, while the
    whole table stays near half of its ceiling'."""
    first, second, last = result.windows
    assert (throttled(first), throttled(second)) == (0, 0)
    assert throttled(last) > 0
    assert all(reason.endswith("KeyRangeThroughputExceeded") for reason in last["summary"]["throttled_by"])
    # The table's budget is shared by reads and writes at 1 write unit = 3 read units.
    summary = last["summary"]
    table_rate = (summary["write_units"] + summary["read_units"] / 3) / last["duration"]
    assert table_rate < 0.75 * WRITE_CEILING * capacity_scale, table_rate


def sharded_reads(result: RunResult, capacity_scale: float) -> None:
    """'Compare with hot-key.yaml to see the per-partition limit move out of the way': the same skew, spread over
    4 shards, stays within its SLO's 1% throttles in every window, the highest rate included."""
    for window in result.windows:
        assert throttled(window) <= 0.01 * window["summary"]["sent"], window["summary"]


PROMISES: dict[str, Callable[[RunResult, float], None]] = {
    "quickstart": quickstart,
    "hot-key": hot_key,
    "sharded-reads": sharded_reads,
}


def test_every_local_scenario_has_a_promise_checked_here() -> None:
    assert {p.stem for p in LOCAL} == set(PROMISES)


@pytest.mark.parametrize("path", LOCAL, ids=[p.stem for p in LOCAL])
def test_a_shipped_local_scenario_keeps_its_promise(path: Path, tmp_path: Path) -> None:
    scenario = load_scenario(path)
    copy = shrunk(path, tmp_path)
    plan = load_scenario(copy)
    assert [s.rate for s in plan.steps] == [s.rate for s in scenario.steps]
    assert plan.total_duration == pytest.approx(SHRINK * scenario.total_duration)

    result = run_dynlocust(copy, tmp_path, run_id=path.stem, timeout=240)
    assert result.returncode in (0, 3), result.stderr[-3000:]  # 3: an SLO failed; only a latency bound may
    assert len(result.windows) == len(scenario.steps)
    assert result.end is not None
    assert not [f for w in result.windows for f in w["slo_failures"] if " ms " not in f]
    # A busy machine may make a window client-bound (dropped sends); each promise is made to hold all the same,
    # down to about 3/4 of the offered rate.
    try:
        PROMISES[path.stem](result, scenario.target.capacity_scale)  # type: ignore[union-attr]  # a LocalTarget
    except AssertionError as e:
        bound = result.end["conclusion"]["client_limited"]
        raise AssertionError(f"{e}; client-bound windows (the machine could not offer the load): {bound}") from e
