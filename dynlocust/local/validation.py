"""Request checks the service makes before it looks at any table, in the service's order and wording.

CreateTable's schema rules live here: they are pure functions of the request, so an invalid request is refused
the same way whether or not a table of that name exists. Messages follow the service as recorded by the
aws_verified tests of moto's DynamoDB suite (tests/conformance).
"""

from __future__ import annotations

import json
import re
from typing import Any

from dynlocust.local import constraints, errors
from dynlocust.local.limits import BATCH_WRITE_MAX, DEFAULT_WARM, GSI_MAX, LSI_MAX

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


# Operations whose TableName may be a table's ARN: "Length Constraints: Minimum length of 1. Maximum length of 1024."
# (API reference); a name that is not an ARN keeps the pattern, and for the single-item operations, Query and
# Scan its minimum of 3 (as pinned against the service by other emulators' recorded tests).
_TABLE_NAME_MAX = 1024
_NAME_MAX = 255
_NEW_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]+")
_AT_LEAST_ONE = "Member must have length greater than or equal to 1"
_NAMED_TABLE_OPS = frozenset(
    ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "DescribeTable", "DeleteTable", "UpdateTable")
)
_ITEM_OPS = frozenset(("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"))


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
    elif op in _NAMED_TABLE_OPS:
        problems += _table_name_problems(op, req.get("TableName"))
    problems += member_problems(op, req)
    worded = {constraints.path_of(p) for p in problems}  # the rest of the model, each member's rules once
    rest = [p for p in constraints.model_problems(op, req) if constraints.path_of(p) not in worded]
    problems += sorted(rest, key=lambda p: "enum value set" not in p)  # enums first, as dynalite records them
    if op in _BATCH_LIMITS:
        problems += _request_items_problems(req.get("RequestItems"), _BATCH_LIMITS[op])
    return problems[: constraints.MAX_PROBLEMS]


# BatchGetItem's and BatchWriteItem's RequestItems: a map of 1 or more tables (API reference: "Map Entries: Maximum
# number of 100 items" / "25 items"), each named as TableName is. Worded as suites run against the service record
# them (issue 45): the empty map is "Value at 'RequestItems'" (that casing); a bad table name echoes the map as JSON
# and names all three rules of the name; an empty BatchWriteItem list echoes the map as Java prints it ('{t=[]}').
_BATCH_LIMITS = {"BatchGetItem": None, "BatchWriteItem": BATCH_WRITE_MAX}
_NAME_RULES = (
    f"Map keys must satisfy constraint: [Member must have length less than or equal to {_NAME_MAX}, "
    "Member must have length greater than or equal to 3, Member must satisfy regular expression pattern: "
    "[a-zA-Z0-9_.-]+]"
)


def _request_items_problems(items: Any, most_writes: int | None) -> list[str]:
    if items is None:
        return [_failed(None, "requestItems", "Member must not be null")]
    if not items:
        return ["Value at 'RequestItems' failed to satisfy constraint: " + _AT_LEAST_ONE]
    problems = []
    for name in items:
        if not name.startswith("arn:") and (not 3 <= len(name) <= _NAME_MAX or not _NEW_TABLE_NAME.fullmatch(name)):
            echo = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
            problems.append(_failed(echo, "requestItems", _NAME_RULES))
    if most_writes is not None and any(not 1 <= len(v) <= most_writes for v in items.values()):
        # echoed as Java's Map.toString only when every list is empty: a WriteRequest prints as an object reference
        java = "{" + ", ".join(f"{name}=[]" for name in items) + "}" if not any(items.values()) else None
        problems.append(
            ("Value at" if java is None else f"Value '{java}' at")
            + " 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
            f"[Member must have length less than or equal to {most_writes}, {_AT_LEAST_ONE}]"
        )
    return problems


