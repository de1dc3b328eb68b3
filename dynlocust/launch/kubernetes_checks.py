"""Checks of rendered Kubernetes documents: kinds, names, labels, selectors, CPU and memory, no keys.

What the API server (or EKS on Fargate) would refuse, refused here first, so `dynlocust k8s render` says it in one
line and exits 2 before anything reaches a cluster.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.launch import fargate

MAX_CONFIGMAP_BYTES = 1024 * 1024
"""The API server refuses a ConfigMap whose data exceeds 1 MiB."""
MAX_LABEL = 63
SECRETS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
"""Never in a manifest, but compose's dummy "local" ones for the embedded endpoint."""
MAX_WORKER_CPU = 2000
"""Millicores: a worker is one Locust process, which runs on one core; more workers scale, more CPU does not."""
MIN_CPU = 250
"""Millicores: Fargate's smallest task, and below it a worker spends its time waiting for the scheduler."""
MIN_MEMORY = 256 * 2**20
FARGATE_OVERHEAD = 256 * 2**20
"""EKS on Fargate adds 256 MiB to a pod's memory requests for the Kubernetes components it runs beside it."""

KINDS = {
    "Namespace": "v1",
    "ServiceAccount": "v1",
    "ConfigMap": "v1",
    "Service": "v1",
    "Job": "batch/v1",
    "Deployment": "apps/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1",
    "PodMonitor": "monitoring.coreos.com/v1",
}
"""Every kind rendered, with its apiVersion."""

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_QUANTITY = re.compile(r"(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>m|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?")
_SUFFIX = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


class ManifestError(DynlocustError):
    """An option or a rendered document that Kubernetes (or the fleet) would not accept."""


def check_dns_label(what: str, value: str) -> None:
    """A Service, Job or namespace name: a DNS label (RFC 1123), as the API server requires."""
    if len(value) > MAX_LABEL or not _DNS_LABEL.fullmatch(value):
        raise ManifestError(
            f"{what}: expected a DNS label (at most {MAX_LABEL} lower-case letters, digits and '-', starting and "
            f"ending with a letter or digit), found {value!r}"
        )


def check_label(key: str, value: str) -> None:
    """A label value: at most 63 characters of letters, digits, '-', '_' and '.', alphanumeric at both ends."""
    if len(value) > MAX_LABEL or not _LABEL_VALUE.fullmatch(value):
        raise ManifestError(
            f"label {key}: expected a label value (at most {MAX_LABEL} letters, digits, '-', '_' or '.', starting "
            f"and ending with a letter or digit), found {value!r}"
        )


def quantity(what: str, text: str) -> Decimal:
    """A Kubernetes quantity ("500m", "1.5", "2Gi") as a number of base units (cores or bytes)."""
    found = _QUANTITY.fullmatch(str(text))
    if found is None:
        raise ManifestError(f"{what}: expected a Kubernetes quantity such as 500m, 1, 512Mi or 2Gi, found {text!r}")
    number = Decimal(found["number"])  # the pattern admits only decimals
    suffix = found["suffix"] or ""
    return number / 1000 if suffix == "m" else number * _SUFFIX[suffix]


def millicores(what: str, text: str) -> int:
    cores = quantity(what, text)
    if cores * 1000 != int(cores * 1000):
        raise ManifestError(f"{what}: expected whole millicores (the API's precision), found {text!r}")
    return int(cores * 1000)


def memory_bytes(what: str, text: str) -> int:
    if str(text).endswith("m"):
        raise ManifestError(f"{what}: expected bytes with a suffix such as Mi or Gi, found {text!r} (millibytes)")
    amount = quantity(what, text)
    if amount != int(amount):
        raise ManifestError(f"{what}: expected a whole number of bytes, found {text!r}")
    return int(amount)


def fargate_size(cpu_millis: int, memory: int) -> tuple[int, int] | None:
    """The EKS Fargate size (CPU units, MiB) a pod with these requests runs as, or None when none holds it.

    Fargate rounds a pod up to the smallest combination that holds its CPU and memory requests plus 256 MiB.
    """
    mib = math.ceil((memory + FARGATE_OVERHEAD) / 2**20)
    units = math.ceil(cpu_millis * 1024 / 1000)
    for cpu, sizes in fargate.SIZES.items():
        if cpu >= units:
            fitting = [m for m in sizes if m >= mib]
            if fitting:
                return cpu, fitting[0]
    return None


