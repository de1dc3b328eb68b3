"""Table and index schema rules of CreateTable, UpdateTable and the tag operations, each a pure check.

Why a module of its own: a control-plane request is refused whole or applied whole, so every rule here runs before
`control` changes anything, and raises the service's ValidationException. Messages are the service's, as recorded
against it by dynalite's, moto's and ScyllaDB Alternator's tests (the last are written to pass on DynamoDB); the
one marked otherwise had no recorded message to check against.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from dynlocust.local import errors
from dynlocust.local.limits import GSI_HASH_ATTRS_MAX, GSI_RANGE_ATTRS_MAX

HEAD = "One or more parameter values were invalid: "
ATTRIBUTE_TYPES = ("B", "N", "S")
PROJECTION_TYPES = ("ALL", "KEYS_ONLY", "INCLUDE")
# UpdateTable members that ask for a change (AttributeDefinitions alone asks for none), in the service's message
UPDATE_MEMBERS = (
    "ProvisionedThroughput",
    "BillingMode",
    "StreamSpecification",
    "GlobalSecondaryIndexUpdates",
    "SSESpecification",
    "ReplicaUpdates",
    "MultiRegionConsistency",
    "DeletionProtectionEnabled",
    "OnDemandThroughput",
    "WarmThroughput",
    "TableClass",
)
NOTHING_TO_UPDATE = (
    "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, "
    "SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
    "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
)


#: "Allowed characters are letters, whitespace, and numbers representable in UTF-8, plus the following special
#: characters: + - = . _ : /" (Developer Guide, Tagging restrictions in DynamoDB). The model has no pattern, so the
#: service words this check itself; the wording below was not checked against it.
TAG_SPECIAL_CHARACTERS = frozenset("+-=._:/")
TAG_CHARACTERS_MESSAGE = (
    "One or more parameter values were invalid: Tag {what} '{value}' contains characters other than letters, "
    "whitespace, numbers and + - = . _ : /"
)


def _tag_text_ok(text: str) -> bool:
    return all(c in TAG_SPECIAL_CHARACTERS or unicodedata.category(c)[0] in "LNZ" for c in text)


def _null(path: str) -> str:
    return f"Value null at '{path}' failed to satisfy constraint: Member must not be null"


def attribute_definitions(defs: Any) -> dict[str, str]:
    """Name -> type of an AttributeDefinitions list, every member checked (all problems in one message)."""
    problems = []
    for n, d in enumerate(defs or (), 1):
        kind, name = d.get("AttributeType"), d.get("AttributeName")
        if kind is None:
            problems.append(_null(f"attributeDefinitions.{n}.member.attributeType"))
        elif kind not in ATTRIBUTE_TYPES:
            problems.append(
                f"Value '{kind}' at 'attributeDefinitions.{n}.member.attributeType' failed to satisfy constraint: "
                "Member must satisfy enum value set: [B, N, S]"
            )
        if name is None:
            problems.append(_null(f"attributeDefinitions.{n}.member.attributeName"))
        elif not name:
            problems.append(
                f"Value '' at 'attributeDefinitions.{n}.member.attributeName' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
    if problems:
        raise errors.detected(*problems)
    return {d["AttributeName"]: d["AttributeType"] for d in defs or ()}


def redefinitions(
    current: dict[str, str], given: dict[str, str], key_schemas: list[Any], new_schemas: list[Any]
) -> None:
    """UpdateTable may add attribute definitions, never give a defined attribute another type.

    `key_schemas` are the KeySchemas of the table and its indexes, `new_schemas` those the request creates; the
    message names one of each that uses the attribute, as the service's does.
    """
    changed = sorted(a for a, t in given.items() if a in current and current[a] != t)
    if not changed:
        return
    a = changed[0]
    old: list[Any] = next((ks for ks in key_schemas if any(el.get("AttributeName") == a for el in ks)), [])
    new: list[Any] = next((ks for ks in new_schemas if any(el.get("AttributeName") == a for el in ks)), [])
    raise errors.validation(
        f"{HEAD}Attributes cannot be redefined. Please check that your attribute has the same type as previously "
        f"defined. Existing schema: {_schema_text(old, current)} New schema: {_schema_text(new, {**current, **given})}"
    )


def _schema_text(key_schema: list[Any], types: dict[str, str]) -> str:
    elements = ", ".join(
        f"SchemaElement: key{{{el.get('AttributeName')}:{types.get(el.get('AttributeName'), '')}:{el.get('KeyType')}}}"
        for el in key_schema
    )
    return f"Schema:[{elements}]"


def projection(p: Any) -> tuple[str, list[str]]:
    """(ProjectionType, NonKeyAttributes) of an index's Projection, checked as the service checks it (the
    duplicate-member wording is not checked against the service)."""
    if not isinstance(p, dict) or p.get("ProjectionType") is None:
        raise errors.validation(f"{HEAD}Unknown ProjectionType: null")
    ptype = p["ProjectionType"]
    if ptype not in PROJECTION_TYPES:
        raise errors.validation(f"{HEAD}Unknown ProjectionType: {ptype}")
    non_key = p.get("NonKeyAttributes")
    if ptype != "INCLUDE":
        if non_key:
            raise errors.validation(f"{HEAD}ProjectionType is {ptype}, but NonKeyAttributes is specified")
        return ptype, []
    if not non_key:
        raise errors.validation(f"{HEAD}ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
    seen: set[str] = set()
    for a in non_key:
        if a in seen:
            raise errors.validation(f"{HEAD}Duplicate attribute in NonKeyAttributes: {a}")
        seen.add(a)
    return ptype, list(non_key)


def multi_attribute_key(kinds: list[Any], names: list[Any]) -> None:
    """A GSI's KeySchema: 1-4 HASH attributes, then 0-4 RANGE attributes, no attribute twice.

    The one-HASH-one-RANGE wording is dynalite's; the others are written to match what Alternator's tests record
    of the service (HASH.*precede.*RANGE, a count naming HASH or RANGE, "same name"), not verbatim.
    """
    if "RANGE" in kinds and "HASH" in kinds[kinds.index("RANGE") :]:
        raise errors.validation(f"{HEAD}Index KeySchema: HASH key attributes must precede RANGE key attributes")
    for kind, most in (("HASH", GSI_HASH_ATTRS_MAX), ("RANGE", GSI_RANGE_ATTRS_MAX)):
        n = kinds.count(kind)
        if n > most:
            raise errors.validation(
                f"{HEAD}Index KeySchema: at most {most} {kind} key attributes are allowed, found {n}"
            )
    if len(set(names)) != len(names):
        if len(names) == 2:
            raise errors.validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
        twice = next(n for n in names if names.count(n) > 1)
        raise errors.validation(f"{HEAD}Index KeySchema: two KeySchemaElements have the same name: {twice}")


def update_members(req: dict[str, Any]) -> None:
    """An UpdateTable must ask for at least one change."""
    if not any(req.get(m) not in (None, [], {}) for m in UPDATE_MEMBERS):
        raise errors.validation(NOTHING_TO_UPDATE)


def index_updates(updates: Any) -> None:
    """Each GlobalSecondaryIndexUpdate names exactly one action, and an index at most once per request."""
    names: set[Any] = set()
    for n, upd in enumerate(updates or (), 1):
        actions = [a for a in ("Update", "Create", "Delete") if upd.get(a) is not None]
        if len(actions) != 1:
            raise errors.validation(
                f"{HEAD}One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                "GlobalSecondaryIndexUpdate.Delete must not be null"
                if not actions
                else f"{HEAD}Only one of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                "GlobalSecondaryIndexUpdate.Delete may be given in one GlobalSecondaryIndexUpdate"
            )
        name = upd[actions[0]].get("IndexName")
        if name is None:
            where = {"Update": "update", "Create": "create", "Delete": "delete"}[actions[0]]
            raise errors.detected(_null(f"globalSecondaryIndexUpdates.{n}.member.{where}.indexName"))
        if name in names:
            raise errors.validation(
                f"{HEAD}Only one global secondary index update per index is allowed simultaneously. Index: {name}"
            )
        names.add(name)


def tags(given: Any, where: str = "tags") -> dict[str, str]:
    """Key -> value of a Tags list; a tag without Key or Value is refused (both are required by the model)."""
    problems = []
    for n, tg in enumerate(given or (), 1):
        if tg.get("Value") is None:
            problems.append(_null(f"{where}.{n}.member.value"))
        if tg.get("Key") is None:
            problems.append(_null(f"{where}.{n}.member.key"))
    if problems:
        raise errors.detected(*problems)
    for tg in given or ():
        for what in ("Key", "Value"):
            if not _tag_text_ok(tg[what]):
                raise errors.validation(TAG_CHARACTERS_MESSAGE.format(what=what.lower(), value=tg[what]))
    return {tg["Key"]: tg["Value"] for tg in given or ()}
