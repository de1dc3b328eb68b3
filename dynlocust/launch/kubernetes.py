"""`dynlocust k8s render SCENARIO --workers N`: the fleet as plain Kubernetes manifests, checked before writing.

The same fleet as docker/compose.yaml and the ECS stack, from the same image: a ConfigMap with the scenario text, a
master Job (never retried: a run must not run twice), a worker Deployment whose pods find the master by the
Service's name, and Prometheus operator monitors for the master's merged /metrics. Each worker's index, and so its
share of the rate, comes from the master's plan, as in compose. Credentials come from the pods' service account
(IRSA's role annotation, or an EKS Pod Identity association): no keys in any document. A local scenario also gets
the embedded endpoint as a Deployment and Service (a rehearsal on any cluster, with compose's dummy credentials).
It only renders; `kubectl apply` applies. Every document is checked here (kinds, names, labels, selectors, CPU and
memory) so a refusal is one line and exit 2 before anything reaches a cluster.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.launch.kubernetes_checks import (
    MAX_LABEL,
    ManifestError,
    check_dns_label,
    check_label,
    check_resources,
    fargate_size,
    memory_bytes,
    millicores,
    validate,
)
from dynlocust.scenario.catalog import resolve

MASTER_PORT = 5557
METRICS_PORT = 9646
ENDPOINT_PORT = 8000
LOCUSTFILE = "/app/locustfiles/scenario.py"
SCENARIO_DIR = "/app/scenario"
SCENARIO_KEY = "scenario.yaml"
RESULTS_DIR = "/app/results"
IMAGE_USER = 10001
"""docker/Dockerfile's USER."""
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
PROMETHEUS_DIR = "prometheus"
"""Under --out: the ServiceMonitor and the PodMonitor, so `kubectl apply -f DIR` applies the fleet alone (apply one
monitor, not both: both would scrape the master twice)."""

_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}")


@dataclass(frozen=True)
class RenderOptions:
    scenario_path: Path
    workers: int
    image: str = "dynlocust:local"
    namespace: str = "dynlocust"
    name: str = "dynlocust"
    users: int = 0
    region: str = ""
    role_arn: str = ""
    worker_cpu: str = "1"
    worker_memory: str = "1792Mi"
    master_cpu: str = "1"
    master_memory: str = "1792Mi"
    timeout: float = 0.0


# -- documents -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fleet:
    """What every document of one render shares."""

    opts: RenderOptions
    scenario_name: str
    local: bool
    users: int
    region: str
    deadline_seconds: int

    def meta(self, name: str, component: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "namespace": self.opts.namespace, "labels": self.labels(component), **extra}

    def labels(self, component: str) -> dict[str, str]:
        return {
            **self.selector(component),
            "app.kubernetes.io/part-of": "dynlocust",
            "dynlocust/scenario": self.scenario_name,
        }

    def selector(self, component: str) -> dict[str, str]:
        return {
            "app.kubernetes.io/name": "dynlocust",
            "app.kubernetes.io/instance": self.opts.name,
            "app.kubernetes.io/component": component,
        }

    def named(self, part: str) -> str:
        return f"{self.opts.name}-{part}"


def _container(fleet: _Fleet, name: str, command: list[str], cpu: str, memory: str) -> dict[str, Any]:
    env = [{"name": "DYNLOCUST_REGION", "value": fleet.region}]
    if fleet.local:  # compose's dummy credentials: the embedded endpoint signs nothing against AWS
        env += [{"name": "AWS_ACCESS_KEY_ID", "value": "local"}, {"name": "AWS_SECRET_ACCESS_KEY", "value": "local"}]
    return {
        "name": name,
        "image": fleet.opts.image,
        "command": command,
        "env": env,
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}},
        "volumeMounts": [
            {"name": "scenario", "mountPath": SCENARIO_DIR, "readOnly": True},
            {"name": "results", "mountPath": RESULTS_DIR},
        ],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }


