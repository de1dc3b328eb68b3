"""`dynlocust k8s render` and docker/k8s/: every document through the official client's models, refusals in one line.

The kinds the `kubernetes` client models (Namespace, ServiceAccount, ConfigMap, Service, Job, Deployment) must come
back from a round trip through its model unchanged, so a misspelt or unknown field (which the model drops) fails.
The custom resources (the Locust operator's LocustTest, the Prometheus operator's monitors) and the deliveryhero
chart's values cannot run here; they are held to the fields their CRDs and values.yaml name (recorded below).
"""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client import ApiClient  # type: ignore[import-untyped]  # no py.typed

from dynlocust.launch import kubernetes, kubernetes_checks
from dynlocust.launch.kubernetes import RenderOptions, render
from dynlocust.launch.kubernetes_checks import ManifestError, fargate_size
from dynlocust.scenario import load_scenario
from dynlocust.scenario.catalog import SHIPPED_DIR, shipped_scenarios
from tests.support.runs import ROOT

K8S = ROOT / "docker" / "k8s"
MANIFESTS = K8S / "manifests"
ROLE = "arn:aws:iam::111122223333:role/dynlocust-load-test"
SHIPPED_ARGS = ["scenarios/write-ceiling.yaml", "--workers", "4", "--role-arn", ROLE, "--out", "OUT"]
"""How docker/k8s/manifests/ was rendered (from the repository root, OUT = docker/k8s/manifests)."""
MODELS = {
    "Namespace": "V1Namespace",
    "ServiceAccount": "V1ServiceAccount",
    "ConfigMap": "V1ConfigMap",
    "Service": "V1Service",
    "Job": "V1Job",
    "Deployment": "V1Deployment",
}


