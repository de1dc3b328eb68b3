"""docker/compose.yaml's services in one podman pod with no outside network, for hosts without a Docker engine.

The pod's containers share one network namespace that holds only loopback: services reach each other on 127.0.0.1
at the ports compose declares, and compose's service names resolve to 127.0.0.1 through a hosts file mounted in
every container (podman leaves --add-host out of a pod with no network).
Nothing is published and no bridge network exists, so no traffic leaves loopback. What differs from compose:
- the services compose builds run the image built from docker/Dockerfile with only its BASE argument set to a
  local Debian image (docker/podman/base-image.sh), with the wheels installed from a local wheelhouse;
- Prometheus runs the host's Debian binary in that base image, as no registry serves prom/prometheus here;
- Grafana is not started (NOT_IN_POD); the named `results` volume is a host directory the caller reads.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.compose import (
    DOCKER,
    command,
    compose,
    container_ports,
    environment,
    mounts,
    option,
    replicas,
    start_order,
)
from tests.support.runs import ROOT

CONTAINERS_CONF = DOCKER / "podman" / "containers.conf"
BASE_IMAGE_SCRIPT = DOCKER / "podman" / "base-image.sh"
CACHE = Path(os.environ.get("DYNLOCUST_PODMAN_CACHE", "/var/cache/dynlocust-podman"))
PROMETHEUS_IMAGE = "prom/prometheus"
PROMETHEUS_BINARY = Path("/usr/bin/prometheus")
NOT_IN_POD = {"grafana": "its image comes from a registry and Debian ships no Grafana"}
TOOLS = ("podman", "runc", "debootstrap")


@dataclass(frozen=True)
class Container:
    """One container of the pod: a compose service (or one replica of it) as podman runs it."""

    name: str
    service: str
    image: str
    command: tuple[str, ...]
    environment: dict[str, str] = field(default_factory=dict)
    mounts: tuple[tuple[str, str, str], ...] = ()  # (host path, container path, "ro" | "rw")
    ports: tuple[int, ...] = ()  # the container ports compose publishes, here reached on the pod's loopback


def pod_plan(
    settings: dict[str, str], *, app_image: str, base_image: str, results: Path, scratch: Path
) -> list[Container]:
    """compose's services in start order, each replica a container; `settings` are compose's ${...} variables."""
    services = compose()["services"]
    plan: list[Container] = []
    for name in start_order(services):
        if name in NOT_IN_POD:
            continue
        service = services[name]
        args = command(service, settings)
        volumes = [
            (str(results if source == "results" else source), target, mode) for source, target, mode in mounts(service)
        ]
        if "build" in service:
            image = app_image
        elif str(service["image"]).split(":")[0] == PROMETHEUS_IMAGE:
            image = base_image
            args = [str(PROMETHEUS_BINARY), *args]  # the image's entrypoint
            volumes.append((str(PROMETHEUS_BINARY), str(PROMETHEUS_BINARY), "ro"))
            volumes.append((str(scratch / name), option(args, "--storage.tsdb.path"), "rw"))
        else:
            raise ValueError(
                f"docker/compose.yaml: services.{name}: no way to run image {service['image']!r} in the pod"
            )
        count = replicas(service, settings)
        for i in range(count):
            plan.append(
                Container(
                    name=name if count == 1 else f"{name}-{i + 1}",
                    service=name,
                    image=image,
                    command=tuple(args),
                    environment=environment(service, settings),
                    mounts=tuple(volumes),
                    ports=tuple(container_ports(service)),
                )
            )
    return plan


def hosts_file() -> str:
    """/etc/hosts for every container: localhost and compose's service names, all 127.0.0.1."""
    names = [name for name in compose()["services"] if name not in NOT_IN_POD]
    return f"127.0.0.1 localhost {' '.join(names)}\n::1 localhost\n"


def run_argv(pod: str, hosts: Path, container: Container) -> list[str]:
    """`podman run` arguments that start `container` detached in `pod`, with `hosts` as its /etc/hosts."""
    argv = ["run", "--detach", "--pod", pod, "--name", f"{pod}-{container.name}", "--volume", f"{hosts}:/etc/hosts:ro"]
    for key, value in container.environment.items():
        argv += ["--env", f"{key}={value}"]
    for source, target, mode in container.mounts:
        argv += ["--volume", f"{source}:{target}:{mode}"]
    return [*argv, container.image, *container.command]


