"""The measurement of `dynlocust compare`: one `Case` timed both ways, side by side, into a `Row`.

The noun here is a *pair*: a `Case` names the raw side and the mapper side of one operation, `measure` runs them
interleaved (alternating which goes first, the collector off while timed) and traces each side's peak bytes,
and `format_table` prints the rows. `PairContext` is what a user's `--pairs` module is given to build its own.
"""

from __future__ import annotations

import gc
import itertools
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dynlocust.errors import DynlocustError
from dynlocust.observe.diff.stats import median_run


@dataclass
class Case:
    """One row: `prepare(tag)` builds the state a repetition needs (unmeasured); each side consumes it."""

    name: str
    raw: Callable[[Any], Any]
    mapper: Callable[[Any], Any]
    prepare: Callable[[str], Any] = lambda tag: None


@dataclass
class Row:
    name: str
    raw_ms: list[float] = field(default_factory=list)
    mapper_ms: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    alloc_ratio: float = float("nan")


def _timed(function: Callable[[Any], Any], state: Any) -> float:
    gc.disable()  # as timeit does: a collection would land on whichever side happens to trigger it
    try:
        start = time.perf_counter()
        function(state)
        return time.perf_counter() - start
    finally:
        gc.enable()


def _peak_bytes(function: Callable[[Any], Any], state: Any) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        function(state)
        return max(tracemalloc.get_traced_memory()[1] - base, 1)
    finally:
        tracemalloc.stop()


class Tags(Protocol):
    def tag(self) -> str:
        """A fresh, unique string for one repetition's prepared state (item keys)."""
        ...


@dataclass
class PairContext:
    """What a `--pairs` module's `pairs(context)` gets: a retry-free botocore client on the endpoint, the endpoint
    and region (to point its own mapper there), and a unique `prefix` to name the tables it creates for this run.
    `tag()` is what each repetition's `prepare(tag)` is called with."""

    client: Any
    endpoint: str
    region: str
    prefix: str
    _tags: Iterator[int] = field(default_factory=itertools.count, repr=False)

    def tag(self) -> str:
        return f"t{next(self._tags)}"


def measure(bench: Tags, case: Case, runs: int, repeat: int) -> Row:
    row = Row(case.name)
    sides = (("raw", case.raw), ("mapper", case.mapper))
    try:
        for side in sides:  # warm-up: connections, caches, first-call imports
            side[1](case.prepare(bench.tag()))
        for run in range(runs):
            times: dict[str, list[float]] = {"raw": [], "mapper": []}
            for rep in range(repeat):
                order = sides if (run + rep) % 2 == 0 else sides[::-1]
                for label, function in order:
                    state = case.prepare(bench.tag())
                    times[label].append(_timed(function, state))
            raw, mapper = statistics.median(times["raw"]), statistics.median(times["mapper"])
            row.raw_ms.append(raw * 1000)
            row.mapper_ms.append(mapper * 1000)
            row.ratios.append(mapper / raw)
        raw_bytes = _peak_bytes(case.raw, case.prepare(bench.tag()))
        mapper_bytes = _peak_bytes(case.mapper, case.prepare(bench.tag()))
        row.alloc_ratio = mapper_bytes / raw_bytes
    except DynlocustError:
        raise
    except Exception as exc:
        raise DynlocustError(
            f"compare: expected {case.name!r} to succeed both ways, found {type(exc).__name__}: {exc}"
        ) from exc
    return row


def format_table(rows: Sequence[Row], runs: int, repeat: int, endpoint: str, mapper: str = "dynlocust") -> str:
    lines = [
        f"mapper ({mapper}) vs raw client, {runs} runs x {repeat} repetitions each, endpoint {endpoint}",
        f"{'operation':<52}{'raw ms':>9}{'mapper ms':>11}{'ratio':>8}  {'spread':<14}{'alloc':>7}",
    ]
    for row in rows:
        run = median_run(row.ratios)
        spread = f"{min(row.ratios):.2f}-{max(row.ratios):.2f}"
        lines.append(
            f"{row.name:<52}{row.raw_ms[run]:>9.2f}{row.mapper_ms[run]:>11.2f}"
            f"{row.ratios[run]:>7.2f}x  {spread:<14}{row.alloc_ratio:>6.2f}x"
        )
    lines.append(
        "ratio = mapper ms / raw ms of the median run (the run whose ratio is the median; 1.00x = level); "
        "spread: the runs' ratios, min-max; alloc: peak traced bytes mapper/raw"
    )
    return "\n".join(lines)