def round_trip(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the client's model reads it and writes it back (unknown fields are dropped on the way)."""
    client = ApiClient()
    model = client._ApiClient__deserialize(copy.deepcopy(document), MODELS[document["kind"]])
    return dict(client.sanitize_for_serialization(model))


# -- custom resources: the fields their definitions name --------------------------------------------------------

MAP = "map"  # string -> string
ANY = "any"
META = {"name": str, "namespace": str, "labels": MAP, "annotations": MAP}
RESOURCES = {"requests": MAP, "limits": MAP}
LOCUSTTEST = {
    "apiVersion": str, "kind": str, "metadata": META,
    "spec": {
        "annotations": MAP, "labels": MAP, "image": str, "imagePullPolicy": str,
        "imagePullSecrets": [{"name": str}], "workers": int, "args": str, "env": [{"name": str, "value": str}],
        "master": {"labels": MAP, "annotations": MAP, "resources": RESOURCES},
        "worker": {"labels": MAP, "annotations": MAP, "resources": RESOURCES},
        "locustfile": {"content": str, "configMap": {"name": str}}, "metrics": {"intervalSeconds": int},
    },
}  # fmt: skip
"""locustio/k8s-operator charts/locust-operator/crds/locusttest.yaml (chart 0.1.6): spec's properties."""
RELABEL = {
    "sourceLabels": [str], "separator": str, "targetLabel": str, "regex": str, "modulus": int,
    "replacement": str, "action": str,
}  # fmt: skip
ENDPOINT = {
    "port": str, "path": str, "scheme": str, "interval": str, "scrapeTimeout": str, "honorLabels": bool,
    "params": ANY, "relabelings": [RELABEL], "metricRelabelings": [RELABEL],
}  # fmt: skip
SELECTOR = {"matchLabels": MAP, "matchExpressions": ANY}
NAMESPACES = {"any": bool, "matchNames": [str]}
SERVICE_MONITOR = {
    "apiVersion": str, "kind": str, "metadata": META,
    "spec": {"selector": SELECTOR, "namespaceSelector": NAMESPACES, "endpoints": [{**ENDPOINT, "targetPort": ANY}],
             "jobLabel": str, "targetLabels": [str], "podTargetLabels": [str]},
}  # fmt: skip
POD_MONITOR = {
    "apiVersion": str, "kind": str, "metadata": META,
    "spec": {"selector": SELECTOR, "namespaceSelector": NAMESPACES, "podMetricsEndpoints": [ENDPOINT],
             "jobLabel": str, "podTargetLabels": [str]},
}  # fmt: skip
"""monitoring.coreos.com/v1 (the Prometheus operator's API reference): the fields used, and their siblings."""
CHART_VALUES = {
    "loadtest": {
        "name": str, "locust_locustfile": str, "locust_locustfile_path": str, "locust_locustfile_configmap": str,
        "locust_lib_configmap": str, "locust_host": str, "pip_packages": ANY, "environment": MAP,
        "environment_secret": MAP, "environment_external_secret": ANY, "headless": bool, "tags": str,
        "excludeTags": str, "locustCmd": str,
    },
    "image": {"repository": str, "tag": str, "pullPolicy": str},
    "service": ANY,
    "master": {
        "image": str, "logLevel": str, "replicas": int, "resources": RESOURCES, "serviceAccountAnnotations": MAP,
        "environment": MAP, "args": [str], "command": [str], "restartPolicy": str, "extraPorts": ANY,
    },
    "worker": {
        "image": str, "logLevel": str, "replicas": int, "resources": RESOURCES, "serviceAccountAnnotations": MAP,
        "environment": MAP, "args": [str], "command": [str], "restartPolicy": str,
    },
    "extraConfigMaps": MAP, "extraObjects": [ANY], "extraLabels": MAP,
}  # fmt: skip
"""deliveryhero/helm-charts stable/locust/values.yaml (chart 0.35.0): the keys used, and their siblings."""
REQUIRED = {"LocustTest": [("spec", "workers")], "ServiceMonitor": [("spec", "endpoints")],
            "PodMonitor": [("spec", "podMetricsEndpoints")]}  # fmt: skip
SHAPES = {"LocustTest": LOCUSTTEST, "ServiceMonitor": SERVICE_MONITOR, "PodMonitor": POD_MONITOR}


def check_shape(value: Any, shape: Any, path: str) -> None:
    """Raise AssertionError naming the path of the first field the shape does not name, or of the wrong type."""
    if shape == ANY:
        return
    if shape == MAP:
        assert isinstance(value, dict) and all(isinstance(v, str) for v in value.values()), f"{path}: {value!r}"
    elif isinstance(shape, dict):
        assert isinstance(value, dict), f"{path}: expected a mapping, found {value!r}"
        for key, item in value.items():
            assert key in shape, f"{path}.{key}: not a field of this resource ({', '.join(shape)})"
            check_shape(item, shape[key], f"{path}.{key}")
    elif isinstance(shape, list):
        assert isinstance(value, list), f"{path}: expected a list, found {value!r}"
        for i, item in enumerate(value):
            check_shape(item, shape[0], f"{path}[{i}]")
    else:
        assert isinstance(value, shape) and not (shape is int and isinstance(value, bool)), f"{path}: {value!r}"


def check_custom(document: dict[str, Any]) -> None:
    kind = document["kind"]
    check_shape(document, SHAPES[kind], kind)
    for path in REQUIRED[kind]:
        node: Any = document
        for key in path:
            assert key in node, f"{kind}: {'.'.join(path)} is required"
            node = node[key]


def check_document(document: dict[str, Any]) -> None:
    if document["kind"] in MODELS:
        assert round_trip(document) == document
    else:
        check_custom(document)


# -- rendered documents ------------------------------------------------------------------------------------------

SHIPPED = [s.name for s in shipped_scenarios()]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_rendered_document_of_every_shipped_scenario_round_trips(name: str) -> None:
    documents = render(RenderOptions(SHIPPED_DIR / f"{name}.yaml", workers=3, role_arn=ROLE))
    kinds = [d["kind"] for d in documents]
    local = load_scenario(SHIPPED_DIR / f"{name}.yaml").is_local
    assert kinds == ["Namespace", "ServiceAccount", "ConfigMap"] + ["Deployment", "Service"] * local + [
        "Service", "Job", "Deployment", "ServiceMonitor", "PodMonitor"
    ]  # fmt: skip
    for document in documents:
        check_document(document)


@pytest.mark.parametrize(
    ("kind", "path", "typo"),
    [("Job", ("spec",), "backofLimit"),
     ("Deployment", ("spec", "template", "spec"), "serviceAcountName"),
     ("Service", ("spec",), "selectr"),
     ("ServiceMonitor", ("spec",), "endpoint"),
     ("PodMonitor", ("spec", "podMetricsEndpoints", 0), "paht")],
)  # fmt: skip
def test_a_misspelt_field_fails_the_check(kind: str, path: tuple[Any, ...], typo: str) -> None:
    document = next(
        d for d in render(RenderOptions(SHIPPED_DIR / "write-ceiling.yaml", workers=2)) if d["kind"] == kind
    )
    check_document(document)
    node = document
    for key in path:
        node = node[key]
    node[typo] = 1
    with pytest.raises(AssertionError):
        check_document(document)


def test_the_fleet_is_wired_as_compose_wires_it() -> None:
    documents = render(RenderOptions(SHIPPED_DIR / "quickstart.yaml", workers=3, image="img:1", namespace="ns"))
    by = {(d["kind"], d["metadata"]["name"]): d for d in documents}
    master = by["Job", "dynlocust-master"]["spec"]["template"]["spec"]
    worker = by["Deployment", "dynlocust-worker"]["spec"]
    command = worker["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--master-host") + 1] == "dynlocust-master" and ("Service", "dynlocust-master") in by
    master_command = master["containers"][0]["command"]
    assert master_command[master_command.index("--expect-workers") + 1] == str(worker["replicas"]) == "3"
    users = load_scenario(SHIPPED_DIR / "quickstart.yaml").concurrency * 3  # the scenario's concurrency x workers
    assert master_command[master_command.index("-u") + 1] == str(users)
    assert master_command[master_command.index("--host") + 1] == "http://dynlocust-endpoint:8000"
    assert {c["image"] for d in documents if d["kind"] in ("Job", "Deployment")
            for c in d["spec"]["template"]["spec"]["containers"]} == {"img:1"}  # fmt: skip
    assert by["Job", "dynlocust-master"]["spec"]["backoffLimit"] == 0 and master["restartPolicy"] == "Never"
    service = by["Service", "dynlocust-master"]["spec"]
    assert (
        service["selector"].items() <= by["Job", "dynlocust-master"]["spec"]["template"]["metadata"]["labels"].items()
    )
    assert {p["name"]: p["port"] for p in service["ports"]} == {"locust": 5557, "metrics": 9646}
    ports = {p["name"]: p["containerPort"] for p in master["containers"][0]["ports"]}
    monitors = [d for d in documents if d["kind"] in ("ServiceMonitor", "PodMonitor")]
    assert ports["metrics"] == 9646 and all(
        (d["spec"].get("endpoints") or d["spec"]["podMetricsEndpoints"])[0]["port"] == "metrics" for d in monitors
    )
    assert all(d["metadata"].get("namespace", "ns") == "ns" for d in documents)


