"""`dynlocust k8s render`'s fleet as one pod for `podman kube play`, on a host without a cluster.

The pod holds the rendered containers themselves (the endpoint's, the master Job's, one per worker replica), with
their commands, environment, ports and scenario ConfigMap as rendered. What differs from a cluster, and why:
- every container shares the pod's loopback, and the Services' names resolve to 127.0.0.1 through a hosts file
  mounted in each container (the pod has no network: nothing leaves loopback, and no Service exists);
- each `results` emptyDir is a host directory, so the test reads what the master wrote;
- containerPorts are left out (podman 4 maps each one to the host, which a pod with no network refuses), and
  requests and limits too (one small machine, shared) and the pod never restarts a container, so each
  container's exit code is the one its process returned.
"""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.podman import CONTAINERS_CONF, podman

WORKLOADS = ("Deployment", "Job")


def containers(documents: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(component, container) of every pod the documents start, a Deployment's once per replica."""
    out = []
    for document in documents:
        if document["kind"] not in WORKLOADS:
            continue
        component = document["metadata"]["labels"]["app.kubernetes.io/component"]
        replicas = int(document["spec"].get("replicas", 1))
        (container,) = document["spec"]["template"]["spec"]["containers"]
        for i in range(replicas):
            one = copy.deepcopy(container)
            one["name"] = container["name"] if replicas == 1 else f"{container['name']}-{i + 1}"
            out.append((component, one))
    return out


def service_names(documents: list[dict[str, Any]]) -> list[str]:
    return [d["metadata"]["name"] for d in documents if d["kind"] == "Service"]


def hosts_file(documents: list[dict[str, Any]]) -> str:
    return f"127.0.0.1 localhost {' '.join(service_names(documents))}\n::1 localhost\n"


def one_pod(documents: list[dict[str, Any]], name: str, workdir: Path) -> list[dict[str, Any]]:
    """The ConfigMap and a Pod holding every rendered container; results under ``workdir/results-<container>``."""
    (configmap,) = [copy.deepcopy(d) for d in documents if d["kind"] == "ConfigMap"]
    configmap["metadata"].pop("namespace")
    (master,) = [d for d in documents if d["kind"] == "Job"]
    pod_spec = master["spec"]["template"]["spec"]
    hosts = workdir / "hosts"
    hosts.write_text(hosts_file(documents))
    volumes: list[dict[str, Any]] = [v for v in pod_spec["volumes"] if "configMap" in v] + [
        {"name": "hosts", "hostPath": {"path": str(hosts), "type": "File"}}
    ]
    pod_containers = []
    for _, container in containers(documents):
        container.pop("resources")
        container.pop("ports", None)  # podman 4 turns a containerPort into a host port mapping
        results = workdir / f"results-{container['name']}"
        results.mkdir()
        volume = f"results-{container['name']}"
        volumes.append({"name": volume, "hostPath": {"path": str(results), "type": "Directory"}})
        container["volumeMounts"] = [
            {**m, "name": volume} if m["name"] == "results" else m for m in container["volumeMounts"]
        ] + [{"name": "hosts", "mountPath": "/etc/hosts", "readOnly": True}]
        pod_containers.append(container)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": master["spec"]["template"]["metadata"]["labels"]},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": pod_spec["securityContext"],
            "containers": pod_containers,
            "volumes": volumes,
        },
    }
    return [configmap, pod]


class KubePod:
    """`podman kube play` of one pod with no network; `podman kube down` on exit."""

    def __init__(self, documents: list[dict[str, Any]], workdir: Path) -> None:
        self.name = next(d for d in documents if d["kind"] == "Pod")["metadata"]["name"]
        self.file = workdir / "pod.yaml"
        self.file.write_text(yaml.safe_dump_all(documents, sort_keys=False))

    def __enter__(self) -> KubePod:
        podman("kube", "play", "--network", "none", str(self.file), timeout=180)
        return self

    def __exit__(self, *_exc: Any) -> None:
        try:
            podman("pod", "stop", "--time", "2", self.name, timeout=60)  # kube down would wait 10 s per container
        finally:
            podman("kube", "down", str(self.file), timeout=120)

    def container(self, name: str) -> str:
        return f"{self.name}-{name}"

    def state(self, name: str) -> str:
        return podman("container", "inspect", "--format", "{{.State.Status}}", self.container(name)).strip()

    def wait(self, name: str, timeout: float) -> int:
        return int(podman("wait", self.container(name), timeout=timeout).strip())

    def exec(self, name: str, *args: str, timeout: float = 60) -> str:
        return podman("exec", self.container(name), *args, timeout=timeout)

    def logs(self, name: str) -> str:
        env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
        done = subprocess.run(
            ["podman", "logs", self.container(name)], env=env, capture_output=True, text=True, timeout=60
        )
        return done.stdout + done.stderr
