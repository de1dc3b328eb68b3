"""The AWS resources of one ECS run: its CloudFormation stack and its Fargate tasks, and the calls that make and end
them.

The noun here is a run's *resources*: the stack made from template.yaml (beside this module), the master and worker
tasks started once each (client token, `startedBy` marker), the master's Cloud Map entry and the tables the run
tagged; `dynlocust.launch.ecs` launches a run with them and tears them down in `finally`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.run.claim import RUN_TAG

TEMPLATE = Path(__file__).with_name("template.yaml")
"""A link to docker/ecs/template.yaml in a checkout, a copy of it in the wheel (package data)."""
MAX_OVERRIDE_BYTES = 8192
"""RunTask's limit on the whole overrides structure; the scenario text travels in it."""
RUN_TASK_BATCH = 10
"""RunTask starts at most 10 tasks per call."""


class DeployError(DynlocustError):
    """The launch or teardown of a run on ECS did not go as expected."""


@dataclass(frozen=True)
class LaunchOptions:
    scenario_path: Path
    workers: int
    image: str
    vpc_id: str
    subnets: tuple[str, ...]
    security_groups: tuple[str, ...] = ()
    assign_public_ip: bool = False
    users: int = 0
    region: str = "us-east-1"
    endpoint_url: str | None = None
    run_id: str = ""
    results_dir: Path = Path("results")
    poll_interval: float = 2.0
    timeout: float = 0.0
    stack_timeout: float = 900.0
    template: Path = TEMPLATE
    worker_cpu: int = 1024
    worker_memory: int = 2048

    @property
    def stack_name(self) -> str:
        return f"dynlocust-{self.run_id}"


def make_clients(region: str, endpoint_url: str | None) -> dict[str, Any]:
    """CloudFormation, ECS, DynamoDB and Cloud Map clients with retries off and short timeouts."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=5, read_timeout=20, region_name=region
    )
    return {
        name: boto3.client(name, endpoint_url=endpoint_url, config=config)
        for name in ("cloudformation", "ecs", "dynamodb", "servicediscovery")
    }


def _code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def poll_until(what: str, check: Callable[[], Any], timeout: float, interval: float) -> Any:
    """Call `check` until it returns something truthy; raise `DeployError` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise DeployError(f"{what}: expected within {timeout:.0f} s, found it still pending; gave up")
        time.sleep(interval)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    """The template as a plain document, short-form tags (`!Ref`, `!Sub`, `!GetAtt`) in their long form."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
        name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if suffix == "GetAtt":
                value = str(value).split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]  # a MappingNode: yaml has no 4th kind
        return {name: value}

    Loader.add_multi_constructor("!", intrinsic)
    try:
        document = yaml.load(path.read_text(), Loader=Loader)  # a SafeLoader subclass
    except (OSError, yaml.YAMLError) as exc:
        raise DeployError(f"template {path}: expected a readable CloudFormation YAML file, found {exc}") from exc
    if not isinstance(document, dict) or "Resources" not in document:
        raise DeployError(f"template {path}: expected a mapping with Resources, found {type(document).__name__}")
    return document


# -- stack ---------------------------------------------------------------------------------------------------


def stack_parameters(opts: LaunchOptions, users: int) -> list[dict[str, str]]:
    values = {
        "RunId": opts.run_id,
        "Image": opts.image,
        "WorkerCount": str(opts.workers),
        "Users": str(users),
        "VpcId": opts.vpc_id,
        "WorkerCpu": str(opts.worker_cpu),
        "WorkerMemory": str(opts.worker_memory),
    }
    return [{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()]


def request_stack(cfn: Any, opts: LaunchOptions, users: int) -> None:
    """Ask for the run's stack (idempotent by client request token); once this returns, the stack exists."""
    try:
        cfn.create_stack(
            StackName=opts.stack_name,
            TemplateBody=opts.template.read_text(),
            Parameters=stack_parameters(opts, users),
            Capabilities=["CAPABILITY_IAM"],
            ClientRequestToken=f"{opts.run_id}-create",
            OnFailure="DELETE",
            Tags=[{"Key": RUN_TAG, "Value": opts.run_id}],
        )
    except Exception as exc:
        if _code(exc) != "AlreadyExistsException":
            raise
        # a retried launch of the same run: the stack it asked for already exists; use it