def test_credentials_come_from_the_service_account_and_never_from_keys() -> None:
    documents = render(RenderOptions(SHIPPED_DIR / "write-ceiling.yaml", workers=2, role_arn=ROLE))
    (account,) = [d for d in documents if d["kind"] == "ServiceAccount"]
    assert account["metadata"]["annotations"] == {kubernetes.IRSA_ANNOTATION: ROLE}
    for document in documents:
        if document["kind"] in ("Job", "Deployment"):
            pod = document["spec"]["template"]["spec"]
            assert pod["serviceAccountName"] == account["metadata"]["name"]
            assert not {e["name"] for c in pod["containers"] for e in c["env"]} & set(kubernetes_checks.SECRETS)
    text = "".join(kubernetes.dump(d) for d in documents)
    assert "AWS_SECRET" not in text and "aws_secret" not in text.lower()


# -- docker/k8s/ -------------------------------------------------------------------------------------------------


def test_the_shipped_manifests_are_what_render_writes_today(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert kubernetes.main([a if a != "OUT" else str(tmp_path) for a in ["render", *SHIPPED_ARGS]]) == 0
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.yaml"))
    shipped = sorted(p.relative_to(MANIFESTS) for p in MANIFESTS.rglob("*.yaml"))
    assert fresh == shipped
    for path in shipped:
        assert (MANIFESTS / path).read_text() == (tmp_path / path).read_text(), (
            f"re-render docker/k8s/manifests ({path})"
        )
        check_document(yaml.safe_load((MANIFESTS / path).read_text()))


def locusttest() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    account, test, monitor = yaml.safe_load_all((K8S / "locusttest.yaml").read_text())
    return account, test, monitor


def test_the_locusttest_has_only_the_operators_fields_and_runs_the_fleet() -> None:
    account, test, monitor = locusttest()
    assert round_trip(account) == account and account["metadata"]["name"] == "default"  # the operator's pods' account
    assert account["metadata"]["annotations"][kubernetes.IRSA_ANNOTATION].startswith("arn:aws:iam::")
    assert (test["apiVersion"], test["kind"]) == ("locust.io/v1", "LocustTest")
    check_custom(test)
    check_custom(monitor)
    spec = test["spec"]
    args = shlex.split(spec["args"])
    scenario = load_scenario(SHIPPED_DIR / "write-ceiling.yaml")
    assert args[args.index("-f") + 1] == kubernetes.LOCUSTFILE
    # the operator mounts the ConfigMap at /home/locust: the one `kubectl create configmap` makes, as render names it
    assert args[args.index("--scenario") + 1] == f"/home/locust/{kubernetes.SCENARIO_KEY}"
    assert spec["locustfile"]["configMap"]["name"] == "dynlocust-scenario"
    assert args[args.index("--expect-workers") + 1] == str(spec["workers"])
    assert args[args.index("-u") + 1] == str(scenario.concurrency * spec["workers"]) and "--headless" in args
    for role in ("master", "worker"):
        kubernetes_checks.check_resources(role, spec[role]["resources"], ("--cpu", "--memory"))
    env = {e["name"]: e["value"] for e in spec["env"]}
    assert not set(env) & set(kubernetes_checks.SECRETS) and env["DYNLOCUST_METRICS_HOST"] == "0.0.0.0"
    # the operator's master pod labels, and the metrics port its container does not declare
    assert monitor["spec"]["selector"]["matchLabels"] == {
        "locust.io/test-run": test["metadata"]["name"], "locust.io/component": "master"
    }  # fmt: skip
    relabel = monitor["spec"]["podMetricsEndpoints"][0]["relabelings"][0]
    assert relabel["replacement"] == f"$1:{env['DYNLOCUST_METRICS_PORT']}" == f"$1:{kubernetes.METRICS_PORT}"


def test_the_chart_values_use_only_the_charts_keys_and_run_the_fleet() -> None:
    values = yaml.safe_load((K8S / "helm-values.yaml").read_text())
    check_shape(values, CHART_VALUES, "values")
    load = values["loadtest"]
    assert f"{load['locust_locustfile_path']}/{load['locust_locustfile']}" == kubernetes.LOCUSTFILE
    assert load["locust_locustfile_configmap"] == load["locust_lib_configmap"] == ""  # the image's own locustfile
    assert not load["headless"]  # a Deployment restarts a master that exits: a headless one would run again
    mount = values["extraConfigMaps"]["dynlocust-scenario"]
    assert load["environment"]["DYNLOCUST_SCENARIO"] == f"{mount}/{kubernetes.SCENARIO_KEY}"
    assert not set(load["environment"]) & set(kubernetes_checks.SECRETS)
    args = values["master"]["args"]
    assert args[args.index("--web-host") + 1] == "0.0.0.0"  # the web UI and its /metrics, for the ServiceMonitor
    scenario = load_scenario(SHIPPED_DIR / "write-ceiling.yaml")
    assert args[args.index("-u") + 1] == str(scenario.concurrency * values["worker"]["replicas"])
    for role in ("master", "worker"):
        kubernetes_checks.check_resources(role, values[role]["resources"], ("--cpu", "--memory"))
        assert values[role]["serviceAccountAnnotations"][kubernetes.IRSA_ANNOTATION].startswith("arn:aws:iam::")
    (monitor,) = values["extraObjects"]
    monitor = {**monitor, "metadata": {**monitor["metadata"], "namespace": "dynlocust"}}
    check_custom(monitor)
    assert monitor["spec"]["endpoints"][0]["port"] == "master-p3"  # the chart's Service port of the web UI


# -- refusals ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [(["--workers", "0"], "--workers: expected at least 1, found 0"),
     (["--users", "-5"], "--users: expected 0 .* or more, found -5"),
     (["--timeout", "-1"], "--timeout: expected 0 .* or more, found -1"),
     (["--namespace", "Load_Tests"], "--namespace: expected a DNS label .* found 'Load_Tests'"),
     (["--name", "x" * 60], "--name: expected at most 54 characters"),
     (["--role-arn", "arn:aws:iam::12:role/x"], r"--role-arn: expected an IAM role ARN .*, found 'arn:aws:iam::12:"),
     (["--image", ""], "--image: expected an image reference"),
     (["--worker-cpu", "3"], "--worker-cpu: expected at most 2 cores for a worker .*, found 3"),
     (["--worker-cpu", "100m"], "--worker-cpu: expected at least 250m for the worker, found 100m"),
     (["--worker-cpu", "one"], "--worker-cpu: expected a Kubernetes quantity such as 500m, .* found 'one'"),
     (["--worker-cpu", "0.0001"], "--worker-cpu: expected whole millicores"),
     (["--worker-memory", "100Mi"], "--worker-memory: expected at least 256Mi for the worker, found 100Mi"),
     (["--worker-memory", "2000m"], "--worker-memory: expected bytes with a suffix such as Mi or Gi"),
     (["--master-memory", "121Gi"], "--master-memory: expected requests that an EKS Fargate pod holds"),
     (["--scenario-missing"], "no-such.yaml")],
)  # fmt: skip
def test_bad_options_are_refused_in_one_line_with_exit_2(
    change: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = "no-such.yaml" if change == ["--scenario-missing"] else str(SHIPPED_DIR / "write-ceiling.yaml")
    change = [] if change == ["--scenario-missing"] else change
    assert kubernetes.main(["render", scenario, "--workers", "2", *change]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dynlocust: error: "), err
    assert re.search(message, err), err


def test_a_document_kubernetes_would_refuse_is_refused_by_validate() -> None:
    documents = render(RenderOptions(SHIPPED_DIR / "write-ceiling.yaml", workers=2))
    job = next(d for d in documents if d["kind"] == "Job")
    cases = [
        (lambda d: d["metadata"]["labels"].update({"dynlocust/scenario": "x" * 64}), "label dynlocust/scenario"),
        (lambda d: d["spec"].update(backoffLimit=3), "a run must never run twice"),
        (lambda d: d["spec"]["template"]["spec"]["containers"][0]["env"].append(
            {"name": "AWS_SECRET_ACCESS_KEY", "value": "k"}), "expected no AWS keys"),
        (lambda d: d.update(apiVersion="batch/v2"), "found batch/v2 Job"),
        (lambda d: d["metadata"].update(namespace="other"), "expected namespace dynlocust, found other"),
    ]  # fmt: skip
    for change, message in cases:
        broken = copy.deepcopy(job)
        change(broken)
        with pytest.raises(ManifestError, match=message):
            kubernetes_checks.validate(broken, "dynlocust")


@pytest.mark.parametrize(
    ("cpu", "memory", "size"),
    [(1000, 1792 * 2**20, (1024, 2048)),  # the default: 1792Mi + 256Mi fits 1 vCPU / 2 GB
     (1000, 2 * 2**30, (1024, 3072)),  # 2Gi + 256Mi is billed as 3 GB
     (250, 256 * 2**20, (256, 512)),
     (2000, 16 * 2**30, (4096, 17 * 1024)),  # more memory than 2 vCPU take: the next CPU size
     (16000, 120 * 2**30, None)],
)  # fmt: skip
def test_the_eks_fargate_size_of_a_pod(cpu: int, memory: int, size: tuple[int, int] | None) -> None:
    assert fargate_size(cpu, memory) == size


def test_render_takes_a_shipped_scenario_by_its_bare_name_outside_a_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `run` and `validate` do: the installed package has no `scenarios/` beside the working directory."""
    monkeypatch.chdir(tmp_path)
    assert kubernetes.main(["render", "write-ceiling", "--workers", "2", "--image", "r/dynlocust:1"]) == 0
    documents = list(yaml.safe_load_all(capsys.readouterr().out))
    (config,) = [d for d in documents if d["kind"] == "ConfigMap"]
    assert list(config["data"].values()) == [(SHIPPED_DIR / "write-ceiling.yaml").read_text()]
