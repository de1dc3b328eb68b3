"""Document paths: the types shared by every phase, compiled getters, and the overlap check between paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynlocust.local.expressions.errors import ExpressionError

AV = dict[str, Any]
Item = dict[str, AV]
Path = tuple[str | int, ...]
Getter = Callable[[Item], AV | None]
Pred = Callable[[Item], bool]
EMPTY: Item = {}  # the item that does not exist


def fmt_path(path: Path) -> str:
    return ", ".join(f"[{s}]" if isinstance(s, int) else s for s in path)


def fmt_av(av: AV) -> str:
    ((t, v),) = av.items()
    return f"{{{t}:{v}}}"


def type_of(av: AV) -> str:
    for t in av:
        return t
    return ""


def getter(path: Path) -> Getter:
    """Compile a document path into a function returning the attribute value at that path, or None."""
    first = path[0]
    if len(path) == 1:

        def get_top(item: Item) -> AV | None:
            return item.get(first)  # type: ignore[arg-type]  # a path starts with a name, never an index

        return get_top
    rest = path[1:]

    def get_nested(item: Item) -> AV | None:
        av = item.get(first)  # type: ignore[arg-type]  # a path starts with a name, never an index
        for seg in rest:
            if av is None:
                return None
            if seg.__class__ is int:
                lst = av.get("L")
                if lst is None or seg >= len(lst):
                    return None
                av = lst[seg]
            else:
                m = av.get("M")
                if m is None:
                    return None
                av = m.get(seg)
        return av

    return get_nested


def const_getter(av: AV) -> Getter:
    def get_const(item: Item) -> AV | None:
        return av

    return get_const


class _PathNode:
    """A node of the trie of document paths: its children, the path ending here, and the first path through it."""

    __slots__ = ("children", "end", "first")

    def __init__(self, first: Path) -> None:
        self.children: dict[str | int, _PathNode] = {}
        self.end: Path | None = None
        self.first = first


def check_overlaps(paths: list[Path], label: str) -> None:
    """Refuse two paths where one is a prefix of the other, or that index one attribute both as map and as list.

    A trie makes this linear in the total path length; comparing every pair was quadratic, and a few thousand
    paths held the server's only loop for seconds.
    """

    def refuse(kind: str, p1: Path, p2: Path) -> ExpressionError:
        return ExpressionError(
            f"Invalid {label}: Two document paths {kind} with each other; must remove or rewrite one of "
            f"these paths; path one: [{fmt_path(p1)}], path two: [{fmt_path(p2)}]",
            detected=kind == "overlap",
        )

    root = _PathNode(())
    for path in paths:
        node = root
        for k, seg in enumerate(path):
            if node.end is not None:
                raise refuse("overlap", node.end, path)
            child = node.children.get(seg)
            if child is None:
                if k > 0:
                    for other_seg, other in node.children.items():
                        if type(other_seg) is not type(seg):
                            raise refuse("conflict", other.first, path)
                child = node.children[seg] = _PathNode(path)
            node = child
        if node.end is not None or node.children:
            raise refuse("overlap", node.end or node.first, path)
        node.end = path
