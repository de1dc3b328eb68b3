"""`make lint`'s check that no module imports another module's underscore name.

A module is the unit of privacy (trio's convention): a name with a leading underscore is that module's own, and a
name shared between modules of a package is public, listed in the package's `__init__` `__all__` if code outside the
package uses it. So `from pkg.mod import _name` and `import pkg._mod` fail when the imported module belongs to the
checked package; dunders (`__version__`, `from __future__ import annotations`) are not private, and other
distributions' private modules (CPython's `_md5`) are their own affair.

Run as `python -m tests.support.private_imports DIRECTORY`: the directory is a package's root (its name is the
package's); it exits 1 naming each import by file and line, or 0 saying how many files it read.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at `path` in the package whose directory is `root`."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a `from ... import` reads from, relative levels resolved against the importer's package."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def violations(source: str, importer: str, package: str, is_package: bool = False) -> Iterator[tuple[int, str]]:
    """(line, description) of each private name `source` (the module `importer`) imports from `package`."""

    def ours(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = absolute(node, importer, is_package)
            if not ours(module):
                continue
            where = "." * node.level + (node.module or "")
            if any(private(part) for part in module.split(".")):
                yield node.lineno, f"from {where} import ...: {module} is a private module"
            for alias in node.names:
                if private(alias.name):
                    yield node.lineno, f"from {where} import {alias.name}: {alias.name} is private to {module}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if ours(alias.name) and any(private(part) for part in alias.name.split(".")):
                    yield node.lineno, f"import {alias.name}: a private module"


def scan(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        importer = module_name(path, root)
        for line, what in violations(path.read_text(), importer, root.name, path.name == "__init__.py"):
            found.append(f"{path}:{line}: {what}")
    return found


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.support.private_imports DIRECTORY", file=sys.stderr)
        return 2
    root = Path(argv[0])
    found = scan(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import(s) of another module's underscore name: make the name public within its package")
        return 1
    print(f"no underscore name imported across the modules of {root.name} ({sum(1 for _ in root.rglob('*.py'))} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
