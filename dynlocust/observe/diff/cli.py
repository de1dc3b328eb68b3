"""`dynlocust diff BASELINE NEW` and the diff step of `dynlocust run --baseline RESULTS`.

Exit codes: 0 (no significant regression past the gate; a change past it without significance is printed as a
warning), 2 (refused: malformed, partial or mismatched inputs, in one line), 6 (`ExitCode.REGRESSION`: a significant
regression passed its bound), 8 (`ExitCode.INCONCLUSIVE`: readable runs of one experiment, but every matched window
was skipped as client-bound, partial or not run on a side).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff.errors import DiffError, DiffInconclusive
from dynlocust.observe.diff.gate import DEFAULT_MAPPER_GATE, DEFAULT_RUN_GATE, check, parse_fail_on
from dynlocust.observe.diff.load import MapperSide, RunSide, Side, load_side
from dynlocust.observe.diff.mapper import mapper_rendered
from dynlocust.observe.diff.render import Rendered, console, html, mapper_charts, markdown, run_charts
from dynlocust.observe.diff.runs import diff_runs
from dynlocust.observe.diff.stats import RUN_NOISE
from dynlocust.run.results import RESULTS_NAME

if TYPE_CHECKING:
    from dynlocust.plugin.settings import Settings


def _describe(side: RunSide) -> str:
    r = side.report
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(r.t0))
    return f"{side.source} (run {r.run_id}, scenario {r.scenario}, {started})"


def parse_run_noise(text: str | None) -> dict[str, float]:
    """`--run-noise`: `12%` for every percentile, or `p50=10%,p99=40%` for some (the rest keep the default)."""
    noise = dict(RUN_NOISE)
    if text is None:
        return noise
    for term in text.split(","):
        name, _, value = term.rpartition("=")
        name = name.strip()
        try:
            fraction = float(value.strip().removesuffix("%")) / 100
        except ValueError:
            fraction = math.nan
        if (name and name not in noise) or not 0 <= fraction <= 1:
            raise DiffError(
                f"--run-noise: expected a percentage from 0 to 100 (e.g. 10%), or PERCENTILE=PERCENT terms with "
                f"PERCENTILE in {sorted(noise)} (e.g. p50=10%,p99=40%), found {text!r}"
            )
        for key in [name] if name else noise:
            noise[key] = fraction
    return noise


def run_rendered(base: RunSide, new: RunSide, fail_on: str | None, run_noise: str | None = None) -> Rendered:
    gate_text = fail_on or DEFAULT_RUN_GATE
    bounds = parse_fail_on(gate_text, "run")
    result = diff_runs(base, new, parse_run_noise(run_noise))
    left_out = [f"{w} (baseline only)" for w in result.matched.only_base]
    left_out += [f"{w} (new only)" for w in result.matched.only_new]
    left_out += [f"{w} (skipped)" for w in result.matched.skipped]
    return Rendered(
        f"dynlocust diff: scenario {new.report.scenario}",
        _describe(base),
        _describe(new),
        result.cells,
        check(result.cells, bounds),
        gate_text,
        left_out,
    )


def rendered_diff(
    base: Side, new: Side, fail_on: str | None, run_noise: str | None = None
) -> tuple[Rendered, list[str]]:
    """The comparison of two loaded sides and its charts; sides of different kinds are refused."""
    if isinstance(base, RunSide) and isinstance(new, RunSide):
        return run_rendered(base, new, fail_on, run_noise), run_charts(base.report, new.report)
    if isinstance(base, MapperSide) and isinstance(new, MapperSide):
        rendered = mapper_rendered(base, new, fail_on or DEFAULT_MAPPER_GATE)
        return rendered, mapper_charts(rendered.cells)
    raise DiffError(
        f"refused: expected two run results or two compare files, found a {type(base).__name__[:-4].lower()} "
        f"baseline ({base.source}) and a {type(new).__name__[:-4].lower()} new side ({new.source})"
    )


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DiffError(f"output file {path}: expected to write it, found {exc}") from exc


def report(base: Side, new: Side, args: argparse.Namespace) -> int:
    """Print (and write) the comparison; the gate's exit code."""
    rendered, charts = rendered_diff(base, new, args.fail_on, args.run_noise)
    if args.markdown:
        _write(args.markdown, markdown(rendered))
    if args.html:
        _write(args.html, html(rendered, charts))
    sys.stdout.write(markdown(rendered) if args.format == "markdown" else console(rendered))
    if args.format == "markdown":  # the job log still says what failed, outside the summary
        for line in [*rendered.gate.failures, *rendered.gate.warnings]:
            print(("REGRESSION: " if line in rendered.gate.failures else "WARNING: ") + line, file=sys.stderr)
    return rendered.gate.exit_code


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-on",
        default=None,
        help=f"comma-separated bounds; exit {int(ExitCode.REGRESSION)} when a significant change passes one "
        f"(default for runs "
        f"{DEFAULT_RUN_GATE!r}, for compare files {DEFAULT_MAPPER_GATE!r}; 'none' for no gate)".replace("%", "%%"),
    )
    parser.add_argument(
        "--run-noise",
        metavar="PERCENT",
        default=None,
        help=(
            "run diffs: the spread of a latency percentile between two runs of an unchanged build (standard "
            "deviation), one value or PERCENTILE=PERCENT terms; default "
            + ",".join(f"{k}={v:.0%}" for k, v in RUN_NOISE.items())
            + ". A change must stand out of it to be significant; tests/benchmarks/bench_diff.py measures it for a "
            "machine"
        ).replace("%", "%%"),
    )
    parser.add_argument(
        "--format", choices=("console", "markdown"), default="console", help="what to print (default console)"
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the comparison as Markdown to FILE")
    parser.add_argument("--html", metavar="FILE", help="also write it as HTML, both runs' charts overlaid, to FILE")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynlocust diff",
        description="Compare two runs (results.jsonl or run directories) or two `compare --save` files: "
        f"exit {int(ExitCode.REGRESSION)} on a significant regression past --fail-on, 2 when they cannot be compared, "
        f"{int(ExitCode.INCONCLUSIVE)} when every matched window was skipped (client-bound, partial or not run).",
    )
    parser.add_argument("baseline", help="the baseline: results.jsonl, its run directory, or a compare --save file")
    parser.add_argument("new", help="the new side, of the same kind")
    add_output_options(parser)
    return parser


