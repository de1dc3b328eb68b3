"""Query and Scan: the read target (table or index), the key condition, one page of results and its price."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dynlocust.local import errors, legacy, params
from dynlocust.local.items import key_of
from dynlocust.local.params import Exprs
from dynlocust.local.state import Ctx, State, throttle_error
from dynlocust.local.store import Collection, Index, Item, KeyDef, Table, comparable
from dynlocust.local.units import PAGE_LIMIT, Consumed, item_size, read_units


def _in_range(rows: Iterator[tuple[Any, Item]], kc: Any, range_attr: str | None) -> Iterator[Item]:
    """Items of a partition that satisfy the range condition.

    Every range condition (=, <, <=, >, >=, BETWEEN, begins_with) selects one contiguous run of the sort order,
    so the walk stops at the first miss after a hit instead of reading the rest of the partition.
    """
    if range_attr is None:
        for _, item in rows:
            yield item
        return
    hit = False
    for _, item in rows:
        if kc.matches_range(item.get(range_attr)):
            hit = True
            yield item
        elif hit:
            return


def _select(req: dict[str, Any], idx: Index | None, has_projection: bool) -> str:
    select = req.get("Select")
    if select is None:
        if has_projection:
            return "SPECIFIC_ATTRIBUTES"
        return "ALL_PROJECTED_ATTRIBUTES" if idx is not None else "ALL_ATTRIBUTES"
    if has_projection and select != "SPECIFIC_ATTRIBUTES":
        what = "AttributesToGet" if "AttributesToGet" in req else "ProjectionExpression"
        raise errors.detected(
            f"Cannot specify the {what} when choosing to get " + (select if select != "COUNT" else "only the Count")
        )
    if select == "SPECIFIC_ATTRIBUTES" and not has_projection:
        raise errors.detected(
            "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
        )
    if select == "ALL_PROJECTED_ATTRIBUTES" and idx is None:
        raise errors.detected("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
    if select == "ALL_ATTRIBUTES" and idx is not None and idx.kind == "GSI" and idx.projection_type != "ALL":
        raise errors.validation(
            "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for "
            f"global secondary index {idx.name} because its projection type is not ALL"
        )
    return select


def _read_target(req: dict[str, Any], t: Table) -> tuple[Index | None, Collection, KeyDef]:
    iname = req.get("IndexName")
    if iname is None:
        return None, t.base, t.key
    idx = t.index(iname)
    if idx is None:
        raise errors.validation(f"The table does not have the specified index: {iname}")
    if idx.kind == "GSI" and req.get("ConsistentRead"):
        raise errors.validation("Consistent reads are not supported on global secondary indexes")
    return idx, idx.coll, idx.key


def _start(t: Table, idx: Index | None, esk: Any) -> tuple[Any, Any]:
    if idx is None:
        hk, sk, _ = key_of(t, esk, "The provided starting key is invalid: ")
        return hk, sk
    if not isinstance(esk, dict):
        raise errors.validation("The provided starting key is invalid")
    key_of(t, {n: esk[n] for n in t.key.names() if n in esk}, "The provided starting key is invalid: ")
    e = idx.entry(esk, t.key)
    if e is None or set(esk) != idx.key_names(t.key):
        raise errors.validation(
            "The provided starting key is invalid: The provided key element does not match the schema"
        )
    return e


def _last_key(t: Table, idx: Index | None, item: Item) -> Item:
    names = t.key.names() if idx is None else sorted(idx.key_names(t.key))
    return {n: item[n] for n in names}


def _page(
    req: dict[str, Any],
    t: Table,
    idx: Index | None,
    rows: Iterator[Item],
    filt: Any,
    project: Callable[[Item], Item] | None,
    select: str,
) -> tuple[dict[str, Any], int, Item | None]:
    """One page: (response fields, bytes read, first item read)."""
    limit = req.get("Limit")  # at least 1: validation.check_constraints
    items: list[Item] = []
    scanned = 0
    size = 0
    last: Item | None = None
    prev: Item | None = None
    first: Item | None = None
    count_only = select == "COUNT"
    # an LSI query may ask for attributes outside the projection: the service fetches them from the table
    fetch_full = idx is None or (idx.kind == "LSI" and (select == "ALL_ATTRIBUTES" or project is not None))
    for raw in rows:
        view = raw if fetch_full or idx is None else idx.project(raw, t.key)
        sz = item_size(view)
        if prev is not None and size + sz > PAGE_LIMIT:
            last = _last_key(t, idx, prev)
            break
        scanned += 1
        size += sz
        if prev is None:
            first = raw
        prev = raw
        if filt is None or filt.evaluate(view):
            if not count_only:
                items.append(project(view) if project else view)
            else:
                items.append(view)
        if limit is not None and scanned >= limit:
            last = _last_key(t, idx, raw)
            break
    out: dict[str, Any] = {}
    if not count_only:
        out["Items"] = items
    out["Count"] = len(items)
    out["ScannedCount"] = scanned
    if last is not None:
        out["LastEvaluatedKey"] = last
    return out, size, first


def query(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    req = legacy.translate(req, "KeyConditions", "QueryFilter", "ConditionalOperator")
    t = st.table(req, ctx)
    rcc = params.return_consumed(req)
    idx, coll, key = _read_target(req, t)
    kce = req.get("KeyConditionExpression")
    if kce is None:
        raise errors.validation(
            "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."
        )
    ex = Exprs(req)
    kc = ex.key_condition(kce, key)
    filt = ex.condition(req.get("FilterExpression"), "FilterExpression")
    project = params.projector(req, ex)
    ex.finish()
    select = _select(req, idx, project is not None)
    hav = kc.hash_value
    if key.hash_type not in hav:
        raise errors.validation(
            "One or more parameter values were invalid: Condition parameter type does not match schema type"
        )
    for attr, av in ((key.hash_attr, hav), *((key.range_attr, v) for v in kc.range_values or ())):
        if av.get("S") == "" or av.get("B") == "":
            raise errors.validation(
                "One or more parameter values are not valid. The AttributeValue for a key attribute "
                f"cannot contain an empty string value. Key: {attr}"
            )
    if key.multi:
        for (attr, typ), av in zip(key.hash_parts(), kc.hash_values, strict=True):
            if typ not in av:
                raise errors.validation(
                    "One or more parameter values were invalid: Condition parameter type does not match schema "
                    f"type; key: {attr}"
                )
        hk: Any = tuple(comparable(av, typ) for (_, typ), av in zip(key.hash_parts(), kc.hash_values, strict=True))
    else:
        hk = comparable(hav, key.hash_type)
    forward = req.get("ScanIndexForward", True)
    start = None
    esk = req.get("ExclusiveStartKey")
    if esk is not None:
        shk, start = _start(t, idx, esk)
        if shk != hk:
            raise errors.validation(
                "The provided starting key is invalid: The provided key element does not match the schema"
            )
    if key.multi:
        rows: Iterator[Item] = (item for _, item in coll.query(hk, forward, start) if kc.matches_item(item))
    else:
        rows = _in_range(coll.query(hk, forward, start), kc, key.range_attr)
    out, size, _first = _page(req, t, idx, rows, filt, project, select)
    consistent = bool(req.get("ConsistentRead", False))
    units = read_units(size, consistent)
    th = st.charge_read(t, idx.name if idx is not None and idx.kind == "GSI" else None, units, str(hav[key.hash_type]))
    if th is not None:
        raise throttle_error(th)
    if rcc:
        out["ConsumedCapacity"] = _read_consumed(t, idx, units).render(rcc)
    return out


def _read_consumed(t: Table, idx: Index | None, units: float) -> Consumed:
    c = Consumed(t.name, "read")
    if idx is None:
        c.add_table(units)
    elif idx.kind == "GSI":
        c.add_gsi(idx.name, units)
    else:
        c.add_lsi(idx.name, units)
    return c


def scan(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    req = legacy.translate(req, "ScanFilter", "ConditionalOperator")
    t = st.table(req, ctx)
    rcc = params.return_consumed(req)
    idx, coll, key = _read_target(req, t)
    ex = Exprs(req)
    filt = ex.condition(req.get("FilterExpression"), "FilterExpression")
    project = params.projector(req, ex)
    ex.finish()
    select = _select(req, idx, project is not None)
    segment, total = req.get("Segment"), req.get("TotalSegments")
    if (segment is None) != (total is None):
        raise errors.validation(
            "The TotalSegments parameter is required but was not present in the request when Segment "
            "parameter is present"
            if total is None
            else "The Segment parameter is required but was not present in the request when parameter "
            "TotalSegments is present"
        )
    if segment is not None and total is not None and not 0 <= segment < total:  # range: check_constraints
        raise errors.validation("The Segment parameter is zero-based and must be less than parameter TotalSegments")
    start = None
    esk = req.get("ExclusiveStartKey")
    if esk is not None:
        start = _start(t, idx, esk)
    rows = (it for _, _, it in coll.scan(segment or 0, total or 1, start))
    out, size, first = _page(req, t, idx, rows, filt, project, select)
    consistent = bool(req.get("ConsistentRead", False))
    units = read_units(size, consistent)
    # a scan page walks partitions in token order: charge it to the partition it started in
    part = "" if first is None else str(next(iter(first[key.hash_attr].values())))
    th = st.charge_read(t, idx.name if idx is not None and idx.kind == "GSI" else None, units, part)
    if th is not None:
        raise throttle_error(th)
    if rcc:
        out["ConsumedCapacity"] = _read_consumed(t, idx, units).render(rcc)
    return out
