"""No class in dynlocust is over 300 lines: one that long holds more than one job (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_CLASS_LINES = 300
PACKAGE = Path(__file__).resolve().parents[2] / "dynlocust"


def long_classes(root: Path, limit: int = MAX_CLASS_LINES) -> list[str]:
    """Each class under `root` longer than `limit` lines, as `path:line Name (n lines)`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_class_is_over_300_lines() -> None:
    assert long_classes(PACKAGE) == []


def test_a_long_class_is_named_with_its_place_and_length(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(4))
    (tmp_path / "m.py").write_text(f"class Short:\n    pass\n\n\nclass Long:\n{body}\n")
    assert long_classes(tmp_path, limit=4) == [f"{tmp_path.name}/m.py:5 Long (5 lines)"]
