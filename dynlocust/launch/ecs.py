"""`dynlocust ecs run SCENARIO --workers N`: one run on Fargate, started asynchronously, torn down in `finally`.

The run owns one CloudFormation stack (docker/ecs/template.yaml, shipped in the package as template.yaml beside
this module: cluster, task definitions, roles limited to the run's tables, log group, service discovery, results
table). The launcher never holds a connection for the length of the run: it creates the stack, starts the master
with RunTask, registers the master's address in Cloud Map (workers find it as `master.dynlocust-<run id>.local`),
starts the workers, then polls the results table and prints windows as the master publishes them. Every call has
retries off (a launch must never run twice), every RunTask carries a client token, and a retried launch finds the
tasks it already started by their `startedBy` marker before it calls RunTask at all. Whatever happens once the
stack exists, `finally` stops the tasks, deregisters the master, deletes tables left behind by the run (only those
tagged with its run id) and deletes the stack. Credentials and the workers' Fargate size are checked before.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.fleet.results_table import END_SEQ, read_records
from dynlocust.launch import fargate
from dynlocust.launch.ecs_resources import (
    RUN_TASK_BATCH,
    TEMPLATE,
    DeployError,
    LaunchOptions,
    container_overrides,
    delete_run_tables,
    delete_stack,
    discovery_service_id,
    make_clients,
    network_configuration,
    poll_until,
    request_stack,
    start_once,
    stop_tasks,
    task_ip,
    wait_stack,
)
from dynlocust.run.run_id import new_run_id
from dynlocust.scenario.catalog import resolve

# -- progress ------------------------------------------------------------------------------------------------


def format_window(record: dict[str, Any], planned: int) -> str:
    """One line per closed window, as the launcher prints them."""
    s = record.get("summary", {})
    p99 = (s.get("latency") or {}).get("p99")
    rate = s.get("accepted_per_s")
    line = (
        f"window {int(record['index']) + 1}/{planned} {record.get('phase', '')} "
        f"target {s.get('target_rate', 0):g}/s: sent {s.get('sent', 0)} accepted {s.get('accepted', 0)}"
        f"{f' ({rate:.1f}/s)' if rate is not None else ''} throttled {s.get('throttled', 0)}"
        f" p99 {'-' if p99 is None else f'{p99 * 1000:.1f} ms'} verdict {record.get('verdict', '?')}"
    )
    if record.get("missing_workers"):
        line += f" (missing workers {record['missing_workers']})"
    return line


@dataclass
class Progress:
    """What the launcher has seen of the results table so far."""

    out: TextIO
    writer: Any = None
    last_seq: int = -1
    planned: int = 0
    end: dict[str, Any] | None = None
    seen: list[int] = field(default_factory=list)

    def take(self, records: list[tuple[int, dict[str, Any]]]) -> None:
        for seq, record in records:
            if seq <= self.last_seq:
                continue
            self.last_seq = seq
            self.seen.append(seq)
            if self.writer is not None:
                self.writer.write(record)
            if record["type"] == "run":
                self.planned = len(record.get("windows", []))
                self.out.write(f"run {record.get('run_id', '')}: {self.planned} windows, T0 {record.get('t0')}\n")
            elif record["type"] == "window":
                self.out.write(format_window(record, self.planned) + "\n")
            else:
                self.end = record
                self.out.write(f"end: exit code {record.get('exit_code')}, sent {record.get('sent')}\n")
            self.out.flush()


# -- the run -------------------------------------------------------------------------------------------------


def planned_seconds(scenario: Any) -> float:
    from dynlocust.scenario.plan import build_plan

    return float(build_plan(scenario, t0=0.0).total_duration)


def launch(opts: LaunchOptions, clients: dict[str, Any], out: TextIO = sys.stdout) -> int:
    """Run the scenario on ECS; the exit code of the run (the master's), or 4 when the master vanished."""
    from dynlocust.run.results import ResultsWriter
    from dynlocust.scenario import load_scenario

    scenario = load_scenario(str(opts.scenario_path))
    if scenario.is_local:
        raise DeployError(
            f"{opts.scenario_path}: expected a remote target for a run on ECS, found a local one "
            f"(the embedded endpoint would run inside the master only)"
        )
    text = opts.scenario_path.read_text()
    users = opts.users or scenario.concurrency * opts.workers
    timeout = opts.timeout or planned_seconds(scenario) + 900.0
    cfn, ecs, ddb, sd = (clients[k] for k in ("cloudformation", "ecs", "dynamodb", "servicediscovery"))
    master_token = f"{opts.run_id}-master"
    worker_tokens = [f"{opts.run_id}-w{k}" for k in range(-(-opts.workers // RUN_TASK_BATCH))]
    outputs: dict[str, str] = {}
    registered: tuple[str, str] | None = None
    results_path = opts.results_dir / opts.run_id / "results.jsonl"
    progress = Progress(out)
    out.write(f"run {opts.run_id}: creating stack {opts.stack_name}\n")
    out.flush()
    stack_requested = False
    try:
        request_stack(cfn, opts, users)
        stack_requested = True
        results_path.parent.mkdir(parents=True, exist_ok=True)
        progress.writer = ResultsWriter(results_path)
        outputs = wait_stack(cfn, opts)
        cluster, table = outputs["Cluster"], outputs["ResultsTable"]
        network = network_configuration(opts, outputs)
        master = start_once(
            ecs,
            cluster,
            outputs["MasterTaskDefinition"],
            1,
            master_token,
            network,
            container_overrides("master", text, users),
            opts.run_id,
        )[0]
        out.write(f"master task {master.rsplit('/', 1)[-1]} starting\n")
        ip = poll_until(f"master task {master} address", lambda: task_ip(ecs, cluster, master), 600, opts.poll_interval)
        service_id = discovery_service_id(sd, outputs, opts.run_id)
        instance = master.rsplit("/", 1)[-1]
        sd.register_instance(
            ServiceId=service_id,
            InstanceId=instance,
            CreatorRequestId=master_token,
            Attributes={"AWS_INSTANCE_IPV4": ip},
        )
        registered = (service_id, instance)
        worker_overrides = container_overrides("worker", text)
        for k, token in enumerate(worker_tokens):
            count = min(RUN_TASK_BATCH, opts.workers - k * RUN_TASK_BATCH)
            start_once(
                ecs, cluster, outputs["WorkerTaskDefinition"], count, token, network, worker_overrides, opts.run_id
            )
        out.write(f"{opts.workers} workers starting; master at {outputs.get('MasterHost', ip)}\n")
        out.flush()
        return _follow(opts, ecs, ddb, cluster, table, master, progress, timeout)
    finally:
        if stack_requested:  # else nothing was created: CloudFormation refused the stack itself
            _teardown(opts, clients, outputs, [master_token, *worker_tokens], registered, out)
        if progress.writer is not None:
            progress.writer.close()


def _follow(
    opts: LaunchOptions, ecs: Any, ddb: Any, cluster: str, table: str, master: str, progress: Progress, timeout: float
) -> int:
    deadline = time.monotonic() + timeout
    while True:
        progress.take(read_records(ddb, table, opts.run_id, progress.last_seq))
        if progress.end is not None:
            return int(progress.end.get("exit_code") or 0)
        tasks = ecs.describe_tasks(cluster=cluster, tasks=[master]).get("tasks", [])
        if tasks and tasks[0].get("lastStatus") == "STOPPED":
            progress.take(read_records(ddb, table, opts.run_id, progress.last_seq))  # what it wrote last
            if progress.end is not None:
                return int(progress.end.get("exit_code") or 0)
            progress.out.write(
                f"master stopped without an end record ({tasks[0].get('stoppedReason', 'no reason given')}); "
                f"{len([s for s in progress.seen if 0 < s < END_SEQ])} windows received\n"
            )
            return ExitCode.MASTER_LOST
        if time.monotonic() > deadline:
            raise DeployError(
                f"run {opts.run_id}: expected an end record within {timeout:.0f} s, found "
                f"{len(progress.seen)} records; stopping the fleet"
            )
        time.sleep(opts.poll_interval)


def _teardown(
    opts: LaunchOptions,
    clients: dict[str, Any],
    outputs: dict[str, str],
    tokens: list[str],
    registered: tuple[str, str] | None,
    out: TextIO,
) -> None:
    """Stop, deregister, delete: each step runs even if an earlier one failed; failures are printed, not raised."""
    cluster = outputs.get("Cluster")
    steps: list[tuple[str, Callable[[], Any]]] = []
    if cluster:
        steps.append(("stop tasks", lambda: stop_tasks(clients["ecs"], cluster, tokens)))
    if registered:
        steps.append(
            ("deregister master", lambda: clients["servicediscovery"].deregister_instance(
                ServiceId=registered[0], InstanceId=registered[1]))
        )  # fmt: skip
    keep = [outputs["ResultsTable"]] if "ResultsTable" in outputs else []
    steps.append(("delete leftover tables", lambda: delete_run_tables(clients["dynamodb"], opts.run_id, keep)))
    steps.append(("delete stack", lambda: delete_stack(clients["cloudformation"], opts, opts.stack_timeout)))
    for what, step in steps:
        try:
            result = step()
        except Exception as exc:
            out.write(f"teardown: {what} failed: {exc}; check run {opts.run_id} by hand\n")
            continue
        if what == "delete stack":
            out.write(f"teardown: stack {opts.stack_name} deleted\n")
        elif isinstance(result, list) and result:
            out.write(f"teardown: {what}: {', '.join(r.rsplit('/', 1)[-1] for r in result)}\n")
    out.flush()


# -- command line ----------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynlocust ecs", description="Run a scenario on ECS Fargate.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a scenario with a master and N workers on Fargate, then tear down")
    run.add_argument("scenario", type=Path, help="scenario YAML file (remote target), or the name of a shipped one")
    run.add_argument("--workers", type=int, required=True, help="number of worker tasks")
    run.add_argument("--image", required=True, help="the dynlocust image (docker/Dockerfile) in a registry")
    run.add_argument("--vpc-id", required=True, help="VPC of the tasks and of the private DNS namespace")
    run.add_argument("--subnets", required=True, help="comma-separated subnet ids of the tasks")
    run.add_argument("--security-groups", default="", help="comma-separated groups (default: the stack's own)")
    run.add_argument("--assign-public-ip", action="store_true", help="for public subnets without a NAT gateway")
    run.add_argument("--users", type=int, default=0, help="Locust users over the fleet (default concurrency x N)")
    run.add_argument("--region", default=os.environ.get("DYNLOCUST_REGION", "us-east-1"), help="AWS region")
    run.add_argument("--endpoint-url", default=None, help="one endpoint for every AWS service (tests)")
    run.add_argument("--run-id", default="", help="identity of the run (default: generated)")
    run.add_argument("--results-dir", type=Path, default=Path("results"), help="local copy of the results")
    run.add_argument("--poll-interval", type=float, default=2.0, help="seconds between polls (default 2)")
    run.add_argument("--timeout", type=float, default=0.0, help="seconds before giving up (default: plan + 15 min)")
    run.add_argument("--template", type=Path, default=TEMPLATE, help="CloudFormation template")
    run.add_argument("--worker-cpu", type=int, default=1024, help="CPU units of a worker task (default 1024)")
    run.add_argument(
        "--worker-memory", type=int, default=None, help="MiB of a worker task (default: the least Fargate offers)"
    )
    return parser


def options_from(args: argparse.Namespace) -> LaunchOptions:
    if args.workers < 1:
        raise DeployError(f"--workers: expected at least 1, found {args.workers}")
    subnets = tuple(s for s in args.subnets.split(",") if s)
    if not subnets:
        raise DeployError(f"--subnets: expected at least one subnet id, found {args.subnets!r}")
    memory = fargate.default_memory(args.worker_cpu) if args.worker_memory is None else args.worker_memory
    fargate.check_size(args.worker_cpu, memory)
    return LaunchOptions(
        scenario_path=Path(resolve(str(args.scenario))),  # a bare name is a shipped scenario
        workers=args.workers,
        image=args.image,
        vpc_id=args.vpc_id,
        subnets=subnets,
        security_groups=tuple(s for s in args.security_groups.split(",") if s),
        assign_public_ip=args.assign_public_ip,
        users=args.users,
        region=args.region,
        endpoint_url=args.endpoint_url,
        run_id=args.run_id or new_run_id(),
        results_dir=args.results_dir,
        poll_interval=args.poll_interval,
        timeout=args.timeout,
        template=args.template,
        worker_cpu=args.worker_cpu,
        worker_memory=memory,
    )


NO_CREDENTIALS = (
    "AWS credentials: expected credentials to create the run's stack in {region}, found none (no AWS_ACCESS_KEY_ID "
    "and AWS_SECRET_ACCESS_KEY in the environment, no profile in ~/.aws, no instance or container role); nothing was "
    "created. Provide them as for the AWS CLI: `aws configure` or `aws sso login` with AWS_PROFILE=NAME, or export "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones), then run again."
)


def require_credentials(region: str) -> None:
    """Refuse to start without credentials: found late, they would leave a half-made run to tear down."""
    import boto3

    if boto3.Session(region_name=region).get_credentials() is None:
        raise DeployError(NO_CREDENTIALS.format(region=region))


def main(argv: Sequence[str] | None = None) -> int:
    """`dynlocust ecs run ...`; returns the run's exit code (2 for errors the user can fix)."""
    from botocore.exceptions import BotoCoreError, ClientError

    args = build_parser().parse_args(argv)
    try:
        opts = options_from(args)
        require_credentials(opts.region)
        return launch(opts, make_clients(opts.region, opts.endpoint_url))
    except DynlocustError as exc:
        print(f"dynlocust: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (BotoCoreError, ClientError) as exc:  # refused credentials, a missing permission: after the teardown
        print(f"dynlocust: error: AWS: expected the call to be accepted, found: {exc}", file=sys.stderr)
        return DynlocustError.exit_code


if __name__ == "__main__":
    sys.exit(main())
