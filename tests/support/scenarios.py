"""Small put-only scenarios for tests that need a real run of a few seconds."""

from __future__ import annotations

from pathlib import Path


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
    """YAML of one table `t` and a put-only workload; `steps` is the phases' YAML flow, e.g. a ramp or steps."""
    return f"""\
name: {name}
target: {{local: {{capacity_scale: {capacity_scale}}}}}
transport: {transport}
tables:
  - {{name: t, partition_key: {{name: pk, type: S}}}}
workload:
  item_size: {item_size}
  operations: [{{op: put, weight: 1}}]
phases:
  - {steps}
concurrency: {concurrency}
deadline: {deadline}
bin: 1s
"""


def write_scenario(directory: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = directory / name
    path.write_text(text)
    return path