def _pod(fleet: _Fleet, container: dict[str, Any], restart: str) -> dict[str, Any]:
    return {
        "serviceAccountName": fleet.opts.name,
        "restartPolicy": restart,
        "securityContext": {"runAsNonRoot": True, "runAsUser": IMAGE_USER, "fsGroup": IMAGE_USER},
        "containers": [container],
        "volumes": [
            {"name": "scenario", "configMap": {"name": fleet.named("scenario")}},
            {"name": "results", "emptyDir": {}},
        ],
    }


def _scenario_args() -> list[str]:
    return ["locust", "-f", LOCUSTFILE, "--scenario", f"{SCENARIO_DIR}/{SCENARIO_KEY}"]


def master_job(fleet: _Fleet) -> dict[str, Any]:
    """Headless, never retried; --enable-rebalancing gives a worker pod that replaces a lost one its users too."""
    host = ["--host", f"http://{fleet.named('endpoint')}:{ENDPOINT_PORT}"] if fleet.local else []
    command = [
        *_scenario_args(), "--master", "--master-bind-host", "0.0.0.0", "--master-bind-port", str(MASTER_PORT),
        "--headless",
        "--expect-workers", str(fleet.opts.workers), "-u", str(fleet.users), "-r", str(fleet.users),
        "--enable-rebalancing", *host,
        "--metrics-host", "0.0.0.0", "--metrics-port", str(METRICS_PORT), "--results-dir", RESULTS_DIR,
    ]  # fmt: skip
    container = _container(fleet, "master", command, fleet.opts.master_cpu, fleet.opts.master_memory)
    container["ports"] = [
        {"name": "locust", "containerPort": MASTER_PORT},
        {"name": "metrics", "containerPort": METRICS_PORT},
    ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": fleet.meta(fleet.named("master"), "master"),
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": fleet.deadline_seconds,
            "template": {
                "metadata": {"labels": fleet.labels("master")},
                "spec": _pod(fleet, container, "Never"),
            },
        },
    }


def _deployment(fleet: _Fleet, component: str, container: dict[str, Any], replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": fleet.meta(fleet.named(component), component),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": fleet.selector(component)},
            "template": {
                "metadata": {"labels": fleet.labels(component)},
                "spec": _pod(fleet, container, "Always"),
            },
        },
    }


def worker_deployment(fleet: _Fleet) -> dict[str, Any]:
    """Restarted when lost: a new worker pod joins the running fleet from the next window far enough ahead."""
    command = [
        *_scenario_args(), "--worker", "--master-host", fleet.named("master"), "--master-port", str(MASTER_PORT),
        "--metrics-port", "0", "--results-dir", RESULTS_DIR,
    ]  # fmt: skip
    container = _container(fleet, "worker", command, fleet.opts.worker_cpu, fleet.opts.worker_memory)
    return _deployment(fleet, "worker", container, fleet.opts.workers)


def endpoint_deployment(fleet: _Fleet) -> dict[str, Any]:
    """The embedded endpoint of a local scenario, as compose's `endpoint` service runs it."""
    command = [
        "dynlocust", "local", "--host", "0.0.0.0", "--port", str(ENDPOINT_PORT),
        "--scenario", f"{SCENARIO_DIR}/{SCENARIO_KEY}",
    ]  # fmt: skip
    container = _container(fleet, "endpoint", command, fleet.opts.master_cpu, fleet.opts.master_memory)
    container["ports"] = [{"name": "dynamodb", "containerPort": ENDPOINT_PORT}]
    return _deployment(fleet, "endpoint", container, 1)


def service(fleet: _Fleet, component: str, ports: list[tuple[str, int]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": fleet.meta(fleet.named(component), component),
        "spec": {
            "selector": fleet.selector(component),
            "ports": [{"name": name, "port": port, "targetPort": name} for name, port in ports],
        },
    }


def monitors(fleet: _Fleet) -> list[dict[str, Any]]:
    """A ServiceMonitor (through the master's Service) and a PodMonitor (the master's pod): apply one of them."""
    endpoint = {"port": "metrics", "path": "/metrics", "interval": "5s", "scrapeTimeout": "4s"}
    namespaces = {"matchNames": [fleet.opts.namespace]}
    return [
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": fleet.meta(fleet.opts.name, "master"),
            "spec": {
                "selector": {"matchLabels": fleet.selector("master")},
                "namespaceSelector": namespaces,
                "endpoints": [endpoint],
            },
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PodMonitor",
            "metadata": fleet.meta(fleet.opts.name, "master"),
            "spec": {
                "selector": {"matchLabels": fleet.selector("master")},
                "namespaceSelector": namespaces,
                "podMetricsEndpoints": [endpoint],
            },
        },
    ]


