"""`dynlocust diff` and `dynlocust run --baseline` on real runs against the real local endpoint.

A PutItem slowed by 2 ms (a delaying proxy in front of the endpoint, so the endpoint itself is untouched) must be
flagged; so must a capacity lowered by 20%, run through the CI recipe of docs/diff.md. The 2 ms runs use the fast
transport: with boto3's ~2.5 ms of client time per call the baseline p50 is ~4.5 ms, and +2 ms (+45%) sits below
what the default run noise lets a p50 be called significant (docs/diff.md: roughly +50-60%), so the test would measure
the machine's speed rather than the diff. On a machine too busy to keep the
schedule, the runs come out client-bound and the diff refuses them (exit 2): that is reported as a skip with its
reason, never as a pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.observe.diff.load import RunSide, load_side
from dynlocust.observe.diff.runs import diff_runs
from tests.support.processes import ServerProcess
from tests.support.runs import ROOT, RunResult, run_dynlocust
from tests.support.scenarios import put_scenario, write_scenario

pytestmark = pytest.mark.slow

STEPS = "steps: [{rate: 30, window: 6s}, {rate: 60, window: 6s}]"


def skip_if_client_bound(returncode: int, stderr: str) -> None:
    if returncode == 2 and "client-bound" in stderr:
        pytest.skip(f"machine too busy to keep the schedule, the diff refused the runs: {stderr.strip()[-300:]}")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    local = LocalEndpoint(capacity=False).start()
    try:
        yield local
    finally:
        local.stop()


def _proxy(endpoint: LocalEndpoint, delay: float) -> ServerProcess:
    return ServerProcess(
        "tests.support.delayproxy", "--upstream", endpoint.url, "--delay", repr(delay), "--lifetime", "300"
    )


@pytest.fixture(scope="module")
def baseline(endpoint: LocalEndpoint, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A put-only run through the proxy with no delay: (scenario, results directory)."""
    directory = tmp_path_factory.mktemp("diff-baseline")
    scenario = write_scenario(directory, put_scenario("puts", STEPS, concurrency=24, transport="fast"))
    proxy = _proxy(endpoint, 0.0)
    try:
        result = run_dynlocust(scenario, directory / "results", "--host", proxy.url, run_id="base")
    finally:
        proxy.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    return scenario, directory / "results" / "base"


@pytest.mark.slow
def test_a_2ms_putitem_delay_is_flagged_by_run_baseline(
    endpoint: LocalEndpoint, baseline: tuple[Path, Path], tmp_path: Path
) -> None:
    scenario, base = baseline
    proxy = _proxy(endpoint, 0.002)
    try:
        result: RunResult = run_dynlocust(
            scenario,
            tmp_path,
            "--host",
            proxy.url,
            "--baseline",
            str(base),
            "--fail-on",
            "p50>+1",
            "--diff-markdown",
            str(tmp_path / "diff.md"),
            run_id="slow",
        )
    finally:
        proxy.stop()
    skip_if_client_bound(result.returncode, result.stderr)
    assert result.returncode == ExitCode.REGRESSION, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"REGRESSION: p50 of 'steps-0 (30|60)/s': .* passes p50>\+1ms", result.stdout), result.stdout
    assert ":x: **REGRESSION" in (tmp_path / "diff.md").read_text()
    new = load_side(tmp_path / "slow", "new")
    old = load_side(base, "baseline")
    assert isinstance(new, RunSide) and isinstance(old, RunSide)
    p50 = [c for c in diff_runs(old, new).cells if c.metric.name == "p50"]
    assert all(c.worse for c in p50), p50
    assert all(isinstance(c.base, float) and isinstance(c.new, float) and c.new - c.base > 0.0015 for c in p50), p50


CI_RECIPE = re.compile(r"<!-- ci-recipe -->\s*```sh\n(.*?)```", re.S)


@pytest.mark.slow
def test_a_capacity_lowered_by_20_percent_fails_the_ci_recipe(tmp_path: Path) -> None:
    recipe = CI_RECIPE.search((ROOT / "docs" / "diff.md").read_text())
    assert recipe, "docs/diff.md: expected a ```sh block after <!-- ci-recipe -->"
    steps = "steps: [{rate: 10, window: 4s}, {rate: 40, window: 15s}]"  # ceilings ~21/s and ~17/s
    scenarios = {}
    for name, scale in (("base", 0.005), ("new", 0.004)):
        scenarios[name] = write_scenario(
            tmp_path, put_scenario("capacity", steps, capacity_scale=scale, concurrency=16), f"{name}.yaml"
        )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    summary = tmp_path / "summary.md"
    # the baseline, stored once on the main branch
    stored = run_dynlocust(scenarios["base"], tmp_path / "results", run_id="main-6-1")
    assert stored.returncode == 0, stored.stderr[-3000:]
    recipe_env = {
        **env,
        "SCENARIO": str(scenarios["new"]),
        "BASELINE": str(tmp_path / "results" / "main-6-1"),
        "GITHUB_RUN_ID": "7",
        "GITHUB_RUN_ATTEMPT": "2",
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    ci = subprocess.run(
        ["bash", "-e", "-c", recipe.group(1)], cwd=tmp_path, env=recipe_env, capture_output=True, text=True, timeout=300
    )
    skip_if_client_bound(ci.returncode, ci.stderr)
    assert ci.returncode == ExitCode.REGRESSION, ci.stdout[-3000:] + ci.stderr[-3000:]
    text = summary.read_text()
    assert text.startswith("## dynlocust diff: scenario capacity") and ":x: **REGRESSION" in text, text
    assert re.search(r"- \*\*regression\*\*: accepted of 'steps-0 40/s': .* passes accepted<-5%", text), text
    assert (tmp_path / "diff.html").read_text().count("<svg") == 2

    base = load_side(tmp_path / "results" / "main-6-1", "baseline")
    new = load_side(tmp_path / "results" / "ci-7-2", "new")
    assert isinstance(base, RunSide) and isinstance(new, RunSide)
    cells = {(c.row, c.metric.name): c for c in diff_runs(base, new).cells}
    accepted = cells[("steps-0 40/s", "accepted")]
    assert accepted.significant and accepted.change is not None and -0.3 < accepted.change < -0.1, accepted
    first = cells[("steps-0 40/s", "first_throttle")]
    assert isinstance(first.base, float) and isinstance(first.new, float) and first.new < first.base, first
