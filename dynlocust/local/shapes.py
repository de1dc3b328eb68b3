"""The JSON types of every operation's input, from botocore's DynamoDB service model, checked before any handler.

Why: the service deserializes a request against its model first and answers a SerializationException for a value
of the wrong JSON type, whatever the operation does with it later. Checking once here means no handler ever sees
`{"TableName": 5}` or `{"Item": []}`, and no such input can reach code that assumes the right type.
Members the model does not know are left alone (the service ignores them); members sent as JSON null are dropped,
as the service treats them as absent.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from dynlocust.local import errors
from dynlocust.local.attrvalues import EMPTY_MESSAGE, check_value

# A compiled shape is a tuple (kind, detail, java): ("structure", {member: shape}, java), ("list", shape, java),
# ("map", shape, java), ("names", shape, java) for a map keyed by attribute names, ("av", None, java) for
# AttributeValue, or (scalar kind, None, java); `java` is the Java type the service reads the member as (its
# SerializationException names it: errors.wrong_json_type).
Spec = tuple[str, Any, str]
_AV: Spec = ("av", None, errors.JAVA_MODEL + "AttributeValue")
_NUMBERS = (int, float)
_INTEGER_RANGE = {"integer": 2**31, "long": 2**63}  # Java's int and long, as the service's deserializer reads them
#: Not checked against the service (no recorded wording was found): an item's or key's attribute name is empty.
EMPTY_NAME_MESSAGE = "One or more parameter values were invalid: An attribute name must not be empty"


def _compile(shape: Any, memo: dict[str, Spec]) -> Spec:
    name = shape.name
    if name == "AttributeValue":
        return _AV
    spec = memo.get(name)
    if spec is not None:
        return spec
    t = shape.type_name
    if t == "structure":
        members: dict[str, Spec] = {}
        spec = memo[name] = ("structure", members, errors.JAVA_MODEL + name)  # first: a recursive shape refers to it
        for mname, mshape in shape.members.items():
            members[mname] = _compile(mshape, memo)
    elif t == "list":
        member = _compile(shape.member, memo)
        spec = ("list", member, f"java.util.List<{member[2]}>")
    elif t == "map":
        # an item, a key, a legacy condition map: keyed by attribute names, which may not be empty
        value = _compile(shape.value, memo)
        kind = "names" if shape.key.name == "AttributeName" else "map"
        spec = (kind, value, f"java.util.Map<java.lang.String, {value[2]}>")
    else:
        spec = (t, None, errors.JAVA_CLASSES.get(t, ""))
    memo[name] = spec
    return spec


def _null_member() -> errors.ServiceError:
    return errors.validation("One or more parameter values were invalid: a list or map member must not be null")


def _check(value: Any, spec: Spec, member: bool = False) -> Any:
    """Check `value` against `spec`; returns the value the service reads (a boolean given as text: a bool).
    `member`: the value is a list's element or a map's value, not a structure's field (worded differently)."""
    kind, detail, java = spec
    if kind == "av":
        if value.__class__ is not dict and not member:
            raise errors.wrong_json_type(value, "structure", java)
        check_value(value)
    elif kind == "structure":
        if value.__class__ is not dict:
            raise errors.wrong_json_type(value, "structure", java, member)
        nulls = None
        for k, v in value.items():
            field = detail.get(k)
            if field is None:
                continue
            if v is None:
                nulls = [*(nulls or ()), k]
                continue
            read = _check(v, field)
            if read is not v:
                value[k] = read
        if nulls:
            for k in nulls:
                del value[k]
    elif kind == "string" or kind == "blob":
        if value.__class__ is not str:
            raise errors.wrong_json_type(value, kind)
    elif kind == "list" or kind == "map" or kind == "names":
        if value.__class__ is not (list if kind == "list" else dict):
            raise errors.wrong_json_type(value, "list" if kind == "list" else "map", java, member)
        if kind == "names" and "" in value:
            raise errors.validation(EMPTY_NAME_MESSAGE)
        members = value.values() if value.__class__ is dict else value
        if detail is _AV:  # an item, a key, expression values: the hot case, one call per attribute
            for v in members:
                if v.__class__ is dict and len(v) == 1 and v.get("S").__class__ is str:
                    continue  # a string attribute, the most common kind: no call
                if v is None:
                    raise errors.validation(EMPTY_MESSAGE)
                check_value(v)
            return value
        for v in members:
            if v is None:
                raise _null_member()
            _check(v, detail, True)  # the model has no collection of booleans: nothing read differs from v
    elif kind == "boolean":
        if value.__class__ is not bool:
            read = errors.boolean_text(value)
            if read is None:
                raise errors.wrong_json_type(value, "boolean")
            return read
    elif kind == "timestamp":
        if value.__class__ is bool or not isinstance(value, (*_NUMBERS, str)):
            raise errors.wrong_json_type(value, "timestamp")
    elif kind == "integer" or kind == "long":
        # an integral JSON number in range: 1.5 and 1e30 are not integers (the service refuses both)
        if value.__class__ is not int or not -_INTEGER_RANGE[kind] <= value < _INTEGER_RANGE[kind]:
            raise errors.wrong_json_type(value, kind)
    elif value.__class__ is bool or not isinstance(value, _NUMBERS):  # double, float
        raise errors.wrong_json_type(value, kind)
    return value


@cache
def operation_shapes() -> dict[str, Spec]:
    """Operation name -> compiled input shape; built once per process (loading the model takes ~0.3 s)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("dynamodb")
    memo: dict[str, Spec] = {}
    ops: dict[str, Spec] = {}
    for op in model.operation_names:
        shape = model.operation_model(op).input_shape
        if shape is not None:
            ops[op] = _compile(shape, memo)
    return ops


def check_request(spec: Spec, req: dict[str, Any]) -> None:
    """Raise the service's SerializationException if a member of `req` has the wrong JSON type for its operation
    (`spec`, from operation_shapes())."""
    _check(req, spec)
