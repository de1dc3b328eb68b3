"""YAML text -> ``Scenario``, with errors that name the file, the line, the key path, the expectation and the find.

Every mapping's keys and every bound come from ``dynlocust.scenario.spec`` (which also builds schema.json). The
document is composed once with yaml's node API so every key path maps to the line it was written on; the
plain Python value is then walked section by section. Loading stops at the first problem: one clear paragraph
(``file:line: key.path: expected ..., found ...``) is more useful than a wall of consequences of the first.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn, cast
from urllib.parse import urlparse

import yaml

from dynlocust.scenario.model import (
    FRESH_KEY_OPS,
    MAX_ITEM_SIZE,
    MAX_TRANSACT_BYTES,
    OP_KINDS,
    Gsi,
    HotSpotKeys,
    KeyAttribute,
    KeySpec,
    KeyType,
    Limits,
    LocalTarget,
    Operation,
    OpKind,
    Phase,
    Projection,
    RemoteTarget,
    Scenario,
    ScenarioError,
    Seed,
    SequentialKeys,
    ShardedKeys,
    ShardMode,
    Slo,
    Step,
    Table,
    Target,
    Throughput,
    TransportName,
    UniformKeys,
    Workload,
    ZipfKeys,
)
from dynlocust.scenario.spec import (
    BILLING_PROVISIONED,
    DISTRIBUTIONS,
    DURATION_PART_PATTERN,
    GSI,
    HOLD,
    KEY_ATTRIBUTE,
    KEY_TYPES,
    KEYS,
    LIMITS,
    LOCAL_TARGET,
    MAX_CAPACITY_UNITS,
    MAX_CONCURRENCY,
    MAX_GSIS,
    MAX_ITEMS,
    MAX_KEYSPACE,
    MAX_RANDOM_SEED,
    MAX_RATE,
    MAX_SECONDS,
    MAX_SEED_ITEMS,
    MAX_SHARDS,
    MAX_TABLE_NAME,
    MAX_WEIGHT,
    MAX_WINDOWS,
    MAX_ZIPF_KEYSPACE,
    NAME_PATTERN,
    OP_OWN_KEYS,
    OPERATIONS,
    PHASE,
    PHASE_KINDS,
    PROJECTION_INCLUDE,
    PROJECTIONS,
    RAMP,
    REGION_PATTERN,
    SEED,
    SHARD_MODES,
    SIZE_PATTERN,
    SIZE_UNITS,
    SLO,
    SLO_THRESHOLDS,
    STEP,
    TABLE,
    TARGET,
    THROUGHPUT,
    TOP,
    TRANSPORTS,
    WORKLOAD,
    Section,
)

KeyPath = tuple[str | int, ...]

# Bounds on the document itself (the spec bounds its values): `validate` stays fast and small whatever the file holds.
MAX_DEPTH = 64
"""Levels of nesting in the YAML document (a scenario needs fewer than 10)."""
MAX_NODES = 100_000
"""YAML values in the document once every alias is expanded (an alias bomb expands to billions)."""
MAX_DIGITS = 4300
"""Python's limit on converting text to an int (yaml would fail with a bare ValueError past it)."""
MAX_TEXT = 1024 * 1024
"""Characters in a scenario file (the shipped ones are under 3 KB; yaml reads about a megabyte a second)."""

_NAME_RE = re.compile(NAME_PATTERN)
_REGION_RE = re.compile(REGION_PATTERN)
_SIZE_RE = re.compile(SIZE_PATTERN)
_DURATION_PART_RE = re.compile(DURATION_PART_PATTERN)
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
#: Operations that only make sense on items that exist: without a seeded keyspace every read would miss.
_NEEDS_KEYSPACE: frozenset[str] = frozenset({"get", "query", "gsi_query", "batch_get"})


# --------------------------------------------------------------------------------------------------- plumbing


def _fmt(path: KeyPath) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _show(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return repr(v) if v else "an empty string"
    if isinstance(v, dict):
        return "a mapping" + (f" with keys {', '.join(map(str, list(v)[:5]))}" if v else " (empty)")
    if isinstance(v, list):
        return f"a list of {len(v)}" if v else "an empty list"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v) if not isinstance(v, int | float) else str(v)


def _suggest(word: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if near:
        return f"; did you mean '{near[0]}'?"
    return f"; expected one of: {', '.join(choices)}"


class _Doc:
    """The source name and the line of every key path, to turn a path into ``file:line: path``."""

    def __init__(self, source: str, lines: dict[KeyPath, int]) -> None:
        self.source = source
        self.lines = lines

    def line(self, path: KeyPath) -> int | None:
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]

    def fail(self, path: KeyPath, message: str, *, at: KeyPath | None = None) -> NoReturn:
        raise ScenarioError(self.source, self.line(path if at is None else at), _fmt(path), message)

    def expected(self, path: KeyPath, what: str, found: Any) -> NoReturn:
        self.fail(path, f"expected {what}, found {_show(found)}")


