"""Building a scenario's model, first phase: its target, its tables and its key specifications.

The noun here is the *built section*: each function turns one checked section of the document into the
`dynlocust.scenario.model` value it describes (`Target`, `Table`, `KeySpec`), with its cross-checks.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlparse

from dynlocust.dynamodb import NEW_TABLE_READ_UNITS, NEW_TABLE_WRITE_UNITS
from dynlocust.scenario.model import (
    FRESH_KEY_OPS,
    Gsi,
    HotSpotKeys,
    KeyAttribute,
    KeySpec,
    KeyType,
    LocalTarget,
    Projection,
    RemoteTarget,
    Seed,
    SequentialKeys,
    ShardedKeys,
    ShardMode,
    Table,
    Target,
    Throughput,
    UniformKeys,
    ZipfKeys,
)
from dynlocust.scenario.spec import (
    BILLING_PROVISIONED,
    DISTRIBUTIONS,
    GSI,
    GSI_KEY_ATTRIBUTE,
    KEY_ATTRIBUTE,
    KEY_TYPES,
    KEYS,
    LOCAL_TARGET,
    MAX_CAPACITY_UNITS,
    MAX_GSIS,
    MAX_KEYSPACE,
    MAX_SEED_ITEMS,
    MAX_SHARDS,
    MAX_TABLE_NAME,
    MAX_ZIPF_KEYSPACE,
    PROJECTION_INCLUDE,
    PROJECTIONS,
    SEED,
    SHARD_MODES,
    TABLE,
    TARGET,
    THROUGHPUT,
)
from dynlocust.scenario.values import (
    NAME_RE,
    REGION_RE,
    check_bool,
    check_choice,
    check_int,
    check_mapping,
    check_number,
    check_ratio,
    check_size,
    check_text,
)
from dynlocust.scenario.yaml_doc import KeyPath, YamlDoc, format_path

#: Operations that only make sense on items that exist: without a seeded keyspace every read would miss.
_NEEDS_KEYSPACE: frozenset[str] = frozenset({"get", "query", "gsi_query", "batch_get"})


def target_of(doc: YamlDoc, v: Any, path: KeyPath) -> Target:
    if v is None or v == "local":
        return LocalTarget()
    if v == "remote":
        return RemoteTarget()
    m = check_mapping(
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
        lm = check_mapping(doc, lm, (*path, "local"), LOCAL_TARGET)
        return LocalTarget(
            capacity_scale=check_number(
                doc, lm.get("capacity_scale", 1.0), (*path, "local", "capacity_scale"), "a positive scale factor"
            ),
            time_scale=check_number(
                doc, lm.get("time_scale", 1.0), (*path, "local", "time_scale"), "a positive scale factor"
            ),
        )
    endpoint = None
    if "endpoint" in m:
        endpoint = check_text(doc, m["endpoint"], (*path, "endpoint"), "an http:// or https:// URL")
        u = urlparse(endpoint)
        if u.scheme not in ("http", "https") or not u.netloc:
            doc.expected((*path, "endpoint"), "an http:// or https:// URL", endpoint)
    region = None
    if "region" in m:
        region = check_text(doc, m["region"], (*path, "region"), "an AWS region such as us-east-1", pattern=REGION_RE)
    profile = check_text(doc, m["profile"], (*path, "profile"), "a profile name") if "profile" in m else None
    return RemoteTarget(endpoint=endpoint, region=region, profile=profile)


def _key_attribute(doc: YamlDoc, v: Any, path: KeyPath) -> KeyAttribute:
    if isinstance(v, str):
        return KeyAttribute(check_text(doc, v, path, "an attribute name"), "S")
    m = check_mapping(doc, v, path, KEY_ATTRIBUTE, what="{name: ..., type: S|N|B}")
    name = check_text(doc, m["name"], (*path, "name"), "an attribute name")
    typ = check_choice(doc, m.get("type", "S"), (*path, "type"), KEY_TYPES)
    return KeyAttribute(name, cast(KeyType, typ))


def _gsi_key_attribute(doc: YamlDoc, v: Any, path: KeyPath) -> KeyAttribute:
    """A GSI's key attribute, with the distribution of the `values` writes give it when one is set."""
    if not isinstance(v, dict):
        return _key_attribute(doc, v, path)
    m = check_mapping(doc, v, path, GSI_KEY_ATTRIBUTE, what="{name: ..., type: S|N|B, values: {distribution: ...}}")
    plain = _key_attribute(doc, {k: x for k, x in m.items() if k != "values"}, path)
    if m.get("values") is None:
        return plain
    vpath = (*path, "values")
    spec = keys_of(doc, m["values"], vpath)
    base = spec.base if isinstance(spec, ShardedKeys) else spec
    if isinstance(base, ZipfKeys | HotSpotKeys):
        kind = "zipf" if isinstance(base, ZipfKeys) else "hot_spot"
        if base.keyspace is None:
            doc.fail(
                vpath,
                f"{kind} values need a keyspace (how many distinct values the attribute takes); expected "
                "values.keyspace, found none",
            )
        _check_hot_keys(doc, base, base.keyspace, vpath)
    return KeyAttribute(plain.name, plain.type, spec)


