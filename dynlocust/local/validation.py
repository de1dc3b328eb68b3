"""Request checks the service makes before it looks at any table, in the service's order and wording.

CreateTable's schema rules live here: they are pure functions of the request, so an invalid request is refused
the same way whether or not a table of that name exists. Messages follow the service as recorded by the
aws_verified tests of moto's DynamoDB suite (tests/conformance).
"""

from __future__ import annotations

import re
from typing import Any

from dynlocust.local import errors
from dynlocust.local.limits import DEFAULT_WARM, GSI_MAX, LSI_MAX

_HEAD = "One or more parameter values were invalid: "


def _list(names: Any) -> str:
    return "[" + ", ".join(str(n) for n in names) + "]"


def _key_types(schema: Any, where: str) -> list[Any]:
    if not isinstance(schema, list):
        raise errors.detected(f"Value null at '{where}' failed to satisfy constraint: Member must not be null")
    for n, el in enumerate(schema, 1):
        kt = el.get("KeyType") if isinstance(el, dict) else None
        if kt not in ("HASH", "RANGE"):
            raise errors.detected(
                f"Value '{kt}' at '{where}.{n}.member.keyType' failed to satisfy constraint: "
                "Member must satisfy enum value set: [HASH, RANGE]"
            )
    return schema


def _warm(warm: Any, throughput: Any, what: str) -> None:
    """WarmThroughput may not ask for less than the provisioned units, or the on-demand initial throughput."""
    if not isinstance(warm, dict):
        return
    for field, cap in (("ReadUnitsPerSecond", "ReadCapacityUnits"), ("WriteUnitsPerSecond", "WriteCapacityUnits")):
        if isinstance(throughput, dict) and cap in throughput:
            floor, end = throughput[cap], f"{cap} of ProvisionedThroughput"
        else:
            floor, end = DEFAULT_WARM[field], "initial throughput for OnDemand"
        v = warm.get(field, floor)
        if isinstance(v, int) and isinstance(floor, int) and v < floor:
            raise errors.validation(f"{_HEAD}Requested {field} for WarmThroughput for {what} is lower than {end}")


def check_create_table(req: dict[str, Any]) -> None:
    """CreateTable's request rules, before the table lookup (so a bad request never answers ResourceInUse)."""
    billing = req.get("BillingMode", "PROVISIONED")
    throughput = req.get("ProvisionedThroughput")
    if billing == "PAY_PER_REQUEST" and throughput:
        raise errors.validation(
            f"{_HEAD}Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
            "PAY_PER_REQUEST"
        )
    schema = _key_types(req.get("KeySchema"), "keySchema")
    if len(schema) > 2:
        elements = ", ".join(
            f"KeySchemaElement(attributeName={el.get('AttributeName')}, keyType={el['KeyType']})" for el in schema
        )
        raise errors.detected(
            f"Value '[{elements}]' at 'keySchema' failed to satisfy constraint: "
            "Member must have length less than or equal to 2"
        )
    if schema and schema[0].get("KeyType") != "HASH":
        raise errors.validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
    gsis, lsis = req.get("GlobalSecondaryIndexes"), req.get("LocalSecondaryIndexes")
    for label, indexes in (("GlobalSecondaryIndexes", gsis), ("LocalSecondaryIndexes", lsis)):
        if indexes is not None and (not isinstance(indexes, list) or not indexes):
            raise errors.validation(f"{_HEAD}List of {label} is empty")
    index_names: set[Any] = set()
    for where, indexes in (("globalSecondaryIndexes", gsis), ("localSecondaryIndexes", lsis)):
        for n, idx in enumerate(indexes or [], 1):
            if not isinstance(idx, dict):
                raise errors.serialization("Unexpected value type in payload")
            name = idx.get("IndexName")
            if where == "globalSecondaryIndexes":
                _warm(idx.get("WarmThroughput"), idx.get("ProvisionedThroughput"), f"index {name}")
            _key_types(idx.get("KeySchema"), f"{where}.{n}.member.keySchema")
            if name in index_names:
                raise errors.validation(f"{_HEAD}Duplicate index name: {name}")
            index_names.add(name)
            projection = idx.get("Projection")
            if not isinstance(projection, dict) or "ProjectionType" not in projection:
                raise errors.validation(f"{_HEAD}Unknown ProjectionType: null")
    if gsis and len(gsis) > GSI_MAX:
        raise errors.validation(f"{_HEAD}GlobalSecondaryIndex count exceeds the per-table limit of {GSI_MAX}")
    if lsis and len(lsis) > LSI_MAX:
        raise errors.validation(f"{_HEAD}Number of LocalSecondaryIndexes exceeds per-table limit of {LSI_MAX}")
    defs = req.get("AttributeDefinitions")
    if not isinstance(defs, list):
        raise errors.detected(
            "Value null at 'attributeDefinitions' failed to satisfy constraint: Member must not be null"
        )
    actual = sorted(str(d.get("AttributeName")) for d in defs if isinstance(d, dict))
    dupes = sorted({a for a in actual if actual.count(a) > 1})
    if dupes:
        raise errors.validation(f"{_HEAD}Duplicate AttributeName in AttributeDefinitions: {_list(dupes)}")
    used = {el.get("AttributeName") for el in schema}
    for idx in (gsis or []) + (lsis or []):
        used |= {el.get("AttributeName") for el in idx.get("KeySchema") or []}
    expected = sorted(str(a) for a in used)
    has_index = gsis is not None or lsis is not None
    if actual != expected:
        if len(actual) > len(expected) and has_index:
            raise errors.validation(
                f"{_HEAD}Some AttributeDefinitions are not used. AttributeDefinitions: {_list(actual)}, "
                f"keys used: {_list(expected)}"
            )
        if len(actual) > len(expected):
            raise errors.validation(
                f"{_HEAD}Number of attributes in KeySchema does not exactly match number of attributes defined in "
                "AttributeDefinitions"
            )
        if len(actual) < len(expected) and not has_index:
            raise errors.validation("Invalid KeySchema: Some index key attribute have no definition")
        missing = sorted(set(expected) - set(actual)) if has_index else expected
        raise errors.validation(
            f"{_HEAD}Some index key attributes are not defined in AttributeDefinitions. Keys: {_list(missing)}, "
            f"AttributeDefinitions: {_list(actual)}"
        )
    _warm(req.get("WarmThroughput"), throughput, "table")


