"""Inputs `dynlocust diff` must refuse: exit code 2, one line on stderr naming what is wrong, no number printed;
and runs it can read but not compare (every matched window client-bound on a side): exit code 8, never 2.

Every case is made from one real run's results (a real local run), broken in one way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.runs import ROOT, run_dynlocust, without_exit_line
from tests.support.scenarios import put_scenario, write_scenario

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("refused")
    scenario = write_scenario(
        directory, put_scenario("puts", "steps: [{rate: 10, window: 2s}, {rate: 20, window: 2s}]")
    )
    result = run_dynlocust(scenario, directory / "results", run_id="real")
    assert result.returncode == 0, result.stderr[-3000:]
    return directory / "results" / "real" / "results.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _edit(source: Path, out: Path, change: Callable[[list[dict]], list[dict]]) -> Path:
    return _write(out, change(_lines(source)))


def _garbage_line(src: Path, out: Path) -> Path:
    lines = src.read_text().splitlines(keepends=True)
    out.write_text("".join([lines[0], "{not json\n", *lines[1:]]))
    return out


def _cut_last_line(src: Path, out: Path) -> Path:
    text = src.read_text()
    out.write_text(text[: len(text) - 20])
    return out


def _no_end(src: Path, out: Path) -> Path:
    return _edit(src, out, lambda rs: [r for r in rs if r["type"] != "end"])


def _other_mix(src: Path, out: Path) -> Path:
    def change(rs: list[dict]) -> list[dict]:
        rs[0]["shape"]["workload"]["operations"][0]["op"] = "get"
        return rs

    return _edit(src, out, change)


def _client_bound(src: Path, out: Path, indexes: tuple[int, ...] = (1,)) -> Path:
    def change(rs: list[dict]) -> list[dict]:
        for r in rs:
            if r["type"] == "window" and r["index"] in indexes:
                r["verdict"] = "client-bound"
                if "verdict_detail" in r:  # the verdict's one record: its labels, the first being `verdict`
                    r["verdict_detail"]["labels"] = ["client-bound"]
                    r["verdict_detail"]["stronger"] = "client"
        return rs

    return _edit(src, out, change)


def _renamed_phases(src: Path, out: Path) -> Path:
    def change(rs: list[dict]) -> list[dict]:
        for r in rs:
            if r["type"] == "window":
                r["phase"] = "other"
        return rs

    return _edit(src, out, change)


def _compare_file(src: Path, out: Path) -> Path:
    out.write_text(json.dumps({"type": "dynlocust-compare", "version": 1, "rows": [{"name": "get", "ratios": []}]}))
    return out


CASES: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "malformed line": (_garbage_line, r"new: results file .*:2: expected one JSON record"),
    "cut last line": (_cut_last_line, r"new .*: expected a complete run, found a partial one .*cut short"),
    "no end record": (_no_end, r"new .*: expected a complete run, found a partial one \(the run did not finish"),
    "other operation mix": (_other_mix, r"refused: the runs differ in their tables or operation mix at "),
    "no window in common": (_renamed_phases, r"refused: expected windows of the same phase and target rate"),
    "malformed compare file": (_compare_file, r"new: .*compare file .*: rows\[0\]\.ratios: expected a non-empty"),
}


def diff(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "dynlocust.cli", "diff", *args]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", CASES)
def test_refused_with_one_line(real_run: Path, tmp_path: Path, case: str) -> None:
    make, message = CASES[case]
    broken = make(real_run, tmp_path / "broken.jsonl")
    result = diff(str(real_run), str(broken))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = without_exit_line(result.stderr).splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dynlocust diff: error: "), lines
    assert re.search(message, lines[0]), lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["{run}", "{missing}"],
            r"new .*missing: expected a results file, run directory or compare file, found nothing",
        ),
        (["{run}", "{empty_dir}"], r"new .*: expected a run directory holding results.jsonl, found none"),
        (["{run}", "{run}", "--fail-on", "p99>>1"], r"--fail-on term 'p99>>1': expected METRIC>BOUND"),
        (["{run}", "{compare}"], r"refused: expected two run results or two compare files"),
    ],
)
def test_refused_arguments(real_run: Path, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "empty").mkdir()
    compare = tmp_path / "compare.json"
    compare.write_text(
        json.dumps(
            {
                "type": "dynlocust-compare",
                "version": 1,
                "rows": [{"name": "get", "ratios": [1.0], "raw_ms": [1.0], "mapper_ms": [1.0]}],
            }
        )
    )
    values = {"run": str(real_run), "missing": str(tmp_path / "missing"), "empty_dir": str(tmp_path / "empty")}
    values["compare"] = str(compare)
    result = diff(*(a.format(**values) for a in args))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(without_exit_line(result.stderr).splitlines()) == 1, result.stderr
    assert re.search(message, result.stderr), result.stderr


def test_run_with_a_bad_baseline_is_refused_before_it_starts(real_run: Path, tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, put_scenario("puts", "steps: [{rate: 10, window: 2s}]"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for baseline, fail_on, message in (
        (tmp_path / "missing", "none", r"baseline .*missing: expected a results file"),
        (real_run, "p99<+1%", r"--fail-on term 'p99<\+1%': expected p99>"),
    ):
        argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--results-dir", str(tmp_path / "r")]
        argv += ["--baseline", str(baseline), "--fail-on", fail_on, "--metrics-port", "0"]
        result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, (result.stdout, result.stderr)
        err = without_exit_line(result.stderr)
        assert len(err.splitlines()) == 1 and re.search(message, err), result.stderr
        assert not (tmp_path / "r").exists()


def test_a_client_bound_window_is_skipped_and_the_rest_compared(real_run: Path, tmp_path: Path) -> None:
    result = diff(str(real_run), str(_client_bound(real_run, tmp_path / "new.jsonl")))
    assert result.returncode in (0, 6, 8), (result.stdout, result.stderr)
    if result.returncode != 8:  # on a busy machine the real run's other window may be client-bound too
        assert re.search(r"not compared: steps-0 \d+/s: client-bound in the new .*\(skipped\)", result.stdout)


def test_nothing_comparable_is_inconclusive_not_bad_input(real_run: Path, tmp_path: Path) -> None:
    result = diff(str(real_run), str(_client_bound(real_run, tmp_path / "new.jsonl", (0, 1))))
    assert result.returncode == 8, (result.stdout, result.stderr)
    assert result.stdout == ""
    (line,) = without_exit_line(result.stderr, 8).splitlines()
    assert line.startswith("dynlocust diff: inconclusive: nothing comparable: every matched window was skipped ")