def render(opts: RenderOptions) -> list[dict[str, Any]]:
    """Every document of the fleet, checked: the fleet first (in apply order), the two monitors last."""
    from dynlocust.scenario import load_scenario
    from dynlocust.scenario.model import RemoteTarget
    from dynlocust.scenario.plan import worst_case_plan

    if opts.workers < 1:
        raise ManifestError(f"--workers: expected at least 1, found {opts.workers}")
    if opts.users < 0 or opts.timeout < 0:
        option, value = ("--users", opts.users) if opts.users < 0 else ("--timeout", opts.timeout)
        raise ManifestError(f"{option}: expected 0 (the default) or more, found {value:g}")
    check_dns_label("--namespace", opts.namespace)
    check_dns_label("--name", opts.name)
    longest = f"{opts.name}-endpoint"
    if len(longest) > MAX_LABEL:
        raise ManifestError(
            f"--name: expected at most {MAX_LABEL - 9} characters (Service {longest}), found {opts.name!r}"
        )
    if opts.role_arn and not _ROLE_ARN.fullmatch(opts.role_arn):
        raise ManifestError(
            f"--role-arn: expected an IAM role ARN (arn:aws:iam::123456789012:role/NAME), found {opts.role_arn!r}"
        )
    if not opts.image or any(c.isspace() for c in opts.image):
        raise ManifestError(
            f"--image: expected an image reference such as registry/dynlocust:TAG, found {opts.image!r}"
        )
    scenario = load_scenario(str(opts.scenario_path))
    text = opts.scenario_path.read_text()
    target_region = scenario.target.region if isinstance(scenario.target, RemoteTarget) else None
    planned = float(worst_case_plan(scenario, t0=0.0).total_duration)
    fleet = _Fleet(
        opts,
        scenario_name=scenario.name,
        local=scenario.is_local,
        users=opts.users or scenario.concurrency * opts.workers,
        region=opts.region or target_region or "us-east-1",
        deadline_seconds=int(opts.timeout or planned + 900),
    )
    check_label("dynlocust/scenario", scenario.name)
    check_resources("master", _resources(opts.master_cpu, opts.master_memory), ("--master-cpu", "--master-memory"))
    check_resources("worker", _resources(opts.worker_cpu, opts.worker_memory), ("--worker-cpu", "--worker-memory"))
    account: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": fleet.meta(opts.name, "fleet"),
        "automountServiceAccountToken": False,  # the pods never call the Kubernetes API
    }
    if opts.role_arn:
        account["metadata"]["annotations"] = {IRSA_ANNOTATION: opts.role_arn}
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": opts.namespace, "labels": fleet.labels("fleet")},
        },
        account,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": fleet.meta(fleet.named("scenario"), "fleet"),
            "data": {SCENARIO_KEY: text},
        },
    ]
    if fleet.local:
        documents += [endpoint_deployment(fleet), service(fleet, "endpoint", [("dynamodb", ENDPOINT_PORT)])]
    documents += [
        service(fleet, "master", [("locust", MASTER_PORT), ("metrics", METRICS_PORT)]),
        master_job(fleet),
        worker_deployment(fleet),
        *monitors(fleet),
    ]
    for document in documents:
        validate(document, opts.namespace)
    return documents


def _resources(cpu: str, memory: str) -> dict[str, dict[str, str]]:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


# -- output ----------------------------------------------------------------------------------------------------


def file_name(index: int, document: dict[str, Any]) -> str:
    """Where --out writes a document: numbered in apply order; the monitors under prometheus/."""
    kind = str(document["kind"]).lower()
    if document["kind"] in ("ServiceMonitor", "PodMonitor"):
        return f"{PROMETHEUS_DIR}/{kind}.yaml"
    return f"{index:02d}-{kind}-{document['metadata']['name']}.yaml"