def podman(*args: str, timeout: float = 120) -> str:
    """Run podman with the project's containers.conf; its stdout, or RuntimeError with its stderr."""
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    try:
        done = subprocess.run(["podman", *args], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"podman {' '.join(args[:3])}: no answer within {timeout:g} s") from exc
    if done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args[:3])} exited with {done.returncode}: {done.stderr.strip()[-3000:]}")
    return done.stdout


def unavailable() -> str | None:
    """Why podman cannot run containers on this machine, or None when it can."""
    if os.geteuid() != 0:
        return "podman runs the pod as root here, and this test does not run as root"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install podman runc debootstrap)"
    if not PROMETHEUS_BINARY.exists():
        return f"{PROMETHEUS_BINARY} not installed (apt-get install prometheus)"
    try:
        podman("info", timeout=60)
    except RuntimeError as exc:
        return str(exc)
    return None


def ensure_base_image(name: str) -> None:
    """The local Debian base image, built once and kept by podman (and its tarball in CACHE)."""
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF), "DYNLOCUST_PODMAN_CACHE": str(CACHE)}
    done = subprocess.run([str(BASE_IMAGE_SCRIPT), name], env=env, capture_output=True, text=True, timeout=480)
    if done.returncode != 0:
        raise RuntimeError(f"{BASE_IMAGE_SCRIPT.name} exited with {done.returncode}: {done.stderr.strip()[-3000:]}")


def wheelhouse() -> Path:
    """Wheels of the image's dependencies and build backend, built with the host's pip and its configuration.

    Kept in CACHE per pyproject.toml, so the image build installs them with no network at all.
    """
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    wheels = CACHE / f"wheels-{key}"
    if wheels.is_dir():
        return wheels
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix="wheels.", dir=CACHE))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(partial), ".[report]", *_build_requires()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=400,
    )
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise RuntimeError(f"pip wheel exited with {done.returncode}: {done.stderr.strip()[-3000:]}")
    for own in partial.glob("dynlocust-*.whl"):
        own.unlink()  # the image builds the package itself, from the source being tested
    partial.rename(wheels)
    return wheels


def _build_requires() -> list[str]:
    import tomllib

    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"])


def build_app_image(tag: str, base_image: str, wheels: Path, workdir: Path) -> None:
    """docker/Dockerfile as is, with BASE set to the local base image; pip reads only the wheelhouse, offline."""
    pip_conf = workdir / "pip.conf"
    pip_conf.write_text("[global]\nno-index = true\nfind-links = /wheelhouse\n")
    podman(
        "build", "--pull=never", "--network=none", "--quiet",
        "--build-arg", f"BASE=localhost/{base_image}",
        "--volume", f"{wheels}:/wheelhouse:ro", "--volume", f"{pip_conf}:/etc/pip.conf:ro",
        "--file", str(DOCKER / "Dockerfile"), "--tag", tag, str(ROOT),
        timeout=480,
    )  # fmt: skip


class Pod:
    """A podman pod with only loopback; removed with all its containers on exit."""

    def __init__(self, name: str, workdir: Path) -> None:
        self.name = name
        self.hosts = workdir / "hosts"

    def __enter__(self) -> Pod:
        self.hosts.write_text(hosts_file())
        podman("pod", "create", "--name", self.name, "--network", "none")
        return self

    def __exit__(self, *_exc: Any) -> None:
        podman("pod", "rm", "--force", "--time", "5", self.name, timeout=60)

    def run(self, container: Container) -> None:
        podman(*run_argv(self.name, self.hosts, container))

    def containers(self) -> list[str]:
        """Names of the containers started in the pod (without its infra container)."""
        out = podman("ps", "--all", "--filter", f"pod={self.name}", "--format", "{{.Names}} {{.IsInfra}}")
        return sorted(
            line.split()[0].removeprefix(f"{self.name}-") for line in out.splitlines() if line.endswith("false")
        )

    def exec(self, container: str, *args: str, timeout: float = 60) -> str:
        return podman("exec", f"{self.name}-{container}", *args, timeout=timeout)

    def wait(self, container: str, timeout: float) -> int:
        return int(podman("wait", f"{self.name}-{container}", timeout=timeout).strip())

    def logs(self, container: str) -> str:
        env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
        done = subprocess.run(
            ["podman", "logs", f"{self.name}-{container}"], env=env, capture_output=True, text=True, timeout=60
        )
        return done.stdout + done.stderr


def remove_image(tag: str) -> None:
    """Remove an image this test built, and the build stages it left untagged."""
    podman("rmi", "--force", tag, timeout=120)
    podman("image", "prune", "--force", timeout=120)
