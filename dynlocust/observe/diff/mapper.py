"""The mapper-vs-raw table against a saved one: `dynlocust compare --save FILE` and `--baseline FILE`.

Each operation's per-run ratios (mapper/raw medians of one run) are the replicates: a run's ratio cancels most of
the machine's drift, since both sides run interleaved. New against baseline is tested by the Mann-Whitney rank test
(a busy machine's outlier runs would hide a real shift from a t-test), with the shift's estimate (Hodges-Lehmann: the
median of every new/base pair of runs), its 95% interval and confidence beside it; Holm's correction runs over the
operations compared. The baseline and new figures shown are each table's own ratio (its median run's, as
`compare` prints it), and the change the gate reads is new/baseline - 1 of exactly those figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.cells import METRICS, Cell, percent
from dynlocust.observe.diff.errors import DiffError
from dynlocust.observe.diff.gate import DEFAULT_MAPPER_GATE, check, parse_fail_on
from dynlocust.observe.diff.load import COMPARE_KIND, COMPARE_VERSION, MapperSide, load_side
from dynlocust.observe.diff.render import Rendered, console
from dynlocust.observe.diff.stats import holm, median_run, rank_ratio_test


class RowLike(Protocol):
    """`dynlocust.compare.cli.Row`, as measured."""

    name: str
    raw_ms: list[float]
    mapper_ms: list[float]
    ratios: list[float]
    alloc_ratio: float


def mapper_document(rows: Sequence[RowLike], *, runs: int, repeat: int, endpoint: str) -> dict[str, Any]:
    return {
        "type": COMPARE_KIND,
        "version": COMPARE_VERSION,
        "runs": runs,
        "repeat": repeat,
        "endpoint": endpoint,
        "rows": [
            {
                "name": r.name,
                "raw_ms": list(r.raw_ms),
                "mapper_ms": list(r.mapper_ms),
                "ratios": list(r.ratios),
                "alloc_ratio": r.alloc_ratio if math.isfinite(r.alloc_ratio) else None,
            }
            for r in rows
        ],
    }


def mapper_cells(base: MapperSide, new: MapperSide) -> tuple[list[Cell], list[str]]:
    """One cell per operation on both sides (Holm-corrected), and the operations left out."""
    by_name = {r.name: r for r in base.rows}
    common = [r for r in new.rows if r.name in by_name]
    if not common:
        raise DiffError(
            f"refused: expected operations in common, found none ({base.source}: {sorted(by_name)}; "
            f"{new.source}: {[r.name for r in new.rows]})"
        )
    cells = []
    for row in common:
        b = by_name[row.name]
        before, after = b.ratios[median_run(b.ratios)], row.ratios[median_run(row.ratios)]
        change = rank_ratio_test(b.ratios, row.ratios)
        confidence = "" if change.p_value is None else f", {(1 - change.p_value) * 100:.1f}% confidence"
        interval = "" if math.isnan(change.low) else f", 95% interval x{change.low:.3f}-x{change.high:.3f}"
        # the change is the shift the test measured (printed beside it), not the two median runs' quotient: those
        # could read "22.5% faster" beside "shift x1.186"
        cells.append(
            Cell(
                row.name,
                METRICS["ratio"],
                before,
                after,
                change.ratio - 1,
                percent(change.ratio - 1) > 0,  # worse as printed: "+0.0%" is level
                "mann-whitney",
                change.p_value,
                detail=f"shift x{change.ratio:.3f}{interval}{confidence}, {len(b.ratios)} vs {len(row.ratios)} runs",
            )
        )
    for cell, significant in zip(cells, holm([c.p_value for c in cells]), strict=True):
        cell.significant = significant
    left_out = [f"{n} (baseline only)" for n in by_name if n not in {r.name for r in new.rows}]
    left_out += [f"{r.name} (new only)" for r in new.rows if r.name not in by_name]
    return cells, left_out


def _describe(side: MapperSide) -> str:
    m = side.meta
    return f"{side.source} ({m.get('runs', '?')} runs x {m.get('repeat', '?')} repetitions, {m.get('endpoint', '?')})"


def mapper_rendered(base: MapperSide, new: MapperSide, fail_on: str) -> Rendered:
    bounds = parse_fail_on(fail_on, "mapper")
    cells, left_out = mapper_cells(base, new)
    return Rendered(
        "dynlocust diff: mapper vs raw client",
        _describe(base),
        _describe(new),
        cells,
        check(cells, bounds),
        fail_on,
        left_out,
        row_title="operation",
    )


# -- `dynlocust compare` wiring --------------------------------------------------------------------------------------


def add_options(parser: argparse.ArgumentParser) -> None:
    """`--save`, `--baseline` and `--fail-on` of `dynlocust compare`."""
    parser.add_argument("--save", metavar="FILE", help="write the table's per-run figures to FILE (JSON)")
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help=f"compare against a table saved with --save; exit {int(ExitCode.REGRESSION)} on a regression",
    )
    parser.add_argument(
        "--fail-on",
        default=DEFAULT_MAPPER_GATE,
        help=f"with --baseline: what fails the gate (default {DEFAULT_MAPPER_GATE!r}; 'none' for no gate)".replace(
            "%", "%%"
        ),
    )


def load_baseline(args: argparse.Namespace) -> MapperSide | None:
    """Check --baseline, --fail-on and --save before anything runs (a bad one exits 2 at once)."""
    parse_fail_on(args.fail_on, "mapper")
    if args.save and not Path(args.save).parent.is_dir():
        raise DiffError(f"compare --save {args.save}: expected a file in an existing directory, found no directory")
    if not args.baseline:
        return None
    side = load_side(args.baseline, "baseline")
    if not isinstance(side, MapperSide):
        raise DiffError(
            f"compare --baseline {args.baseline}: expected a file saved by compare --save, found run results"
        )
    return side


def finish(args: argparse.Namespace, baseline: MapperSide | None, rows: Sequence[RowLike], *, endpoint: str) -> int:
    """Save and/or compare the table just measured; the exit code of `dynlocust compare`."""
    document = mapper_document(rows, runs=args.runs, repeat=args.repeat, endpoint=endpoint)
    if args.save:
        try:
            Path(args.save).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise DiffError(f"compare --save {args.save}: expected to write it, found {exc}") from exc
        print(f"saved: {args.save}")
    if baseline is None:
        return 0
    from dynlocust.observe.diff.load import mapper_side

    new = mapper_side("new", Path(args.save or "(this run)"), json.loads(json.dumps(document)))
    rendered = mapper_rendered(baseline, new, args.fail_on)
    sys.stdout.write("\n" + console(rendered))
    return rendered.gate.exit_code
