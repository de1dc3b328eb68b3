"""`dynlocust compare --save` / `--baseline`: a mapper slowed by a 10% busy-wait is flagged with its ratio and
confidence; a bad baseline is refused before anything runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from tests.support.runs import ROOT, without_exit_line

OPERATION = "retrieve 1000 items of one partition"
SIDES = ("--only", OPERATION, "--runs", "30", "--repeat", "5")


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", module, *args]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_mapper_slowed_by_10_percent_is_flagged(tmp_path: Path) -> None:
    saved = tmp_path / "mapper.json"
    base = _run("dynlocust.cli", "compare", *SIDES, "--save", str(saved))
    assert base.returncode == 0, base.stderr[-3000:]
    document = json.loads(saved.read_text())
    assert [r["name"] for r in document["rows"]] == [OPERATION] and len(document["rows"][0]["ratios"]) == 30

    slowed = _run("tests.support.slow_mapper", *SIDES, "--baseline", str(saved), "--fail-on", "ratio>+3%")
    assert slowed.returncode == ExitCode.REGRESSION, slowed.stdout[-3000:] + slowed.stderr[-3000:]
    line = re.search(rf"REGRESSION: ratio of '{OPERATION}': .* passes ratio>\+3%", slowed.stdout)
    assert line, slowed.stdout
    row = next(x for x in slowed.stdout.splitlines() if x.startswith(OPERATION) and "mapper/raw" in x)
    assert re.search(r"mapper \d+\.\d% slower than baseline", row), row
    factor = re.search(r"shift x(\d\.\d+), 95% interval x(\d\.\d+)-x(\d\.\d+), (\d+\.\d)% confidence", row)
    assert factor, row
    assert float(factor.group(2)) > 1.0 and float(factor.group(4)) >= 95.0, row


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}", r"baseline .*bad.json: expected results \(JSON lines\) or a compare --save file .* found one JSON"),
        ('{"type": "dynlocust-compare", "version": 2, "rows": []}', r"baseline: compare file .*: version: expected 1"),
        ('{"type": "dynlocust-compare", "version": 1, "rows": [{"name": "x"}]}', r"rows\[0\]\.ratios: expected"),
    ],
)
def test_a_bad_baseline_is_refused_before_running(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = _run("dynlocust.cli", "compare", "--endpoint", "http://127.0.0.1:9", "--baseline", str(bad))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and len(without_exit_line(result.stderr).splitlines()) == 1, result.stderr
    assert re.search(message, result.stderr), result.stderr
