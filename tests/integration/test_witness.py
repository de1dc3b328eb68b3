"""`dynlocust witness`: CloudWatch's per-minute metrics, read through boto3's CloudWatch client from a local endpoint,
beside the client's counts of a real run.

The endpoint (`dynlocust local`, a process of its own) outlives the run, as CloudWatch does, so the witness reads
it after the run has deleted its tables. The quickstart agrees minute by minute; a run while the test writes to the
run's table around the client disagrees, and the witness names the minute and the metric.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import pytest
import yaml

from dynlocust.scenario.catalog import resolve
from tests.integration.test_prometheus import run_bounded
from tests.support.processes import ServerProcess
from tests.support.runs import ROOT

AROUND = 150
CREDS = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def remote_copy(scenario: str, url: str, into: Path, **changes: object) -> Path:
    """A shipped scenario pointed at `url` (its capacity is the endpoint's: `dynlocust local --scenario`)."""
    spec = yaml.safe_load(Path(resolve(scenario)).read_text())
    spec["target"] = {"endpoint": url}
    spec["limits"] = {**spec.get("limits", {}), "max_cost_dollars": 1.0}  # a remote target needs both ceilings
    spec.update(changes)
    path = into / f"{scenario}-remote.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def witness(results: Path, url: str) -> tuple[int, str]:
    return run_bounded(
        [sys.executable, "-m", "dynlocust.cli", "witness", str(results), "--host", url], results.parent, ENV, 60
    )


def wait_for_the_minute_after(results: Path) -> None:
    """The run's last minute is settled once it has ended (the endpoint counts as it answers)."""
    import json

    run = json.loads(results.read_text().splitlines()[0])
    end = max(w["start"] + w["duration"] for w in run["windows"])
    while time.time() < (end // 60 + 1) * 60 + 1:
        time.sleep(0.5)


@dataclass
class Witnessed:
    """A run against a `dynlocust local` process that outlives it, and what `dynlocust witness` said of it then."""

    output: str
    results: Path
    code: int = -1
    text: str = "no results: not witnessed"
    sent_around: list[float] = field(default_factory=list)
    """When the writes sent around the run's client ended (the disagreement's run only)."""


def remote_quickstart(into: Path) -> Witnessed:
    endpoint = ServerProcess("dynlocust.local", "--port", "0", "--scenario", str(resolve("quickstart")))
    try:
        scenario = remote_copy("quickstart", endpoint.url, into)
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", "results"]
        _code, output = run_bounded([*argv, "--run-id", "witness-quick"], into, ENV, 240)
        run = Witnessed(output, into / "results" / "witness-quick" / "results.jsonl")
        if run.results.exists():
            wait_for_the_minute_after(run.results)
            run.code, run.text = witness(run.results, endpoint.url)
        return run
    finally:
        endpoint.stop()


def writes_sent_around(into: Path) -> Witnessed:
    endpoint = ServerProcess("dynlocust.local", "--port", "0", "--scenario", str(resolve("quickstart")))
    sent_around: list[float] = []
    try:
        steady = {"name": "steady", "hold": {"rate": 40, "duration": "20s", "window": "10s"}}
        scenario = remote_copy("quickstart", endpoint.url, into, phases=[steady], bin="1s")
        spec = yaml.safe_load(scenario.read_text())
        spec["tables"][0].pop("seed", None)  # no seeding: every minute of the run is compared whole
        spec["workload"]["operations"] = [{"op": "put", "weight": 1}]
        spec["slos"] = []
        scenario.write_text(yaml.safe_dump(spec))
        ddb = boto3.client("dynamodb", endpoint_url=endpoint.url, **CREDS)

        def around() -> None:  # 150 writes of 1 unit each to the run's own table, not through the run's client
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if "items-witness-around" in ddb.list_tables()["TableNames"]:
                    time.sleep(5)  # inside the window
                    for i in range(AROUND):
                        ddb.put_item(TableName="items-witness-around", Item={"pk": {"S": f"around-{i}"}})
                    sent_around.append(time.time())
                    return
                time.sleep(0.2)

        thread = threading.Thread(target=around, daemon=True)
        thread.start()
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", "results"]
        _code, output = run_bounded([*argv, "--run-id", "witness-around"], into, ENV, 180)
        thread.join(10)
        run = Witnessed(output, into / "results" / "witness-around" / "results.jsonl", sent_around=sent_around)
        if run.results.exists() and sent_around:
            wait_for_the_minute_after(run.results)
            run.code, run.text = witness(run.results, endpoint.url)
        return run
    finally:
        endpoint.stop()


def embedded_quickstart(into: Path) -> tuple[int, str]:
    argv = [sys.executable, "-m", "dynlocust.cli", "run", "quickstart", "--results-dir", "results", "--witness"]
    return run_bounded([*argv, "--run-id", "witness-embedded"], into, ENV, 300)


@dataclass
class Runs:
    """The module's three runs, played at once: each is a minute or less plus the wait for its last CloudWatch
    minute to settle, and side by side those waits overlap (274 s one after the other, 129 s at once)."""

    remote: Witnessed
    around: Witnessed
    embedded: tuple[int, str]
    embedded_dir: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    dirs = [tmp_path_factory.mktemp(name) for name in ("remote", "around", "embedded")]
    with ThreadPoolExecutor(3) as pool:
        remote = pool.submit(remote_quickstart, dirs[0])
        around = pool.submit(writes_sent_around, dirs[1])
        embedded = pool.submit(embedded_quickstart, dirs[2])
        return Runs(remote.result(), around.result(), embedded.result(), dirs[2] / "results" / "witness-embedded")


@pytest.mark.slow
def test_the_quickstart_agrees_with_the_endpoints_cloudwatch_minute_by_minute(runs: Runs) -> None:
    run = runs.remote
    assert run.results.exists(), run.output[-3000:]
    code, text = run.code, run.text
    assert code == 0, text
    assert "the client and CloudWatch agree within the tolerance" in text
    rows = [line for line in text.splitlines() if re.match(r"\d\d:\d\d  ", line)]
    assert any(" seeding " in row for row in rows) or any("windows + seeding" in row for row in rows)
    throttled = [row for row in rows if re.search(r"write throttles|\b[1-9][\d,]* \| [1-9]", row)]
    assert throttled, f"no minute with throttles to compare:\n{text}"
    assert "WriteKeyRangeThroughputThrottleEvents" in text  # the quickstart's throttles, by reason


@pytest.mark.slow
def test_writes_sent_around_the_client_are_reported_as_a_disagreement(runs: Runs) -> None:
    run = runs.around
    assert run.results.exists() and run.sent_around, run.output[-3000:]
    code, text = run.code, run.text
    assert code == 1, text
    minute = time.strftime("%H:%M", time.gmtime(run.sent_around[0]))
    units = [line.strip() for line in text.splitlines() if "ConsumedWriteCapacityUnits: client" in line]
    # the minute of the writes sent around the client (a 1 s bin straddling its edge hides at most 40 of them) ...
    excess = [int(m[1]) for line in units if (m := re.fullmatch(minute + r" .*\(\+(\d+)\)", line))]
    assert excess and AROUND - 40 <= excess[0] <= AROUND, text
    # ... and the windows' total, where no bin straddles: exactly the writes sent around it
    assert any(line.startswith("total ") and line.endswith(f"(+{AROUND})") for line in units), text


@pytest.mark.slow
def test_witness_at_the_end_of_an_embedded_quickstart_run_goes_into_its_report(runs: Runs) -> None:
    """`--witness`: the embedded endpoint answers CloudWatch until the witness has read it, then stops."""
    code, output = runs.embedded
    assert "the client and CloudWatch agree within the tolerance" in output, output[-5000:]
    assert re.search(r"^total +windows in all +[\d,.-]+ \| [\d,.]+", output, re.M), output[-5000:]
    run_dir = runs.embedded_dir
    assert (run_dir / "witness.json").exists()
    page = (run_dir / "report" / "report.html").read_text()
    assert "<h2>CloudWatch witness</h2>" in page and 'id="witness-agree"' in page
    assert code in (0, 3), output[-3000:]  # the run's own exit code (an SLO may fail on a busy machine)