def check_resources(role: str, resources: dict[str, dict[str, str]], options: tuple[str, str]) -> None:
    """A container's requests and limits: valid quantities, requests within limits, sizes a worker can use."""
    cpu_option, memory_option = options
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    for part in ("cpu", "memory"):
        if part not in requests or part not in limits:
            raise ManifestError(f"{role}: expected {part} requests and limits, found {resources}")
    cpu = {k: millicores(cpu_option, v["cpu"]) for k, v in (("requests", requests), ("limits", limits))}
    memory = {k: memory_bytes(memory_option, v["memory"]) for k, v in (("requests", requests), ("limits", limits))}
    for what, values, option in (("cpu", cpu, cpu_option), ("memory", memory, memory_option)):
        if values["requests"] > values["limits"]:
            raise ManifestError(
                f"{option}: expected {role} {what} requests within its limits, found requests "
                f"{requests[what]} above limits {limits[what]}"
            )
    if cpu["requests"] < MIN_CPU:
        raise ManifestError(f"{cpu_option}: expected at least {MIN_CPU}m for the {role}, found {requests['cpu']}")
    if role == "worker" and cpu["limits"] > MAX_WORKER_CPU:
        raise ManifestError(
            f"{cpu_option}: expected at most {MAX_WORKER_CPU // 1000} cores for a worker (one Locust process runs on "
            f"one core; add workers instead), found {limits['cpu']}"
        )
    if memory["requests"] < MIN_MEMORY:
        raise ManifestError(
            f"{memory_option}: expected at least {MIN_MEMORY // 2**20}Mi for the {role}, found {requests['memory']}"
        )
    if fargate_size(cpu["requests"], memory["requests"]) is None:
        raise ManifestError(
            f"{memory_option}: expected requests that an EKS Fargate pod holds (at most 16 cores and 120Gi less "
            f"256Mi), found {requests['cpu']} cores and {requests['memory']} for the {role}"
        )


def _walk_labels(document: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every label of a document: its own, its pod template's, its selectors'."""
    yield from document["metadata"].get("labels", {}).items()
    spec = document.get("spec", {})
    yield from spec.get("template", {}).get("metadata", {}).get("labels", {}).items()
    selector = spec.get("selector", {})
    yield from selector.get("matchLabels", selector if document["kind"] == "Service" else {}).items()


def _containers(document: dict[str, Any]) -> list[dict[str, Any]]:
    return list(document.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []))


def validate(document: dict[str, Any], namespace: str) -> None:
    """Refuse a document Kubernetes would refuse or the fleet could not run with; one line naming what and where."""
    kind = document.get("kind")
    where = f"{kind} {document.get('metadata', {}).get('name')}"
    if kind not in KINDS or document.get("apiVersion") != KINDS[str(kind)]:
        raise ManifestError(
            f"{where}: expected one of {', '.join(f'{v} {k}' for k, v in KINDS.items())}, "
            f"found {document.get('apiVersion')} {kind}"
        )
    metadata = document["metadata"]
    check_dns_label(f"{where}: metadata.name", metadata["name"])
    if kind != "Namespace" and metadata.get("namespace") != namespace:
        raise ManifestError(f"{where}: expected namespace {namespace}, found {metadata.get('namespace')}")
    for key, value in _walk_labels(document):
        check_label(key, str(value))
    spec = document.get("spec", {})
    if kind in ("Job", "Deployment"):
        template = spec["template"]["metadata"]["labels"]
        wanted = spec.get("selector", {}).get("matchLabels", {})
        if any(template.get(k) != v for k, v in wanted.items()):
            raise ManifestError(f"{where}: expected its selector {wanted} to match its pods' labels {template}")
        names = [c["name"] for c in _containers(document)]
        if not names or len(set(names)) != len(names):
            raise ManifestError(f"{where}: expected containers with distinct names, found {names}")
        for container in _containers(document):
            check_dns_label(f"{where}: container name", container["name"])
            if not container.get("image"):
                raise ManifestError(f"{where}: container {container['name']}: expected an image, found none")
            keys = [e["name"] for e in container.get("env", []) if e["name"] in SECRETS and e.get("value") != "local"]
            if keys:
                raise ManifestError(
                    f"{where}: expected no AWS keys in a manifest (a service account's role), found {keys}"
                )
    if kind == "Job" and (spec.get("backoffLimit") != 0 or _pod_spec(document).get("restartPolicy") != "Never"):
        raise ManifestError(f"{where}: expected backoffLimit 0 and restartPolicy Never (a run must never run twice)")
    if kind == "ConfigMap":
        size = sum(len(k.encode()) + len(str(v).encode()) for k, v in document.get("data", {}).items())
        if size > MAX_CONFIGMAP_BYTES:
            raise ManifestError(
                f"{where}: expected at most {MAX_CONFIGMAP_BYTES:,} bytes of data, found {size:,}; shorten the scenario"
            )


def _pod_spec(document: dict[str, Any]) -> dict[str, Any]:
    return dict(document["spec"]["template"]["spec"])