def refused(exc: DiffError, args: argparse.Namespace) -> int:
    """One line on stderr; with `--format markdown` the job summary says it too (no number either way)."""
    what = "inconclusive" if isinstance(exc, DiffInconclusive) else "refused"
    print(f"dynlocust diff: {'inconclusive' if what == 'inconclusive' else 'error'}: {exc}", file=sys.stderr)
    if args.format == "markdown":
        print(f"## dynlocust diff: {what}\n\n:no_entry: {exc}")
    return exc.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        base = load_side(args.baseline, "baseline")
        new = load_side(args.new, "new")
        return report(base, new, args)
    except DiffError as exc:
        return refused(exc, args)


# -- `dynlocust run --baseline` --------------------------------------------------------------------------------------


def prepare_run(
    args: argparse.Namespace, passthrough: list[str], settings: Settings
) -> tuple[RunSide, list[str], Path]:
    """Before the run: load the baseline and check the gate (exit 2 at once if either is bad), and fix the run id
    so the new results are found afterwards. `settings` are the run's, validated (`--run-id` and
    `--results-dir` as typed or from their variables). Returns the baseline, Locust's arguments and the results
    path."""
    if args.fail_on is not None:
        parse_fail_on(args.fail_on, "run")
    parse_run_noise(args.run_noise)
    base = load_side(args.baseline, "baseline")
    if not isinstance(base, RunSide):
        raise DiffError(f"run --baseline {args.baseline}: expected run results, found a compare file")
    run_id = settings.run_id
    if not run_id:
        from dynlocust.run.run_id import new_run_id

        run_id = new_run_id()
        passthrough = [*passthrough, "--run-id", run_id]
    return base, passthrough, Path(settings.results_dir) / run_id / RESULTS_NAME


def after_run(args: argparse.Namespace, base: RunSide, results: Path, run_code: int) -> int:
    """After the run: diff it against the baseline. A failed run keeps its own exit code."""
    print()
    try:
        code = report(base, load_side(results, "new"), args)
    except DiffError as exc:
        code = refused(exc, args)
    return run_code or code
