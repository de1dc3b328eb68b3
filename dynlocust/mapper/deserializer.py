"""DynamoDB attribute values -> Python values, identical to boto3's `TypeDeserializer`.

Why: reads dominate most tables' traffic, and boto3 resolves every value through `getattr` on a formatted method
name. Here one closure tests the type tag directly (one Python call per value). Numbers go through the same
decimal context boto3 uses (`create_decimal` is also faster than `Decimal()`), binaries become boto3's `Binary`
unless `raw_binary=True`, and deeply nested values do not hit the recursion limit. One difference on malformed
input only: an attribute value with several type keys, such as `{"SS": ["a"], "N": "1"}` (DynamoDB never sends one),
is refused with a `DeserializationError`, where boto3 silently reads its first key and drops the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from boto3.dynamodb.types import Binary

from dynlocust.mapper.serializer import NUMBER_CONTEXT, MapperError


class DeserializationError(MapperError, TypeError):
    """Not an attribute value (boto3 raises `TypeError` for the same input)."""


_EMPTY = "Value must be a nonempty dictionary whose key is a valid dynamodb type."


def _malformed(av: Mapping[str, Any]) -> DeserializationError:
    if not av:
        return DeserializationError(f"{_EMPTY} Found {av!r}")
    return DeserializationError(
        f"expected an attribute value with exactly one type key, found {len(av)} ({', '.join(map(str, av))})"
    )


def _build(
    raw_binary: bool,
) -> tuple[Callable[[Mapping[str, Any]], Any], Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """Make `(deserialize, deserialize_item)`: recursive for speed, with an explicit stack when too deep."""
    number = NUMBER_CONTEXT.create_decimal
    binary: Callable[[Any], Any] = (lambda v: v) if raw_binary else Binary

    def other(tag: str, v: Any) -> Any:
        if tag == "BOOL":
            return v
        if tag == "NULL":
            return None
        if tag == "SS":
            return set(v)
        if tag == "NS":
            return set(map(number, v))
        if tag == "B":
            return binary(v)
        if tag == "BS":
            return set(map(binary, v))
        raise DeserializationError(
            f"Dynamodb type {tag} is not supported: expected one of S, N, B, SS, NS, BS, M, L, NULL, BOOL, "
            f"found {tag!r}"
        )

    def deserialize(av: Mapping[str, Any]) -> Any:
        # Membership tests beat reading the first key; strings and numbers inside containers skip a call. A value
        # with more than one key never passes a `len(x) == 1` test: it reaches the check below and is refused.
        if len(av) != 1:
            raise _malformed(av)
        if "S" in av:
            return av["S"]
        if "N" in av:
            return number(av["N"])
        if "M" in av:
            return {
                k: x["S"]
                if "S" in x and len(x) == 1
                else number(x["N"])
                if "N" in x and len(x) == 1
                else deserialize(x)
                for k, x in av["M"].items()
            }
        if "L" in av:
            return [
                x["S"] if "S" in x and len(x) == 1 else number(x["N"]) if "N" in x and len(x) == 1 else deserialize(x)
                for x in av["L"]
            ]
        for tag in av:
            return other(tag, av[tag])
        raise _malformed(av)

    def deserialize_deep(root: Mapping[str, Any]) -> Any:
        """Same result as `deserialize`, with an explicit stack instead of recursion."""
        holder: list[Any] = [None]
        stack: list[tuple[Any, Any, Any]] = [(root, holder, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            av, parent, slot = pop()
            tag = next(iter(av), None) if isinstance(av, Mapping) and len(av) == 1 else None
            if tag == "M":
                members: dict[Any, Any] = {}
                parent[slot] = members
                for k, x in av[tag].items():
                    members[k] = None  # keeps the order while children are filled in later
                    push((x, members, k))
            elif tag == "L":
                elements: list[Any] = [None] * len(av[tag])
                parent[slot] = elements
                for i, x in enumerate(av[tag]):
                    push((x, elements, i))
            else:
                parent[slot] = deserialize(av)
        return holder[0]

    def deserialize_top(av: Mapping[str, Any]) -> Any:
        if len(av) == 1:  # the hot scalars again, inline: saves a call on the commonest single values
            if "S" in av:
                return av["S"]
            if "N" in av:
                return number(av["N"])
        try:
            return deserialize(av)
        except RecursionError:
            return deserialize_deep(av)

    def deserialize_item(item: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return {
                k: v["S"]
                if "S" in v and len(v) == 1
                else number(v["N"])
                if "N" in v and len(v) == 1
                else deserialize(v)
                for k, v in item.items()
            }
        except RecursionError:
            return {k: deserialize_deep(v) for k, v in item.items()}

    return deserialize_top, deserialize_item


class Deserializer:
    """Deserialize attribute values to Python values; build once, use many times.

    `deserialize(attribute_value)` turns one attribute value into one value (`{"N": "1.5"}` -> `Decimal("1.5")`);
    `deserialize_item(item)` turns an item as DynamoDB returns it into a dict. `raw_binary=True` returns `bytes`
    instead of boto3's `Binary` wrapper. Both are plain functions bound at construction. An attribute value with
    several type keys (`{"SS": ["a"], "N": "1"}`) raises `DeserializationError`: refused, where boto3 reads its first.
    """

    __slots__ = ("deserialize", "deserialize_item", "raw_binary")

    deserialize: Callable[[Mapping[str, Any]], Any]
    deserialize_item: Callable[[Mapping[str, Any]], dict[str, Any]]

    def __init__(self, *, raw_binary: bool = False) -> None:
        self.raw_binary = raw_binary
        self.deserialize, self.deserialize_item = _build(raw_binary)

    def __repr__(self) -> str:
        return f"Deserializer(raw_binary={self.raw_binary})"


__all__ = ["DeserializationError", "Deserializer"]
