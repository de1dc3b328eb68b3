"""Building a scenario's model, second phase: its workload, phases, limits and SLOs.

The noun here is the *built section*, as in `build_tables`: operations and their mix, the phases' steps
and ramps, the run's limits and its SLOs, each turned into its `dynlocust.scenario.model` value.
"""

from __future__ import annotations

import math
from typing import Any, cast

from dynlocust.dynamodb import MAX_TRANSACT_BYTES
from dynlocust.scenario.build_search import search_of
from dynlocust.scenario.build_tables import keys_of, resolve_keys
from dynlocust.scenario.model import (
    OP_KINDS,
    KeySpec,
    Limits,
    Operation,
    OpKind,
    Phase,
    Search,
    Slo,
    Step,
    Table,
    Target,
    UniformKeys,
    Workload,
)
from dynlocust.scenario.plan import empty_window, window_number
from dynlocust.scenario.spec import (
    HOLD,
    LIMITS,
    MAX_ITEMS,
    MAX_KEYSPACE,
    MAX_RATE,
    MAX_SEED_ITEMS,
    MAX_WEIGHT,
    MAX_WINDOWS,
    OP_OWN_KEYS,
    OPERATIONS,
    PHASE,
    PHASE_KINDS,
    RAMP,
    SLO,
    SLO_THRESHOLDS,
    STEP,
    WORKLOAD,
)
from dynlocust.scenario.values import (
    check_bool,
    check_choice,
    check_duration,
    check_int,
    check_mapping,
    check_number,
    check_ratio,
    check_size,
    check_text,
    suggest,
)
from dynlocust.scenario.yaml_doc import KeyPath, YamlDoc


def _operation(
    doc: YamlDoc, v: Any, path: KeyPath, tables: dict[str, Table], wl_keys: KeySpec, wl_item_size: int
) -> Operation:
    if not isinstance(v, dict):
        doc.expected(path, "an operation such as {op: put, weight: 1}", v)
    if "op" not in v:
        doc.fail(path, f"missing required key 'op' (one of {', '.join(OP_KINDS)})")
    op = check_choice(doc, v["op"], (*path, "op"), OP_KINDS)
    owners: dict[str, list[str]] = {}
    for kind, ks in OP_OWN_KEYS.items():
        for k in ks:
            owners.setdefault(k, []).append(kind)
    misplaced = {k: f"op '{op}' takes no '{k}' (it applies to: {', '.join(v)})" for k, v in owners.items()}
    if op == "scan":
        misplaced["keys"] = "scan reads the whole table; it takes no keys"
    if op == "gsi_query":
        misplaced["consistent"] = (
            "op 'gsi_query' takes no 'consistent': global secondary indexes do not support strongly consistent reads"
        )
    m = check_mapping(doc, v, path, OPERATIONS[op], misplaced=misplaced)
    weight = check_number(doc, m.get("weight", 1), (*path, "weight"), "a positive weight", maximum=MAX_WEIGHT)
    if "table" in m:
        tname = check_text(doc, m["table"], (*path, "table"), "a table name")
        if tname not in tables:
            doc.fail((*path, "table"), f"table '{tname}' is not declared under tables{suggest(tname, tables)}")
    elif len(tables) == 1:
        tname = next(iter(tables))
    else:
        doc.fail(path, f"missing key 'table': the scenario declares {len(tables)} tables ({', '.join(tables)})")
    table = tables[tname]
    label = check_text(doc, m["label"], (*path, "label"), "a label") if "label" in m else ""

    index = None
    if op == "gsi_query":
        if "index" not in m:
            doc.fail(path, "missing required key 'index' (the GSI to query)")
        index = check_text(doc, m["index"], (*path, "index"), "an index name")
        if not table.gsis:
            doc.fail(
                (*path, "index"), f"gsi_query needs a global secondary index, but table '{tname}' declares no gsis"
            )
        if table.gsi(index) is None:
            doc.fail(
                (*path, "index"),
                f"table '{tname}' has no GSI '{index}'{suggest(index, [g.name for g in table.gsis])}",
            )
    if op == "query" and table.sort_key is None:
        doc.fail(
            (*path, "op"),
            f"query reads a partition in sort-key order, but table '{tname}' has no sort_key; "
            "expected get (or a sort_key on the table)",
        )

    items = 1
    if op in MAX_ITEMS:
        cap = MAX_ITEMS[op]
        items = check_int(
            doc,
            m.get("items", 1 if op == "transact_write" else cap),
            (*path, "items"),
            "a whole number of items per call",
            maximum=cap,
        )
    item_size = check_size(doc, m["item_size"], (*path, "item_size")) if "item_size" in m else None
    if op == "transact_write" and items * (item_size or wl_item_size) > MAX_TRANSACT_BYTES:
        doc.fail(
            (*path, "items"),
            f"a transaction of {items} items of {item_size or wl_item_size:,} bytes exceeds "
            f"the 4 MB limit of TransactWriteItems; expected at most {MAX_TRANSACT_BYTES:,} bytes",
        )
    limit = (
        check_int(doc, m["limit"], (*path, "limit"), "a positive whole number of items", maximum=MAX_SEED_ITEMS)
        if "limit" in m
        else None
    )
    flt = check_text(doc, m["filter"], (*path, "filter"), "a filter expression") if "filter" in m else None
    consistent = check_bool(doc, m.get("consistent", False), (*path, "consistent"))

    keys: KeySpec | None = None
    if op != "scan":
        spec = keys_of(doc, m["keys"], (*path, "keys")) if m.get("keys") is not None else wl_keys
        keys = resolve_keys(doc, spec, op, table, (*path, "keys") if "keys" in m else path)
    return Operation(cast(OpKind, op), weight, tname, label, consistent, index, flt, items, limit, item_size, keys)