def wait_stack(cfn: Any, opts: LaunchOptions) -> dict[str, str]:
    """Wait until the run's stack is created; its outputs."""

    def status() -> dict[str, Any] | None:
        stack = cfn.describe_stacks(StackName=opts.stack_name)["Stacks"][0]
        state = stack["StackStatus"]
        if state == "CREATE_COMPLETE":
            return stack
        if not state.endswith("_IN_PROGRESS") or state.startswith(("ROLLBACK", "DELETE")):
            raise DeployError(
                f"stack {opts.stack_name}: expected CREATE_COMPLETE, found {state} "
                f"({stack.get('StackStatusReason') or 'see its events in the CloudFormation console'})"
            )
        return None

    stack = poll_until(f"stack {opts.stack_name} creation", status, opts.stack_timeout, opts.poll_interval)
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def delete_stack(cfn: Any, opts: LaunchOptions, timeout: float) -> bool:
    """Delete the run's stack and wait until it is gone; True when it is."""
    try:
        cfn.delete_stack(StackName=opts.stack_name, ClientRequestToken=f"{opts.run_id}-delete")
    except Exception as exc:
        if _code(exc) != "ValidationError":
            raise

    def gone() -> bool:
        try:
            stacks = cfn.describe_stacks(StackName=opts.stack_name)["Stacks"]
        except Exception as exc:
            if _code(exc) == "ValidationError":  # "Stack ... does not exist"
                return True
            raise
        if not stacks or stacks[0]["StackStatus"] == "DELETE_COMPLETE":
            return True
        if stacks[0]["StackStatus"] == "DELETE_FAILED":
            raise DeployError(
                f"stack {opts.stack_name}: expected DELETE_COMPLETE, found DELETE_FAILED "
                f"({stacks[0].get('StackStatusReason')}); delete it by hand"
            )
        return False

    return bool(poll_until(f"stack {opts.stack_name} deletion", gone, timeout, opts.poll_interval))


# -- tasks ---------------------------------------------------------------------------------------------------


def network_configuration(opts: LaunchOptions, outputs: dict[str, str]) -> dict[str, Any]:
    groups = list(opts.security_groups) or [outputs["SecurityGroup"]]
    return {
        "awsvpcConfiguration": {
            "subnets": list(opts.subnets),
            "securityGroups": groups,
            "assignPublicIp": "ENABLED" if opts.assign_public_ip else "DISABLED",
        }
    }


def container_overrides(container: str, scenario_text: str, users: int | None = None) -> dict[str, Any]:
    """Overrides that hand the scenario text (and the master's user count) to a container."""
    env = [{"name": "DYNLOCUST_SCENARIO_YAML", "value": scenario_text}]
    if users is not None:
        env.append({"name": "DYNLOCUST_USERS", "value": str(users)})
    overrides = {"containerOverrides": [{"name": container, "environment": env}]}
    size = len(str(overrides).encode())
    if size > MAX_OVERRIDE_BYTES:
        raise DeployError(
            f"scenario text: expected RunTask overrides of at most {MAX_OVERRIDE_BYTES} bytes, found {size}; "
            f"shorten the scenario (descriptions, comments)"
        )
    return overrides


