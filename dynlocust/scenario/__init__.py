"""Scenarios: the YAML format (`spec`, which builds `schema.json`), its loader with precise errors, and the
plan of windows.

Public entry points: `load_scenario`, `load_scenario_text`, `validate_file`, `build_plan` and the model
classes. `ScenarioError` is raised for every problem in a scenario.
"""

from __future__ import annotations

from pathlib import Path

from dynlocust.scenario.estimate import estimate
from dynlocust.scenario.loader import load_scenario, load_scenario_text
from dynlocust.scenario.model import (
    Gsi,
    HotSpotKeys,
    KeyAttribute,
    KeySpec,
    Limits,
    LocalTarget,
    Operation,
    Phase,
    RemoteTarget,
    Scenario,
    ScenarioError,
    Seed,
    SequentialKeys,
    ShardedKeys,
    Slo,
    Step,
    Table,
    Target,
    Throughput,
    UniformKeys,
    Workload,
    ZipfKeys,
)
from dynlocust.scenario.plan import Plan, Window, build_plan, worst_case_plan
from dynlocust.scenario.scale import Scaling
from dynlocust.scenario.spec import SCHEMA_PATH
from dynlocust.scenario.values import parse_duration

__all__ = [
    "SCHEMA_PATH",
    "Gsi",
    "HotSpotKeys",
    "KeyAttribute",
    "KeySpec",
    "Limits",
    "LocalTarget",
    "Operation",
    "Phase",
    "Plan",
    "RemoteTarget",
    "Scenario",
    "ScenarioError",
    "Seed",
    "SequentialKeys",
    "ShardedKeys",
    "Slo",
    "Step",
    "Table",
    "Target",
    "Throughput",
    "UniformKeys",
    "Window",
    "Workload",
    "ZipfKeys",
    "build_plan",
    "describe",
    "load_scenario",
    "load_scenario_text",
    "parse_duration",
    "validate_file",
]


def _dur(seconds: float) -> str:
    s = round(seconds, 3)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    parts = [f"{int(h)}h"] if h else []
    if m:
        parts.append(f"{int(m)}m")
    if sec or not parts:
        parts.append(f"{sec:g}s")
    return " ".join(parts)


def _keys(spec: KeySpec | None) -> str:
    if spec is None:
        return "-"
    if isinstance(spec, ShardedKeys):
        return f"sharded x{spec.shards} ({spec.mode}) over {_keys(spec.base)}"
    name = type(spec).__name__.removesuffix("Keys").lower().replace("hotspot", "hot_spot")
    if isinstance(spec, UniformKeys) and spec.keyspace is None:
        return "uniform UUIDs"
    return f"{name} over {spec.keyspace:,} keys" if spec.keyspace else name


def describe(scenario: Scenario, scaling: Scaling | None = None) -> str:
    """A short human summary: target, tables, operation mix, windows, duration, planned requests, and the estimate of
    what it costs; with the `scaling` it was loaded with, if any."""
    sc = scenario
    plan = worst_case_plan(sc, t0=0.0)
    if isinstance(sc.target, LocalTarget):
        target = f"local endpoint (capacity_scale {sc.target.capacity_scale:g}, time_scale {sc.target.time_scale:g})"
    else:
        parts = [f"{k} {v}" for k, v in vars(sc.target).items() if v]
        target = "remote (" + (", ".join(parts) or "endpoint and region from options") + ")"
    lines = [f"scenario {sc.name} ({sc.source}): valid", f"  target: {target}; transport {sc.transport}"]
    if scaling is not None and not scaling.is_identity:
        lines.append(f"  scaled: {scaling.describe()}")
    for t in sc.tables:
        key = f"{t.partition_key.name}:{t.partition_key.type}"
        if t.sort_key:
            key += f", {t.sort_key.name}:{t.sort_key.type}"
        extra = [t.billing if not t.provisioned else f"provisioned r{t.provisioned.read}/w{t.provisioned.write}"]
        if t.gsis:
            extra.append("gsis " + ", ".join(g.name for g in t.gsis))
            for g in t.gsis:
                valued = [a for a in (g.partition_key, g.sort_key) if a is not None and a.values is not None]
                extra += [f"{g.name}.{a.name} values {_keys(a.values)}" for a in valued]
        if t.seed:
            extra.append(f"seed {t.seed.items:,} x {t.seed.item_size:,} B")
        if t.use_existing:
            extra.append(f"EXISTING table {t.existing_table_name}")
        lines.append(f"  table {t.name} ({key}; {'; '.join(extra)})")
    tw = sc.workload.total_weight
    for o in sc.workload.operations:
        lines.append(f"  op {o.label}: {o.op} on {o.table}, {100 * o.weight / tw:.1f}%, keys {_keys(o.keys)}")
    rates = [f"{w.rate:g}" for w in plan.windows]
    if len(rates) > 12:
        rates = [*rates[:5], "...", *rates[-5:]]
    if sc.search is not None:
        s = sc.search
        lines.append(
            f"  search: from {s.start:g}/s x{s.factor:g} then bisection to {s.precision:.1%}, {_dur(s.window)} "
            f"windows, at most {s.max_windows}{f', {s.op}s only' if s.op else ''}; at most (growing every window):"
        )
    lines.append(f"  windows: {len(plan.windows)} in {len(sc.phases)} phase(s), rates/s: {', '.join(rates)}")
    lines.append(
        f"  total: {_dur(plan.total_duration)}, {plan.total_requests:,} requests planned; "
        f"concurrency {sc.concurrency}/worker, deadline {_dur(sc.deadline)}, bin {_dur(sc.bin)}"
    )
    lim = sc.limits
    lines.append(
        f"  limits: max_requests {lim.max_requests if lim.max_requests is not None else '-'}, "
        f"max_cost_dollars {lim.max_cost_dollars if lim.max_cost_dollars is not None else '-'}; "
        f"{len(sc.slos)} SLO rule(s)"
    )
    lines += estimate(sc).lines(_dur(plan.total_duration))
    return "\n".join(lines)


def validate_file(path: str | Path) -> str:
    """Load `path` and return `describe` of it; raises `ScenarioError` if it is not a valid scenario."""
    return describe(load_scenario(path))
