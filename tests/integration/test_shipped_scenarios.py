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
            seconds = parse_duration(mapping[key])
            assert seconds is not None, (path, key, mapping[key])
            mapping[key] = f"{seconds * factor:g}s"

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


def gsi_back_pressure(result: RunResult, capacity_scale: float) -> None:
    """'holds at 40 puts/s ... and throttles at 100 with reason IndexWriteKeyRangeThroughputExceeded, attributed to
    the index: the report and the conclusion say "writes to items throttled by GSI by_owner (...)", while the table
    stays under half of its 206 writes/s ceiling' (the report says what the conclusion does: test_throttle_causes)."""
    first, last = result.windows
    assert throttled(first) == 0 and throttled(last) > 0
    reason = "IndexWriteKeyRangeThroughputExceeded"
    assert last["summary"]["throttled_by"] == {f"ThrottlingException|{reason}": throttled(last)}
    assert last["summary"]["throttled_index"] == {f"by_owner|{reason}": throttled(last)}
    said = f"writes to items throttled by GSI by_owner ({reason})"
    assert f"{said[0].upper()}{said[1:]}" in result.end["conclusion"]["text"]
    table_rate = last["summary"]["write_units"] / 2 / last["duration"]  # each accepted put: 1 table + 1 GSI unit
    assert table_rate < 0.5 * WRITE_CEILING * capacity_scale, table_rate


def warm_throughput(result: RunResult, capacity_scale: float) -> None:
    """'Expected: "the table took 10,000 write units/s at once: warm throughput holds", and DescribeTable's
    WarmThroughput printed before and after the run' (rehearsed: x0.01 of it, from the first second)."""
    first = result.windows[0]
    assert throttled(first) <= 0.01 * first["summary"]["sent"] or "client-bound" in first["verdict_detail"]["labels"]
    (finding,) = result.end["warm_throughput"]
    assert finding["outcome"] == "holds", finding
    assert finding["took_units_per_s"] >= 0.95 * 10_000 * capacity_scale
    assert finding["text"].startswith("table warm took ")
    assert finding["text"] in result.end["conclusion"]["text"] and "at once: warm throughput holds" in finding["text"]
    warm = "12,000/10,000 read/write units/s (ACTIVE)"
    line = f"warm throughput of table warm (DescribeTable): before the run {warm}; after it {warm}"
    assert line in result.stdout.splitlines()


PROMISES: dict[str, Callable[[RunResult, float], None]] = {
    "quickstart": quickstart,
    "hot-key": hot_key,
    "sharded-reads": sharded_reads,
    "gsi-back-pressure": gsi_back_pressure,
    "warm-throughput": warm_throughput,
}

REHEARSALS: dict[str, tuple[str, ...]] = {
    "warm-throughput": ("--local", "--rate-scale", "0.01", "--duration-scale", "0.2"),
}
"""Remote scenarios whose description promises a `--local` rehearsal: run as it says, against the embedded endpoint."""
SHIPPED = sorted((ROOT / "scenarios").glob("*.yaml"))
WARM = [p for p in SHIPPED if any(t.warm_throughput for t in load_scenario(p).tables)]


def test_every_local_scenario_has_a_promise_checked_here() -> None:
    assert {p.stem for p in LOCAL} | set(REHEARSALS) == set(PROMISES)
    assert {p.stem for p in WARM} <= set(PROMISES)  # every warm-throughput claim shipped is run here


@pytest.mark.parametrize("name", sorted(REHEARSALS))
def test_a_shipped_remote_scenario_keeps_its_promise_rehearsed_locally(name: str, tmp_path: Path) -> None:
    path = ROOT / "scenarios" / f"{name}.yaml"
    args = REHEARSALS[name]
    assert " ".join(args) in " ".join(load_scenario(path).description.split())  # the description says how
    result = run_dynlocust(path, tmp_path, *args, run_id=name, timeout=240)
    assert result.returncode in (0, 3), result.stderr[-3000:]
    # an SLO may fail only where the client was the limit (a busy machine sent a burst of late sends)
    failed = [w for w in result.windows if w["slo_failures"]]
    assert all("client-bound" in w["verdict_detail"]["labels"] for w in failed), (result.stdout[-3000:], failed)
    assert result.returncode == 0 or failed, result.stdout[-3000:]  # exit 3 from nothing but those SLOs
    try:
        PROMISES[name](result, float(args[args.index("--rate-scale") + 1]))
    except AssertionError as e:
        bound = result.end["conclusion"]["client_limited"]
        raise AssertionError(f"{e}; client-bound windows (the machine could not offer the load): {bound}") from e


def test_without_its_warm_throughput_the_rehearsed_table_throttles_at_once(tmp_path: Path) -> None:
    """The contrast that makes the warm-throughput promise mean something: the same load on a table created without
    WarmThroughput meets a new on-demand table's 4,000 write units/s (x0.01) in the first window."""
    path = ROOT / "scenarios" / "warm-throughput.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["tables"][0]["warm_throughput"]
    cold = write_scenario(tmp_path, yaml.safe_dump(doc, sort_keys=False), "cold.yaml")
    result = run_dynlocust(cold, tmp_path, *REHEARSALS["warm-throughput"], run_id="cold", timeout=240)
    assert result.returncode == 3, result.stderr[-3000:]  # its SLO: no throttles
    assert throttled(result.windows[0]) > 0 and "warm_throughput" not in result.end


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
    assert result.end["type"] == "end"
    assert not [f for w in result.windows for f in w["slo_failures"] if " ms " not in f]
    # A busy machine may make a window client-bound (dropped sends); each promise is made to hold all the same,
    # down to about 3/4 of the offered rate.
    try:
        PROMISES[path.stem](result, scenario.target.capacity_scale)  # type: ignore[union-attr]  # a LocalTarget
    except AssertionError as e:
        bound = result.end["conclusion"]["client_limited"]
        raise AssertionError(f"{e}; client-bound windows (the machine could not offer the load): {bound}") from e