def dump(document: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=120)


def write(documents: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    written = []
    for index, document in enumerate(documents):
        path = out / file_name(index, document)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(document))
        written.append(path)
    return written


def summary(opts: RenderOptions) -> str:
    """What the pods ask for, and the EKS Fargate size each would be billed as."""
    lines = []
    for role, count, cpu, memory in (
        ("master", 1, opts.master_cpu, opts.master_memory),
        ("worker", opts.workers, opts.worker_cpu, opts.worker_memory),
    ):
        size = fargate_size(millicores(role, cpu), memory_bytes(role, memory))
        billed = f"{size[0] / 1024:g} vCPU / {size[1] / 1024:g} GB" if size else "no Fargate size"
        lines.append(f"{count} {role} pod(s): {cpu} CPU, {memory} each (on EKS Fargate: {billed} each)")
    return "\n".join(lines)


# -- command line ----------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynlocust k8s", description="Kubernetes manifests for a fleet.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("render", help="write the plain manifests of a scenario's fleet (apply with kubectl)")
    run.add_argument("scenario", type=Path, help="scenario YAML file, or the name of a shipped one")
    run.add_argument("--workers", type=int, required=True, help="number of worker pods")
    run.add_argument("--image", default=RenderOptions.image, help="the dynlocust image (docker/Dockerfile)")
    run.add_argument(
        "--namespace", default=RenderOptions.namespace, help="namespace of every object (default %(default)s)"
    )
    run.add_argument("--name", default=RenderOptions.name, help="name (and prefix) of the fleet's objects")
    run.add_argument("--users", type=int, default=0, help="Locust users over the fleet (default concurrency x N)")
    run.add_argument("--region", default="", help="AWS region (default: the scenario's, else us-east-1)")
    run.add_argument("--role-arn", default="", help="IAM role for the service account (IRSA annotation)")
    run.add_argument(
        "--worker-cpu",
        default=RenderOptions.worker_cpu,
        help="CPU of a worker pod, requests = limits (default %(default)s)",
    )
    run.add_argument(
        "--worker-memory", default=RenderOptions.worker_memory, help="memory of a worker pod (default %(default)s)"
    )
    run.add_argument(
        "--master-cpu", default=RenderOptions.master_cpu, help="CPU of the master pod (default %(default)s)"
    )
    run.add_argument(
        "--master-memory", default=RenderOptions.master_memory, help="memory of the master pod (default %(default)s)"
    )
    run.add_argument("--timeout", type=float, default=0.0, help="seconds before the master Job is stopped "
                     "(default: the plan + 15 min)")  # fmt: skip
    run.add_argument("--out", type=Path, default=None, help="write one file per object here (default: stdout)")
    return parser


def options_from(args: argparse.Namespace) -> RenderOptions:
    return RenderOptions(
        scenario_path=Path(resolve(str(args.scenario))),  # a bare name is a shipped scenario
        workers=args.workers,
        image=args.image,
        namespace=args.namespace,
        name=args.name,
        users=args.users,
        region=args.region,
        role_arn=args.role_arn,
        worker_cpu=args.worker_cpu,
        worker_memory=args.worker_memory,
        master_cpu=args.master_cpu,
        master_memory=args.master_memory,
        timeout=args.timeout,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """`dynlocust k8s render ...`; 0 once every document is written, 2 for a refusal."""
    args = build_parser().parse_args(argv)
    try:
        opts = options_from(args)
        documents = render(opts)
    except DynlocustError as exc:
        print(f"dynlocust: error: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.out is None:
        fleet = [d for d in documents if d["kind"] not in ("ServiceMonitor", "PodMonitor")]
        sys.stdout.write("---\n".join(dump(d) for d in fleet))
        print("(the Prometheus operator's ServiceMonitor and PodMonitor: with --out DIR)", file=sys.stderr)
    else:
        for path in write(documents, args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(summary(opts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
