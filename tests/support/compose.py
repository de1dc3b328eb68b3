"""docker/compose.yaml as the tests read it: compose's interpolation, each service's arguments, ports and mounts.

Both the local-process test (tests/integration/test_docker_compose.py) and the podman pod
(tests/support/podman.py) start services from these readings, so neither can drift from the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.support.runs import ROOT

DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${NAME:-default} interpolation."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), value)


def command(service: dict[str, Any], env: dict[str, str]) -> list[str]:
    return [interpolate(str(arg), env) for arg in service["command"]]


def option(args: list[str], name: str) -> str:
    """The value after `name` in an argument list (`--port 8000`), or of `name=value`."""
    for i, arg in enumerate(args):
        if arg == name:
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise KeyError(name)


def environment(service: dict[str, Any], env: dict[str, str]) -> dict[str, str]:
    return {k: interpolate(str(v), env) for k, v in service.get("environment", {}).items()}


def replicas(service: dict[str, Any], env: dict[str, str]) -> int:
    return int(interpolate(str(service.get("deploy", {}).get("replicas", 1)), env))


def container_ports(service: dict[str, Any]) -> list[int]:
    """The container side of each published port ("127.0.0.1:HOST:CONTAINER")."""
    return [int(str(p).rsplit(":", 1)[1]) for p in service.get("ports", [])]


def mounts(service: dict[str, Any]) -> list[tuple[str | Path, str, str]]:
    """(source, target, mode) per volume: a bind source as an absolute path, a named volume as its name."""
    out: list[tuple[str | Path, str, str]] = []
    named = set(compose().get("volumes", {}))
    for volume in service.get("volumes", []):
        source, target, *mode = str(volume).split(":")
        out.append((source if source in named else (DOCKER / source).resolve(), target, mode[0] if mode else "rw"))
    return out


def start_order(services: dict[str, Any]) -> list[str]:
    """Service names with every service after those it depends_on (compose's start order)."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name not in order:
            for dependency in services[name].get("depends_on", []):
                visit(dependency)
            order.append(name)

    for name in services:
        visit(name)
    return order