# The service model's constraints on top-level members that the service checks all at once, before anything else:
# every one that fails is listed in one "N validation errors detected: a; b" message. Enum sets are written in the
# order the service prints them (not the model's).
_ENUMS = {
    "ReturnConsumedCapacity": ("returnConsumedCapacity", "[INDEXES, TOTAL, NONE]"),
    "ReturnValuesOnConditionCheckFailure": ("returnValuesOnConditionCheckFailure", "[ALL_OLD, NONE]"),
    "Select": ("select", "[SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]"),
}
# operation -> member -> (path, least, most) for integer ranges
_RANGES: dict[str, dict[str, tuple[str, int, int | None]]] = {
    "Query": {"Limit": ("limit", 1, None)},
    "Scan": {"Limit": ("limit", 1, None), "TotalSegments": ("totalSegments", 1, 1000000)},
    "ListTables": {"Limit": ("limit", 1, 100)},
}
_NEW_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]+")


def _failed(value: Any, path: str, rule: str) -> str:
    shown = "null" if value is None else f"'{value}'"
    return f"Value {shown} at '{path}' failed to satisfy constraint: {rule}"


def constraint_problems(op: str, req: dict[str, Any]) -> list[str]:
    """Every top-level model constraint `req` breaks, each worded as the service words it."""
    problems = []
    if op == "CreateTable":
        name = req.get("TableName")
        if name is None:
            problems.append(_failed(None, "tableName", "Member must not be null"))
        else:
            if len(name) < 3:
                problems.append(_failed(name, "tableName", "Member must have length greater than or equal to 3"))
            if len(name) > 255:
                problems.append(_failed(name, "tableName", "Member must have length less than or equal to 255"))
            if not _NEW_TABLE_NAME.fullmatch(name):
                problems.append(
                    _failed(name, "tableName", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
                )
    for member, (path, allowed) in _ENUMS.items():
        v = req.get(member)
        if v is not None and f" {v}," not in f" {allowed[1:-1]},":
            problems.append(_failed(v, path, f"Member must satisfy enum value set: {allowed}"))
    for member, (path, least, most) in _RANGES.get(op, {}).items():
        v = req.get(member)
        if v is None:
            continue
        if v < least:
            problems.append(_failed(v, path, f"Member must have value greater than or equal to {least}"))
        elif most is not None and v > most:
            problems.append(_failed(v, path, f"Member must have value less than or equal to {most}"))
    return problems


def check_constraints(op: str, req: dict[str, Any]) -> None:
    """Raise one ValidationException listing every top-level constraint `req` breaks (none: return)."""
    problems = constraint_problems(op, req)
    if problems:
        raise errors.detected(*problems)