def _index(doc: _Doc, node: yaml.Node, path: KeyPath, depth: int = 0, seen: set[int] | None = None) -> None:
    """Record the line of every key path. A node reached again through an alias is not walked again: paths
    below it take the line of the alias (walking each alias would be exponential in a document of aliases)."""
    doc.lines.setdefault(path, node.start_mark.line + 1)
    seen = set() if seen is None else seen
    if depth > MAX_DEPTH or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        keys: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                doc.lines[(*path, "?")] = key_node.start_mark.line + 1
                doc.fail(path, "expected plain keys, found a list or mapping used as a key", at=(*path, "?"))
            key = key_node.value
            if key == "<<":
                continue
            line = key_node.start_mark.line + 1
            if key in keys:
                doc.lines[(*path, key, "#dup")] = line
                doc.fail(
                    (*path, key),
                    f"duplicate key '{key}' (first written on line {keys[key]})",
                    at=(*path, key, "#dup"),
                )
            keys[key] = line
            doc.lines[(*path, key)] = line
            _index(doc, value_node, (*path, key), depth + 1, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(doc, item, (*path, i), depth + 1, seen)


def _check_bounds(text: str, source: str) -> None:
    """Refuse, from the parser's events alone (no recursion, no values built), a document nested deeper than
    `MAX_DEPTH` or holding more than `MAX_NODES` values once its aliases are expanded."""
    loader = yaml.SafeLoader(text)
    expanded = 0
    sizes: dict[str, int] = {}  # anchor -> values it stands for
    open_at: list[tuple[str | None, int]] = []  # collections being read: anchor, `expanded` at their start
    try:
        while (event := loader.get_event()) is not None and not isinstance(event, yaml.StreamEndEvent):
            line = event.start_mark.line + 1
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_at) >= MAX_DEPTH:
                    raise ScenarioError(source, line, "", f"expected at most {MAX_DEPTH} levels of nesting, found more")
                open_at.append((event.anchor, expanded))
                expanded += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, start = open_at.pop()
                if anchor is not None:
                    sizes[anchor] = expanded - start
            elif isinstance(event, yaml.ScalarEvent):
                if event.style is None and len(event.value) > MAX_DIGITS and event.value.lstrip("+-").isdigit():
                    raise ScenarioError(
                        source, line, "", f"expected a number of at most {MAX_DIGITS} digits, found {len(event.value)}"
                    )
                expanded += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                expanded += sizes.get(event.anchor or "", 1)
            if expanded > MAX_NODES:
                raise ScenarioError(
                    source,
                    line,
                    "",
                    f"expected at most {MAX_NODES:,} values once aliases are expanded, found more (aliases "
                    "that repeat aliases grow exponentially)",
                )
    finally:
        loader.dispose()


