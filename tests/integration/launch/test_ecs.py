"""`dynlocust ecs run` against moto's server (CloudFormation, ECS, DynamoDB, Cloud Map) on 127.0.0.1.

moto runs no containers, so the test plays the master: once the launcher has started the fleet, the test publishes
results records to the run's results table exactly as a master on ECS would, and checks what the launcher prints,
saves and tears down. moto's CloudFormation skips AWS::ServiceDiscovery resources, so the test creates the
namespace and the ``master`` service the template would have created; the launcher finds them by name.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from dynlocust.exit_codes import ExitCode
from dynlocust.fleet.results_table import publish_record
from dynlocust.launch.ecs_resources import TEMPLATE, load_template, start_once, stop_tasks
from dynlocust.run.results import read_results
from tests.support.runs import ROOT, without_exit_line

SCENARIO = """\
name: ecs-smoke
target: remote
tables:
  - {name: items, partition_key: {name: pk, type: S}}
workload:
  item_size: 500
  operations: [{op: put, weight: 1}]
phases:
  - ramp: {from: 100, to: 200, step: 100, window: 10s}
concurrency: 5
deadline: 2s
limits: {max_requests: 5000, max_cost_dollars: 0.10}
"""
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture
def moto_url() -> Iterator[str]:
    yield from moto_server({})


@pytest.fixture
def moto_checking_credentials() -> Iterator[str]:
    """moto with its IAM checks on from the first call: keys it never issued are refused, as AWS refuses them."""
    yield from moto_server({"INITIAL_NO_AUTH_ACTION_COUNT": "0"})


def moto_server(env: dict[str, str]) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not start within 20 s") from None
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}"
        # moto advances a task towards STOPPED on every describe; keep tasks RUNNING until they are stopped
        body = json.dumps({"model_name": "ecs::task", "transition": {"progression": "manual", "times": 10**6}})
        request = urllib.request.Request(url + "/moto-api/state-manager/set-transition", data=body.encode())
        urllib.request.urlopen(request, timeout=5).close()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def client(name: str, url: str) -> Any:
    return boto3.client(
        name, endpoint_url=url, region_name="us-east-1", aws_access_key_id="local", aws_secret_access_key="local"
    )


def network(url: str, run_id: str) -> tuple[str, str, str]:
    """A VPC and subnet, and the Cloud Map namespace + service moto's CloudFormation leaves out."""
    ec2, sd = client("ec2", url), client("servicediscovery", url)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})  # as a private DNS namespace needs
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    sd.create_private_dns_namespace(Name=f"dynlocust-{run_id}.local", Vpc=vpc)
    namespace = next(n["Id"] for n in sd.list_namespaces()["Namespaces"] if n["Name"] == f"dynlocust-{run_id}.local")
    service = sd.create_service(
        Name="master", NamespaceId=namespace, DnsConfig={"DnsRecords": [{"Type": "A", "TTL": 10}]}
    )["Service"]["Id"]
    return vpc, subnet, service


def tagged_table(ddb: Any, name: str, run_id: str | None) -> None:
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        **({"Tags": [{"Key": "dynlocust:run-id", "Value": run_id}]} if run_id else {}),
    )


def moto_template(tmp_path: Path, url: str, run_id: str) -> Path:
    """The template, with its task definitions registered by the test: moto's CloudFormation drops NetworkMode,
    and a task without awsvpc has no address to register. Everything else goes through moto's CloudFormation."""
    template = load_template(TEMPLATE)
    ecs_client = client("ecs", url)
    for logical, container in (("MasterTaskDefinition", "master"), ("WorkerTaskDefinition", "worker")):
        del template["Resources"][logical]
        arn = ecs_client.register_task_definition(
            family=f"dynlocust-{run_id}-{container}", networkMode="awsvpc", requiresCompatibilities=["FARGATE"],
            cpu="1024", memory="2048", containerDefinitions=[{"name": container, "image": "img", "memory": 2048}],
        )["taskDefinition"]["taskDefinitionArn"]  # fmt: skip
        template["Outputs"][logical] = {"Value": arn}
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    return path


