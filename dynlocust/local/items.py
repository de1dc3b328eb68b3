"""Single-item operations (PutItem, GetItem, UpdateItem, DeleteItem) and the write plan they share with batches.

A write is validated and priced as a `WritePlan` (the old and new item, every index entry it changes, the units
it costs) before anything is applied, so a throttled or refused write leaves the store untouched. Stored items are
decoded only where a request reads their attributes; a response carries them as stored.
"""

from __future__ import annotations

from typing import Any

from dynlocust.local import errors, expressions, item_collections, legacy, params
from dynlocust.local.attrvalues import check_nesting
from dynlocust.local.limits import HASH_KEY_MAX_BYTES, RANGE_KEY_MAX_BYTES
from dynlocust.local.params import Exprs
from dynlocust.local.state import Ctx, State, throttle_error
from dynlocust.local.store import Index, Item, StoredItem, Table, WritePlan, check_key_sizes, comparable
from dynlocust.local.units import ITEM_LIMIT, Consumed, item_size, read_units, write_units


def required_item(body: dict[str, Any], path: str) -> Item:
    """The Item of a put (its values already checked with the request); absent -> the service's null error."""
    item = body.get("Item")
    if item is None:
        raise errors.detected(f"Value null at '{path}' failed to satisfy constraint: Member must not be null")
    return item


def item_key(t: Table, item: Item) -> tuple[Any, Any, str]:
    """(hk, sk, partition string) of a full item; errors worded as for PutItem."""
    k = t.key
    out = []
    for attr, typ in ((k.hash_attr, k.hash_type), (k.range_attr, k.range_type)):
        if attr is None or typ is None:
            out.append(0)
            continue
        av = item.get(attr)
        if av is None:
            raise errors.validation(f"One or more parameter values were invalid: Missing the key {attr} in the item")
        if typ not in av:
            actual = next(iter(av), "?")
            raise errors.validation(
                "One or more parameter values were invalid: Type mismatch for key "
                f"{attr} expected: {typ} actual: {actual}"
            )
        if av[typ] == "":
            raise empty_key_value(attr, typ)
        out.append(comparable(av, typ))
    hk, sk = out
    if (type(hk) is bytes and len(hk) > HASH_KEY_MAX_BYTES) or (type(sk) is bytes and len(sk) > RANGE_KEY_MAX_BYTES):
        check_key_sizes(hk, sk)  # inline test first: this runs on every write
    return out[0], out[1], str(item[k.hash_attr][k.hash_type])


def empty_key_value(attr: str, typ: str) -> errors.ServiceError:
    """An empty S or B key value, named by its type on every operation (issue 45: 'binary' for a B key)."""
    return errors.validation(
        "One or more parameter values are not valid. The AttributeValue for a key attribute "
        f"cannot contain an empty {'string' if typ == 'S' else 'binary'} value. Key: {attr}"
    )


def _not_the_key(what: str) -> errors.ServiceError:
    return errors.validation(what + "The provided key element does not match the schema")


def key_of(t: Table, key: Any, what: str = "") -> tuple[Any, Any, str]:
    """(hk, sk, partition) of a Key parameter; anything but exactly the key -> the service's error."""
    k = t.key
    if not isinstance(key, dict) or len(key) != (1 if k.range_attr is None else 2):
        raise _not_the_key(what)
    hav = key.get(k.hash_attr)
    if not isinstance(hav, dict) or k.hash_type not in hav:
        raise _not_the_key(what)
    sk: Any = 0
    if k.range_attr is not None:
        rav = key.get(k.range_attr)
        if not isinstance(rav, dict) or str(k.range_type) not in rav:
            raise _not_the_key(what)
        if rav[str(k.range_type)] == "":
            raise empty_key_value(k.range_attr, str(k.range_type))
        sk = comparable(rav, str(k.range_type))
    if hav[k.hash_type] == "":
        raise empty_key_value(k.hash_attr, k.hash_type)
    hk = comparable(hav, k.hash_type)
    if (type(hk) is bytes and len(hk) > HASH_KEY_MAX_BYTES) or (type(sk) is bytes and len(sk) > RANGE_KEY_MAX_BYTES):
        check_key_sizes(hk, sk)
    return hk, sk, str(hav[k.hash_type])


