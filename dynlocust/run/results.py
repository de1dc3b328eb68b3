"""Results as JSON lines, written as windows close: a crash loses at most the open window.

Each line is one object with a `type`: `run` (first: plan, scenario, versions), `window` (one per closed
window, possibly per worker) and `end` (last: how the run ended). Every record is flushed and fsynced as it
is written. A results file is never appended to by a second run: that would mix two runs' windows.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from dynlocust.errors import DynlocustError

RECORD_TYPES = ("run", "window", "ceiling", "end")
RESULTS_NAME = "results.jsonl"
"""A results file's name in its run directory."""

log = logging.getLogger(__name__)


class ResultsError(DynlocustError):
    """A results file that cannot be written or read as expected."""


class ResultsExistError(ResultsError):
    """The results path already holds results of a run."""


class ResultsWriter:
    """Appends one JSON object per line to `path`, which must not already hold results (`exclusive`: must not
    exist at all, checked by the create itself, so that of two runs opening one path at once only one wins)."""

    def __init__(self, path: str | os.PathLike[str], *, exclusive: bool = False) -> None:
        self.path = Path(path)
        if exclusive:
            self._file = self._create_exclusive()
            self._fsync_dir()
            return
        if self.path.exists() and self.path.stat().st_size > 0:
            raise ResultsExistError(
                f"results file {self.path}: expected a new or empty file, found one of "
                f"{self.path.stat().st_size} bytes with results; choose another path or move it away"
            )
        created = not self.path.exists()
        try:
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise ResultsError(f"results file {self.path}: expected a writable path, found {exc}") from exc
        if created:
            self._fsync_dir()

    def _create_exclusive(self) -> Any:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            raise ResultsExistError(
                f"results file {self.path}: expected a new file, found one already (another run with this id, "
                "writing to the same results directory); choose another --run-id"
            ) from None
        except OSError as exc:
            raise ResultsError(f"results file {self.path}: expected a writable path, found {exc}") from exc
        return os.fdopen(fd, "ab", buffering=0)

    def _fsync_dir(self) -> None:
        # the new file's directory entry must survive a crash too
        try:
            fd = os.open(self.path.parent if str(self.path.parent) else ".", os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record (its `type` one of `RECORD_TYPES`), flushed and fsynced."""
        if record.get("type") not in RECORD_TYPES:
            raise ResultsError(
                f"results file {self.path}: expected a record type in {RECORD_TYPES}, found {record.get('type')!r}"
            )
        if self._file.closed:
            raise ResultsError(f"results file {self.path}: expected an open writer, found it closed")
        try:
            line = json.dumps(record, separators=(",", ":"), allow_nan=False, sort_keys=False)
        except (TypeError, ValueError) as exc:
            raise ResultsError(
                f"results file {self.path}: expected a JSON-safe {record.get('type')} record, found {exc}"
            ) from exc
        self._append_whole((line + "\n").encode("utf-8"), str(record.get("type")))

    def _append_whole(self, data: bytes, kind: str) -> None:
        """Append `data` whole or not at all: on a write error (a full disk) the file is cut back to its last
        complete line, so a reader never finds half a record under the final name."""
        fd = self._file.fileno()
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise ResultsError(
                f"results file {self.path}: expected to write a {kind} record of {len(data)} bytes, found {exc}"
            ) from exc

    def write_run(self, **fields: Any) -> None:
        self.write({"type": "run", **fields})

    def write_window(self, **fields: Any) -> None:
        self.write({"type": "window", **fields})

    def write_end(self, **fields: Any) -> None:
        self.write({"type": "end", **fields})

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _warn(message: str) -> None:
    log.warning("%s", message)


def read_results(path: str | os.PathLike[str], *, on_truncated: Callable[[str], None] = _warn) -> list[dict[str, Any]]:
    """Read every record of a results file.

    A last line cut short (the writer crashed mid-line) is skipped and reported through `on_truncated`
    (default: a logged warning); a bad line anywhere else raises `ResultsError` with its line number.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"results file {p}: expected a readable file, found {exc}") from exc
    if not text:
        return []
    lines = text.split("\n")
    complete_last = text.endswith("\n")
    if complete_last:
        lines.pop()  # the empty string after the final newline
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        is_last = number == len(lines)
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
                raise ValueError(f"not a record with a type in {RECORD_TYPES}")
        except ValueError as exc:
            if is_last and not complete_last:
                on_truncated(
                    f"results file {p}:{number}: expected a complete last record, found {len(line)} bytes cut "
                    f"short (the writer stopped mid-line); ignored"
                )
                break
            raise ResultsError(f"results file {p}:{number}: expected one JSON record, found {exc}") from exc
        records.append(record)
    return records


def results_file(path: str | os.PathLike[str]) -> Path:
    """`path` itself, or the results file inside a run directory."""
    p = Path(path)
    return p / RESULTS_NAME if p.is_dir() else p