def launcher(tmp_path: Path, url: str, run_id: str, vpc: str, subnet: str, workers: int) -> subprocess.Popen[str]:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    template = moto_template(tmp_path, url, run_id)
    return subprocess.Popen(
        [sys.executable, "-m", "dynlocust.launch.ecs", "run", str(scenario), "--workers", str(workers),
         "--image", "example.invalid/dynlocust:test", "--vpc-id", vpc, "--subnets", subnet, "--endpoint-url", url,
         "--run-id", run_id, "--results-dir", str(tmp_path / "results"), "--poll-interval", "0.2",
         "--timeout", "60", "--template", str(template)],
        cwd=ROOT, env={**os.environ, **CREDENTIALS, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def wait_for(what: str, check: Any, proc: subprocess.Popen[str], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
        except Exception:
            result = None
        if result:
            return result
        if proc.poll() is not None:
            raise AssertionError(f"launcher exited early while waiting for {what}: {proc.communicate()[0][-3000:]}")
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"{what}: not seen within {timeout} s: {proc.communicate()[0][-3000:]}")


def records(run_id: str) -> list[dict[str, Any]]:
    windows = [
        {"type": "window", "index": i, "phase": "ramp", "verdict": "ok", "missing_workers": [],
         "summary": {"target_rate": rate, "sent": rate * 10, "accepted": rate * 10, "accepted_per_s": float(rate),
                     "throttled": 0, "latency": {"p50": 0.004, "p99": 0.0123}}}
        for i, rate in enumerate((100, 200))
    ]  # fmt: skip
    run = {"type": "run", "run_id": run_id, "t0": 1.0, "windows": [{"index": 0}, {"index": 1}]}
    return [run, *windows, {"type": "end", "exit_code": 3, "sent": 3000, "lost_workers": []}]


@pytest.mark.slow
def test_a_run_on_ecs_prints_windows_as_published_and_tears_everything_down(moto_url: str, tmp_path: Path) -> None:
    run_id = "t1-ab12"
    vpc, subnet, service = network(moto_url, run_id)
    ddb, ecs_client, cfn, sd = (client(n, moto_url) for n in ("dynamodb", "ecs", "cloudformation", "servicediscovery"))
    tagged_table(ddb, f"items-{run_id}", run_id)  # left behind by a master killed before its teardown
    tagged_table(ddb, f"other-{run_id}", None)  # same suffix, not ours: must survive
    proc = launcher(tmp_path, moto_url, run_id, vpc, subnet, workers=12)
    try:
        instance = wait_for("the master in Cloud Map", lambda: sd.list_instances(ServiceId=service)["Instances"], proc)
        cluster = f"dynlocust-{run_id}"
        running = {
            token: ecs_client.list_tasks(cluster=cluster, startedBy=token)["taskArns"]
            for token in (f"{run_id}-master", f"{run_id}-w0", f"{run_id}-w1")
        }
        if sum(len(v) for v in running.values()) < 13:  # the workers start right after the registration
            time.sleep(1)
            running = {t: ecs_client.list_tasks(cluster=cluster, startedBy=t)["taskArns"] for t in running}
        assert [len(v) for v in running.values()] == [1, 10, 2]
        master = running[f"{run_id}-master"][0]
        assert instance[0]["Id"] == master.rsplit("/", 1)[-1]
        ip = ecs_client.describe_tasks(cluster=cluster, tasks=[master])["tasks"][0]["attachments"][0]["details"]
        assert instance[0]["Attributes"]["AWS_INSTANCE_IPV4"] in {d["value"] for d in ip}
        task = ecs_client.describe_tasks(cluster=cluster, tasks=[master])["tasks"][0]
        env = {e["name"]: e["value"] for e in task["overrides"]["containerOverrides"][0]["environment"]}
        assert env["DYNLOCUST_SCENARIO_YAML"] == SCENARIO and env["DYNLOCUST_USERS"] == "60"  # 5 x 12 workers
        published = records(run_id)
        for record in published:
            publish_record(ddb, f"dynlocust-results-{run_id}", run_id, record)
            time.sleep(0.3)  # as windows close: the launcher prints them one by one
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 3, out  # the master's exit code (SLO failed) is the launcher's
    assert "window 1/2 ramp target 100/s: sent 1000 accepted 1000 (100.0/s) throttled 0 p99 12.3 ms" in out
    assert "window 2/2 ramp target 200/s" in out
    assert read_results(tmp_path / "results" / run_id / "results.jsonl") == published
    # teardown: tasks stopped, master deregistered, our leftover table deleted, the stack gone
    assert f"teardown: stop tasks: {master.rsplit('/', 1)[-1]}" in out
    assert sd.list_instances(ServiceId=service)["Instances"] == []
    tables = ddb.list_tables()["TableNames"]
    assert f"items-{run_id}" not in tables and f"other-{run_id}" in tables
    assert f"dynlocust-results-{run_id}" not in tables
    stacks = [s for s in cfn.list_stacks()["StackSummaries"] if s["StackName"] == f"dynlocust-{run_id}"]
    assert [s["StackStatus"] for s in stacks] == ["DELETE_COMPLETE"]


def test_start_once_never_starts_a_second_fleet(moto_url: str) -> None:
    _, subnet, _ = network(moto_url, "t2")
    ecs_client = client("ecs", moto_url)
    ecs_client.create_cluster(clusterName="c")
    definition = ecs_client.register_task_definition(
        family="w", networkMode="awsvpc", requiresCompatibilities=["FARGATE"], cpu="256", memory="512",
        containerDefinitions=[{"name": "worker", "image": "img", "memory": 512}],
    )["taskDefinition"]["taskDefinitionArn"]  # fmt: skip
    net = {"awsvpcConfiguration": {"subnets": [subnet], "assignPublicIp": "DISABLED", "securityGroups": []}}
    first = start_once(ecs_client, "c", definition, 3, "t2-w0", net, {}, "t2")
    again = start_once(ecs_client, "c", definition, 3, "t2-w0", net, {}, "t2")
    assert len(first) == 3 and sorted(again) == sorted(first)
    assert len(ecs_client.list_tasks(cluster="c")["taskArns"]) == 3
    assert stop_tasks(ecs_client, "c", ["t2-w0"]) and stop_tasks(ecs_client, "c", ["t2-w0"]) == []


@pytest.mark.slow
def test_a_master_that_stops_without_an_end_record_is_reported_and_torn_down(moto_url: str, tmp_path: Path) -> None:
    run_id = "t3-cd34"
    vpc, subnet, service = network(moto_url, run_id)
    ecs_client, ddb, sd = client("ecs", moto_url), client("dynamodb", moto_url), client("servicediscovery", moto_url)
    proc = launcher(tmp_path, moto_url, run_id, vpc, subnet, workers=2)
    try:
        wait_for("the master in Cloud Map", lambda: sd.list_instances(ServiceId=service)["Instances"], proc)
        publish_record(ddb, f"dynlocust-results-{run_id}", run_id, records(run_id)[0])
        publish_record(ddb, f"dynlocust-results-{run_id}", run_id, records(run_id)[1])
        master = ecs_client.list_tasks(cluster=f"dynlocust-{run_id}", startedBy=f"{run_id}-master")["taskArns"][0]
        ecs_client.stop_task(cluster=f"dynlocust-{run_id}", task=master, reason="OutOfMemoryError")
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == ExitCode.MASTER_LOST, out
    assert "window 1/2" in out and "master stopped without an end record" in out and "1 windows received" in out
    assert sd.list_instances(ServiceId=service)["Instances"] == []
    assert f"dynlocust-results-{run_id}" not in ddb.list_tables()["TableNames"]


def test_a_launch_without_credentials_creates_nothing_and_says_how_to_provide_them(
    moto_url: str, tmp_path: Path
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    no_aws = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    missing = str(tmp_path / "missing")
    env = {**no_aws, "AWS_CONFIG_FILE": missing, "AWS_SHARED_CREDENTIALS_FILE": missing,
           "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(ROOT)}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", "ecs", "run", str(scenario), "--workers", "2", "--image", "img",
         "--vpc-id", "vpc-1", "--subnets", "subnet-1", "--endpoint-url", moto_url, "--run-id", "t4-nocred",
         "--results-dir", str(tmp_path / "results")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(without_exit_line(proc.stderr).strip().splitlines()) == 1, proc.stderr
    assert (
        proc.stderr.startswith("dynlocust: error: AWS credentials: expected credentials")
        and "found none" in proc.stderr
    )
    assert "AWS_ACCESS_KEY_ID" in proc.stderr and "AWS_PROFILE" in proc.stderr and "Traceback" not in proc.stderr
    stacks = client("cloudformation", moto_url).list_stacks()["StackSummaries"]
    assert stacks == [] and not (tmp_path / "results").exists()  # nothing created, here or there


def test_refused_credentials_are_one_clean_line_and_nothing_is_torn_down(
    moto_checking_credentials: str, tmp_path: Path
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    proc = subprocess.run(
        [sys.executable, "-m", "dynlocust.cli", "ecs", "run", str(scenario), "--workers", "2", "--image", "img",
         "--vpc-id", "vpc-1", "--subnets", "subnet-1", "--endpoint-url", moto_checking_credentials,
         "--run-id", "t5-refused", "--results-dir", str(tmp_path / "results")],
        cwd=tmp_path, env={**os.environ, **CREDENTIALS, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "run t5-refused: creating stack dynlocust-t5-refused\n"  # no teardown of what never was
    assert proc.stderr.startswith("dynlocust: error: AWS: expected the call to be accepted, found: An error")
    assert (
        "CreateStack" in proc.stderr
        and len(without_exit_line(proc.stderr).strip().splitlines()) == 1
        and "Traceback" not in proc.stderr
    )
    assert not (tmp_path / "results").exists()