def plan_write(
    t: Table,
    hk: Any,
    sk: Any,
    partition: str,
    old: StoredItem | None,
    new: Item | None,
    update: bool = False,
    old_item: Item | None = None,
) -> WritePlan:
    """The plan of writing `new` (None: deleting) over `old`; `old_item` is `old` decoded, if the caller has it."""
    size_old = 0 if old is None else old.size
    if new is not None:
        check_nesting(new)  # the item as it would be stored: an update or a PartiQL literal may have nested it
    size_new = item_size(new)
    if size_new > ITEM_LIMIT:
        raise errors.validation(f"Item size {'to update ' if update else ''}has exceeded the maximum allowed size")
    entries: list[tuple[Index, Any, Any, int, int]] = []
    gsi_units: dict[str, tuple[float, str]] = {}
    lsi_units: dict[str, float] = {}
    if old is not None and old_item is None and (t.gsis or t.lsis):
        old_item = old.item()  # only an index needs the old item's attributes
    for group in (t.gsis, t.lsis):
        for idx in group.values():
            if idx.backfilling and not idx.current(hk, sk):
                continue
            oe = idx.entry(old_item, t.key) if old_item else None
            ne = idx.entry(new, t.key, update) if new else None
            if oe is None and ne is None:
                continue
            po = idx.project(old_item, t.key) if oe is not None and old_item is not None else None
            pn = idx.project(new, t.key) if ne is not None and new is not None else None
            so = (size_old if po is old_item else item_size(po)) if po is not None else 0
            sn = (size_new if pn is new else item_size(pn)) if pn is not None else 0
            entries.append((idx, oe, ne, so, sn))
            units = 0.0
            if po is None:
                units = write_units(sn)
            elif pn is None:
                units = write_units(so)
            elif oe != ne:
                units = write_units(so) + write_units(sn)
            elif po != pn:
                units = write_units(max(so, sn))
            if units:
                if idx.kind == "GSI":
                    src = new if ne is not None else old_item
                    assert src is not None
                    hav = src[idx.key.hash_attr]
                    gsi_units[idx.name] = (units, str(hav[idx.key.hash_type]))
                else:
                    lsi_units[idx.name] = units
    table_units = write_units(max(size_old, size_new))
    return WritePlan(t, hk, sk, partition, old, new, entries, table_units, gsi_units, lsi_units, size_old, size_new)


def account(plan: WritePlan, consumed: Consumed, factor: float = 1.0) -> None:
    consumed.add_table(plan.table_units * factor)
    for name, (units, _) in plan.gsi_units.items():
        consumed.add_gsi(name, units * factor)
    for name, units in plan.lsi_units.items():
        consumed.add_lsi(name, units * factor)


def apply(plan: WritePlan) -> None:
    t = plan.table
    old, new = plan.old, plan.new
    if old is not None:
        t.size_bytes -= plan.size_old
        t.item_count -= 1
    stored = None
    if new is None:
        t.base.remove(plan.hk, plan.sk)
    else:
        stored = StoredItem.of(new, plan.size_new)  # the table and its indexes share the one stored item
        t.base.put(plan.hk, plan.sk, stored)
        t.size_bytes += plan.size_new
        t.item_count += 1
    for idx, oe, ne, so, sn in plan.entries:
        if oe is not None:
            idx.coll.remove(oe[0], oe[1])
            idx.count -= 1
            idx.size -= so
        if ne is not None and stored is not None:
            idx.coll.put(ne[0], ne[1], stored)
            idx.count += 1
            idx.size += sn


def _write_answer(t: Table, plan: WritePlan, old: StoredItem | None, rv: str, rcc: str | None) -> dict[str, Any]:
    """PutItem's and DeleteItem's response: the old item when asked for, and the consumed capacity."""
    out: dict[str, Any] = {}
    if rv == "ALL_OLD" and old is not None:
        out["Attributes"] = old.wire()
    if rcc:
        c = Consumed(t.name, "write")
        account(plan, c)
        out["ConsumedCapacity"] = c.render(rcc)
    return out


def updated(t: Table, key: Item, old: Item | None, update: Any) -> Item | None:
    """The item after `update`; None when the item is missing and the update only removes or deletes (the
    service creates nothing then), so the write is a no-op."""
    base = dict(old) if old is not None else dict(key)
    if update is None:
        return base
    touched = set(update.updated_paths) & set(t.key.names())
    if touched:  # refused whether or not the item exists (a remove-only update of a missing item included)
        attr = sorted(touched)[0]
        raise errors.validation(
            f"One or more parameter values were invalid: Cannot update attribute {attr}. "
            "This attribute is part of the key"
        )
    if old is None and not update.writes_values:
        return None
    try:
        return update.apply(base, missing=old is None)
    except expressions.ExpressionError as exc:
        raise (errors.detected if exc.detected else errors.validation)(str(exc)) from exc


