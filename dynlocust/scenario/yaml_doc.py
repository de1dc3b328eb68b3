"""Reading a scenario's YAML with positions: the document composed once, each key path mapped to its line.

The noun here is the *document* (`YamlDoc`): its source name and the line of every key path, so that every later
phase can fail with `file:line: key.path: expected ..., found ...`. The document itself is bounded here (depth,
nodes after aliases, digits, characters), before any value is read: the spec bounds the values.
"""

from __future__ import annotations

from typing import Any, NoReturn

import yaml

from dynlocust.scenario.model import (
    ScenarioError,
)

KeyPath = tuple[str | int, ...]

# Bounds on the document itself (the spec bounds its values): `validate` stays fast and small whatever the file holds.
MAX_DEPTH = 64
"""Levels of nesting in the YAML document (a scenario needs fewer than 10)."""
MAX_NODES = 100_000
"""YAML values in the document once every alias is expanded (an alias bomb expands to billions)."""
MAX_DIGITS = 4300
"""Python's limit on converting text to an int (yaml would fail with a bare ValueError past it)."""
MAX_TEXT = 1024 * 1024


def format_path(path: KeyPath) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def show(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return repr(v) if v else "an empty string"
    if isinstance(v, dict):
        return "a mapping" + (f" with keys {', '.join(map(str, list(v)[:5]))}" if v else " (empty)")
    if isinstance(v, list):
        return f"a list of {len(v)}" if v else "an empty list"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v) if not isinstance(v, int | float) else str(v)


class YamlDoc:
    """The source name and the line of every key path, to turn a path into `file:line: path`."""

    def __init__(self, source: str, lines: dict[KeyPath, int]) -> None:
        self.source = source
        self.lines = lines

    def line(self, path: KeyPath) -> int | None:
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]

    def fail(self, path: KeyPath, message: str, *, at: KeyPath | None = None) -> NoReturn:
        raise ScenarioError(self.source, self.line(path if at is None else at), format_path(path), message)

    def expected(self, path: KeyPath, what: str, found: Any) -> NoReturn:
        self.fail(path, f"expected {what}, found {show(found)}")


def _index(doc: YamlDoc, node: yaml.Node, path: KeyPath, depth: int = 0, seen: set[int] | None = None) -> None:
    """Record the line of every key path. A node reached again through an alias is not walked again: paths
    below it take the line of the alias (walking each alias would be exponential in a document of aliases)."""
    doc.lines.setdefault(path, node.start_mark.line + 1)
    seen = set() if seen is None else seen
    if depth > MAX_DEPTH or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        keys: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                doc.lines[(*path, "?")] = key_node.start_mark.line + 1
                doc.fail(path, "expected plain keys, found a list or mapping used as a key", at=(*path, "?"))
            key = key_node.value
            if key == "<<":
                continue
            line = key_node.start_mark.line + 1
            if key in keys:
                doc.lines[(*path, key, "#dup")] = line
                doc.fail(
                    (*path, key),
                    f"duplicate key '{key}' (first written on line {keys[key]})",
                    at=(*path, key, "#dup"),
                )
            keys[key] = line
            doc.lines[(*path, key)] = line
            _index(doc, value_node, (*path, key), depth + 1, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(doc, item, (*path, i), depth + 1, seen)


def _check_bounds(text: str, source: str) -> None:
    """Refuse, from the parser's events alone (no recursion, no values built), a document nested deeper than
    `MAX_DEPTH` or holding more than `MAX_NODES` values once its aliases are expanded."""
    loader = yaml.SafeLoader(text)
    expanded = 0
    sizes: dict[str, int] = {}  # anchor -> values it stands for
    open_at: list[tuple[str | None, int]] = []  # collections being read: anchor, `expanded` at their start
    try:
        while (event := loader.get_event()) is not None and not isinstance(event, yaml.StreamEndEvent):
            line = event.start_mark.line + 1
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_at) >= MAX_DEPTH:
                    raise ScenarioError(source, line, "", f"expected at most {MAX_DEPTH} levels of nesting, found more")
                open_at.append((event.anchor, expanded))
                expanded += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, start = open_at.pop()
                if anchor is not None:
                    sizes[anchor] = expanded - start
            elif isinstance(event, yaml.ScalarEvent):
                if event.style is None and len(event.value) > MAX_DIGITS and event.value.lstrip("+-").isdigit():
                    raise ScenarioError(
                        source, line, "", f"expected a number of at most {MAX_DIGITS} digits, found {len(event.value)}"
                    )
                expanded += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                expanded += sizes.get(event.anchor or "", 1)
            if expanded > MAX_NODES:
                raise ScenarioError(
                    source,
                    line,
                    "",
                    f"expected at most {MAX_NODES:,} values once aliases are expanded, found more (aliases "
                    "that repeat aliases grow exponentially)",
                )
    finally:
        loader.dispose()


def parse_document(text: str, source: str) -> tuple[Any, YamlDoc]:
    doc = YamlDoc(source, {})
    loader = yaml.SafeLoader(text)
    try:
        _check_bounds(text, source)
        node = loader.get_single_node()
        if node is None:
            doc.fail((), "expected a mapping with name, tables, workload and phases, found an empty document")
        _index(doc, node, ())
        data = loader.construct_document(node)
    except yaml.constructor.ConstructorError as e:
        line = e.problem_mark.line + 1 if e.problem_mark is not None else None
        raise ScenarioError(source, line, "", f"unsupported YAML: {e.problem}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        col = f", column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (e.context, e.problem) if x) or "unreadable YAML"
        raise ScenarioError(source, line, "", f"YAML syntax error{col}: {what}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(source, None, "", f"YAML syntax error: {e}") from None
    except ValueError as e:  # int() of a number with more digits than Python converts
        raise ScenarioError(source, None, "", f"expected a number of at most {MAX_DIGITS} digits, found {e}") from None
    finally:
        loader.dispose()
    return data, doc
