"""`dynlocust init`: a starter project that runs as written (locustfile, scenario, locust.conf, README).

The files are package data in `files/`, copied byte for byte, so what a test runs is what a user gets.
"""

from __future__ import annotations

from pathlib import Path

from dynlocust.errors import DynlocustError

FILES_DIR = Path(__file__).with_name("files")
STARTER_FILES = ("locustfile.py", "scenario.yaml", "locust.conf", "README.md")


class StarterError(DynlocustError):
    """The starter cannot be written where asked (files exist, or the directory is not writable)."""


def write_starter(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the starter files into `directory` (created if missing); the paths written.

    Without `force`, any existing file is refused before anything is written: a refusal leaves no trace.
    """
    targets = [directory / name for name in STARTER_FILES]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise StarterError(
            f"dynlocust init {directory}: expected no starter files there, found {', '.join(existing)}; "
            "pass --force to overwrite them"
        )
    if directory.exists() and not directory.is_dir():
        raise StarterError(f"dynlocust init {directory}: expected a directory, found a file")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, target in zip(STARTER_FILES, targets, strict=True):
            target.write_bytes((FILES_DIR / name).read_bytes())
    except OSError as exc:
        raise StarterError(f"dynlocust init {directory}: expected a writable directory, found {exc}") from exc
    return targets
