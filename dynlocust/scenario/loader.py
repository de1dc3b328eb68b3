"""Loading a scenario: YAML text -> `Scenario`, with errors that name the file, line, key path, expectation, find.

Every mapping's keys and every bound come from `dynlocust.scenario.spec` (which also builds schema.json). The
document is composed once with yaml's node API so every key path maps to the line it was written on; the
plain Python value is then walked section by section. Loading stops at the first problem: one clear paragraph
(`file:line: key.path: expected ..., found ...`) is more useful than a wall of consequences of the first.

The phases, one module each: reading the YAML with positions (`yaml_doc`), checking values against the spec
(`values`), building the model (`build_tables`, `build_workload`); this module runs them in order.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

from dynlocust.scenario.build_tables import table_of, target_of
from dynlocust.scenario.build_workload import limits_of, phases_of, slos_of, workload_of
from dynlocust.scenario.model import (
    WRITE_OPS,
    Phase,
    RemoteTarget,
    Scenario,
    ScenarioError,
    Table,
    TransportName,
    Workload,
)
from dynlocust.scenario.spec import (
    MAX_CONCURRENCY,
    MAX_RANDOM_SEED,
    TOP,
    TRANSPORTS,
)
from dynlocust.scenario.values import (
    NAME_RE,
    check_choice,
    check_duration,
    check_int,
    check_mapping,
    check_size,
    check_text,
)
from dynlocust.scenario.yaml_doc import MAX_TEXT, YamlDoc, parse_document

__all__ = ["load_scenario", "load_scenario_text"]


def load_scenario_text(text: str, source: str = "<scenario>") -> Scenario:
    """Parse and check a scenario; raise `ScenarioError` naming `source`, line and key path on any problem."""
    if len(text) > MAX_TEXT:
        raise ScenarioError(
            source, None, "", f"expected a scenario of at most {MAX_TEXT:,} characters, found {len(text):,}"
        )
    data, doc = parse_document(text, source)
    m = check_mapping(
        doc,
        data,
        (),
        TOP,
        what="a mapping with name, tables, workload and phases",
    )
    name = check_text(doc, m["name"], ("name",), "a scenario name of letters, digits, '_', '-' or '.'", pattern=NAME_RE)
    description = m.get("description") or ""
    if not isinstance(description, str):
        doc.expected(("description",), "text", description)
    target = target_of(doc, m.get("target"), ("target",))
    transport = check_choice(doc, m.get("transport", "boto3"), ("transport",), TRANSPORTS)

    wl_v = m["workload"]
    item_size = 1024
    if isinstance(wl_v, dict) and "item_size" in wl_v:
        item_size = check_size(doc, wl_v["item_size"], ("workload", "item_size"))
    tables_v = m["tables"]
    if not isinstance(tables_v, list) or not tables_v:
        doc.expected(("tables",), "a non-empty list of tables", tables_v)
    tables: dict[str, Table] = {}
    for i, tv in enumerate(tables_v):
        t = table_of(doc, tv, ("tables", i), item_size)
        if t.name in tables:
            doc.fail(("tables", i, "name"), f"duplicate table name '{t.name}'")
        tables[t.name] = t
    workload = workload_of(doc, wl_v, ("workload",), tables, item_size)
    phases = phases_of(doc, m["phases"], ("phases",), target)
    workload = _probed(doc, workload, phases)
    concurrency = check_int(
        doc,
        m.get("concurrency", 50),
        ("concurrency",),
        "a positive whole number of users per worker",
        maximum=MAX_CONCURRENCY,
    )
    deadline = check_duration(doc, m.get("deadline", 8), ("deadline",))
    bin_s = check_duration(doc, m.get("bin", 10), ("bin",))
    limits = limits_of(doc, m.get("limits"), ("limits",))
    if isinstance(target, RemoteTarget):
        missing = [k for k in ("max_requests", "max_cost_dollars") if getattr(limits, k) is None]
        if missing:
            doc.fail(
                ("limits",),
                f"a remote target needs a request ceiling and a cost ceiling; expected "
                f"limits.{' and limits.'.join(missing)}, found none",
                at=("limits",) if "limits" in m else ("target",),
            )
    planned = sum(round(s.rate * s.duration) for p in phases for s in p.steps)
    if limits.max_requests is not None and limits.max_requests < planned and phases[0].search is None:
        doc.fail(
            ("limits", "max_requests"),
            f"the phases plan {planned:,} requests, so a ceiling of "
            f"{limits.max_requests:,} would abort the run; expected at least {planned:,}",
        )
    slos = slos_of(doc, m.get("slos"), ("slos",), phases)
    seed = check_int(
        doc, m.get("random_seed", 0), ("random_seed",), "a whole number >= 0", positive=False, maximum=MAX_RANDOM_SEED
    )
    return Scenario(
        name,
        source,
        description.strip(),
        target,
        cast(TransportName, transport),
        tuple(tables.values()),
        workload,
        phases,
        concurrency,
        deadline,
        limits,
        slos,
        bin_s,
        seed,
    )


def _probed(doc: YamlDoc, workload: Workload, phases: tuple[Phase, ...]) -> Workload:
    """The workload a search probes: with `op`, only its writes or only its reads."""
    search = phases[0].search
    if search is None or search.op is None:
        return workload
    kept = tuple(o for o in workload.operations if (o.op in WRITE_OPS) == (search.op == "write"))
    if not kept:
        doc.fail(("phases", 0, "search", "op"), f"expected a workload with {search.op} operations to probe, found none")
    return dataclasses.replace(workload, operations=kept)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file; a missing or unreadable file is a `ScenarioError` too."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(str(path), None, "", "expected a scenario file, found no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(path), None, "", f"expected a readable UTF-8 file, found {e}") from None
    return load_scenario_text(text, str(path))
