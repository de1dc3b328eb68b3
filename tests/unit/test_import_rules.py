"""`make lint`'s import rules (tests/support): each names what breaks it, on small packages written for the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support import import_cycles, private_imports


def write_package(root: Path, name: str, modules: dict[str, str]) -> Path:
    """A package `name` under `root` with `modules` (dotted names below it -> source); every package has an __init__."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for dotted, source in modules.items():
        path = package.joinpath(*dotted.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text("")
        path.with_suffix(".py").write_text(textwrap.dedent(source))
    return package


@pytest.fixture
def importable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_cycle_closed_by_a_lazy_import_is_named_with_its_lines(
    importable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_package(
        importable,
        "cyc_lazy",
        {
            "a": "import cyc_lazy.b\n",
            "b": "def f():\n    from cyc_lazy import a\n    return a\n",
            "c": "import cyc_lazy.a\n",
        },
    )
    assert import_cycles.main(["cyc_lazy"]) == 1
    out = capsys.readouterr().out
    assert "import cycle: cyc_lazy.a -(1)-> cyc_lazy.b -(2)-> cyc_lazy.a\n" in out
    assert "1 run-time import cycle(s) in cyc_lazy" in out


def test_a_type_checking_import_is_no_cycle(importable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_package(
        importable,
        "cyc_typing",
        {
            "a": "import cyc_typing.b\n",
            "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyc_typing import a\n",
        },
    )
    assert import_cycles.main(["cyc_typing"]) == 0
    assert "no run-time import cycle among 3 modules of cyc_typing" in capsys.readouterr().out


def test_only_cycles_under_the_given_prefixes_count(importable: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_package(importable, "cyc_scope", {"x.a": "from cyc_scope.x import b\n", "x.b": "from cyc_scope.x import a\n"})
    assert import_cycles.main(["cyc_scope", "cyc_scope.y"]) == 0
    assert import_cycles.main(["cyc_scope", "cyc_scope.x"]) == 1
    assert "cyc_scope.x.a -(1)-> cyc_scope.x.b -(1)-> cyc_scope.x.a" in capsys.readouterr().out


def test_strongly_connected_sets_and_one_shortest_cycle_through_each() -> None:
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": {"e"}, "e": set(), "s": {"s"}, "t": {"a"}}
    assert import_cycles.strongly_connected(graph) == [["a", "b", "c"], ["s"]]
    assert import_cycles.one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert import_cycles.one_cycle(graph, ["s"]) == ["s", "s"]
    deep = {str(i): {str(i + 1)} for i in range(5000)} | {"5000": {"0"}}  # deeper than the recursion limit
    assert len(import_cycles.strongly_connected(deep)[0]) == 5001


@pytest.mark.parametrize(
    ("module", "source", "found"),
    [
        (
            "pkg.mod",
            "from pkg.other import _helper",
            ["from pkg.other import _helper: _helper is private to pkg.other"],
        ),
        ("pkg.mod", "from pkg.other import helper as _helper", []),
        ("pkg.mod", "from pkg import __version__\nfrom __future__ import annotations", []),
        ("pkg.mod", "from elsewhere import _private\nfrom _md5 import md5", []),
        ("pkg.sub.mod", "from . import _sibling", ["from . import _sibling: _sibling is private to pkg.sub"]),
        ("pkg.sub.mod", "from .._base import thing", ["from .._base import ...: pkg._base is a private module"]),
        ("pkg.mod", "import pkg._base", ["import pkg._base: a private module"]),
        (
            "pkg.mod",
            "def f():\n    from pkg.other import _late\n",
            ["from pkg.other import _late: _late is private to pkg.other"],
        ),
    ],
)
def test_each_import_of_another_modules_underscore_name(module: str, source: str, found: list[str]) -> None:
    assert [what for _, what in private_imports.violations(source, module, "pkg")] == found


def test_relative_imports_in_a_package_init_resolve_against_the_package() -> None:
    found = list(private_imports.violations("from .mod import _x", "pkg.sub", "pkg", is_package=True))
    assert found == [(1, "from .mod import _x: _x is private to pkg.sub.mod")]


def test_a_package_tree_is_scanned_file_by_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = write_package(
        tmp_path, "priv", {"a": "_shared = 1\n", "b": "import os\nfrom priv.a import _shared\n", "c": "X = 1\n"}
    )
    assert private_imports.main([str(package)]) == 1
    out = capsys.readouterr().out
    assert f"{package / 'b.py'}:2: from priv.a import _shared: _shared is private to priv.a\n" in out
    (package / "b.py").write_text("from priv.a import X\n")
    assert private_imports.main([str(package)]) == 0
    assert "no underscore name imported across the modules of priv (4 files)" in capsys.readouterr().out
