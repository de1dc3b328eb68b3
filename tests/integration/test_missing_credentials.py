"""A remote target without AWS credentials: one paragraph saying what is missing and how to provide it, exit 2,
before any table, user or results file exists (`dynlocust run` and `locust -f` alike)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.runs import ROOT
from tests.unit.scenario._base import BASE

REMOTE = BASE.replace("target:\n  local: {capacity_scale: 0.05}\n", "target: {region: us-east-1}\n") + (
    "limits: {max_requests: 100000, max_cost_dollars: 1}\n"
)


def _without_credentials(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and not k.startswith("DYNLOCUST_")}
    missing = str(tmp_path / "no-such-aws-file")
    env.update(AWS_SHARED_CREDENTIALS_FILE=missing, AWS_CONFIG_FILE=missing, AWS_EC2_METADATA_DISABLED="true")
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.parametrize("entry", ["dynlocust run", "locust -f"])
def test_no_credentials_for_a_remote_target_is_one_paragraph_and_exit_2(tmp_path: Path, entry: str) -> None:
    assert "target: {region: us-east-1}" in REMOTE
    scenario = tmp_path / "remote.yaml"
    scenario.write_text(REMOTE)
    results = tmp_path / "results"
    if entry == "dynlocust run":
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario)]
    else:
        locustfile = tmp_path / "lf.py"
        locustfile.write_text("from dynlocust.user_classes.scenario_user import ScenarioUser  # noqa: F401\n")
        argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "--scenario", str(scenario)]
        argv += ["-u", "2", "-r", "2"]
    argv += ["--results-dir", str(results), "--metrics-port", "0"]
    proc = subprocess.run(
        argv, cwd=ROOT, env=_without_credentials(tmp_path), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert "Traceback" not in err and "Ramping" not in err + proc.stdout, err
    lines = [line for line in err.splitlines() if line.startswith("dynlocust:")]
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("dynlocust: error: no AWS credentials found for the remote target DynamoDB in us-east-1")
    assert "AWS_ACCESS_KEY_ID" in line and "AWS_PROFILE" in line and "local" in line
    assert not results.exists()  # nothing half-created
