"""`make lint`'s check that no run-time import cycle joins a package's modules.

The graph is grimp's (what import-linter reads): every import statement, function-level ones included, since a lazy
import only postpones the cycle to the first call; imports under `if TYPE_CHECKING:` are left out, since they never
run. Each strongly connected set of modules is one failure, named by one of its cycles with the line of each import.

Run as `python -m tests.support.import_cycles PACKAGE [PREFIX ...]`: it exits 1 naming every cycle, or 0 saying how
many modules it read. With prefixes, only cycles touching a module under one of them count (to see one package's).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Mapping, Sequence

import grimp


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (or of one that imports itself), each sorted, in order.

    Tarjan's algorithm, iterative: a package's import chain can be deeper than Python's recursion limit.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in graph.get(node, ()):
                    found.append(sorted(members))
    return sorted(found)


def one_cycle(graph: Mapping[str, Iterable[str]], members: Sequence[str]) -> list[str]:
    """A shortest cycle through the first of `members` (a strongly connected set), as modules from it back to it."""
    inside = set(members)
    start = members[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if nxt in inside and nxt not in parent:
                    parent[nxt] = node
                    following.append(nxt)
        frontier = following
    raise ValueError(f"{start} is on no cycle among {members}")


def import_graph(package: str) -> grimp.ImportGraph:
    return grimp.build_graph(package, exclude_type_checking_imports=True, cache_dir=None)  # no cache left behind


def cycles(graph: grimp.ImportGraph, prefixes: Sequence[str] = ()) -> list[str]:
    """One line per cycle: the modules in import order, each arrow with the importer's line numbers."""
    edges = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    lines = []
    for members in strongly_connected(edges):
        if prefixes and not any(m == p or m.startswith(p + ".") for m in members for p in prefixes):
            continue
        path = one_cycle(edges, members)
        steps = [path[0]]
        for importer, imported in itertools.pairwise(path):
            details = graph.get_import_details(importer=importer, imported=imported)
            where = ",".join(str(d["line_number"]) for d in details)
            steps.append(f"-({where})-> {imported}")
        others = len(members) - (len(path) - 1)
        more = f" (and {others} more module(s) in the same cycle: {', '.join(sorted(set(members) - set(path)))})"
        lines.append(" ".join(steps) + (more if others else ""))
    return lines


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m tests.support.import_cycles PACKAGE [PREFIX ...]", file=sys.stderr)
        return 2
    graph = import_graph(argv[0])
    found = cycles(graph, argv[1:])
    for line in found:
        print(f"import cycle: {line}")
    if found:
        print(f"{len(found)} run-time import cycle(s) in {argv[0]}: break each (a lazy import counts)")
        return 1
    print(f"no run-time import cycle among {len(graph.modules)} modules of {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
