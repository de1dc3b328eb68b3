"""`dynlocust run` on malformed scenarios, as a user sees it: exit code 2, one paragraph naming file, line and key,
no traceback, and nothing created (no results directory, not one request to the endpoint).

A sample of the loader's corpus (tests/unit/scenario/test_loader.py holds all of it) taken through the real CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FaultServer
from tests.support.runs import ROOT, without_exit_line
from tests.unit.scenario._base import BASE, variant

REMOTE = variant("  local: {capacity_scale: 0.05}", "  endpoint: ENDPOINT")

# (id, scenario text, fragments the one paragraph must contain)
CASES: list[tuple[str, str, list[str]]] = [
    ("yaml-syntax", variant("  item_size: 1024", "  item_size: [1024"), ["YAML syntax error"]),
    ("empty-document", "", ["found an empty document"]),
    ("top-level-list", "- a\n- b\n", ["found a list"]),
    ("unknown-key", variant("concurrency: 10", "concurency: 10"), [":21:", "did you mean 'concurrency'?"]),
    ("wrong-type", variant("concurrency: 10", "concurrency: ten"), [":21:", "concurrency"]),
    ("negative-rate", variant("step: 100", "step: -5"), [":19:", "phases[0].ramp.step", "found -5"]),
    ("negative-duration", variant("deadline: 8s", "deadline: -3s"), [":22:", "expected a positive duration"]),
    ("unknown-op", variant("{op: get, weight: 1}", "{op: gett, weight: 1}"), ["did you mean 'get'?"]),
    ("missing-index", variant("{op: get, weight: 1}", "{op: gsi_query, index: by_ownr}"), ["by_owner"]),
    ("use-existing-unnamed", variant("    gsis:", "    use_existing: true\n    gsis:"), ["existing_table_name"]),
    ("remote-without-ceilings", REMOTE, ["cost ceiling"]),
]


def dynlocust_run(scenario: Path, results: Path, host: str, run_id: str = "bad") -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(scenario), "--host", host]
    argv += ["--results-dir", str(results), "--run-id", run_id, "--metrics-port", "0"]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("text", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_scenario_gets_one_paragraph_exit_2_and_creates_nothing(
    fault_server: FaultServer, tmp_path: Path, text: str, fragments: list[str]
) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(text.replace("ENDPOINT", fault_server.url))
    results = tmp_path / "results"
    proc = dynlocust_run(scenario, results, fault_server.url)
    assert proc.returncode == 2, proc.stderr
    err = without_exit_line(proc.stderr).strip()
    assert err.startswith(f"dynlocust: error: {scenario}"), err
    assert "\n\n" not in err and "Traceback" not in err  # one paragraph
    for fragment in fragments:
        assert fragment in err
    assert proc.stdout == ""
    assert not results.exists()
    assert fault_server.requests() == []  # not one call reached the endpoint


def test_a_missing_scenario_file_is_one_line_too(fault_server: FaultServer, tmp_path: Path) -> None:
    proc = dynlocust_run(tmp_path / "nope.yaml", tmp_path / "results", fault_server.url)
    assert proc.returncode == 2
    err = without_exit_line(proc.stderr)
    assert err.startswith("dynlocust: error:") and "nope.yaml" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert fault_server.requests() == []


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (["--client-cpu", "2"], {}, "dynlocust: error: --client-cpu: expected a number from 0.05 to 1, found '2'"),
        ([], {"DYNLOCUST_CLIENT_LATE_MIN": "0"},
         "dynlocust: error: --client-late-min: expected a whole number from 1 to 1,000,000,000, found '0'"),
    ],
)  # fmt: skip
def test_a_threshold_out_of_range_exits_2_with_one_line(
    fault_server: FaultServer, tmp_path: Path, args: list[str], env: dict[str, str], line: str
) -> None:
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "dynlocust.cli", "run", str(ROOT / "scenarios" / "quickstart.yaml")]
    argv += ["--host", fault_server.url, "--results-dir", str(results), "--metrics-port", "0", *args]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert proc.returncode == 2, proc.stderr
    err = without_exit_line(proc.stderr)
    errors = [x for x in err.splitlines() if "error" in x.lower()]  # Locust logs its start-up line first
    assert errors == [line] and err.strip().endswith(line) and "Traceback" not in proc.stderr
    assert not results.exists() and fault_server.requests() == []


@pytest.mark.parametrize("run_id", ["..", "../escape", "a/b"])
def test_an_unsafe_run_id_is_one_line_exit_2_before_any_call(
    fault_server: FaultServer, tmp_path: Path, run_id: str
) -> None:
    scenario = tmp_path / "ok.yaml"
    scenario.write_text(variant("concurrency: 10", "concurrency: 10"))
    results = tmp_path / "deep" / "results"
    proc = dynlocust_run(scenario, results, fault_server.url, run_id=run_id)
    assert proc.returncode == 2, proc.stderr
    # after Locust's "Starting Locust" line: options are validated at init
    last = without_exit_line(proc.stderr).splitlines()[-1]
    assert last.startswith("dynlocust: error: --run-id: expected") and proc.stderr.count("dynlocust: error") == 1
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "deep").exists()  # nothing written, inside --results-dir or out of it
    assert fault_server.requests() == []


BOMB = (
    BASE
    + "description:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))
)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (BOMB, "values once aliases are expanded"),  # 10**9 values: the line indexer used to walk every one
        (BASE + "description: " + "[" * 5000 + "]" * 5000 + "\n", "levels of nesting"),  # was a RecursionError
        (variant("items: 100,", "items: 1000000000000,"), "seed.items: expected"),  # was reported valid
    ],
    ids=["alias-bomb", "5000-levels", "seed-items"],
)
def test_validate_refuses_what_would_hang_crash_or_mislead_in_one_line(
    tmp_path: Path, text: str, fragment: str
) -> None:
    scenario = tmp_path / "hostile.yaml"
    scenario.write_text(text)
    argv = [sys.executable, "-m", "dynlocust.cli", "validate", str(scenario)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)  # a bound, not a measure
    assert proc.returncode == 2, proc.stderr[-2000:]
    err = without_exit_line(proc.stderr)
    assert err.startswith(f"dynlocust: error: {scenario}:") and err.count("\n") == 1, proc.stderr
    assert fragment in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "env", "line"),
    [
        (["--rate-scale", "abc"], {}, "--rate-scale: expected a positive scale factor such as 0.25, found 'abc'"),
        ([], {"DYNLOCUST_DURATION_SCALE": "0"}, "--duration-scale: expected a scale factor above 0 and at most"),
        (["--duration-scale", "0.001"], {}, "--duration-scale: expected windows of at least 1 s, found 0.06 s"),
        (["--capacity-scale", "2"], {}, "--capacity-scale: applies to the embedded endpoint only; expected a local"),
        (["--local", "--host", "http://127.0.0.1:1"], {}, "--local: uses the embedded endpoint, so expected no --host"),
    ],
    ids=["not-a-number", "zero-from-env", "windows-too-short", "capacity-of-a-remote-target", "local-and-host"],
)
def test_scale_options_that_cannot_apply_exit_2_with_one_line_before_locust_starts(
    tmp_path: Path, args: list[str], env: dict[str, str], line: str
) -> None:
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "dynlocust.cli", "run", "write-ceiling", "--results-dir", str(results), *args]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert proc.returncode == 2, proc.stderr
    err = without_exit_line(proc.stderr)
    assert err.startswith(f"dynlocust: error: {line}") and err.count("\n") == 1, proc.stderr
    assert proc.stdout == "" and not results.exists()


NO_REQUEST = {  # the two: each window would read `ok` having sent nothing, and the run exit 0
    "quarter-second-at-1": ("steps: [{rate: 1, window: 250ms}]", "window 1 (0.25 s at 1/s) plans no request"),
    "ten-thousand-microseconds": (
        "hold: {rate: 100, duration: 0.01, window: 0.000001}",
        "window 1 (1e-06 s at 100/s) plans no request",
    ),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("phase", "says"), NO_REQUEST.values(), ids=list(NO_REQUEST))
def test_windows_that_hold_no_request_are_refused_naming_file_window_and_rate(
    tmp_path: Path, command: str, phase: str, says: str
) -> None:
    scenario = tmp_path / "empty-windows.yaml"
    scenario.write_text(
        "name: empty\ntarget: {local: {}}\ntables: [{name: t, partition_key: {name: pk, type: S}}]\n"
        f"workload: {{operations: [{{op: put, weight: 1}}]}}\nphases:\n  - {phase}\n"
    )
    argv = [sys.executable, "-m", "dynlocust.cli", command, str(scenario)]
    argv += ["--results-dir", str(tmp_path / "results"), "--metrics-port", "0"] if command == "run" else []
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = without_exit_line(proc.stderr).splitlines()
    assert line.startswith(f"dynlocust: error: {scenario}:6: phases[0].") and says in line, line
    assert proc.stdout == "" and not (tmp_path / "results").exists()
