"""The control plane: CreateTable, UpdateTable, DeleteTable, DescribeTable, ListTables, tags, TTL, limits.

Request rules that need no table live in `validation`; this module builds the tables and indexes, registers
them with the capacity model, and describes them in the service's response shape.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import re
import time
import uuid
from typing import Any

from dynlocust.errors import ConfigurationError
from dynlocust.local import backfill, errors
from dynlocust.local import schema as rules
from dynlocust.local.limits import DEFAULT_WARM, GSI_HASH_ATTRS_MAX
from dynlocust.local.state import Ctx, State
from dynlocust.local.store import Index, KeyDef, Table
from dynlocust.local.validation import check_create_table

_TABLE_NAME = re.compile(r"^[a-zA-Z0-9_.-]{3,255}$")
TAGS_PAGE = 10  # ListTagsOfResource page size, as moto's test_list_table_tags_paginated records it


def _key_schema(schema: Any, defs: dict[str, str], where: str, multi: bool = False) -> KeyDef:
    """A KeyDef from a KeySchema; a GSI (`multi`) may name up to 4 HASH then up to 4 RANGE attributes."""
    most = 2 * GSI_HASH_ATTRS_MAX if multi else 2
    if not isinstance(schema, list) or not 1 <= len(schema) <= most:
        raise errors.validation(f"1 validation error detected: Value at '{where}' failed to satisfy constraint")
    kinds = [el.get("KeyType") for el in schema]
    names = [el.get("AttributeName") for el in schema]
    if kinds[0] != "HASH":
        raise errors.validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
    hashes = [n for n, k in zip(names, kinds, strict=True) if k == "HASH"]
    ranges = [n for n, k in zip(names, kinds, strict=True) if k == "RANGE"]
    if multi:
        rules.multi_attribute_key(kinds, names)
    elif len(schema) == 2 and kinds[1] != "RANGE":
        raise errors.validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
    if len(set(names)) != len(names):
        raise errors.validation("Invalid KeySchema: Some index key attribute have no definition")
    missing = [a for a in hashes + ranges if a not in defs]
    if missing:
        raise errors.validation(
            "One or more parameter values were invalid: Some index key attributes are not defined in "
            f"AttributeDefinitions. Keys: [{', '.join(missing)}], AttributeDefinitions: [{', '.join(defs)}]"
        )
    range_attr = ranges[0] if ranges else None
    return KeyDef(
        hashes[0],
        defs[hashes[0]],
        range_attr,
        defs[range_attr] if range_attr else None,
        more_hash=tuple((a, defs[a]) for a in hashes[1:]),
        more_range=tuple((a, defs[a]) for a in ranges[1:]),
    )


def _throughput(pt: Any, billing: str, what: str) -> dict[str, Any] | None:
    if billing == "PAY_PER_REQUEST":
        if pt:
            raise errors.validation(
                "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits "
                "can be specified when BillingMode is PAY_PER_REQUEST"
            )
        return None
    if not pt or "ReadCapacityUnits" not in pt or "WriteCapacityUnits" not in pt:
        raise errors.validation(
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both "
            f"be specified when BillingMode is PROVISIONED{what}"
        )
    for k in ("ReadCapacityUnits", "WriteCapacityUnits"):
        if not isinstance(pt[k], int) or pt[k] < 1:
            raise errors.validation(
                "One or more parameter values were invalid: Provisioned throughput for "
                f"{k.replace('CapacityUnits', '')} capacity units must be at least 1"
            )
    return {"ReadCapacityUnits": pt["ReadCapacityUnits"], "WriteCapacityUnits": pt["WriteCapacityUnits"]}


def _make_gsi(t: Table, g: dict[str, Any], defs: dict[str, str], billing: str) -> Index:
    name = g.get("IndexName")
    if not isinstance(name, str) or not _TABLE_NAME.match(name):
        raise errors.validation(f"Invalid index name: {name}")
    key = _key_schema(g.get("KeySchema"), defs, "globalSecondaryIndexes.member.keySchema", multi=True)
    ptype, non_key = rules.projection(g.get("Projection"))
    prov = _throughput(g.get("ProvisionedThroughput"), billing, f" for index {name}")
    return Index(
        name=name,
        kind="GSI",
        key=key,
        projection_type=ptype,
        non_key=non_key,
        arn=f"{t.arn}/index/{name}",
        provisioned=prov,
        on_demand=g.get("OnDemandThroughput"),
        warm=g.get("WarmThroughput"),
    )


def _spec(t: Table, idx: Index | None) -> Any:
    from dynlocust.local.capacity_resources import ResourceSpec

    src_prov = idx.provisioned if idx is not None else t.provisioned
    od = (idx.on_demand if idx is not None else t.on_demand) or {}
    warm = (idx.warm if idx is not None else t.warm) or {}

    def num(d: dict[str, Any], k: str) -> float | None:
        v = d.get(k)
        return None if v is None or v == -1 else float(v)

    return ResourceSpec(
        table=t.name,
        index=idx.name if idx is not None else None,
        arn=idx.arn if idx is not None else t.arn,
        billing_mode=t.billing_mode,
        read_capacity=num(src_prov or {}, "ReadCapacityUnits"),
        write_capacity=num(src_prov or {}, "WriteCapacityUnits"),
        warm_read=num(warm, "ReadUnitsPerSecond"),
        warm_write=num(warm, "WriteUnitsPerSecond"),
        max_read=num(od, "MaxReadRequestUnits"),
        max_write=num(od, "MaxWriteRequestUnits"),
    )


def create_table(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    name = req["TableName"]  # present and well-formed: validation.check_constraints
    ctx.tables.append(name)
    defs_list = req.get("AttributeDefinitions") or []
    defs = rules.attribute_definitions(defs_list)
    tags = rules.tags(req.get("Tags"))
    check_create_table(req)
    key = _key_schema(req.get("KeySchema"), defs, "keySchema")
    billing = req.get("BillingMode", "PROVISIONED")
    if billing not in ("PROVISIONED", "PAY_PER_REQUEST"):
        raise errors.validation(f"Unknown BillingMode: {billing}")
    prov = _throughput(req.get("ProvisionedThroughput"), billing, "")
    if name in st.tables:
        raise errors.in_use(f"Table already exists: {name}")
    now = st.clock()
    t = Table(
        name=name,
        arn=st.table_arn(name),
        table_id=str(uuid.uuid4()),
        key=key,
        attribute_definitions=[dict(d) for d in defs_list],
        billing_mode=billing,
        provisioned=prov,
        created=time.time(),
        active_at=now + st.config.create_delay,
        tags=tags,
        on_demand=req.get("OnDemandThroughput"),
        warm=req.get("WarmThroughput"),
        deletion_protection=bool(req.get("DeletionProtectionEnabled", False)),
        table_class=req.get("TableClass"),
        stream_spec=req.get("StreamSpecification"),
        sse=_sse(st, req.get("SSESpecification")),
    )
    _set_stream(t, req.get("StreamSpecification"))
    if billing == "PAY_PER_REQUEST":
        t.pay_per_request_since = t.created
    used = set(key.names())
    for g in req.get("GlobalSecondaryIndexes") or []:
        idx = _make_gsi(t, g, defs, billing)
        if idx.name in t.gsis:
            raise errors.validation(f"One or more parameter values were invalid: Duplicate index name: {idx.name}")
        t.gsis[idx.name] = idx
        used |= set(idx.key.names())
    for li in req.get("LocalSecondaryIndexes") or []:
        lname = li.get("IndexName")
        lkey = _key_schema(li.get("KeySchema"), defs, "localSecondaryIndexes.member.keySchema")
        if key.range_attr is None:
            raise errors.validation(
                "One or more parameter values were invalid: Table KeySchema does not have a range key, "
                "which is required when specifying a LocalSecondaryIndex"
            )
        if lkey.hash_attr != key.hash_attr or lkey.range_attr is None:
            raise errors.validation(
                "One or more parameter values were invalid: Index KeySchema does not have the same leading "
                "hash key as table KeySchema for index: "
                + str(lname)
                + ". index hash key: "
                + lkey.hash_attr
                + ", table hash key: "
                + key.hash_attr
            )
        ptype, non_key = rules.projection(li.get("Projection"))
        t.lsis[lname] = Index(lname, "LSI", lkey, ptype, non_key, f"{t.arn}/index/{lname}")
        used |= set(lkey.names())
    if set(defs) - used:
        raise errors.validation(
            "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly "
            "match number of attributes defined in AttributeDefinitions"
        )
    _check_capacity(st, t, list(t.gsis.values()))
    if st.capacity is not None:
        st.capacity.add_resource(_spec(t, None))
        for idx in t.gsis.values():
            st.capacity.add_resource(_spec(t, idx))
    st.tables[name] = t
    return {"TableDescription": describe(st, t)}


def _sse(st: State, spec: Any) -> dict[str, Any] | None:
    """SSEDescription for an SSESpecification asking for KMS encryption (the default, owned key needs none)."""
    if not isinstance(spec, dict) or not spec.get("Enabled"):
        return None
    default = f"arn:aws:kms:{st.region}:{st.config.account_id}:key/{uuid.uuid4()}"
    key = spec.get("KMSMasterKeyId") or default
    return {"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key}


def _set_stream(t: Table, spec: Any) -> None:
    """A stream enabled now gets a new label (the service labels a stream with its creation time)."""
    if isinstance(spec, dict) and spec.get("StreamEnabled"):
        t.stream_label = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def describe(st: State, t: Table, status: str | None = None) -> dict[str, Any]:
    table_status = status or t.status(st.clock())
    if table_status == "ACTIVE" and any(idx.backfilling for idx in t.gsis.values()):
        table_status = "UPDATING"  # as the service shows a table while it adds an index

    def pt(p: dict[str, Any] | None) -> dict[str, Any]:
        out = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
        if p:
            out.update(p)
        return out

    d: dict[str, Any] = {
        "AttributeDefinitions": t.attribute_definitions,
        "TableName": t.name,
        "KeySchema": _schema(t.key),
        "TableStatus": table_status,
        "CreationDateTime": t.created,
        "ProvisionedThroughput": pt(t.provisioned),
        "TableSizeBytes": t.size_bytes,
        "ItemCount": t.item_count,
        "TableArn": t.arn,
        "TableId": t.table_id,
        "DeletionProtectionEnabled": t.deletion_protection,
    }
    d["BillingModeSummary"] = {"BillingMode": t.billing_mode}
    if t.pay_per_request_since is not None:
        d["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] = t.pay_per_request_since
    if t.sse:
        d["SSEDescription"] = t.sse
    if t.on_demand:
        d["OnDemandThroughput"] = t.on_demand
    warm = t.warm or (DEFAULT_WARM if t.billing_mode == "PAY_PER_REQUEST" else None)
    if warm:
        d["WarmThroughput"] = {**warm, "Status": "ACTIVE" if table_status == "ACTIVE" else "UPDATING"}
    if t.table_class:
        d["TableClassSummary"] = {"TableClass": t.table_class}
    if t.stream_spec and t.stream_spec.get("StreamEnabled"):
        d["StreamSpecification"] = t.stream_spec
    if t.stream_label:
        d["LatestStreamLabel"] = t.stream_label
        d["LatestStreamArn"] = f"{t.arn}/stream/{t.stream_label}"
    if t.gsis:
        gl = []
        for idx in t.gsis.values():
            g = _index_desc(t, idx)
            g["IndexStatus"] = "CREATING" if idx.backfilling or table_status == "CREATING" else "ACTIVE"
            if idx.online:  # "For indexes that were created during a CreateTable operation, the Backfilling
                g["Backfilling"] = idx.backfilling  # attribute does not appear" (GlobalSecondaryIndexDescription)
            g["ProvisionedThroughput"] = pt(idx.provisioned)
            if idx.on_demand:
                g["OnDemandThroughput"] = idx.on_demand
            gw = idx.warm or (DEFAULT_WARM if t.billing_mode == "PAY_PER_REQUEST" else None)
            if gw:
                g["WarmThroughput"] = {**gw, "Status": "ACTIVE"}
            gl.append(g)
        d["GlobalSecondaryIndexes"] = gl
    if t.lsis:
        d["LocalSecondaryIndexes"] = [_index_desc(t, idx) for idx in t.lsis.values()]
    return d


def _schema(k: KeyDef) -> list[dict[str, str]]:
    out = [{"AttributeName": a, "KeyType": "HASH"} for a, _ in k.hash_parts()]
    out += [{"AttributeName": a, "KeyType": "RANGE"} for a, _ in k.range_parts()]
    return out


def _index_desc(t: Table, idx: Index) -> dict[str, Any]:
    proj: dict[str, Any] = {"ProjectionType": idx.projection_type}
    if idx.projection_type == "INCLUDE":
        proj["NonKeyAttributes"] = idx.non_key
    count, size = idx.count, idx.size
    return {
        "IndexName": idx.name,
        "KeySchema": _schema(idx.key),
        "Projection": proj,
        "IndexSizeBytes": size,
        "ItemCount": count,
        "IndexArn": idx.arn,
    }


def describe_table(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    t = st.any_table(req.get("TableName"), ctx)
    return {"Table": describe(st, t)}


#: What DeleteTable's TableDescription leaves out of DescribeTable's: the API reference's and the AWS CLI's DeleteTable
#: examples show neither the key schema, the attribute definitions, the creation time nor any index, and dynalite's
#: tests record the service's answer without GlobalSecondaryIndexes. Members added to TableDescription after those
#: examples were written (TableArn, TableId, BillingModeSummary...) are kept: dynlocust's choice.
DELETE_OMITS = (
    "AttributeDefinitions",
    "KeySchema",
    "CreationDateTime",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
)


def delete_table(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    t = st.any_table(req.get("TableName"), ctx)
    if t.status(st.clock()) != "ACTIVE":
        raise errors.in_use(f"Attempt to change a resource which is still in use: Table is being created: {t.name}")
    if t.deletion_protection:
        raise errors.detected(f"Table '{t.name}' can't be deleted while DeletionProtectionEnabled is set to True")
    del st.tables[t.name]
    st.ttl.pop(t.name, None)
    if st.capacity is not None:
        st.capacity.remove_table(t.name)
    described = describe(st, t, "DELETING")
    for field in DELETE_OMITS:
        described.pop(field, None)
    return {"TableDescription": described}


def update_table(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """Apply an UpdateTable to a staged copy of the table and commit it only once the whole request held: a refused
    UpdateTable leaves the table, its indexes and the capacity model exactly as they were."""
    rules.update_members(req)
    given = rules.attribute_definitions(req.get("AttributeDefinitions"))
    rules.index_updates(req.get("GlobalSecondaryIndexUpdates"))
    billing = req.get("BillingMode")
    if billing is not None and billing not in ("PROVISIONED", "PAY_PER_REQUEST"):
        raise errors.detected(
            f"Value '{billing}' at 'billingMode' failed to satisfy constraint: "
            "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"
        )
    t = st.any_table(req.get("TableName"), ctx)
    if t.status(st.clock()) != "ACTIVE":
        raise errors.in_use(f"Attempt to change a resource which is still in use: Table is being created: {t.name}")
    new = _staged(t)
    changed, created = _apply_update(new, req, given)
    _check_capacity(st, new, [new.gsis[c] for c in changed if c is not None and c in new.gsis] + created)
    for f in dataclasses.fields(t):  # the commit: the same Table object, so every holder of it sees the change
        setattr(t, f.name, getattr(new, f.name))
    if st.capacity is not None:
        for idx in created:
            st.capacity.add_resource(_spec(t, idx))
        for c in changed:
            if c is None:
                st.capacity.update_resource(_spec(t, None))
            elif c in t.gsis:
                st.capacity.update_resource(_spec(t, t.gsis[c]))
    for idx in created:
        backfill.start(st.tables, t, idx, st.background)
    return {"TableDescription": describe(st, t)}


def _staged(t: Table) -> Table:
    """A copy of `t` that an UpdateTable may change freely: its own containers and index objects, the same data."""
    new = copy.copy(t)
    new.attribute_definitions = [dict(d) for d in t.attribute_definitions]
    new.gsis = {name: copy.copy(idx) for name, idx in t.gsis.items()}
    new.tags = dict(t.tags)
    return new


def _apply_update(t: Table, req: dict[str, Any], given: dict[str, str]) -> tuple[set[str | None], list[Index]]:
    """Apply `req` to the staged table `t`; returns what the capacity model must hear: the changed resources
    (None for the table) and the created indexes (not yet filled)."""
    defs = {d["AttributeName"]: d["AttributeType"] for d in t.attribute_definitions}
    rules.redefinitions(
        defs,
        given,
        [_schema(t.key)] + [_schema(i.key) for i in (*t.gsis.values(), *t.lsis.values())],
        [u["Create"].get("KeySchema") or [] for u in req.get("GlobalSecondaryIndexUpdates") or [] if u.get("Create")],
    )
    for name, kind in given.items():
        if name not in defs:
            t.attribute_definitions.append({"AttributeName": name, "AttributeType": kind})
            defs[name] = kind
    billing = req.get("BillingMode", t.billing_mode)
    changed: set[str | None] = set()
    if billing != t.billing_mode or "ProvisionedThroughput" in req:
        t.provisioned = _throughput(req.get("ProvisionedThroughput"), billing, "")
        if billing != t.billing_mode:
            t.billing_mode = billing
            if billing == "PAY_PER_REQUEST":
                t.pay_per_request_since = time.time()
            changed |= {None, *t.gsis}
        changed.add(None)
    if "OnDemandThroughput" in req:
        t.on_demand = {**(t.on_demand or {}), **req["OnDemandThroughput"]}
        changed.add(None)
    if "WarmThroughput" in req:
        t.warm = {**(t.warm or {}), **req["WarmThroughput"]}
        changed.add(None)
    if "DeletionProtectionEnabled" in req:
        t.deletion_protection = bool(req["DeletionProtectionEnabled"])
    if "StreamSpecification" in req:
        t.stream_spec = req["StreamSpecification"]
        _set_stream(t, t.stream_spec)
    if "TableClass" in req:
        t.table_class = req["TableClass"]
    created: list[Index] = []
    for upd in req.get("GlobalSecondaryIndexUpdates") or []:
        if upd.get("Create") is not None:
            idx = _make_gsi(t, upd["Create"], defs, t.billing_mode)
            if idx.name in t.gsis:
                raise errors.validation(f"One or more parameter values were invalid: Index already exists: {idx.name}")
            t.gsis[idx.name] = idx
            created.append(idx)
        elif upd.get("Update") is not None:
            u = upd["Update"]
            idx2 = t.gsis.get(u.get("IndexName"))
            if idx2 is None:
                raise errors.not_found(f"Requested resource not found: Index: {u.get('IndexName')} not found")
            if "ProvisionedThroughput" in u:
                idx2.provisioned = _throughput(u["ProvisionedThroughput"], t.billing_mode, "")
            if "OnDemandThroughput" in u:
                idx2.on_demand = {**(idx2.on_demand or {}), **u["OnDemandThroughput"]}
            if "WarmThroughput" in u:
                idx2.warm = {**(idx2.warm or {}), **u["WarmThroughput"]}
            changed.add(idx2.name)
        else:
            iname = upd["Delete"].get("IndexName")
            if iname not in t.gsis:
                raise errors.not_found(f"Requested resource not found: Index: {iname} not found")
            del t.gsis[iname]
    return changed, created


def _check_capacity(st: State, t: Table, indexes: list[Index]) -> None:
    """Register the table and `indexes` with a scratch capacity model first, so that a specification the model
    refuses is refused before anything changes (the real model then accepts the same specifications)."""
    from dynlocust.local.capacity import CapacityModel

    if not isinstance(st.capacity, CapacityModel):  # none, or a stand-in of a test
        return
    scratch = CapacityModel(capacity_scale=st.capacity.capacity_scale, time_scale=st.capacity.time_scale)
    try:
        scratch.add_resource(_spec(t, None))
        for idx in indexes:
            scratch.add_resource(_spec(t, idx))
    except ConfigurationError as exc:
        raise errors.validation(f"One or more parameter values were invalid: {exc}") from exc


def list_tables(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    limit = req.get("Limit", 100)  # 1 to 100: validation.check_constraints
    names = sorted(st.tables)
    start = req.get("ExclusiveStartTableName")
    if start is not None:
        names = [n for n in names if n > start]
    out: dict[str, Any] = {"TableNames": names[:limit]}
    if len(names) > limit:
        out["LastEvaluatedTableName"] = names[limit - 1]
    return out


def required(req: dict[str, Any], *members: str) -> None:
    """Top-level members the model requires of a resource's operation (Tags, TagKeys, a policy's ResourceArn and
    Policy), each missing one named as dynalite's tests record the service, before the resource is looked up."""
    missing = [m[0].lower() + m[1:] for m in members if req.get(m) is None]
    if missing:
        raise errors.detected(
            *(f"Value null at '{m}' failed to satisfy constraint: Member must not be null" for m in missing)
        )


