"""The service model's constraints on every member of a request, at every depth, worded as the service words them.

Why: the service checks a request against its model (botocore's service-2.json: each member's required flag,
length, range, enum and pattern) before it reads any table, and lists every violation in one "N validation
errors detected: a; b" message, each naming the member's path: lowerCamel names joined by '.', a list's element
`name.3.member`, a map's value `name.key.member` (as dynalite's tests record the service). validation.py words the
members whose checks the service words its own way (TableName, RequestItems, attribute names); this walk adds
the rest, nested members included (a legacy condition's ComparisonOperator, a GSI's capacity units, a
transaction's ReturnValuesOnConditionCheckFailure). Top-level required members are left to the operations,
which word a missing one as the service does.
"""

from __future__ import annotations

from functools import cache
from typing import Any

# Enum sets in the order the service prints them (Java's set order, as dynalite's tests record it); an enum not
# listed is printed in the model's order.
_ENUM_ORDER = {
    "ComparisonOperator": (
        [
            "IN",
            "NULL",
            "BETWEEN",
            "LT",
            "NOT_CONTAINS",
            "EQ",
            "GT",
            "NOT_NULL",
            "NE",
            "LE",
            "BEGINS_WITH",
            "GE",
            "CONTAINS",
        ]
    ),
    "ProjectionType": ["ALL", "INCLUDE", "KEYS_ONLY"],
    "ScalarAttributeType": ["B", "N", "S"],
    "BillingMode": ["PROVISIONED", "PAY_PER_REQUEST"],
    "ReturnValue": ["ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"],
    "ConditionalOperator": ["OR", "AND"],
    "Select": ["SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"],
    "ReturnValuesOnConditionCheckFailure": ["ALL_OLD", "NONE"],
}
# Shapes whose checks are worded elsewhere: table names and ARNs, attribute names (validation.py), attribute
# definitions (schema.py), attribute values (checked with the request's JSON types); and the batch and transaction
# lists, whose operations word their members' paths (batches.py).
_WORDED_ELSEWHERE = frozenset(
    (
        "TableArn",
        "TableName",
        "AttributeName",
        "AttributeValue",
        "AttributeDefinition",
        "BatchGetRequestMap",
        "BatchWriteItemRequestMap",
        "TransactWriteItemList",
        "TransactGetItemList",
    )
)
MAX_PROBLEMS = 10  # the service lists at most ten (as dynalite's tests record it)

# A compiled rule: (kind, detail, constraints); kind "structure" detail {member: (path, rule, required)},
# "list"/"map" detail the member's rule, scalars None; constraints a dict of min/max/enum/pattern.
Rule = tuple[str, Any, dict[str, Any]]


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def _compile(shape: Any, memo: dict[str, Rule]) -> Rule:
    hit = memo.get(shape.name)
    if hit is not None:
        return hit
    meta = shape.metadata
    limits: dict[str, Any] = {k: meta[k] for k in ("min", "max", "pattern") if k in meta}
    if shape.name in _WORDED_ELSEWHERE:
        rule: Rule = ("skip", None, {})
    elif shape.type_name == "structure":
        members: dict[str, tuple[str, Rule, bool]] = {}
        rule = memo[shape.name] = ("structure", members, limits)  # first: a recursive shape refers to itself
        required = set(shape.required_members)
        for name, member in shape.members.items():
            compiled = _compile(member, memo)
            if compiled[0] != "skip" or name in required:  # only what has something to check is walked
                members[name] = (_lower_first(name), compiled, name in required)
    elif shape.type_name in ("list", "map"):
        member = _compile(shape.member if shape.type_name == "list" else shape.value, memo)
        # an item, a key: nothing to check in its values, so no walk through them (every request has one)
        rule = ("skip", None, {}) if member[0] == "skip" and not limits else (shape.type_name, member, limits)
    else:
        if "enum" in meta:
            limits["enum"] = _ENUM_ORDER.get(shape.name, meta["enum"])
        rule = (shape.type_name, None, limits) if limits else ("skip", None, {})
    memo[shape.name] = rule
    return rule


@cache
def _operations() -> dict[str, Rule]:
    import botocore.session

    model = botocore.session.get_session().get_service_model("dynamodb")
    memo: dict[str, Rule] = {}
    return {
        op: _compile(model.operation_model(op).input_shape, memo)
        for op in model.operation_names
        if model.operation_model(op).input_shape is not None
    }


def _failed(value: Any, path: str, rule: str) -> str:
    if value is None:
        shown = "Value null"
    elif isinstance(value, list):  # Java prints a list of strings; of anything else, object references
        shown = f"Value '[{', '.join(value)}]'" if all(isinstance(v, str) for v in value) else "Value"
    elif isinstance(value, dict):
        shown = "Value"
    else:
        shown = f"Value '{value}'"
    return f"{shown} at '{path}' failed to satisfy constraint: {rule}"


def _scalar(value: Any, path: str, limits: dict[str, Any], out: list[str]) -> None:
    enum = limits.get("enum")
    if enum is not None and value not in enum:
        out.append(_failed(value, path, f"Member must satisfy enum value set: [{', '.join(enum)}]"))
        return
    if isinstance(value, str):
        _length(value, len(value), path, limits, out)
    elif isinstance(value, int) and not isinstance(value, bool):
        if "min" in limits and value < limits["min"]:
            out.append(_failed(value, path, f"Member must have value greater than or equal to {limits['min']}"))
        elif "max" in limits and value > limits["max"]:
            out.append(_failed(value, path, f"Member must have value less than or equal to {limits['max']}"))


def _length(value: Any, n: int, path: str, limits: dict[str, Any], out: list[str]) -> None:
    if "min" in limits and n < limits["min"]:
        out.append(_failed(value, path, f"Member must have length greater than or equal to {limits['min']}"))
    elif "max" in limits and n > limits["max"]:
        out.append(_failed(value, path, f"Member must have length less than or equal to {limits['max']}"))


def _walk(value: Any, rule: Rule, path: str, out: list[str]) -> None:
    kind, detail, limits = rule
    if kind == "skip" or len(out) >= MAX_PROBLEMS:
        return
    if kind == "structure":
        if not isinstance(value, dict):
            return
        for name, (lower, member, required) in detail.items():
            v = value.get(name)
            if v is None:
                if required and path:  # a top-level member's absence is its operation's to word
                    out.append(_failed(None, f"{path}.{lower}", "Member must not be null"))
            else:
                _walk(v, member, f"{path}.{lower}" if path else lower, out)
    elif kind == "list":
        if isinstance(value, list):
            _length(value, len(value), path, limits, out)
            for n, v in enumerate(value, 1):
                if v is not None:
                    _walk(v, detail, f"{path}.{n}.member", out)
    elif kind == "map":
        if isinstance(value, dict):
            _length(value, len(value), path, limits, out)
            for k, v in value.items():
                if v is not None:
                    _walk(v, detail, f"{path}.{k}.member", out)
    elif value is not None:
        _scalar(value, path, limits, out)


def model_problems(op: str, req: dict[str, Any]) -> list[str]:
    """Every constraint of `op`'s model that `req` breaks, at most MAX_PROBLEMS, in the model's member order."""
    rule = _operations().get(op)
    out: list[str] = []
    if rule is not None:
        _walk(req, rule, "", out)
    return out


def path_of(problem: str) -> str:
    """The member path a problem names ('' for a problem without one)."""
    start = problem.find(" at '")
    return problem[start + 5 : problem.find("'", start + 5)] if start >= 0 else ""
