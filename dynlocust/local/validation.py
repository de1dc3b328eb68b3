"""Request checks the service makes before it looks at any table, in the service's order and wording.

CreateTable's schema rules live here: they are pure functions of the request, so an invalid request is refused
the same way whether or not a table of that name exists. Messages follow the service as recorded by the
aws_verified tests of moto's DynamoDB suite (tests/conformance).
"""

from __future__ import annotations

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


# The JSON type of each top-level request parameter, as the service's deserializer expects it. A value of another
# type is a SerializationException worded like the service's (Jackson token names), before any other check.
_STR, _MAP, _LIST, _BOOL, _INT = "String", "map", "list", "Boolean", "Integer"
PARAM_SHAPES: dict[str, str] = {
    **dict.fromkeys(
        (
            "TableName", "IndexName", "ConditionExpression", "KeyConditionExpression", "FilterExpression",
            "UpdateExpression", "ProjectionExpression", "ReturnValues", "ReturnConsumedCapacity",
            "ReturnItemCollectionMetrics", "ReturnValuesOnConditionCheckFailure", "Select", "ConditionalOperator",
            "BillingMode", "TableClass", "ExclusiveStartTableName", "ResourceArn", "NextToken",
            "ClientRequestToken",
        ),
        _STR,
    ),
    **dict.fromkeys(
        (
            "Key", "Item", "ExpressionAttributeNames", "ExpressionAttributeValues", "Expected", "AttributeUpdates",
            "KeyConditions", "QueryFilter", "ScanFilter", "ExclusiveStartKey", "RequestItems",
            "ProvisionedThroughput", "StreamSpecification", "SSESpecification", "OnDemandThroughput",
            "WarmThroughput", "TimeToLiveSpecification",
        ),
        _MAP,
    ),
    **dict.fromkeys(
        (
            "AttributesToGet", "KeySchema", "AttributeDefinitions", "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes", "GlobalSecondaryIndexUpdates", "TransactItems", "Tags", "TagKeys",
        ),
        _LIST,
    ),
    **dict.fromkeys(("ConsistentRead", "ScanIndexForward", "DeletionProtectionEnabled"), _BOOL),
    **dict.fromkeys(("Limit", "Segment", "TotalSegments"), _INT),
}  # fmt: skip


def _token(v: Any) -> str:
    if v is True:
        return "TRUE_VALUE"
    if v is False:
        return "FALSE_VALUE"
    if isinstance(v, int | float):
        return "NUMBER_VALUE"
    return "STRING_VALUE"


def _fits(v: Any, shape: str) -> bool:
    if shape == _STR:
        return isinstance(v, str)
    if shape == _MAP:
        return isinstance(v, dict)
    if shape == _LIST:
        return isinstance(v, list)
    if shape == _BOOL:
        return isinstance(v, bool)
    return isinstance(v, int) and not isinstance(v, bool)


_PY_TYPES = {_STR: str, _MAP: dict, _LIST: list, _BOOL: bool, _INT: int}
_PARAM_TYPES: dict[str, type] = {name: _PY_TYPES[shape] for name, shape in PARAM_SHAPES.items()}


def check_param_types(req: dict[str, Any]) -> None:
    """SerializationException for a top-level parameter of the wrong JSON type (null counts as absent)."""
    types = _PARAM_TYPES
    for name, v in req.items():
        expected = types.get(name)
        if expected is None or type(v) is expected or v is None or _fits(v, PARAM_SHAPES[name]):
            continue  # the cheap exact-type test first: this runs on every request
        raise serialization_error(v, PARAM_SHAPES[name])


def serialization_error(v: Any, shape: str) -> errors.ServiceError:
    if isinstance(v, dict):
        return errors.serialization("Start of structure or map found where not expected")
    if isinstance(v, list):
        return errors.serialization("Start of list found where not expected")
    if shape in (_MAP, _LIST):
        return errors.serialization("Unexpected value type in payload")
    return errors.serialization(f"{_token(v)} cannot be converted to {shape}")