def _parse(text: str, source: str) -> tuple[Any, _Doc]:
    doc = _Doc(source, {})
    loader = yaml.SafeLoader(text)
    try:
        _check_bounds(text, source)
        node = loader.get_single_node()
        if node is None:
            doc.fail((), "expected a mapping with name, tables, workload and phases, found an empty document")
        _index(doc, node, ())
        data = loader.construct_document(node)
    except yaml.constructor.ConstructorError as e:
        line = e.problem_mark.line + 1 if e.problem_mark is not None else None
        raise ScenarioError(source, line, "", f"unsupported YAML: {e.problem}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        col = f", column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (e.context, e.problem) if x) or "unreadable YAML"
        raise ScenarioError(source, line, "", f"YAML syntax error{col}: {what}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(source, None, "", f"YAML syntax error: {e}") from None
    except ValueError as e:  # int() of a number with more digits than Python converts
        raise ScenarioError(source, None, "", f"expected a number of at most {MAX_DIGITS} digits, found {e}") from None
    finally:
        loader.dispose()
    return data, doc


# --------------------------------------------------------------------------------------------------- values


def _mapping(
    doc: _Doc,
    v: Any,
    path: KeyPath,
    section: Section,
    *,
    what: str = "a mapping",
    misplaced: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``v`` as a mapping of the ``section``'s keys (from the spec), with all its required ones."""
    if not isinstance(v, dict):
        doc.expected(path, what, v)
    allowed, required = section.keys, section.required
    for k in v:
        if not isinstance(k, str):
            doc.fail(path, f"expected text keys, found the key {_show(k)}")
        if k not in allowed:
            if misplaced and k in misplaced:
                doc.fail(path, misplaced[k], at=(*path, k))
            doc.fail(path, f"unknown key '{k}'{_suggest(k, allowed)}", at=(*path, k))
    for k in required:
        if k not in v:
            doc.fail(path, f"missing required key '{k}'")
    return v


def _number(
    doc: _Doc,
    v: Any,
    path: KeyPath,
    what: str,
    *,
    integer: bool = False,
    positive: bool = True,
    maximum: float | None = None,
) -> float:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if ok and integer and not float(v).is_integer():
        ok = False
    if ok and (v <= 0 if positive else v < 0):
        ok = False
    if not ok:
        doc.expected(path, what, v)
    if maximum is not None and v > maximum:
        doc.fail(path, f"expected {what} no greater than {_show(maximum)}, found {_show(v)}")
    return float(v)


def _int(doc: _Doc, v: Any, path: KeyPath, what: str, *, positive: bool = True, maximum: int | None = None) -> int:
    return int(_number(doc, v, path, what, integer=True, positive=positive, maximum=maximum))


def _ratio(doc: _Doc, v: Any, path: KeyPath, *, zero_ok: bool = True) -> float:
    what = "a ratio between 0 and 1" if zero_ok else "a ratio above 0 and at most 1"
    ok = isinstance(v, int | float) and not isinstance(v, bool) and (0 <= v <= 1 if zero_ok else 0 < v <= 1)
    if not ok:
        doc.expected(path, what, v)
    return float(v)


def _text(doc: _Doc, v: Any, path: KeyPath, what: str = "text", *, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(v, str) or not v.strip() or (pattern is not None and not pattern.match(v)):
        doc.expected(path, what, v)
    return v


def _bool(doc: _Doc, v: Any, path: KeyPath) -> bool:
    if not isinstance(v, bool):
        doc.expected(path, "true or false", v)
    return v


def _choice(doc: _Doc, v: Any, path: KeyPath, choices: Collection[str]) -> str:
    if not isinstance(v, str):
        doc.expected(path, "one of " + ", ".join(choices), v)
    if v not in choices:
        doc.fail(path, f"unknown value '{v}'{_suggest(v, choices)}")
    return v


def parse_duration(v: Any) -> float | None:
    """Seconds from ``15``, ``"15s"``, ``"2m"``, ``"1h"``, ``"250ms"`` or ``"1m30s"``; ``None`` if unreadable."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if not isinstance(v, str):
        return None
    s = v.strip().lower()
    total, pos = 0.0, 0
    for m in _DURATION_PART_RE.finditer(s):
        if s[pos : m.start()].strip():
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos == 0 or s[pos:].strip():
        try:
            return float(s) if pos == 0 else None
        except ValueError:
            return None
    return total


def _duration(doc: _Doc, v: Any, path: KeyPath) -> float:
    d = parse_duration(v)
    if d is None or not math.isfinite(d) or d <= 0:
        doc.expected(path, "a positive duration such as 15s, 2m, 1h, 250ms or a number of seconds", v)
    if d > MAX_SECONDS:
        doc.fail(path, f"expected a duration of at most 7 days ({MAX_SECONDS:,} s), found {d:,.0f} s")
    return d


def _size(doc: _Doc, v: Any, path: KeyPath, *, maximum: int = MAX_ITEM_SIZE) -> int:
    n: float | None = None
    if isinstance(v, int | float) and not isinstance(v, bool):
        n = float(v)
    elif isinstance(v, str) and (m := _SIZE_RE.match(v)):
        n = float(m.group(1)) * SIZE_UNITS[m.group(2).lower() if m.group(2) else None]
    if n is None or not math.isfinite(n) or n < 1:
        doc.expected(path, "a positive size in bytes (e.g. 1024 or 1KB)", v)
    if n > maximum:
        doc.fail(
            path,
            f"expected a size of at most {maximum:,} bytes (DynamoDB's 400 KB item limit), found {int(n):,}",
        )
    return int(n)


# --------------------------------------------------------------------------------------------------- sections


def _target(doc: _Doc, v: Any, path: KeyPath) -> Target:
    if v is None or v == "local":
        return LocalTarget()
    if v == "remote":
        return RemoteTarget()
    m = _mapping(
        doc,
        v,
        path,
        TARGET,
        what="'local', 'remote' or a mapping with local: {...} or endpoint/region/profile",
    )
    if "local" in m:
        others = [k for k in m if k != "local"]
        if others:
            doc.fail((*path, others[0]), f"a local target takes no '{others[0]}'; remove it or remove 'local'")
        lm = m["local"]
        if lm is None:
            return LocalTarget()
        lm = _mapping(doc, lm, (*path, "local"), LOCAL_TARGET)
        return LocalTarget(
            capacity_scale=_number(
                doc, lm.get("capacity_scale", 1.0), (*path, "local", "capacity_scale"), "a positive scale factor"
            ),
            time_scale=_number(
                doc, lm.get("time_scale", 1.0), (*path, "local", "time_scale"), "a positive scale factor"
            ),
        )
    endpoint = None
    if "endpoint" in m:
        endpoint = _text(doc, m["endpoint"], (*path, "endpoint"), "an http:// or https:// URL")
        u = urlparse(endpoint)
        if u.scheme not in ("http", "https") or not u.netloc:
            doc.expected((*path, "endpoint"), "an http:// or https:// URL", endpoint)
    region = None
    if "region" in m:
        region = _text(doc, m["region"], (*path, "region"), "an AWS region such as us-east-1", pattern=_REGION_RE)
    profile = _text(doc, m["profile"], (*path, "profile"), "a profile name") if "profile" in m else None
    return RemoteTarget(endpoint=endpoint, region=region, profile=profile)


def _key_attribute(doc: _Doc, v: Any, path: KeyPath) -> KeyAttribute:
    if isinstance(v, str):
        return KeyAttribute(_text(doc, v, path, "an attribute name"), "S")
    m = _mapping(doc, v, path, KEY_ATTRIBUTE, what="{name: ..., type: S|N|B}")
    name = _text(doc, m["name"], (*path, "name"), "an attribute name")
    typ = _choice(doc, m.get("type", "S"), (*path, "type"), KEY_TYPES)
    return KeyAttribute(name, cast(KeyType, typ))


def _throughput(doc: _Doc, v: Any, path: KeyPath, unit: str) -> Throughput:
    m = _mapping(doc, v, path, THROUGHPUT, what=f"{{read: N, write: N}} in {unit}")
    return Throughput(
        read=_int(doc, m["read"], (*path, "read"), f"a positive whole number of {unit}", maximum=MAX_CAPACITY_UNITS),
        write=_int(doc, m["write"], (*path, "write"), f"a positive whole number of {unit}", maximum=MAX_CAPACITY_UNITS),
    )


def _projection(doc: _Doc, v: Any, path: KeyPath) -> tuple[Projection, tuple[str, ...]]:
    if isinstance(v, dict):
        m = _mapping(doc, v, path, PROJECTION_INCLUDE, what="all, keys_only or {include: [attributes]}")
        attrs = m["include"]
        if not isinstance(attrs, list) or not attrs:
            doc.expected((*path, "include"), "a non-empty list of attribute names", attrs)
        names = tuple(_text(doc, a, (*path, "include", i), "an attribute name") for i, a in enumerate(attrs))
        return "include", names
    p = _choice(doc, v, path, PROJECTIONS)
    return cast(Projection, p), ()


def _table(doc: _Doc, v: Any, path: KeyPath, default_item_size: int) -> Table:
    m = _mapping(doc, v, path, TABLE)
    name = _text(doc, m["name"], (*path, "name"), "a table name of letters, digits, '_', '-' or '.'", pattern=_NAME_RE)
    if len(name) > MAX_TABLE_NAME:
        doc.fail((*path, "name"), f"expected a name of at most {MAX_TABLE_NAME} characters, found {len(name)}")
    pk = _key_attribute(doc, m["partition_key"], (*path, "partition_key"))
    sk = _key_attribute(doc, m["sort_key"], (*path, "sort_key")) if m.get("sort_key") is not None else None
    if sk is not None and sk.name == pk.name:
        doc.fail((*path, "sort_key", "name"), f"expected a sort key other than the partition key '{pk.name}'")
    types: dict[str, tuple[str, KeyPath]] = {pk.name: (pk.type, (*path, "partition_key"))}
    if sk is not None:
        types[sk.name] = (sk.type, (*path, "sort_key"))

    billing = m.get("billing", "on_demand")
    bpath = (*path, "billing")
    provisioned: Throughput | None = None
    if isinstance(billing, dict):
        bm = _mapping(doc, billing, bpath, BILLING_PROVISIONED, what="on_demand or {provisioned: {read: N, write: N}}")
        provisioned = _throughput(doc, bm["provisioned"], (*bpath, "provisioned"), "capacity units")
    elif billing != "on_demand":
        doc.expected(bpath, "on_demand or {provisioned: {read: N, write: N}}", billing)

    def opt_tp(key: str, unit: str) -> Throughput | None:
        return _throughput(doc, m[key], (*path, key), unit) if m.get(key) is not None else None

    warm = opt_tp("warm_throughput", "units per second")
    max_od = opt_tp("max_on_demand", "request units per second")
    if max_od is not None and provisioned is not None:
        doc.fail((*path, "max_on_demand"), "max_on_demand applies to on_demand billing, but the table is provisioned")

    gsis_v = m.get("gsis") or []
    if not isinstance(gsis_v, list):
        doc.expected((*path, "gsis"), "a list of global secondary indexes", gsis_v)
    if len(gsis_v) > MAX_GSIS:
        doc.fail((*path, "gsis"), f"expected at most {MAX_GSIS} global secondary indexes, found {len(gsis_v)}")
    gsis: list[Gsi] = []
    for i, g in enumerate(gsis_v):
        gp = (*path, "gsis", i)
        gm = _mapping(doc, g, gp, GSI)
        gname = _text(doc, gm["name"], (*gp, "name"), "an index name", pattern=_NAME_RE)
        if any(x.name == gname for x in gsis):
            doc.fail((*gp, "name"), f"duplicate index name '{gname}'")
        gpk = _key_attribute(doc, gm["partition_key"], (*gp, "partition_key"))
        gsk = _key_attribute(doc, gm["sort_key"], (*gp, "sort_key")) if gm.get("sort_key") is not None else None
        for attr, key in ((gpk, "partition_key"), (gsk, "sort_key")):
            if attr is None:
                continue
            if attr.name in types and types[attr.name][0] != attr.type:
                doc.fail(
                    (*gp, key, "type"),
                    f"attribute '{attr.name}' is declared with type {types[attr.name][0]} "
                    f"at {_fmt(types[attr.name][1])}; expected the same type, found {attr.type}",
                )
            types[attr.name] = (attr.type, (*gp, key))
        proj, nka = _projection(doc, gm.get("projection", "all"), (*gp, "projection"))
        gprov = None
        if gm.get("provisioned") is not None:
            if provisioned is None:
                doc.fail((*gp, "provisioned"), "an on_demand table's index takes no provisioned capacity")
            gprov = _throughput(doc, gm["provisioned"], (*gp, "provisioned"), "capacity units")
        elif provisioned is not None:
            gprov = provisioned
        gmax = None
        if gm.get("max_on_demand") is not None:
            if provisioned is not None:
                doc.fail(
                    (*gp, "max_on_demand"), "max_on_demand applies to on_demand billing, but the table is provisioned"
                )
            gmax = _throughput(doc, gm["max_on_demand"], (*gp, "max_on_demand"), "request units per second")
        gsis.append(Gsi(gname, gpk, gsk, proj, nka, gprov, gmax))

    use_existing = _bool(doc, m.get("use_existing", False), (*path, "use_existing"))
    existing = m.get("existing_table_name")
    if use_existing and existing is None:
        doc.fail(
            (*path, "use_existing"),
            "use_existing: true writes into a table the run did not create; name it "
            "explicitly with existing_table_name",
        )
    if existing is not None:
        if not use_existing:
            doc.fail(
                (*path, "existing_table_name"),
                "existing_table_name needs use_existing: true (an explicit "
                "acknowledgement that the run writes to that table)",
            )
        existing = _text(doc, existing, (*path, "existing_table_name"), "a DynamoDB table name", pattern=_NAME_RE)
        if not 3 <= len(existing) <= 255:
            doc.expected((*path, "existing_table_name"), "a table name of 3 to 255 characters", existing)

    seed = None
    if m.get("seed") is not None:
        sp = (*path, "seed")
        sm = _mapping(doc, m["seed"], sp, SEED)
        ipp = _int(
            doc,
            sm.get("items_per_partition", 1),
            (*sp, "items_per_partition"),
            "a positive whole number",
            maximum=MAX_SEED_ITEMS,
        )
        if ipp > 1 and sk is None:
            doc.fail(
                (*sp, "items_per_partition"),
                f"several items per partition need a sort_key, but table '{name}' has none",
            )
        seed = Seed(
            items=_int(doc, sm["items"], (*sp, "items"), "a positive whole number of items", maximum=MAX_SEED_ITEMS),
            item_size=_size(doc, sm.get("item_size", default_item_size), (*sp, "item_size")),
            items_per_partition=ipp,
        )
    return Table(
        name,
        pk,
        sk,
        "provisioned" if provisioned else "on_demand",
        provisioned,
        warm,
        max_od,
        tuple(gsis),
        use_existing,
        existing,
        seed,
    )


def _keys(doc: _Doc, v: Any, path: KeyPath, *, nested: bool = False) -> KeySpec:
    if isinstance(v, str):
        v = {"distribution": v}
    m = _mapping(
        doc,
        v,
        path,
        KEYS,
        what="a key distribution such as {distribution: zipf, s: 1.1}",
    )
    dist = _choice(doc, m.get("distribution", "uniform"), (*path, "distribution"), tuple(DISTRIBUTIONS))
    allowed = DISTRIBUTIONS[dist].keys
    for k in m:
        if k != "distribution" and k not in allowed:
            owners = [d for d, sec in DISTRIBUTIONS.items() if k in sec.keys]
            doc.fail(
                path,
                f"key '{k}' does not apply to distribution '{dist}' (it applies to: {', '.join(owners)})",
                at=(*path, k),
            )

    def keyspace() -> int | None:
        if m.get("keyspace") is None:
            return None
        return _int(doc, m["keyspace"], (*path, "keyspace"), "a positive whole number of keys", maximum=MAX_KEYSPACE)

    if dist == "uniform":
        return UniformKeys(keyspace())
    if dist == "zipf":
        ks = keyspace()
        if ks is not None and ks > MAX_ZIPF_KEYSPACE:
            doc.fail(
                (*path, "keyspace"),
                f"expected a zipf keyspace of at most {MAX_ZIPF_KEYSPACE:,} keys (its "
                f"table is kept in memory), found {ks:,}",
            )
        return ZipfKeys(_number(doc, m.get("s", 1.1), (*path, "s"), "a positive zipf exponent"), ks)
    if dist == "hot_spot":
        fraction = _ratio(doc, m.get("fraction", 0.01), (*path, "fraction"), zero_ok=False)
        if fraction >= 1:
            doc.expected((*path, "fraction"), "a fraction of the keyspace below 1", fraction)
        return HotSpotKeys(fraction, _ratio(doc, m.get("traffic", 0.9), (*path, "traffic"), zero_ok=False), keyspace())
    if dist == "sequential":
        return SequentialKeys(
            _int(doc, m.get("start", 0), (*path, "start"), "a whole number >= 0", positive=False, maximum=MAX_KEYSPACE),
            keyspace(),
        )
    if nested:
        doc.fail((*path, "distribution"), "sharded keys cannot be sharded again; pick a base distribution")
    shards = _int(doc, m.get("shards", 4), (*path, "shards"), "a positive whole number of shards", maximum=MAX_SHARDS)
    mode = _choice(doc, m.get("mode", "hash"), (*path, "mode"), SHARD_MODES)
    base = _keys(doc, m["base"], (*path, "base"), nested=True) if m.get("base") is not None else UniformKeys()
    return ShardedKeys(shards, cast(ShardMode, mode), base)


def _with_keyspace(spec: KeySpec, keyspace: int | None) -> KeySpec:
    if isinstance(spec, ShardedKeys):
        return ShardedKeys(spec.shards, spec.mode, _with_keyspace(spec.base, keyspace))
    if spec.keyspace is not None or keyspace is None:
        return spec
    return type(spec)(**{**spec.__dict__, "keyspace": keyspace})


def _spec_keyspace(spec: KeySpec) -> int | None:
    return _spec_keyspace(spec.base) if isinstance(spec, ShardedKeys) else spec.keyspace


def _resolve_keys(doc: _Doc, spec: KeySpec, op: str, table: Table, path: KeyPath) -> KeySpec:
    """Fill in the keyspace from the table's seed: reads address the seeded keys, and so do skewed writes
    (zipf, hot spot); uniform and sequential writes keep producing fresh keys."""
    base = spec.base if isinstance(spec, ShardedKeys) else spec
    skewed = isinstance(base, ZipfKeys | HotSpotKeys)
    if op not in FRESH_KEY_OPS or skewed:
        spec = _with_keyspace(spec, table.keyspace)
    ks = _spec_keyspace(spec)
    if ks is None and (skewed or op in _NEEDS_KEYSPACE):
        kind = {ZipfKeys: "zipf", HotSpotKeys: "hot_spot", UniformKeys: "uniform", SequentialKeys: "sequential"}
        doc.fail(
            path,
            f"'{op}' on table '{table.name}' with {kind[type(base)]} keys needs a keyspace; expected keys.keyspace "
            "or a seed on the table, found neither",
        )
    if isinstance(base, HotSpotKeys) and ks is not None and round(base.fraction * ks) < 1:
        doc.fail(
            path,
            f"hot_spot fraction {base.fraction:g} of a {ks}-key keyspace selects no key; expected at least one hot key",
        )
    return spec


def _operation(
    doc: _Doc, v: Any, path: KeyPath, tables: dict[str, Table], wl_keys: KeySpec, wl_item_size: int
) -> Operation:
    if not isinstance(v, dict):
        doc.expected(path, "an operation such as {op: put, weight: 1}", v)
    if "op" not in v:
        doc.fail(path, f"missing required key 'op' (one of {', '.join(OP_KINDS)})")
    op = _choice(doc, v["op"], (*path, "op"), OP_KINDS)
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
    m = _mapping(doc, v, path, OPERATIONS[op], misplaced=misplaced)
    weight = _number(doc, m.get("weight", 1), (*path, "weight"), "a positive weight", maximum=MAX_WEIGHT)
    if "table" in m:
        tname = _text(doc, m["table"], (*path, "table"), "a table name")
        if tname not in tables:
            doc.fail((*path, "table"), f"table '{tname}' is not declared under tables{_suggest(tname, tables)}")
    elif len(tables) == 1:
        tname = next(iter(tables))
    else:
        doc.fail(path, f"missing key 'table': the scenario declares {len(tables)} tables ({', '.join(tables)})")
    table = tables[tname]
    label = _text(doc, m["label"], (*path, "label"), "a label") if "label" in m else ""

    index = None
    if op == "gsi_query":
        if "index" not in m:
            doc.fail(path, "missing required key 'index' (the GSI to query)")
        index = _text(doc, m["index"], (*path, "index"), "an index name")
        if not table.gsis:
            doc.fail(
                (*path, "index"), f"gsi_query needs a global secondary index, but table '{tname}' declares no gsis"
            )
        if table.gsi(index) is None:
            doc.fail(
                (*path, "index"),
                f"table '{tname}' has no GSI '{index}'{_suggest(index, [g.name for g in table.gsis])}",
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
        items = _int(
            doc,
            m.get("items", 1 if op == "transact_write" else cap),
            (*path, "items"),
            "a whole number of items per call",
            maximum=cap,
        )
    item_size = _size(doc, m["item_size"], (*path, "item_size")) if "item_size" in m else None
    if op == "transact_write" and items * (item_size or wl_item_size) > MAX_TRANSACT_BYTES:
        doc.fail(
            (*path, "items"),
            f"a transaction of {items} items of {item_size or wl_item_size:,} bytes exceeds "
            f"the 4 MB limit of TransactWriteItems; expected at most {MAX_TRANSACT_BYTES:,} bytes",
        )
    limit = (
        _int(doc, m["limit"], (*path, "limit"), "a positive whole number of items", maximum=MAX_SEED_ITEMS)
        if "limit" in m
        else None
    )
    flt = _text(doc, m["filter"], (*path, "filter"), "a filter expression") if "filter" in m else None
    consistent = _bool(doc, m.get("consistent", False), (*path, "consistent"))

    keys: KeySpec | None = None
    if op != "scan":
        spec = _keys(doc, m["keys"], (*path, "keys")) if m.get("keys") is not None else wl_keys
        keys = _resolve_keys(doc, spec, op, table, (*path, "keys") if "keys" in m else path)
    return Operation(cast(OpKind, op), weight, tname, label, consistent, index, flt, items, limit, item_size, keys)


def _workload(doc: _Doc, v: Any, path: KeyPath, tables: dict[str, Table], item_size: int) -> Workload:
    m = _mapping(doc, v, path, WORKLOAD)
    wl_keys = _keys(doc, m["keys"], (*path, "keys")) if m.get("keys") is not None else UniformKeys()
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


def _rate(doc: _Doc, v: Any, path: KeyPath) -> float:
    return _number(doc, v, path, "a positive number of requests/s", maximum=MAX_RATE)


def _phases(doc: _Doc, v: Any, path: KeyPath) -> tuple[Phase, ...]:
    if not isinstance(v, list) or not v:
        doc.expected(path, "a non-empty list of phases (ramp, steps or hold)", v)
    phases: list[Phase] = []
    names: set[str] = set()
    nwin = 0
    for i, pv in enumerate(v):
        pp = (*path, i)
        if not isinstance(pv, dict):
            doc.expected(pp, "a phase: {ramp: ...}, {steps: [...]} or {hold: ...}", pv)
        pm = _mapping(doc, pv, pp, PHASE)
        kinds = [k for k in PHASE_KINDS if k in pm]
        if len(kinds) != 1:
            doc.fail(pp, f"expected exactly one of ramp, steps or hold, found {', '.join(kinds) or 'none'}")
        kind = kinds[0]
        name = f"{kind}-{i}"
        if "name" in pm:
            name = _text(doc, pm["name"], (*pp, "name"), "a phase name")
            if name.isdigit() or name == "all":
                doc.expected((*pp, "name"), "a phase name that is not 'all' or a number", name)
        if name in names:
            doc.fail((*pp, "name"), f"duplicate phase name '{name}'")
        names.add(name)
        kp = (*pp, kind)
        steps: list[Step] = []
        if kind == "ramp":
            rm = _mapping(doc, pm[kind], kp, RAMP)
            lo = _rate(doc, rm["from"], (*kp, "from"))
            hi = _rate(doc, rm["to"], (*kp, "to"))
            inc = _rate(doc, rm["step"], (*kp, "step"))
            win = _duration(doc, rm["window"], (*kp, "window"))
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
                sm = _mapping(doc, s, (*kp, j), STEP, what="{rate: N, window: duration}")
                steps.append(
                    Step(_rate(doc, sm["rate"], (*kp, j, "rate")), _duration(doc, sm["window"], (*kp, j, "window")))
                )
        else:
            hm = _mapping(doc, pm[kind], kp, HOLD)
            rate = _rate(doc, hm["rate"], (*kp, "rate"))
            dur = _duration(doc, hm["duration"], (*kp, "duration"))
            win = _duration(doc, hm["window"], (*kp, "window")) if "window" in hm else dur
            if win > dur:
                doc.fail((*kp, "window"), f"expected a window no longer than the hold ({dur:g} s), found {win:g} s")
            full = math.floor(dur / win + 1e-9)
            if full > MAX_WINDOWS:
                doc.fail((*kp, "window"), f"the hold makes {full:,} windows; expected at most {MAX_WINDOWS:,}")
            steps = [Step(rate, win) for _ in range(full)]
            rest = dur - full * win
            if rest > 1e-9:
                steps.append(Step(rate, rest))
        nwin += len(steps)
        if nwin > MAX_WINDOWS:
            doc.fail(pp, f"the phases make more than {MAX_WINDOWS:,} windows")
        phases.append(Phase(name, cast(Any, kind), tuple(steps)))
    return tuple(phases)


def _limits(doc: _Doc, v: Any, path: KeyPath) -> Limits:
    if v is None:
        return Limits()
    m = _mapping(doc, v, path, LIMITS)
    return Limits(
        max_requests=_int(
            doc, m["max_requests"], (*path, "max_requests"), "a positive whole number of requests", maximum=MAX_KEYSPACE
        )
        if m.get("max_requests") is not None
        else None,
        max_cost_dollars=_number(
            doc, m["max_cost_dollars"], (*path, "max_cost_dollars"), "a positive amount of US dollars"
        )
        if m.get("max_cost_dollars") is not None
        else None,
    )


def _slos(doc: _Doc, v: Any, path: KeyPath, phases: tuple[Phase, ...]) -> tuple[Slo, ...]:
    if v is None:
        return ()
    if not isinstance(v, list):
        doc.expected(path, "a list of SLO rules", v)
    nwin = sum(len(p.steps) for p in phases)
    out: list[Slo] = []
    for i, sv in enumerate(v):
        sp = (*path, i)
        m = _mapping(doc, sv, sp, SLO)
        window: str | int = "all"
        if "window" in m:
            w = m["window"]
            if isinstance(w, int) and not isinstance(w, bool):
                if not 0 <= w < nwin:
                    doc.fail((*sp, "window"), f"expected a window index from 0 to {nwin - 1}, found {w}")
                window = w
            elif isinstance(w, str) and (w == "all" or w in {p.name for p in phases}):
                window = w
            elif isinstance(w, str):
                doc.fail((*sp, "window"), f"no phase named '{w}'{_suggest(w, ['all', *(p.name for p in phases)])}")
            else:
                doc.expected((*sp, "window"), "all, a window index or a phase name", w)
        kw: dict[str, float | None] = {}
        for k in SLO_THRESHOLDS:
            if m.get(k) is None:
                continue
            if k.endswith("_ms"):
                kw[k] = _number(doc, m[k], (*sp, k), "a positive number of milliseconds")
            else:
                kw[k] = _ratio(doc, m[k], (*sp, k), zero_ok=k != "min_achieved_ratio")
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


# --------------------------------------------------------------------------------------------------- public


def load_scenario_text(text: str, source: str = "<scenario>") -> Scenario:
    """Parse and check a scenario; raise ``ScenarioError`` naming ``source``, line and key path on any problem."""
    if len(text) > MAX_TEXT:
        raise ScenarioError(
            source, None, "", f"expected a scenario of at most {MAX_TEXT:,} characters, found {len(text):,}"
        )
    data, doc = _parse(text, source)
    m = _mapping(
        doc,
        data,
        (),
        TOP,
        what="a mapping with name, tables, workload and phases",
    )
    name = _text(doc, m["name"], ("name",), "a scenario name of letters, digits, '_', '-' or '.'", pattern=_NAME_RE)
    description = m.get("description") or ""
    if not isinstance(description, str):
        doc.expected(("description",), "text", description)
    target = _target(doc, m.get("target"), ("target",))
    transport = _choice(doc, m.get("transport", "boto3"), ("transport",), TRANSPORTS)

    wl_v = m["workload"]
    item_size = 1024
    if isinstance(wl_v, dict) and "item_size" in wl_v:
        item_size = _size(doc, wl_v["item_size"], ("workload", "item_size"))
    tables_v = m["tables"]
    if not isinstance(tables_v, list) or not tables_v:
        doc.expected(("tables",), "a non-empty list of tables", tables_v)
    tables: dict[str, Table] = {}
    for i, tv in enumerate(tables_v):
        t = _table(doc, tv, ("tables", i), item_size)
        if t.name in tables:
            doc.fail(("tables", i, "name"), f"duplicate table name '{t.name}'")
        tables[t.name] = t
    workload = _workload(doc, wl_v, ("workload",), tables, item_size)
    phases = _phases(doc, m["phases"], ("phases",))
    concurrency = _int(
        doc,
        m.get("concurrency", 50),
        ("concurrency",),
        "a positive whole number of users per worker",
        maximum=MAX_CONCURRENCY,
    )
    deadline = _duration(doc, m.get("deadline", 8), ("deadline",))
    bin_s = _duration(doc, m.get("bin", 10), ("bin",))
    limits = _limits(doc, m.get("limits"), ("limits",))
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
    if limits.max_requests is not None and limits.max_requests < planned:
        doc.fail(
            ("limits", "max_requests"),
            f"the phases plan {planned:,} requests, so a ceiling of "
            f"{limits.max_requests:,} would abort the run; expected at least {planned:,}",
        )
    slos = _slos(doc, m.get("slos"), ("slos",), phases)
    seed = _int(
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


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file; a missing or unreadable file is a ``ScenarioError`` too."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(str(path), None, "", "expected a scenario file, found no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(path), None, "", f"expected a readable UTF-8 file, found {e}") from None
    return load_scenario_text(text, str(path))
