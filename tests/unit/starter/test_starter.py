"""`dynlocust init`'s files: written byte for byte, never over a user's files without --force, all or nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dynlocust.scenario import load_scenario
from dynlocust.starter import FILES_DIR, STARTER_FILES, StarterError, write_starter


def test_writes_every_starter_file_into_a_new_directory(tmp_path: Path) -> None:
    target = tmp_path / "new" / "project"
    written = write_starter(target)
    assert written == [target / name for name in STARTER_FILES]
    for path in written:
        assert path.read_bytes() == (FILES_DIR / path.name).read_bytes()
    assert sorted(p.name for p in FILES_DIR.iterdir() if p.is_file()) == sorted(STARTER_FILES)


def test_the_starter_scenario_targets_the_embedded_endpoint(tmp_path: Path) -> None:
    (path,) = [p for p in write_starter(tmp_path) if p.suffix == ".yaml"]
    assert load_scenario(path).is_local


def test_refuses_to_overwrite_and_writes_nothing_at_all(tmp_path: Path) -> None:
    mine = tmp_path / "locust.conf"
    mine.write_text("users = 1\n")
    with pytest.raises(StarterError) as caught:
        write_starter(tmp_path)
    assert str(mine) in str(caught.value) and "--force" in str(caught.value)
    assert mine.read_text() == "users = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locust.conf"]


def test_force_overwrites(tmp_path: Path) -> None:
    (tmp_path / "locustfile.py").write_text("# mine\n")
    write_starter(tmp_path, force=True)
    assert (tmp_path / "locustfile.py").read_bytes() == (FILES_DIR / "locustfile.py").read_bytes()


def test_a_file_where_the_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    with pytest.raises(StarterError, match="expected a directory, found a file"):
        write_starter(tmp_path / "x")


PUBLIC = {"dynlocust", "dynlocust.mapper"}
"""What a user may import (docs/users.md): the package's exports and the mapper library; the rest is internal."""


def test_the_starter_locustfile_imports_only_the_public_api() -> None:
    # a user copies these lines: an import of dynlocust.plugin.* would tie their code to internals
    tree = ast.parse((FILES_DIR / "locustfile.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in imported if m.split(".")[0] == "dynlocust"}
    assert ours and ours <= PUBLIC, sorted(ours - PUBLIC)
    import dynlocust

    names = {
        a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "dynlocust" for a in n.names
    }
    assert names <= set(dynlocust.__all__)