def _check_hot_keys(doc: YamlDoc, spec: KeySpec, keyspace: int | None, path: KeyPath) -> None:
    if isinstance(spec, HotSpotKeys) and keyspace is not None and round(spec.fraction * keyspace) < 1:
        doc.fail(
            path,
            f"hot_spot fraction {spec.fraction:g} of a {keyspace}-key keyspace selects no key; expected at least "
            "one hot key",
        )


def _throughput(doc: YamlDoc, v: Any, path: KeyPath, unit: str) -> Throughput:
    m = check_mapping(doc, v, path, THROUGHPUT, what=f"{{read: N, write: N}} in {unit}")
    return Throughput(
        read=check_int(
            doc, m["read"], (*path, "read"), f"a positive whole number of {unit}", maximum=MAX_CAPACITY_UNITS
        ),
        write=check_int(
            doc, m["write"], (*path, "write"), f"a positive whole number of {unit}", maximum=MAX_CAPACITY_UNITS
        ),
    )


def _check_warm(doc: YamlDoc, warm: Throughput, provisioned: Throughput | None, path: KeyPath) -> None:
    """What the service refuses at CreateTable, refused here first: a warm throughput below a new on-demand
    table's own (DG warm-throughput scenarios), or below the table's provisioned capacity."""
    floor = provisioned or Throughput(NEW_TABLE_READ_UNITS, NEW_TABLE_WRITE_UNITS)
    what = "the table's provisioned capacity" if provisioned else "a new on-demand table's own warm throughput"
    for key, value, least in (("read", warm.read, floor.read), ("write", warm.write, floor.write)):
        if value < least:
            doc.fail((*path, key), f"expected at least {least:,} {key} units per second ({what}), found {value:,}")


def _projection(doc: YamlDoc, v: Any, path: KeyPath) -> tuple[Projection, tuple[str, ...]]:
    if isinstance(v, dict):
        m = check_mapping(doc, v, path, PROJECTION_INCLUDE, what="all, keys_only or {include: [attributes]}")
        attrs = m["include"]
        if not isinstance(attrs, list) or not attrs:
            doc.expected((*path, "include"), "a non-empty list of attribute names", attrs)
        names = tuple(check_text(doc, a, (*path, "include", i), "an attribute name") for i, a in enumerate(attrs))
        return "include", names
    p = check_choice(doc, v, path, PROJECTIONS)
    return cast(Projection, p), ()


