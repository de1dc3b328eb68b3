"""Scenario runs end to end: real Locust processes against the real local endpoint."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from tests.support.runs import ROOT, RunResult, run_dynlocust
from tests.support.scenarios import put_scenario, write_scenario

QUICKSTART = ROOT / "scenarios" / "quickstart.yaml"
CEILING = 4130 * 0.025  # the quickstart's scaled on-demand write ceiling


@pytest.fixture
def quickstart_endpoint() -> Iterator[LocalEndpoint]:
    endpoint = LocalEndpoint(capacity_scale=0.025).start()
    try:
        yield endpoint
    finally:
        endpoint.stop()


def server_counts(stats: dict, table: str, operations: tuple[str, ...]) -> dict[str, int]:
    per_op = stats["tables"][table]
    return {k: sum(per_op.get(op, {}).get(k, 0) for op in operations) for k in ("ok", "throttled", "error")}


def client_bound(result: RunResult) -> list[tuple[int, dict]]:
    """The windows whose verdict names the client, with the saturation evidence behind it."""
    return [(w["index"], w["saturation"]) for w in result.windows if "client-bound" in w["verdict_detail"]["labels"]]


def quickstart_run(endpoint: LocalEndpoint, tmp_path: Path) -> tuple[RunResult, str]:
    """The quickstart against `endpoint`, and its run id. A run in which the client was judged the limit (the
    verdict's job on a host stalled by other work) is run once more under a new id and table, so the server's
    counts stay per run; a second such run fails the test with its evidence."""
    for run_id in ("qs", "qs-again"):
        result = run_dynlocust(QUICKSTART, tmp_path, "--host", endpoint.url, run_id=run_id)
        bound = client_bound(result)
        if result.returncode != 0 or not bound:
            break
        print(f"run {run_id}: the client was judged the limit in {bound}")
    return result, run_id


@pytest.mark.slow
def test_quickstart_reproduces_the_ceiling_and_reconciles_with_the_server(
    quickstart_endpoint: LocalEndpoint, tmp_path: Path
) -> None:
    result, run_id = quickstart_run(quickstart_endpoint, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    windows = result.windows
    assert [w["index"] for w in windows] == [0, 1, 2, 3]
    assert [w["target_rate"] for w in windows] == [50, 100, 150, 200]
    assert [w["verdict"] for w in windows] == ["ok", "ok", "throttled", "throttled"], [
        (w["verdict_detail"], w["saturation"]) for w in windows
    ]
    assert client_bound(result) == []  # the client was not the limit
    assert all(w["verdict_detail"]["labels"] == [w["verdict"]] for w in windows)
    conclusion = result.end["conclusion"]
    assert (conclusion["service_limited"], conclusion["client_limited"]) == ([2, 3], [])
    assert f"conclusion: {conclusion['text']}" in result.stdout
    assert conclusion["text"].startswith("DynamoDB capped accepted requests at ")
    assert "from window 3 on (offered 150-200/s); the client was not the limit." in conclusion["text"]

    # What the client counted equals what the server saw, request for request.
    sent = sum(w["summary"]["sent"] for w in windows)
    accepted = sum(w["summary"]["accepted"] for w in windows)
    throttled = sum(w["summary"]["throttled"] for w in windows)
    errors = sent - accepted - throttled
    server = server_counts(quickstart_endpoint.stats(), f"items-{run_id}", ("PutItem", "GetItem"))
    assert (accepted, throttled, errors) == (server["ok"], server["throttled"], server["error"])
    assert sent == result.end["sent"]

    # Once the burst is spent, the window is pinned at the endpoint's ceiling (reads share the budget at 1/3).
    last = windows[3]["summary"]
    write_rate = (last["write_units"] + last["read_units"] / 3) / windows[3]["duration"]
    assert write_rate == pytest.approx(CEILING, rel=0.015)
    # reads and writes share one on-demand budget (a linear mix), so a read can be refused once writes spent it
    reasons = {
        "ThrottlingException|TableWriteKeyRangeThroughputExceeded",
        "ThrottlingException|TableReadKeyRangeThroughputExceeded",
    }
    assert set(last["throttled_by"]) <= reasons and sum(last["throttled_by"].values()) == last["throttled"]
    first = windows[2]["summary"]["first_throttle_s"]
    assert first is not None and 0.5 < first < 6

    # Below saturation the offered load follows the schedule: within 1% of the target in every bin.
    for window in windows[:2]:
        rate = window["target_rate"]
        for b, tally in enumerate(window["bins"]):
            length = min(window["bin_seconds"], window["duration"] - b * window["bin_seconds"])
            bin_sent = sum(tally["by_kind"].values())
            assert abs(bin_sent - rate * length) <= 0.01 * rate * length, (window["index"], b, bin_sent)
        assert window["saturation"]["client_bound"] is False
        assert window["summary"]["dropped"] == 0

    assert "| window | target/s | offered (req) | accepted/s | throttled (req) |" in result.stdout
    evidence = (
        "| sent/due (req) | cpu (cores) | cpu wait | late sends | dropped (req) | pool waits | verdict | reasons |"
    )
    assert evidence in " ".join(result.stdout.split())
    assert quickstart_endpoint.stats()["tables"].get(f"items-{run_id}", {}).get("DeleteTable", {}).get("ok") == 1


def small_scenario(tmp_path: Path, rate: int | str, users: int, transport: str = "boto3") -> Path:
    steps = f"steps: [{{rate: {rate}, window: 3s}}, {{rate: {rate}, window: 3s}}]"
    return write_scenario(tmp_path, put_scenario("small", steps, concurrency=users, transport=transport))


@pytest.mark.parametrize("transport", ["boto3", "fast"])
def test_both_transports_reconcile_with_the_server(tmp_path: Path, transport: str) -> None:
    endpoint = LocalEndpoint(capacity_scale=0.01).start()  # ~41 writes/s: 60/s offered throttles
    try:
        scenario = small_scenario(tmp_path, 60, 5, transport)
        result = run_dynlocust(scenario, tmp_path, "--host", endpoint.url, run_id=transport)
        server = server_counts(endpoint.stats(), f"t-{transport}", ("PutItem",))
    finally:
        endpoint.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    sent = sum(w["summary"]["sent"] for w in result.windows)
    accepted = sum(w["summary"]["accepted"] for w in result.windows)
    throttled = sum(w["summary"]["throttled"] for w in result.windows)
    offered = sum(w["summary"]["offered"] for w in result.windows)
    dropped = sum(w["summary"]["dropped"] for w in result.windows)
    assert offered == 360 and sent + dropped == offered and throttled > 0
    assert (server["ok"], server["throttled"], server["error"]) == (accepted, throttled, sent - accepted - throttled)


@pytest.mark.slow
def test_a_starved_run_reports_dropped_sends_and_is_client_bound(tmp_path: Path) -> None:
    """Concurrency 1 offering 3,000/s to a table with no ceiling: the client, not the machine or DynamoDB, is the
    limit, and no tolerance for a slight shortfall lets it pass (exit 8, the client named)."""
    endpoint = LocalEndpoint(capacity=False, latency_model=True).start()
    try:
        result = run_dynlocust(small_scenario(tmp_path, 3000, 1), tmp_path, "--host", endpoint.url, run_id="starved")
    finally:
        endpoint.stop()
    # every window client-bound: nothing judged
    assert result.returncode == ExitCode.INCONCLUSIVE, result.stderr[-3000:]
    for window in result.windows:
        summary = window["summary"]
        assert summary["dropped"] > 0.3 * summary["offered"]
        assert summary["sent"] + summary["dropped"] == summary["offered"]
        assert window["verdict"] == "client-bound"
        assert "dropped" in window["saturation"]["reasons"] and "dropped" in window["verdict_detail"]["reasons"]
    conclusion = result.end["conclusion"]["text"]
    assert conclusion.startswith("No window could be judged") and "are client-bound (" in conclusion
    # the one user was busy all along; on a loaded machine the process may also have waited for a CPU
    assert "raise concurrency" in conclusion or "run it on a quieter machine" in conclusion, conclusion


@pytest.mark.slow
def test_a_cpu_hog_in_the_worker_makes_its_windows_client_bound(tmp_path: Path) -> None:
    result = run_dynlocust(
        small_scenario(tmp_path, 50, 5),
        tmp_path,
        run_id="hog",
        locustfile=ROOT / "tests" / "integration" / "hog_locustfile.py",
    )
    assert result.returncode == ExitCode.INCONCLUSIVE, result.stderr[-3000:]  # all client-bound
    assert result.windows and all(w["verdict"] == "client-bound" for w in result.windows)
    assert all({"cpu", "lag"} & set(w["verdict_detail"]["reasons"]) for w in result.windows)
    assert result.end["conclusion"]["client_limited"] == [w["index"] for w in result.windows]


def ramp_across_the_ceiling(tmp_path: Path) -> Path:
    """50 to 200 writes/s over a ~103 writes/s ceiling (capacity_scale 0.025), 6 s windows."""
    ramp = "ramp: {from: 50, to: 200, step: 50, window: 6s}"
    return write_scenario(tmp_path, put_scenario("ramp", ramp, capacity_scale=0.025, concurrency=20))


@pytest.mark.slow
@pytest.mark.parametrize("busy_neighbour", [False, True], ids=["alone", "busy-neighbour"])
def test_a_clean_ramp_across_the_ceiling_is_never_client_bound(tmp_path: Path, busy_neighbour: bool) -> None:
    neighbour = None
    if busy_neighbour:  # a second process spinning on the other core, for at most two minutes
        spin = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"
        neighbour = subprocess.Popen([sys.executable, "-c", spin])
    try:
        result = run_dynlocust(ramp_across_the_ceiling(tmp_path), tmp_path, run_id="ramp")
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait(10)
    assert result.returncode == 0, result.stderr[-3000:]
    details = [w["verdict_detail"] for w in result.windows]
    assert len(details) == 4 and not [d for d in details if "client-bound" in d["labels"]], [
        (d, w["saturation"]) for d, w in zip(details, result.windows, strict=True)
    ]
    assert details[-1]["labels"] == ["throttled"]  # DynamoDB said no, with a healthy client
    assert result.end["conclusion"]["client_limited"] == []


@pytest.mark.slow
def test_a_run_stopped_mid_way_has_unjudged_windows_and_none_client_bound(tmp_path: Path) -> None:
    steps = "steps: [{rate: 20, window: 20s}, {rate: 20, window: 20s}]"  # -t 6s stops inside window 0
    scenario = write_scenario(tmp_path, put_scenario("stopped", steps, concurrency=10))
    result = run_dynlocust(scenario, tmp_path, "-t", "6s", run_id="stopped")
    assert result.returncode == 4, result.stderr[-3000:]  # stopped early
    details = [w["verdict_detail"] for w in result.windows]
    assert len(details) == 2 and details[1]["labels"] == ["not-run"] and details[1]["ran"] == 0, details
    assert details[0]["labels"][0] in ("partial", "not-run") and 0 <= details[0]["ran"] < 1, details
    assert not [d for d in details if "client-bound" in d["labels"] or d["reasons"]]
    assert result.end["conclusion"]["incomplete"] == [0, 1]
    assert "they are not judged" in result.stdout and "nothing can be concluded" in result.stdout


def test_validate_accepts_every_shipped_scenario() -> None:
    files = sorted((ROOT / "scenarios").glob("*.yaml"))
    proc = subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", "validate", *map(str, files)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("quickstart") >= 1


def test_validate_names_file_line_and_key_without_traceback(tmp_path: Path) -> None:
    bad = small_scenario(tmp_path, -5, 2)
    proc = subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", "validate", str(bad)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    line = next(n for n, text in enumerate(bad.read_text().splitlines(), 1) if "steps:" in text)
    assert f"{bad}:{line}: phases[0].steps[0].rate" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_refuses_a_run_id_that_already_has_results(tmp_path: Path) -> None:
    existing = tmp_path / "taken" / "results.jsonl"
    existing.parent.mkdir()
    existing.write_text('{"type": "run"}\n')
    result = run_dynlocust(small_scenario(tmp_path, 10, 1), tmp_path, run_id="taken", timeout=60)
    assert result.returncode == 2
    assert "existing results" in result.stderr and "Traceback" not in result.stderr
    assert existing.read_text() == '{"type": "run"}\n'