def start_once(
    ecs: Any,
    cluster: str,
    task_definition: str,
    count: int,
    token: str,
    network: dict[str, Any],
    overrides: Any,
    run_id: str,
) -> list[str]:
    """Start `count` tasks marked `token`, unless tasks with that marker exist already; their ARNs.

    `token` is both RunTask's client token (the service's own idempotency) and `startedBy` (the launcher's: a
    retried launch finds what the first attempt started, whatever the service did with the token).
    """
    found: list[str] = []
    for status in ("RUNNING", "STOPPED"):
        found += ecs.list_tasks(cluster=cluster, startedBy=token, desiredStatus=status).get("taskArns", [])
    if found:
        return found
    response = ecs.run_task(
        cluster=cluster,
        taskDefinition=task_definition,
        count=count,
        launchType="FARGATE",
        networkConfiguration=network,
        overrides=overrides,
        startedBy=token,
        clientToken=token,
        tags=[{"key": RUN_TAG, "value": run_id}],
    )
    if response.get("failures"):
        raise DeployError(
            f"RunTask {task_definition} in {cluster}: expected {count} tasks started, found failures "
            f"{[(f.get('arn'), f.get('reason')) for f in response['failures']]}"
        )
    return [t["taskArn"] for t in response["tasks"]]


def task_ip(ecs: Any, cluster: str, task_arn: str) -> str | None:
    """The task's private IPv4 address once its network interface is attached; `DeployError` if it stopped."""
    tasks = ecs.describe_tasks(cluster=cluster, tasks=[task_arn]).get("tasks", [])
    if not tasks:
        return None
    task = tasks[0]
    if task.get("lastStatus") == "STOPPED":
        raise DeployError(f"task {task_arn}: expected it to start, found it STOPPED ({task.get('stoppedReason')})")
    for attachment in task.get("attachments", []):
        for detail in attachment.get("details", []):
            if detail.get("name") == "privateIPv4Address" and detail.get("value"):
                return str(detail["value"])
    return None


def discovery_service_id(sd: Any, outputs: dict[str, str], run_id: str) -> str:
    """The Cloud Map service of the master: the stack's output, or found by its namespace's name."""
    if outputs.get("MasterDiscoveryService"):
        return outputs["MasterDiscoveryService"]
    namespace_name = f"dynlocust-{run_id}.local"
    namespaces = [n["Id"] for n in _pages(sd, "list_namespaces", "Namespaces") if n.get("Name") == namespace_name]
    for service in _pages(sd, "list_services", "Services"):
        if service.get("Name") != "master":
            continue
        namespace = service.get("NamespaceId") or sd.get_service(Id=service["Id"])["Service"].get("NamespaceId")
        if namespace in namespaces:
            return str(service["Id"])
    raise DeployError(
        f"stack dynlocust-{run_id}: expected a Cloud Map service 'master' in namespace {namespace_name}, found none"
    )


def _pages(client: Any, method: str, key: str) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {}
    while True:
        page = getattr(client, method)(**kwargs)
        yield from page.get(key, [])
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]


def stop_tasks(ecs: Any, cluster: str, tokens: Sequence[str]) -> list[str]:
    """Stop every running task started with one of `tokens`; the ARNs stopped."""
    stopped = []
    for token in tokens:
        for arn in ecs.list_tasks(cluster=cluster, startedBy=token, desiredStatus="RUNNING").get("taskArns", []):
            ecs.stop_task(cluster=cluster, task=arn, reason="dynlocust ecs run: teardown")
            stopped.append(arn)
    return stopped


def delete_run_tables(ddb: Any, run_id: str, keep: Sequence[str] = ()) -> list[str]:
    """Delete tables named `*-<run_id>` that carry this run's tag (a master killed before its own teardown)."""
    names: list[str] = []
    kwargs: dict[str, Any] = {}
    while True:
        page = ddb.list_tables(**kwargs)
        names += [n for n in page.get("TableNames", []) if n.endswith(f"-{run_id}") and n not in keep]
        if "LastEvaluatedTableName" not in page:
            break
        kwargs["ExclusiveStartTableName"] = page["LastEvaluatedTableName"]
    deleted = []
    for name in names:
        arn = ddb.describe_table(TableName=name)["Table"]["TableArn"]
        tags = {t["Key"]: t["Value"] for t in ddb.list_tags_of_resource(ResourceArn=arn).get("Tags", [])}
        if tags.get(RUN_TAG) == run_id:
            ddb.delete_table(TableName=name)
            deleted.append(name)
    return deleted
