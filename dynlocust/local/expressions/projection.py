"""ProjectionExpression: the projected paths as a trie, applied keeping their nesting."""

from __future__ import annotations

from collections.abc import Mapping

from dynlocust.local.expressions.parser import Parser
from dynlocust.local.expressions.paths import AV, Item, Path, check_overlaps

_Trie = dict[str | int, "_Trie | None"]


def _project_av(av: AV, trie: _Trie) -> AV | None:
    m = av.get("M")
    if m is not None:
        out: dict[str, AV] = {}
        for k, sub in trie.items():
            if isinstance(k, str) and k in m:
                if sub is None:
                    out[k] = m[k]
                else:
                    r = _project_av(m[k], sub)
                    if r is not None:
                        out[k] = r
        return {"M": out} if out else None
    lst = av.get("L")
    if lst is not None:
        res: list[AV] = []
        for k in sorted(k for k in trie if isinstance(k, int)):
            if k < len(lst):
                sub = trie[k]
                if sub is None:
                    res.append(lst[k])
                else:
                    r = _project_av(lst[k], sub)
                    if r is not None:
                        res.append(r)
        return {"L": res} if res else None
    return None


class Projection:
    """A parsed ProjectionExpression; apply() keeps the nesting of the projected paths."""

    __slots__ = ("_top", "_trie", "expression", "paths", "used_names", "used_values")

    def __init__(self, expression: str, paths: list[Path], used_names: set[str]) -> None:
        self.expression = expression
        self.paths: tuple[Path, ...] = tuple(paths)
        self.used_names: frozenset[str] = frozenset(used_names)
        self.used_values: frozenset[str] = frozenset()
        trie: _Trie = {}
        for path in paths:
            node = trie
            for seg in path[:-1]:
                nxt = node.setdefault(seg, {})
                assert nxt is not None
                node = nxt
            node[path[-1]] = None
        self._trie = trie
        self._top: tuple[str, ...] | None = tuple(str(p[0]) for p in paths) if all(len(p) == 1 for p in paths) else None

    def apply(self, item: Item) -> Item:
        """Return a new item holding only the projected paths that exist in item."""
        if self._top is not None:
            return {k: item[k] for k in self._top if k in item}
        out: Item = {}
        for k, sub in self._trie.items():
            av = item.get(k)  # type: ignore[arg-type]  # the trie's top level holds names only
            if av is None:
                continue
            if sub is None:
                out[k] = av  # type: ignore[index]  # a name (top level of the trie)
            else:
                r = _project_av(av, sub)
                if r is not None:
                    out[k] = r  # type: ignore[index]  # a name (top level of the trie)
        return out


def parse_projection(expr: str, names: Mapping[str, str] | None) -> Projection:
    """Parse a ProjectionExpression: comma-separated document paths."""
    p = Parser(expr, names, None, "ProjectionExpression")
    paths = [p.path()]
    while p.at_op(","):
        p.i += 1
        paths.append(p.path())
    p.expect_eof()
    check_overlaps(paths, "ProjectionExpression")
    return Projection(expr, paths, p.used_names)