def put_item(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    req = legacy.translate(req, "Expected", "ConditionalOperator")
    item = required_item(req, "item")
    rv = params.return_values(req, ("NONE", "ALL_OLD"))
    t = st.table(req, ctx)
    rcc = params.return_consumed(req)
    on_fail = params.return_on_fail(req)
    ex = Exprs(req, single_write=True)
    cond = ex.condition(req.get("ConditionExpression"))
    ex.finish()
    hk, sk, part = item_key(t, item)
    return _with_metrics(req, t, hk, item, _put_or_delete(st, t, (hk, sk, part), item, cond, on_fail, rv, rcc))


def delete_item(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    req = legacy.translate(req, "Expected", "ConditionalOperator")
    rv = params.return_values(req, ("NONE", "ALL_OLD"))
    t = st.table(req, ctx)
    rcc = params.return_consumed(req)
    on_fail = params.return_on_fail(req)
    ex = Exprs(req, single_write=True)
    cond = ex.condition(req.get("ConditionExpression"))
    ex.finish()
    hk, sk, part = key_of(t, req.get("Key"))
    return _with_metrics(req, t, hk, req["Key"], _put_or_delete(st, t, (hk, sk, part), None, cond, on_fail, rv, rcc))


def _with_metrics(req: dict[str, Any], t: Table, hk: Any, key: Item, out: dict[str, Any]) -> dict[str, Any]:
    """`out` with the written collection's ItemCollectionMetrics when the request asked for them (after the write)."""
    if item_collections.requested(req) and (m := item_collections.metrics(t, hk, key)) is not None:
        out["ItemCollectionMetrics"] = m
    return out


def _put_or_delete(
    st: State, t: Any, key: tuple[Any, Any, str], item: Item | None, cond: Any, on_fail: bool, rv: Any, rcc: Any
) -> dict[str, Any]:
    """The shared tail of PutItem (`item`) and DeleteItem (None): condition, capacity, then the write."""
    hk, sk, part = key
    old = t.base.get(hk, sk)
    old_item = None if old is None or cond is None else old.item()
    if cond is not None and not cond.evaluate(old_item):
        raise st.condition_failed(t, old, part, on_fail)
    plan = plan_write(t, hk, sk, part, old, item, old_item=old_item)
    th = st.charge_write(plan)
    if th is not None:
        raise throttle_error(th)
    out = _write_answer(t, plan, old, rv, rcc)  # built before the write: a response that failed would hide it
    if item is not None or old is not None:  # deleting what is not there writes nothing
        apply(plan)
    return out


def update_item(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    req = legacy.translate(req, "Expected", "ConditionalOperator", "AttributeUpdates")
    t = st.table(req, ctx)
    rv = params.return_values(req, ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"))
    rcc = params.return_consumed(req)
    on_fail = params.return_on_fail(req)
    ex = Exprs(req, single_write=True)
    update = ex.update(req.get("UpdateExpression"))
    cond = ex.condition(req.get("ConditionExpression"))
    ex.finish()
    key: Item = req.get("Key")  # type: ignore[assignment]  # checked by _key
    hk, sk, part = key_of(t, key)
    old = t.base.get(hk, sk)
    old_item = None if old is None else old.item()
    if cond is not None and not cond.evaluate(old_item):
        raise st.condition_failed(t, old, part, on_fail)
    new = updated(t, key, old_item, update)
    plan = plan_write(t, hk, sk, part, old, new, update=True, old_item=old_item)
    th = st.charge_write(plan)
    if th is not None:
        raise throttle_error(th)
    out: dict[str, Any] = {}  # built before the write: a response that failed would hide an applied update
    attrs: Item | None = None
    if rv == "ALL_OLD":
        attrs = old_item
    elif rv == "ALL_NEW":
        attrs = new
    elif rv in ("UPDATED_OLD", "UPDATED_NEW"):
        src = (old_item or {}) if rv == "UPDATED_OLD" else new
        attrs = update.updated.apply(src) if update is not None else None
    if attrs:
        out["Attributes"] = attrs
    if rcc:
        c = Consumed(t.name, "write")
        account(plan, c)
        out["ConsumedCapacity"] = c.render(rcc)
    apply(plan)
    return _with_metrics(req, t, hk, key, out)


def get_item(st: State, req: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    t = st.table(req, ctx)
    rcc = params.return_consumed(req)
    ex = Exprs(req)
    project = params.projector(req, ex)
    ex.finish()
    hk, sk, part = key_of(t, req.get("Key"))
    consistent = bool(req.get("ConsistentRead", False))
    item = t.base.get(hk, sk)
    units = read_units(0 if item is None else item.size, consistent)
    th = st.charge_read(t, None, units, part)
    if th is not None:
        raise throttle_error(th)
    out: dict[str, Any] = {}
    if item is not None:
        out["Item"] = project(item.item()) if project else item.wire()
    if rcc:
        c = Consumed(t.name, "read")
        c.add_table(units)
        out["ConsumedCapacity"] = c.render(rcc)
    return out
