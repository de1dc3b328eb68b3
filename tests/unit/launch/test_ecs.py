"""The launcher's pieces that need no AWS: options and progress lines."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from dynlocust.launch import ecs, ecs_resources
from dynlocust.launch.ecs import Progress, format_window
from dynlocust.launch.ecs_resources import DeployError, LaunchOptions
from dynlocust.run.run_id import new_run_id

REQUIRED = ["--workers", "3", "--image", "img", "--vpc-id", "vpc-1", "--subnets", "subnet-a,subnet-b"]


def test_options_from_the_command_line() -> None:
    args = ecs.build_parser().parse_args(["run", "s.yaml", *REQUIRED, "--run-id", "r1", "--assign-public-ip"])
    opts = ecs.options_from(args)
    assert opts.subnets == ("subnet-a", "subnet-b") and opts.workers == 3 and opts.assign_public_ip
    assert opts.stack_name == "dynlocust-r1" and opts.security_groups == ()
    assert ecs_resources.network_configuration(opts, {"SecurityGroup": "sg-1"})["awsvpcConfiguration"] == {
        "subnets": ["subnet-a", "subnet-b"], "securityGroups": ["sg-1"], "assignPublicIp": "ENABLED"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [(["--workers", "0"], "--workers: expected at least 1, found 0"),
     (["--subnets", ","], "--subnets: expected at least one subnet id")],
)  # fmt: skip
def test_bad_options_are_refused_with_what_was_found(change: list[str], message: str) -> None:
    args = ecs.build_parser().parse_args(["run", "s.yaml", *REQUIRED, *change])
    with pytest.raises(DeployError, match=message):
        ecs.options_from(args)


def test_a_generated_run_id_is_a_valid_stack_and_table_suffix() -> None:
    run_id = new_run_id()
    assert len(run_id) <= 40 and run_id.replace("-", "").isalnum()
    assert run_id[0].isdigit() and "-" in run_id


def test_a_local_scenario_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    scenario = Path(__file__).resolve().parents[3] / "scenarios" / "quickstart.yaml"
    opts = LaunchOptions(scenario, 2, "img", "vpc", ("s",), run_id="r", results_dir=tmp_path)

    class Untouchable(dict[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise AssertionError(f"{key} client used for a refused scenario")

    with pytest.raises(DeployError, match="expected a remote target"):
        ecs.launch(opts, Untouchable(), out=io.StringIO())


def test_windows_are_printed_once_each_in_order_and_saved() -> None:
    class Sink:
        def __init__(self) -> None:
            self.records: list[dict[str, Any]] = []

        def write(self, record: dict[str, Any]) -> None:
            self.records.append(record)

    out, sink = io.StringIO(), Sink()
    progress = Progress(out, sink)
    window = {"type": "window", "index": 0, "phase": "ramp", "verdict": "throttled", "missing_workers": [1],
              "summary": {"target_rate": 50, "sent": 500, "accepted": 400, "accepted_per_s": 40.0, "throttled": 100,
                          "latency": {"p99": 0.0051}}}  # fmt: skip
    progress.take([(0, {"type": "run", "run_id": "r", "t0": 5.0, "windows": [{}, {}]}), (1, window)])
    progress.take([(1, window), (END_SEQ := 1_000_000_000, {"type": "end", "exit_code": 5, "sent": 500})])
    lines = out.getvalue().splitlines()
    assert lines[1] == (
        "window 1/2 ramp target 50/s: sent 500 accepted 400 (40.0/s) throttled 100 p99 5.1 ms verdict throttled "
        "(missing workers [1])"
    )
    assert len(lines) == 3 and progress.end == {"type": "end", "exit_code": 5, "sent": 500}
    assert [r["type"] for r in sink.records] == ["run", "window", "end"] and progress.last_seq == END_SEQ


def test_an_empty_window_prints_dashes_not_errors() -> None:
    assert format_window({"index": 0, "summary": {}}, 1).endswith("throttled 0 p99 - verdict ?")


# -- the template -----------------------------------------------------------------------------------------------


def test_a_shipped_scenario_is_taken_by_its_bare_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dynlocust.scenario.catalog import SHIPPED_DIR

    monkeypatch.chdir(tmp_path)
    args = ecs.build_parser().parse_args(["run", "write-ceiling", *REQUIRED])
    assert ecs.options_from(args).scenario_path == SHIPPED_DIR / "write-ceiling.yaml"
