"""The syntax tree of a PartiQL statement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Path = list[str | int]
AV = dict[str, Any]


# ---------------------------------------------------------------------------------------------- syntax tree
@dataclass
class Name:
    """A document path: attribute names and list indexes."""

    path: Path


@dataclass
class Const:
    av: AV


@dataclass
class Node:
    """An operator or function: op is a comparison, AND, OR, NOT, BETWEEN, IN, IS, a function name, + or -."""

    op: str
    args: list[Any]
    flag: str = ""  # IS: MISSING | NULL | NOT MISSING | NOT NULL
    at: list[str] = field(default_factory=list)  # a function's: the position suffixes of its name and arguments


@dataclass
class Statement:
    kind: str  # SELECT | INSERT | UPDATE | DELETE | EXISTS
    table: str
    index: str | None = None
    projection: list[Path] | None = None  # None = *
    where: Any = None
    item: AV | None = None
    sets: list[tuple[Path, Any]] = field(default_factory=list)
    removes: list[Path] = field(default_factory=list)
    returning: str | None = None
    order_by: Path | None = None
    descending: bool = False
