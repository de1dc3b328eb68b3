"""The launcher's pieces that need no AWS: options, overrides, progress lines, the template itself."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dynlocust.deploy import ecs
from dynlocust.deploy.ecs import DeployError, LaunchOptions, Progress, container_overrides, format_window

REQUIRED = ["--workers", "3", "--image", "img", "--vpc-id", "vpc-1", "--subnets", "subnet-a,subnet-b"]


def test_options_from_the_command_line() -> None:
    args = ecs.build_parser().parse_args(["run", "s.yaml", *REQUIRED, "--run-id", "r1", "--assign-public-ip"])
    opts = ecs.options_from(args)
    assert opts.subnets == ("subnet-a", "subnet-b") and opts.workers == 3 and opts.assign_public_ip
    assert opts.stack_name == "dynlocust-r1" and opts.security_groups == ()
    assert ecs.network_configuration(opts, {"SecurityGroup": "sg-1"})["awsvpcConfiguration"] == {
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
    run_id = ecs.new_run_id()
    assert len(run_id) <= 40 and run_id.replace("-", "").isalnum()
    assert run_id[0].isdigit() and "-" in run_id


def test_the_scenario_travels_in_the_overrides_within_runtask_limits() -> None:
    overrides = container_overrides("master", "name: x\n", users=12)
    env = {e["name"]: e["value"] for e in overrides["containerOverrides"][0]["environment"]}
    assert overrides["containerOverrides"][0]["name"] == "master"
    assert env == {"DYNLOCUST_SCENARIO_YAML": "name: x\n", "DYNLOCUST_USERS": "12"}
    with pytest.raises(DeployError, match="at most 8192 bytes"):
        container_overrides("worker", "x" * 9000)


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


def test_the_template_limits_the_task_role_to_the_runs_tables() -> None:
    template = ecs.load_template()
    statements = template["Resources"]["TaskRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    resources = [r for s in statements for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])]
    for resource in resources:
        text = resource.get("Fn::Sub") or resource.get("Fn::GetAtt")
        assert text == ["ResultsTable", "Arn"] or "table/*-${RunId}" in text, resource
    actions = {a for s in statements for a in s["Action"]}
    assert not any(a.endswith("*") for a in actions) and "dynamodb:ListTables" not in actions


def test_the_template_has_what_the_launcher_reads() -> None:
    template = ecs.load_template()
    assert {"Cluster", "MasterTaskDefinition", "WorkerTaskDefinition", "ResultsTable", "SecurityGroup",
            "MasterDiscoveryService", "MasterHost"} <= set(template["Outputs"])  # fmt: skip
    assert set(p["ParameterKey"] for p in ecs.stack_parameters(
        LaunchOptions(Path("s"), 2, "img", "vpc", ("s",), run_id="r"), 10)) <= set(template["Parameters"])  # fmt: skip
    resources = template["Resources"]
    for name in ("MasterTaskDefinition", "WorkerTaskDefinition"):
        props = resources[name]["Properties"]
        assert props["RequiresCompatibilities"] == ["FARGATE"] and props["NetworkMode"] == "awsvpc"
        assert props["ContainerDefinitions"][0]["LogConfiguration"]["LogDriver"] == "awslogs"
    worker = resources["WorkerTaskDefinition"]["Properties"]["ContainerDefinitions"][0]["Command"][0]["Fn::Sub"]
    assert "--master-host master.dynlocust-${RunId}.local" in worker
    assert resources["MasterDiscovery"]["Properties"]["Name"] == "master"


def test_the_template_passes_cfn_lint() -> None:
    cfn_lint = shutil.which("cfn-lint", path=str(Path(sys.executable).parent)) or shutil.which("cfn-lint")
    if cfn_lint is None:
        pytest.skip("cfn-lint is not installed (pip install cfn-lint)")
    result = subprocess.run([cfn_lint, str(ecs.TEMPLATE)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_template_ships_in_the_package_and_is_the_docker_ecs_file() -> None:
    assert ecs.TEMPLATE.parent == Path(ecs.__file__).parent  # found beside the module, in a wheel as in a checkout
    root = Path(__file__).resolve().parents[3]
    assert ecs.TEMPLATE.read_text() == (root / "docker" / "ecs" / "template.yaml").read_text()


def test_the_master_opens_its_metrics_port() -> None:
    resources = ecs.load_template()["Resources"]
    master = resources["MasterTaskDefinition"]["Properties"]["ContainerDefinitions"][0]
    env = {e["Name"]: e["Value"] for e in master["Environment"]}
    assert (env["DYNLOCUST_METRICS_HOST"], env["DYNLOCUST_METRICS_PORT"]) == ("0.0.0.0", "9646")
    assert {"ContainerPort": 9646, "Protocol": "tcp"} in master["PortMappings"]
    ingress = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::EC2::SecurityGroupIngress"]
    metrics = [p for p in ingress if p["FromPort"] == p["ToPort"] == 9646]
    assert {"SourceSecurityGroupId" in p or "CidrIp" in p for p in metrics} == {True} and len(metrics) == 2