def _table_name_problems(op: str, name: Any) -> list[str]:
    """The TableName of an operation that also takes an ARN (a missing one is the shape check's)."""
    if not isinstance(name, str):
        return []
    if not name:
        return [_failed(name, "tableName", "Member must have length greater than or equal to 1")]
    problems = []
    is_arn = name.startswith("arn:")
    longest = _TABLE_NAME_MAX if is_arn else _NAME_MAX  # a name, not an ARN: 255, before the table lookup (issue 45)
    if len(name) > longest:
        problems.append(_failed(name, "tableName", f"Member must have length less than or equal to {longest}"))
    if not is_arn:
        if not _NEW_TABLE_NAME.fullmatch(name):
            problems.append(
                _failed(name, "tableName", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
            )
        if op in _ITEM_OPS and len(name) < 3:
            problems.append(_failed(name, "tableName", "Member must have length greater than or equal to 3"))
    return problems


def check_constraints(op: str, req: dict[str, Any]) -> None:
    """Raise one ValidationException listing every top-level constraint `req` breaks (none: return)."""
    problems = constraint_problems(op, req)
    if problems:
        raise errors.detected(*problems)


# ---- Nested members' length and pattern constraints (issue 34) -------------------------------------------------
# From the service model (botocore's service-2.json) and the API reference's "Length Constraints": IndexName
# "Minimum length of 3. Maximum length of 255. Pattern: [a-zA-Z0-9_.-]+"; a KeySchemaElement's and an
# AttributeDefinition's AttributeName "Minimum length of 1. Maximum length of 255."; a NonKeyAttributes member
# "Maximum length of 255"; Tag Key "Minimum length of 1. Maximum length of 128.", Value "Minimum length of 0.
# Maximum length of 256."; any other attribute name "Maximum length of 65535" (the Developer Guide's "64 KB", which
# ScyllaDB's DynamoDB-verified tests found to exclude 65536 itself).
INDEX_NAME_LENGTHS = (3, 255)
KEY_ATTRIBUTE_NAME_MAX = 255
ATTRIBUTE_NAME_MAX = 65535
TAG_KEY_LENGTHS = (1, 128)
TAG_VALUE_MAX = 256


def _length(value: Any, path: str, shortest: int, longest: int) -> list[str]:
    if not isinstance(value, str):
        return []
    if len(value) < shortest:
        return [_failed(value, path, f"Member must have length greater than or equal to {shortest}")]
    if len(value) > longest:
        return [_failed(value, path, f"Member must have length less than or equal to {longest}")]
    return []


def _index_name(value: Any, path: str) -> list[str]:
    problems = _length(value, path, *INDEX_NAME_LENGTHS)
    if isinstance(value, str) and value and not _NEW_TABLE_NAME.fullmatch(value):
        problems.append(_failed(value, path, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"))
    return problems


def _key_names(schema: Any, path: str) -> list[str]:
    problems: list[str] = []
    for n, el in enumerate(schema if isinstance(schema, list) else (), 1):
        if isinstance(el, dict):
            problems += _length(el.get("AttributeName"), f"{path}.{n}.member.attributeName", 1, KEY_ATTRIBUTE_NAME_MAX)
    return problems


def _index(idx: Any, path: str) -> list[str]:
    if not isinstance(idx, dict):
        return []
    problems = _index_name(idx.get("IndexName"), f"{path}.indexName")
    problems += _key_names(idx.get("KeySchema"), f"{path}.keySchema")
    projection = idx.get("Projection")
    non_key = projection.get("NonKeyAttributes") if isinstance(projection, dict) else None
    for n, a in enumerate(non_key if isinstance(non_key, list) else (), 1):
        problems += _length(a, f"{path}.projection.nonKeyAttributes.{n}.member", 1, KEY_ATTRIBUTE_NAME_MAX)
    return problems


def _tags(tags: Any, path: str) -> list[str]:
    problems: list[str] = []
    for n, tag in enumerate(tags if isinstance(tags, list) else (), 1):
        if isinstance(tag, dict):
            problems += _length(tag.get("Key"), f"{path}.{n}.member.key", *TAG_KEY_LENGTHS)
            problems += _length(tag.get("Value"), f"{path}.{n}.member.value", 0, TAG_VALUE_MAX)
    return problems


def _long_names(names: Any, path: str) -> list[str]:
    """A map of attribute names (an item, a key, AttributeUpdates) whose keys break the 64 KB name limit."""
    if isinstance(names, dict) and any(len(k) > ATTRIBUTE_NAME_MAX for k in names):
        return [
            f"Value at '{path}' failed to satisfy constraint: Map keys must satisfy constraint: "
            f"[Member must have length less than or equal to {ATTRIBUTE_NAME_MAX}]"
        ]
    return []


def _attribute_name_problems(req: dict[str, Any]) -> list[str]:
    problems = []
    for member, path in (("Item", "item"), ("Key", "key"), ("AttributeUpdates", "attributeUpdates")):
        problems += _long_names(req.get(member), path)
    names = req.get("ExpressionAttributeNames")
    if isinstance(names, dict) and any(isinstance(v, str) and len(v) > ATTRIBUTE_NAME_MAX for v in names.values()):
        problems.append(
            "Value at 'expressionAttributeNames' failed to satisfy constraint: Map value must satisfy constraint: "
            f"[Member must have length less than or equal to {ATTRIBUTE_NAME_MAX}]"
        )
    atg = req.get("AttributesToGet")
    for n, a in enumerate(atg if isinstance(atg, list) else (), 1):
        problems += _length(a, f"attributesToGet.{n}.member", 0, ATTRIBUTE_NAME_MAX)
    return problems


def member_problems(op: str, req: dict[str, Any]) -> list[str]:
    """The length and pattern constraints of nested members (index names, key attribute names, tags, attribute
    names), each worded with its member path as the service words them."""
    problems: list[str] = []
    if op == "CreateTable":
        problems += _key_names(req.get("KeySchema"), "keySchema")
        problems += _key_names(req.get("AttributeDefinitions"), "attributeDefinitions")
        for label in ("globalSecondaryIndexes", "localSecondaryIndexes"):
            indexes = req.get(label[0].upper() + label[1:])
            for n, idx in enumerate(indexes if isinstance(indexes, list) else (), 1):
                problems += _index(idx, f"{label}.{n}.member")
        problems += _tags(req.get("Tags"), "tags")
    elif op == "UpdateTable":
        problems += _key_names(req.get("AttributeDefinitions"), "attributeDefinitions")
        updates = req.get("GlobalSecondaryIndexUpdates")
        for n, upd in enumerate(updates if isinstance(updates, list) else (), 1):
            for action in ("Create", "Update", "Delete"):
                body = upd.get(action) if isinstance(upd, dict) else None
                if isinstance(body, dict):
                    problems += _index(body, f"globalSecondaryIndexUpdates.{n}.member.{action.lower()}")
    elif op == "TagResource":
        problems += _tags(req.get("Tags"), "tags")
    elif op in ("Query", "Scan"):
        problems += _index_name(req.get("IndexName"), "indexName")
    if op in _ITEM_OPS:
        problems += _attribute_name_problems(req)
    return problems
