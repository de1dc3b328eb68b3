"""The one scenario builder for tests: YAML of a small scenario, put-only on one table `t` unless told otherwise."""

from __future__ import annotations

from pathlib import Path

ONE_TABLE = "[{name: t, partition_key: {name: pk, type: S}}]"
PUT_ONLY = "[{op: put, weight: 1}]"


def scenario_yaml(
    name: str,
    steps: str,
    *,
    target: str = "{local: {capacity_scale: 1.0}}",
    transport: str | None = "boto3",
    tables: str = ONE_TABLE,
    item_size: int | str = 200,
    operations: str = PUT_ONLY,
    concurrency: int = 4,
    deadline: str = "2s",
    extra: str = "",
) -> str:
    """YAML of one scenario; `steps` is one phase's YAML flow (a ramp or steps), the other arguments YAML flows too,
    and `extra` is appended as written (top-level keys such as `limits:` or `slos:`)."""
    lines = [f"name: {name}", f"target: {target}"]
    if transport is not None:
        lines.append(f"transport: {transport}")
    lines += [
        f"tables: {tables}",
        "workload:",
        f"  item_size: {item_size}",
        f"  operations: {operations}",
        "phases:",
        f"  - {steps}",
        f"concurrency: {concurrency}",
        f"deadline: {deadline}",
        "bin: 1s",
    ]
    return "\n".join(lines) + "\n" + extra


def put_scenario(
    name: str,
    steps: str,
    *,
    capacity_scale: float = 1.0,
    concurrency: int = 4,
    transport: str = "boto3",
    item_size: int = 200,
    deadline: str = "2s",
) -> str:
    """A put-only run of one table `t` on the embedded endpoint at `capacity_scale`."""
    return scenario_yaml(
        name,
        steps,
        target=f"{{local: {{capacity_scale: {capacity_scale}}}}}",
        transport=transport,
        item_size=item_size,
        concurrency=concurrency,
        deadline=deadline,
    )


def write_scenario(directory: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = directory / name
    path.write_text(text)
    return path