def workload_of(doc: YamlDoc, v: Any, path: KeyPath, tables: dict[str, Table], item_size: int) -> Workload:
    m = check_mapping(doc, v, path, WORKLOAD)
    wl_keys = keys_of(doc, m["keys"], (*path, "keys")) if m.get("keys") is not None else UniformKeys()
    ops_v = m["operations"]
    if not isinstance(ops_v, list) or not ops_v:
        doc.expected((*path, "operations"), "a non-empty list of operations", ops_v)
    ops = [_operation(doc, o, (*path, "operations", i), tables, wl_keys, item_size) for i, o in enumerate(ops_v)]
    # Labels name the operation in statistics, so they must be unique; defaults stay readable.
    counts: dict[str, int] = {}
    for o in ops:
        base = o.op if len(tables) == 1 else f"{o.op}:{o.table}"
        counts[base] = counts.get(base, 0) + 1
    seen: dict[str, int] = {}
    out: list[Operation] = []
    for i, o in enumerate(ops):
        label = o.label
        if not label:
            base = o.op if len(tables) == 1 else f"{o.op}:{o.table}"
            label = base if counts[base] == 1 else f"{base}#{i}"
        if label in seen:
            doc.fail(
                (*path, "operations", i, "label"),
                f"duplicate label '{label}' (operation {seen[label]} has it); expected a unique label per operation",
            )
        seen[label] = i
        out.append(
            Operation(
                o.op, o.weight, o.table, label, o.consistent, o.index, o.filter, o.items, o.limit, o.item_size, o.keys
            )
        )
    return Workload(item_size, wl_keys, tuple(out))


def _rate(doc: YamlDoc, v: Any, path: KeyPath) -> float:
    return check_number(doc, v, path, "a positive number of requests/s", maximum=MAX_RATE)


def phases_of(doc: YamlDoc, v: Any, path: KeyPath, target: Target) -> tuple[Phase, ...]:
    if not isinstance(v, list) or not v:
        doc.expected(path, "a non-empty list of phases (ramp, steps, hold or search)", v)
    phases: list[Phase] = []
    names: set[str] = set()
    nwin = 0
    for i, pv in enumerate(v):
        pp = (*path, i)
        if not isinstance(pv, dict):
            doc.expected(pp, "a phase: {ramp: ...}, {steps: [...]}, {hold: ...} or {search: ...}", pv)
        pm = check_mapping(doc, pv, pp, PHASE)
        kinds = [k for k in PHASE_KINDS if k in pm]
        if len(kinds) != 1:
            doc.fail(pp, f"expected exactly one of ramp, steps, hold or search, found {', '.join(kinds) or 'none'}")
        kind = kinds[0]
        name = f"{kind}-{i}"
        if "name" in pm:
            name = check_text(doc, pm["name"], (*pp, "name"), "a phase name")
            if name.isdigit() or name == "all":
                doc.expected((*pp, "name"), "a phase name that is not 'all' or a number", name)
        if name in names:
            doc.fail((*pp, "name"), f"duplicate phase name '{name}'")
        names.add(name)
        kp = (*pp, kind)
        steps: list[Step] = []
        search: Search | None = None
        if kind == "search":
            if len(v) > 1:
                doc.fail(pp, f"a search is a scenario's only phase; found {len(v)} phases")
            search = search_of(doc, pm[kind], kp, target)
            steps = list(search.planned_steps(MAX_RATE))
        elif kind == "ramp":
            rm = check_mapping(doc, pm[kind], kp, RAMP)
            lo = _rate(doc, rm["from"], (*kp, "from"))
            hi = _rate(doc, rm["to"], (*kp, "to"))
            inc = _rate(doc, rm["step"], (*kp, "step"))
            win = check_duration(doc, rm["window"], (*kp, "window"))
            count = math.floor(abs(hi - lo) / inc + 1e-9) + 1
            if count > MAX_WINDOWS:
                doc.fail((*kp, "step"), f"the ramp makes {count:,} windows; expected at most {MAX_WINDOWS:,}")
            sign = 1 if hi >= lo else -1
            rates = [lo + sign * k * inc for k in range(count)]
            if not math.isclose(rates[-1], hi, rel_tol=1e-9):
                rates.append(hi)  # a ramp always ends on `to`, even when `step` does not divide the distance
            steps = [Step(r, win) for r in rates]
        elif kind == "steps":
            sv = pm[kind]
            if not isinstance(sv, list) or not sv:
                doc.expected(kp, "a non-empty list of {rate: N, window: duration}", sv)
            for j, s in enumerate(sv):
                sm = check_mapping(doc, s, (*kp, j), STEP, what="{rate: N, window: duration}")
                steps.append(
                    Step(
                        _rate(doc, sm["rate"], (*kp, j, "rate")), check_duration(doc, sm["window"], (*kp, j, "window"))
                    )
                )
        else:
            hm = check_mapping(doc, pm[kind], kp, HOLD)
            rate = _rate(doc, hm["rate"], (*kp, "rate"))
            dur = check_duration(doc, hm["duration"], (*kp, "duration"))
            win = check_duration(doc, hm["window"], (*kp, "window")) if "window" in hm else dur
            if win > dur:
                doc.fail((*kp, "window"), f"expected a window no longer than the hold ({dur:g} s), found {win:g} s")
            full = math.floor(dur / win + 1e-9)
            if full > MAX_WINDOWS:
                doc.fail((*kp, "window"), f"the hold makes {full:,} windows; expected at most {MAX_WINDOWS:,}")
            steps = [Step(rate, win) for _ in range(full)]
            rest = dur - full * win
            if rest > 1e-9:
                steps.append(Step(rate, rest))
        for j, step in enumerate(steps):
            if (problem := empty_window(window_number(nwin + j), step.rate, step.duration)) is not None:
                key = "window" if kind != "hold" or "window" in pm[kind] else "duration"
                doc.fail((*kp, j, "window") if kind == "steps" else (*kp, key), problem)
        nwin += len(steps)
        if nwin > MAX_WINDOWS:
            doc.fail(pp, f"the phases make more than {MAX_WINDOWS:,} windows")
        phases.append(Phase(name, cast(Any, kind), tuple(steps), search))
    return tuple(phases)


