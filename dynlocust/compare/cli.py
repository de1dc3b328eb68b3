"""`dynlocust compare`: the reference operation set through the raw client and through the mapper, side by side.

Why: teams want to know what their data layer costs before they load-test with it. Each row runs the same
operation both ways on the same client (retries off), interleaved and alternating which side goes first, for
`--runs` runs of `--repeat` repetitions; the ratio is mapper/raw of the per-run medians, reported as the median
over runs with its min-max spread (single-item timings swing by +/-25% run to run). The raw side is what a careful
engineer writes by hand: attribute values built and read field by field. Allocations are the peak bytes traced
by `tracemalloc` during one call of each side. Local ratios say nothing about absolute times on AWS.

The mapper side is dynlocust's own mapper, PynamoDB (`--adapter pynamodb`, the same rows through PynamoDB models),
or the user's own data layer (`--pairs MODULE`): a module whose `pairs(context)` returns `Case`s, each a named pair
of (raw calls, the mapper operation that does the same), measured exactly as the reference rows are.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import locust  # noqa: F401 - first: gevent patching before botocore

from dynlocust.compare.measure import Case, PairContext, Row, format_table, measure
from dynlocust.compare.reference import Bench, DynlocustMapper, ReferenceMapper
from dynlocust.errors import DynlocustError
from dynlocust.exit_codes import ExitCode
from dynlocust.observe.diff import mapper as diff_mapper
from dynlocust.request.transport.boto3 import endpoint_errors, make_client

ADAPTERS = ("dynlocust", "pynamodb")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynlocust compare", description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="DynamoDB endpoint URL (default: start the local endpoint)")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--runs", type=int, default=5, help="runs per operation (default 5)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per side in a run (default 5)")
    parser.add_argument("--only", action="append", help="run only operations containing this text (repeatable)")
    parser.add_argument(
        "--adapter",
        choices=ADAPTERS,
        help="the mapper side of the reference rows: dynlocust's mapper (default) or PynamoDB models",
    )
    parser.add_argument(
        "--pairs",
        metavar="MODULE",
        help="your own rows instead of the reference set: a module name or .py file whose pairs(context) "
        "returns dynlocust.compare.cli.Case objects",
    )
    diff_mapper.add_options(parser)  # --save, --baseline, --fail-on
    return parser


def load_pairs(spec: str) -> ModuleType:
    """The `--pairs` module, from a `.py` path or a module name (the current directory is importable)."""
    try:
        if spec.endswith(".py") or os.sep in spec:
            path = Path(spec)
            if not path.is_file():
                raise DynlocustError(f"compare --pairs: expected a Python file, found no file at {spec}")
            module_spec = importlib.util.spec_from_file_location(f"dynlocust_pairs_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise DynlocustError(f"compare --pairs: expected a Python file, found {spec}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module  # as an import would: dataclasses and pickling look it up
            module_spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(spec)
    except DynlocustError:
        raise
    except Exception as exc:
        raise DynlocustError(
            f"compare --pairs {spec}: expected an importable module, found {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(getattr(module, "pairs", None)):
        raise DynlocustError(f"compare --pairs {spec}: expected a function pairs(context), found none")
    return module


def _select(cases: Sequence[Any], only: Sequence[str], source: str) -> list[Case]:
    wrong = [c for c in cases if not isinstance(c, Case)]
    if wrong:
        raise DynlocustError(f"{source}: expected pairs(context) to return Case objects, found {wrong[0]!r}")
    selected = [c for c in cases if not only or any(text in c.name for text in only)]
    if not selected:
        raise DynlocustError(f"compare --only: expected text found in an operation name, found {list(only)}")
    return selected


def run(
    endpoint: str,
    *,
    region: str = "us-east-1",
    runs: int = 5,
    repeat: int = 5,
    only: Sequence[str] = (),
    adapter: str = "dynlocust",
    pairs: str | None = None,
) -> list[Row]:
    """Create the tables (named with a fresh run id), seed them, measure every row, delete the tables.

    With `pairs` (a module name or file), its `pairs(context)` rows are measured instead, and its optional
    `teardown(context)` runs at the end whatever happened.
    """
    client = make_client(endpoint, region=region, connect_timeout=5, read_timeout=30, pool_size=10)
    prefix = f"dynlocust-compare-{uuid.uuid4().hex[:8]}"
    if pairs is not None:
        module = load_pairs(pairs)
        context = PairContext(client, endpoint, region, prefix)
        try:
            try:
                rows = list(module.pairs(context))
            except Exception as exc:
                raise DynlocustError(
                    f"compare --pairs {pairs}: expected pairs(context) to return its rows, "
                    f"found {type(exc).__name__}: {exc}"
                ) from exc
            cases = _select(rows, only, f"compare --pairs {pairs}")
            return [measure(context, case, runs, repeat) for case in cases]
        finally:
            teardown = getattr(module, "teardown", None)
            if callable(teardown):
                try:
                    teardown(context)
                except Exception as exc:  # report, never mask the run's own error
                    print(f"warning: compare --pairs {pairs}: teardown failed: {exc}", file=sys.stderr)
    if adapter not in ADAPTERS:
        raise DynlocustError(f"compare --adapter: expected one of {', '.join(ADAPTERS)}, found {adapter!r}")
    client.list_tables(Limit=1)  # the endpoint answers and takes the credentials before a table is created
    bench = Bench(client, prefix)
    try:
        bench.create_tables()
        bench.seed()
        mapper: ReferenceMapper | None = None
        if adapter == "pynamodb":
            from dynlocust.compare.pynamodb_reference import PynamoDBMapper

            mapper = PynamoDBMapper(bench, endpoint, region)
        cases = _select(bench.cases(mapper), only, "compare")
        return [measure(bench, case, runs, repeat) for case in cases]
    finally:
        bench.delete_tables()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.runs < 1 or args.repeat < 1:
        print("dynlocust compare: error: expected --runs and --repeat >= 1", file=sys.stderr)
        return ExitCode.BAD_INPUT
    if args.pairs and args.adapter:
        print(
            f"dynlocust compare: error: expected either --adapter or --pairs, found --adapter {args.adapter} "
            f"and --pairs {args.pairs}",
            file=sys.stderr,
        )
        return ExitCode.BAD_INPUT
    adapter = args.adapter or "dynlocust"
    local = None
    try:
        baseline = diff_mapper.load_baseline(args)  # a bad baseline exits 2 before anything runs
        endpoint = args.endpoint
        if not endpoint:
            from dynlocust.local.embedded import LocalEndpoint

            local = LocalEndpoint(capacity=False).start()
            endpoint = local.url
        with endpoint_errors(endpoint, option="--endpoint"):
            rows = run(
                endpoint,
                region=args.region,
                runs=args.runs,
                repeat=args.repeat,
                only=args.only or (),
                adapter=adapter,
                pairs=args.pairs,
            )
        label = args.pairs or adapter
        where = "local (embedded)" if local else endpoint
        print(format_table(rows, args.runs, args.repeat, where, label))
        return diff_mapper.finish(args, baseline, rows, endpoint=where)
    except DynlocustError as exc:
        print(f"dynlocust compare: error: {exc}", file=sys.stderr)
        return exc.exit_code
    finally:
        if local is not None:
            local.stop()


__all__ = [
    "ADAPTERS",
    "Bench",
    "Case",
    "DynlocustMapper",
    "PairContext",
    "ReferenceMapper",
    "Row",
    "build_parser",
    "format_table",
    "load_pairs",
    "main",
    "measure",
    "run",
]
