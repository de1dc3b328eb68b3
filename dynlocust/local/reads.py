"""Query and Scan: the read target (table or index), the key condition, one page of results and its price."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from orjson import Fragment

from dynlocust.local import errors, legacy, params
from dynlocust.local.items import empty_key_value, key_of
from dynlocust.local.params import Exprs
from dynlocust.local.state import Ctx, State, throttle_error
from dynlocust.local.store import Collection, Index, Item, KeyDef, StoredItem, Table, comparable, decoded, key_value
from dynlocust.local.units import PAGE_LIMIT, Consumed, item_size, read_units

Row = tuple[bytes, int, Item | None]  # a stored item read (encoding, size), and its attributes if already decoded


def _in_range(rows: Iterator[tuple[Any, StoredItem]], kc: Any, range_type: str | None, index: bool) -> Iterator[Row]:
    """Items of a partition that satisfy the range condition, tested on their sort keys (the items stay encoded).

    Every range condition (=, <, <=, >, >=, BETWEEN, begins_with) selects one contiguous run of the sort order,
    so the walk stops at the first miss after a hit instead of reading the rest of the partition. An index's sort
    key is (its own sort value, the table's key).
    """
    if range_type is None or kc.range_op is None:
        for _, (raw, size) in rows:
            yield raw, size, None
        return
    hit = False
    for sk, (raw, size) in rows:
        if kc.matches_range(key_value(sk[0] if index else sk, range_type)):
            hit = True
            yield raw, size, None
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
    if idx.backfilling:
        raise errors.validation(f"Cannot read from backfilling global secondary index: {iname}")
    if idx.kind == "GSI" and req.get("ConsistentRead"):
        raise errors.validation("Consistent reads are not supported on global secondary indexes")
    return idx, idx.coll, idx.key


# ExclusiveStartKey, in the order and wording the service checks it (as dynalite's tests record it): the count of
# attributes, then each attribute of the read target's key (present, of its type), then the table's key.
START_INVALID = "The provided starting key is invalid"
NOT_THE_SCHEMA = "The provided key element does not match the schema"
OUTSIDE_QUERY = "The provided starting key is outside query boundaries based on provided conditions"
NOT_IN_RANGE = "The provided starting key does not match the range key predicate"


def _start(t: Table, idx: Index | None, esk: Any, scan: bool = False) -> tuple[Any, Any]:
    """(hk, sk) of an ExclusiveStartKey in the read target's order. A Query's or an index's starting key holds
    exactly the table's and the index's key attributes; a Scan of the table words a wrong count as a wrong key."""
    names = t.key.names() if idx is None else idx.key_names(t.key)
    if not isinstance(esk, dict) or len(esk) != len(names):
        raise errors.validation(f"{START_INVALID}: {NOT_THE_SCHEMA}" if scan and idx is None else START_INVALID)
    if idx is not None or not scan:
        target = t.key if idx is None else idx.key
        for attr, typ in target.hash_parts() + target.range_parts():
            av = esk.get(attr)
            if av is None:
                raise errors.validation(START_INVALID)
            if not isinstance(av, dict) or typ not in av:
                raise errors.validation(NOT_THE_SCHEMA)
    hk, sk, _ = key_of(t, {n: esk[n] for n in t.key.names() if n in esk}, f"{START_INVALID}: ")
    if idx is None:
        return hk, sk
    e = idx.entry(esk, t.key)
    if e is None:
        raise errors.validation(f"{START_INVALID}: {NOT_THE_SCHEMA}")
    return e


def _within_query(kc: Any, key: KeyDef, esk: Item, other_partition: bool) -> None:
    """A Query's starting key must lie in the queried partition and satisfy its sort-key condition."""
    if key.multi or key.range_attr is None or kc.range_op is None:
        if other_partition:
            raise errors.validation(OUTSIDE_QUERY)
        return
    if not kc.matches_range(esk.get(key.range_attr)):
        raise errors.validation(NOT_IN_RANGE)
    if other_partition:
        raise errors.validation("The query can return at most one row and cannot be restarted")


def _last_key(t: Table, idx: Index | None, item: Item) -> Item:
    names = t.key.names() if idx is None else sorted(idx.key_names(t.key))
    return {n: item[n] for n in names}


def _page(
    req: dict[str, Any],
    t: Table,
    idx: Index | None,
    rows: Iterator[Row],
    filt: Any,
    project: Callable[[Item], Item] | None,
    select: str,
) -> tuple[dict[str, Any], int, bytes | None]:
    """One page: (response fields, bytes read, first item read). An item is decoded only when the filter, the
    projection or the index's projection reads its attributes; otherwise the response carries it as stored."""
    limit = req.get("Limit")  # at least 1: validation.check_constraints
    items: list[Any] = []
    scanned = 0
    size = 0
    last: Item | None = None
    prev: bytes | None = None
    first: bytes | None = None
    count_only = select == "COUNT"
    # an LSI query may ask for attributes outside the projection: the service fetches them from the table
    fetch_full = idx is None or (idx.kind == "LSI" and (select == "ALL_ATTRIBUTES" or project is not None))
    projected = idx is not None and not fetch_full and idx.projection_type != "ALL"
    reads_attributes = filt is not None or project is not None
    for raw, sz, item in rows:
        view: Item | None = item
        if projected:
            assert idx is not None
            view = idx.project(item if item is not None else decoded(raw), t.key)
            sz = item_size(view)
        if prev is not None and size + sz > PAGE_LIMIT:
            last = _last_key(t, idx, decoded(prev))
            break
        scanned += 1
        size += sz
        if prev is None:
            first = raw
        prev = raw
        if view is None and reads_attributes:
            view = decoded(raw)
        if filt is None or filt.evaluate(view):
            if count_only:
                items.append(raw)
            elif project is not None:
                items.append(project(view))  # type: ignore[arg-type]  # decoded above: reads_attributes
            else:
                items.append(view if projected else Fragment(raw))
        if limit is not None and scanned >= limit:
            last = _last_key(t, idx, decoded(raw) if item is None else item)
            break
    out: dict[str, Any] = {}
    if not count_only:
        out["Items"] = items
    out["Count"] = len(items)
    out["ScannedCount"] = scanned
    if last is not None:
        out["LastEvaluatedKey"] = last
    return out, size, first


def _whole_page(
    t: Table, raws: list[bytes], size: int, more: bool, count_only: bool
) -> tuple[dict[str, Any], int, bytes | None]:
    """`_page`'s answer for a page of a table's items unfiltered and unprojected, cut by the store."""
    out: dict[str, Any] = {}
    if not count_only:
        out["Items"] = list(map(Fragment, raws))
    out["Count"] = out["ScannedCount"] = len(raws)
    if more:
        out["LastEvaluatedKey"] = _last_key(t, None, decoded(raws[-1]))
    return out, size, raws[0] if raws else None


def _filter_on_keys(key: Any, query_filter: dict[str, Any] | None, heads: frozenset[str]) -> None:
    """A Query's filter may not read the key attributes of what it queries (partition key named first)."""
    label, read = ("QueryFilter", set(query_filter)) if query_filter is not None else ("Filter Expression", heads)
    for attr in key.names():
        if attr in read:
            raise errors.validation(
                f"{label} can only contain non-primary key attributes: Primary key attribute: {attr}"
            )


def query(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    query_filter = req.get("QueryFilter")
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
    if filt is not None:
        _filter_on_keys(key, query_filter if isinstance(query_filter, dict) else None, filt.heads)
    select = _select(req, idx, project is not None)
    hav = kc.hash_value
    if key.hash_type not in hav or (
        not key.multi and key.range_type is not None and any(key.range_type not in v for v in kc.range_values)
    ):
        raise errors.validation(
            "One or more parameter values were invalid: Condition parameter type does not match schema type"
        )
    for attr, av in ((key.hash_attr, hav), *((key.range_attr, v) for v in kc.range_values or ())):
        if av.get("S") == "" or av.get("B") == "":
            raise empty_key_value(str(attr), "S" if "S" in av else "B")
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
        _within_query(kc, key, esk, shk != hk)
    if key.multi:
        read = ((raw, size, decoded(raw)) for _, (raw, size) in coll.query(hk, forward, start))
        rows: Iterator[Row] = (row for row in read if kc.matches_item(row[2]))
    else:
        range_type = None if key.range_attr is None else key.range_type
        rows = _in_range(coll.query(hk, forward, start), kc, range_type, idx is not None)
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
        start = _start(t, idx, esk, scan=True)
    whole = None
    if idx is None and filt is None and project is None:  # the page is the stored items as they are
        whole = coll.scan_page(segment or 0, total or 1, start, req.get("Limit"), PAGE_LIMIT)
    if whole is not None:
        out, size, first = _whole_page(t, *whole, select == "COUNT")
    else:
        rows = ((raw, size, None) for raw, size in coll.scan_items(segment or 0, total or 1, start))
        out, size, first = _page(req, t, idx, rows, filt, project, select)
    consistent = bool(req.get("ConsistentRead", False))
    units = read_units(size, consistent)
    # a scan page walks partitions in token order: charge it to the partition it started in
    part = "" if first is None else str(next(iter(decoded(first)[key.hash_attr].values())))
    th = st.charge_read(t, idx.name if idx is not None and idx.kind == "GSI" else None, units, part)
    if th is not None:
        raise throttle_error(th)
    if rcc:
        out["ConsumedCapacity"] = _read_consumed(t, idx, units).render(rcc)
    return out