def limits_of(doc: YamlDoc, v: Any, path: KeyPath) -> Limits:
    if v is None:
        return Limits()
    m = check_mapping(doc, v, path, LIMITS)
    return Limits(
        max_requests=check_int(
            doc, m["max_requests"], (*path, "max_requests"), "a positive whole number of requests", maximum=MAX_KEYSPACE
        )
        if m.get("max_requests") is not None
        else None,
        max_cost_dollars=check_number(
            doc, m["max_cost_dollars"], (*path, "max_cost_dollars"), "a positive amount of US dollars"
        )
        if m.get("max_cost_dollars") is not None
        else None,
    )


def slos_of(doc: YamlDoc, v: Any, path: KeyPath, phases: tuple[Phase, ...]) -> tuple[Slo, ...]:
    if v is None:
        return ()
    if not isinstance(v, list):
        doc.expected(path, "a list of SLO rules", v)
    nwin = sum(len(p.steps) for p in phases)
    out: list[Slo] = []
    for i, sv in enumerate(v):
        sp = (*path, i)
        m = check_mapping(doc, sv, sp, SLO)
        window: str | int = "all"
        if "window" in m:
            w = m["window"]
            if isinstance(w, int) and not isinstance(w, bool):
                if not 1 <= w <= nwin:  # people count windows from 1, as every table does; the model keeps the index
                    doc.fail((*sp, "window"), f"expected a window number from 1 to {nwin} (the first is 1), found {w}")
                window = w - 1
            elif isinstance(w, str) and (w == "all" or w in {p.name for p in phases}):
                window = w
            elif isinstance(w, str):
                doc.fail((*sp, "window"), f"no phase named '{w}'{suggest(w, ['all', *(p.name for p in phases)])}")
            else:
                doc.expected((*sp, "window"), "all, a window number (from 1) or a phase name", w)
        kw: dict[str, float | None] = {}
        for k in SLO_THRESHOLDS:
            if m.get(k) is None:
                continue
            if k.endswith("_ms"):
                kw[k] = check_number(doc, m[k], (*sp, k), "a positive number of milliseconds")
            else:
                kw[k] = check_ratio(doc, m[k], (*sp, k), zero_ok=k != "min_achieved_ratio")
        if not kw:
            doc.fail(sp, f"expected at least one threshold ({', '.join(SLO_THRESHOLDS)}), found none")
        for k in ("applies_below_rate", "applies_from_rate"):
            if m.get(k) is not None:
                kw[k] = _rate(doc, m[k], (*sp, k))
        lo, hi = kw.get("applies_from_rate"), kw.get("applies_below_rate")
        if lo is not None and hi is not None and lo >= hi:
            doc.fail((*sp, "applies_below_rate"), f"expected a rate above applies_from_rate ({lo:g}), found {hi:g}")
        out.append(Slo(window=window, **kw))
    return tuple(out)
