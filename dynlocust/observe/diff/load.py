"""Either side of a diff: the results of `dynlocust run` (a results.jsonl or its run directory), read through the
report's own reader, or the file `dynlocust compare --save` wrote. Anything else is refused in one line."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.observe.diff.errors import DiffError
from dynlocust.observe.report.build import ReportError, RunReport, load_report
from dynlocust.run.results import RECORD_TYPES, RESULTS_NAME, ResultsError

COMPARE_KIND = "dynlocust-compare"
"""The `type` of a file written by `dynlocust compare --save`."""
COMPARE_VERSION = 1


@dataclass
class RunSide:
    """One run's results, complete (a partial run is refused when loaded)."""

    label: str
    report: RunReport

    @property
    def source(self) -> Path:
        return self.report.source

    @property
    def shape(self) -> dict[str, Any] | None:
        shape = self.report.run.get("shape")
        return shape if isinstance(shape, dict) else None


@dataclass(frozen=True)
class MapperRow:
    """One operation of a saved mapper-vs-raw table: per-run medians and ratios."""

    name: str
    raw_ms: tuple[float, ...]
    mapper_ms: tuple[float, ...]
    ratios: tuple[float, ...]
    alloc_ratio: float | None


@dataclass
class MapperSide:
    """A saved `dynlocust compare` table."""

    label: str
    source: Path
    meta: dict[str, Any]
    rows: list[MapperRow]


Side = RunSide | MapperSide


def _numbers(source: Path, where: str, value: Any, *, positive: bool = True) -> tuple[float, ...]:
    ok = (
        isinstance(value, list)
        and value
        and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and (not positive or all(v > 0 for v in value))
    )
    if not ok:
        raise DiffError(
            f"compare file {source}: {where}: expected a non-empty list of positive numbers, found {value!r:.80}"
        )
    return tuple(float(v) for v in value)


def mapper_side(label: str, source: Path, data: dict[str, Any]) -> MapperSide:
    """Validate a parsed `compare --save` document; every problem names the file and the key path."""
    if data.get("version") != COMPARE_VERSION:
        raise DiffError(f"compare file {source}: version: expected {COMPARE_VERSION}, found {data.get('version')!r}")
    rows_data = data.get("rows")
    if not isinstance(rows_data, list) or not rows_data:
        raise DiffError(f"compare file {source}: rows: expected a non-empty list, found {rows_data!r:.80}")
    rows: list[MapperRow] = []
    for i, r in enumerate(rows_data):
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            raise DiffError(f"compare file {source}: rows[{i}].name: expected a string, found {r!r:.80}")
        ratios = _numbers(source, f"rows[{i}].ratios", r.get("ratios"))
        raw = _numbers(source, f"rows[{i}].raw_ms", r.get("raw_ms"))
        mapper = _numbers(source, f"rows[{i}].mapper_ms", r.get("mapper_ms"))
        if not len(ratios) == len(raw) == len(mapper):
            raise DiffError(
                f"compare file {source}: rows[{i}]: expected as many raw_ms, mapper_ms and ratios (one per run), "
                f"found {len(raw)}, {len(mapper)} and {len(ratios)}"
            )
        alloc = r.get("alloc_ratio")
        rows.append(MapperRow(r["name"], raw, mapper, ratios, float(alloc) if isinstance(alloc, int | float) else None))
    names = [r.name for r in rows]
    if len(set(names)) != len(names):
        raise DiffError(f"compare file {source}: rows: expected unique operation names, found {names}")
    meta = {k: v for k, v in data.items() if k not in ("rows", "type", "version")}
    return MapperSide(label, source, meta, rows)


def _whole_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(1)
            if head != "{":
                return None
            return json.loads(head + f.read())
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # not one JSON document: read it as JSON lines, which says what is wrong


def load_side(path: str | os.PathLike[str], label: str) -> Side:
    """Load one side; a malformed, missing or partial input raises `DiffError` naming `label` and the file."""
    p = Path(path)
    if not p.exists():
        raise DiffError(f"{label} {p}: expected a results file, run directory or compare file, found nothing there")
    if p.is_dir():
        if not (p / RESULTS_NAME).is_file():
            raise DiffError(f"{label} {p}: expected a run directory holding {RESULTS_NAME}, found none")
        p = p / RESULTS_NAME
    document = _whole_json(p)
    if isinstance(document, dict) and document.get("type") == COMPARE_KIND:
        try:
            return mapper_side(label, p, document)
        except DiffError as exc:
            raise DiffError(f"{label}: {exc}") from exc
    if isinstance(document, dict) and document.get("type") not in RECORD_TYPES:
        raise DiffError(
            f"{label} {p}: expected results (JSON lines) or a compare --save file (type {COMPARE_KIND!r}), "
            f"found one JSON document of type {document.get('type')!r}"
        )
    try:
        report = load_report(p)
    except (ReportError, ResultsError) as exc:
        raise DiffError(f"{label}: {exc}") from exc
    if report.partial:
        raise DiffError(f"{label} {p}: expected a complete run, found a partial one ({'; '.join(report.notes)})")
    if not report.windows:
        raise DiffError(f"{label} {p}: expected closed windows, found none")
    if any(w.stats is None for w in report.windows):  # pragma: no cover - load_report always keeps them
        raise DiffError(f"{label} {p}: expected window statistics, found summaries only")
    return RunSide(label, report)