def table_of(doc: YamlDoc, v: Any, path: KeyPath, default_item_size: int) -> Table:
    m = check_mapping(doc, v, path, TABLE)
    name = check_text(
        doc, m["name"], (*path, "name"), "a table name of letters, digits, '_', '-' or '.'", pattern=NAME_RE
    )
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
        bm = check_mapping(
            doc, billing, bpath, BILLING_PROVISIONED, what="on_demand or {provisioned: {read: N, write: N}}"
        )
        provisioned = _throughput(doc, bm["provisioned"], (*bpath, "provisioned"), "capacity units")
    elif billing != "on_demand":
        doc.expected(bpath, "on_demand or {provisioned: {read: N, write: N}}", billing)

    def opt_tp(key: str, unit: str) -> Throughput | None:
        return _throughput(doc, m[key], (*path, key), unit) if m.get(key) is not None else None

    warm = opt_tp("warm_throughput", "units per second")
    if warm is not None:
        _check_warm(doc, warm, provisioned, (*path, "warm_throughput"))
    max_od = opt_tp("max_on_demand", "request units per second")
    if max_od is not None and provisioned is not None:
        doc.fail((*path, "max_on_demand"), "max_on_demand applies to on_demand billing, but the table is provisioned")

    gsis_v = m.get("gsis") or []
    if not isinstance(gsis_v, list):
        doc.expected((*path, "gsis"), "a list of global secondary indexes", gsis_v)
    if len(gsis_v) > MAX_GSIS:
        doc.fail((*path, "gsis"), f"expected at most {MAX_GSIS} global secondary indexes, found {len(gsis_v)}")
    gsis: list[Gsi] = []
    valued: dict[str, KeyPath] = {}  # attribute -> where its `values` were given
    for i, g in enumerate(gsis_v):
        gp = (*path, "gsis", i)
        gm = check_mapping(doc, g, gp, GSI)
        gname = check_text(doc, gm["name"], (*gp, "name"), "an index name", pattern=NAME_RE)
        if any(x.name == gname for x in gsis):
            doc.fail((*gp, "name"), f"duplicate index name '{gname}'")
        gpk = _gsi_key_attribute(doc, gm["partition_key"], (*gp, "partition_key"))
        gsk = _gsi_key_attribute(doc, gm["sort_key"], (*gp, "sort_key")) if gm.get("sort_key") is not None else None
        for attr, key in ((gpk, "partition_key"), (gsk, "sort_key")):
            if attr is None:
                continue
            if attr.values is not None and attr.name in (pk.name, sk.name if sk else None):
                doc.fail(
                    (*gp, key, "values"),
                    f"attribute '{attr.name}' is part of the table's key, which the workload's keys choose; "
                    "expected values only on an attribute of the index alone",
                )
            if attr.values is not None and attr.name in valued:
                doc.fail(
                    (*gp, key, "values"),
                    f"attribute '{attr.name}' already takes its values from {format_path(valued[attr.name])}; "
                    "expected one distribution per attribute",
                )
            if attr.values is not None:
                valued[attr.name] = (*gp, key, "values")
            if attr.name in types and types[attr.name][0] != attr.type:
                doc.fail(
                    (*gp, key, "type"),
                    f"attribute '{attr.name}' is declared with type {types[attr.name][0]} "
                    f"at {format_path(types[attr.name][1])}; expected the same type, found {attr.type}",
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

    use_existing = check_bool(doc, m.get("use_existing", False), (*path, "use_existing"))
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
        existing = check_text(doc, existing, (*path, "existing_table_name"), "a DynamoDB table name", pattern=NAME_RE)
        if not 3 <= len(existing) <= 255:
            doc.expected((*path, "existing_table_name"), "a table name of 3 to 255 characters", existing)

    seed = None
    if m.get("seed") is not None:
        sp = (*path, "seed")
        sm = check_mapping(doc, m["seed"], sp, SEED)
        ipp = check_int(
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
            items=check_int(
                doc, sm["items"], (*sp, "items"), "a positive whole number of items", maximum=MAX_SEED_ITEMS
            ),
            item_size=check_size(doc, sm.get("item_size", default_item_size), (*sp, "item_size")),
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


def keys_of(doc: YamlDoc, v: Any, path: KeyPath, *, nested: bool = False) -> KeySpec:
    if isinstance(v, str):
        v = {"distribution": v}
    m = check_mapping(
        doc,
        v,
        path,
        KEYS,
        what="a key distribution such as {distribution: zipf, s: 1.1}",
    )
    dist = check_choice(doc, m.get("distribution", "uniform"), (*path, "distribution"), tuple(DISTRIBUTIONS))
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
        return check_int(
            doc, m["keyspace"], (*path, "keyspace"), "a positive whole number of keys", maximum=MAX_KEYSPACE
        )

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
        return ZipfKeys(check_number(doc, m.get("s", 1.1), (*path, "s"), "a positive zipf exponent"), ks)
    if dist == "hot_spot":
        fraction = check_ratio(doc, m.get("fraction", 0.01), (*path, "fraction"), zero_ok=False)
        if fraction >= 1:
            doc.expected((*path, "fraction"), "a fraction of the keyspace below 1", fraction)
        return HotSpotKeys(
            fraction, check_ratio(doc, m.get("traffic", 0.9), (*path, "traffic"), zero_ok=False), keyspace()
        )
    if dist == "sequential":
        return SequentialKeys(
            check_int(
                doc, m.get("start", 0), (*path, "start"), "a whole number >= 0", positive=False, maximum=MAX_KEYSPACE
            ),
            keyspace(),
        )
    if nested:
        doc.fail((*path, "distribution"), "sharded keys cannot be sharded again; pick a base distribution")
    shards = check_int(
        doc, m.get("shards", 4), (*path, "shards"), "a positive whole number of shards", maximum=MAX_SHARDS
    )
    mode = check_choice(doc, m.get("mode", "hash"), (*path, "mode"), SHARD_MODES)
    base = keys_of(doc, m["base"], (*path, "base"), nested=True) if m.get("base") is not None else UniformKeys()
    return ShardedKeys(shards, cast(ShardMode, mode), base)


def _with_keyspace(spec: KeySpec, keyspace: int | None) -> KeySpec:
    if isinstance(spec, ShardedKeys):
        return ShardedKeys(spec.shards, spec.mode, _with_keyspace(spec.base, keyspace))
    if spec.keyspace is not None or keyspace is None:
        return spec
    return type(spec)(**{**spec.__dict__, "keyspace": keyspace})


def _spec_keyspace(spec: KeySpec) -> int | None:
    return _spec_keyspace(spec.base) if isinstance(spec, ShardedKeys) else spec.keyspace


def resolve_keys(doc: YamlDoc, spec: KeySpec, op: str, table: Table, path: KeyPath) -> KeySpec:
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
    _check_hot_keys(doc, base, ks, path)
    return spec
