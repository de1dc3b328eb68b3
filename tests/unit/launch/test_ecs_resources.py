"""The run's AWS resources that need no AWS: the task overrides and the CloudFormation template itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dynlocust.launch import ecs_resources
from dynlocust.launch.ecs_resources import DeployError, LaunchOptions, container_overrides


def test_the_scenario_travels_in_the_overrides_within_runtask_limits() -> None:
    overrides = container_overrides("master", "name: x\n", users=12)
    env = {e["name"]: e["value"] for e in overrides["containerOverrides"][0]["environment"]}
    assert overrides["containerOverrides"][0]["name"] == "master"
    assert env == {"DYNLOCUST_SCENARIO_YAML": "name: x\n", "DYNLOCUST_USERS": "12"}
    with pytest.raises(DeployError, match="at most 8192 bytes"):
        container_overrides("worker", "x" * 9000)


def test_the_template_limits_the_task_role_to_the_runs_tables() -> None:
    template = ecs_resources.load_template()
    statements = template["Resources"]["TaskRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    # the CloudWatch witness's one read-only action has no resource-level scope: "*" is the only way to grant it
    (witness,) = [s for s in statements if s["Resource"] == "*"]
    assert witness["Action"] == "cloudwatch:GetMetricData" and witness["Effect"] == "Allow"
    statements = [s for s in statements if s is not witness]
    resources = [r for s in statements for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])]
    for resource in resources:
        text = resource.get("Fn::Sub") or resource.get("Fn::GetAtt")
        assert text == ["ResultsTable", "Arn"] or "table/*-${RunId}" in text, resource
    actions = {a for s in statements for a in s["Action"]}
    assert not any(a.endswith("*") for a in actions) and "dynamodb:ListTables" not in actions


def test_the_template_has_what_the_launcher_reads() -> None:
    template = ecs_resources.load_template()
    assert {"Cluster", "MasterTaskDefinition", "WorkerTaskDefinition", "ResultsTable", "SecurityGroup",
            "MasterDiscoveryService", "MasterHost"} <= set(template["Outputs"])  # fmt: skip
    assert set(p["ParameterKey"] for p in ecs_resources.stack_parameters(
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
    result = subprocess.run([cfn_lint, str(ecs_resources.TEMPLATE)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_template_ships_in_the_package_and_is_the_docker_ecs_file() -> None:
    # found beside the module, in a wheel as in a checkout
    assert ecs_resources.TEMPLATE.parent == Path(ecs_resources.__file__).parent
    root = Path(__file__).resolve().parents[3]
    assert ecs_resources.TEMPLATE.read_text() == (root / "docker" / "ecs" / "template.yaml").read_text()


def test_the_master_opens_its_metrics_port() -> None:
    resources = ecs_resources.load_template()["Resources"]
    master = resources["MasterTaskDefinition"]["Properties"]["ContainerDefinitions"][0]
    env = {e["Name"]: e["Value"] for e in master["Environment"]}
    assert (env["DYNLOCUST_METRICS_HOST"], env["DYNLOCUST_METRICS_PORT"]) == ("0.0.0.0", "9646")
    assert {"ContainerPort": 9646, "Protocol": "tcp"} in master["PortMappings"]
    ingress = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::EC2::SecurityGroupIngress"]
    metrics = [p for p in ingress if p["FromPort"] == p["ToPort"] == 9646]
    assert {"SourceSecurityGroupId" in p or "CidrIp" in p for p in metrics} == {True} and len(metrics) == 2