def tag_resource(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    required(req, "Tags")
    given = rules.tags(req.get("Tags"))  # all checked before any is set
    t = st.by_arn(req.get("ResourceArn"), ctx)
    t.tags.update(given)
    return {}


def untag_resource(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    required(req, "TagKeys")
    t = st.by_arn(req.get("ResourceArn"), ctx)
    for k in req.get("TagKeys") or []:
        t.tags.pop(k, None)
    return {}


def list_tags(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """Tags in pages of TAGS_PAGE; NextToken is the position of the next page (opaque to clients)."""
    t = st.by_arn(req.get("ResourceArn"), ctx)
    token = req.get("NextToken")
    start = int(token) if isinstance(token, str) and token.isdigit() else 0
    tags = list(t.tags.items())
    out: dict[str, Any] = {"Tags": [{"Key": k, "Value": v} for k, v in tags[start : start + TAGS_PAGE]]}
    if start + TAGS_PAGE < len(tags):
        out["NextToken"] = str(start + TAGS_PAGE)
    return out


def describe_endpoints(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    return {"Endpoints": [{"Address": f"{st.config.host}:{st.config.port}", "CachePeriodInMinutes": 1440}]}


def describe_limits(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """The default account and table quotas (40,000 read and write units per table)."""
    return {
        "AccountMaxReadCapacityUnits": 80000,
        "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000,
        "TableMaxWriteCapacityUnits": 40000,
    }


def describe_ttl(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    t = st.any_table(req.get("TableName"), ctx)
    return {"TimeToLiveDescription": st.ttl.get(t.name, {"TimeToLiveStatus": "DISABLED"})}


def update_ttl(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    t = st.any_table(req.get("TableName"), ctx)
    spec = req.get("TimeToLiveSpecification") or {}
    enabled = bool(spec.get("Enabled"))
    st.ttl[t.name] = (
        {"TimeToLiveStatus": "ENABLED", "AttributeName": spec.get("AttributeName")}
        if enabled
        else {"TimeToLiveStatus": "DISABLED"}
    )
    return {"TimeToLiveSpecification": spec}
