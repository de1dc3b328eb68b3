"""`dynlocust run | local | validate | report | compare | diff | ecs | scenarios | init`: the command line.

`run` is Locust itself, pointed at dynlocust's scenario locustfile, so `dynlocust run FILE` and
`locust -f locustfiles/scenario.py --scenario FILE --headless` are the same run; any further arguments pass through to
Locust. Errors the user can fix are printed as one paragraph with exit code 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dynlocust.errors import DynlocustError

SCENARIO_LOCUSTFILE = Path(__file__).with_name("locustfile.py")


def _run(args: argparse.Namespace, passthrough: list[str]) -> int:
    try:
        return _run_locust(args, passthrough)
    except KeyboardInterrupt:  # before Locust's init routed interrupts (later ones shut down through `quitting`)
        from dynlocust.coordination import EXIT_ABORTED

        print("dynlocust: interrupted before the run began; no table was created", file=sys.stderr)
        return EXIT_ABORTED


def _run_locust(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.scenario import load_scenario
    from dynlocust.scenario.catalog import resolve

    args.scenario = resolve(args.scenario)  # a bare name is a shipped scenario
    scenario = load_scenario(args.scenario)  # fail early, before Locust starts
    if args.baseline:  # so is a bad baseline or gate
        from dynlocust.diff import cli as diff_cli

        baseline, passthrough, new_results = diff_cli.prepare_run(args, passthrough)
    argv = [
        "locust",
        "-f",
        str(SCENARIO_LOCUSTFILE),
        "--headless",
        "--scenario",
        args.scenario,
        "-u",
        str(scenario.concurrency),
        "-r",
        str(scenario.concurrency),
        *(["--host", args.host] if args.host else []),
        # dynlocust prints a line per closed window; Locust's periodic tables would bury them
        *([] if "--print-stats" in passthrough else ["--only-summary"]),
        *passthrough,
    ]
    from locust import main as locust_main

    sys.argv = argv
    code = 0
    try:
        locust_main.main()
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    if args.baseline:
        return diff_cli.after_run(args, baseline, new_results, code)
    return code


def _local(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.local.__main__ import main as local_main

    return local_main(passthrough)


def _report(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.report.build import main as report_main

    return report_main(passthrough)


def _compare(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.mapper.compare import main as compare_main

    return compare_main(passthrough)


def _diff(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.diff.cli import main as diff_main

    return diff_main(passthrough)


def _ecs(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.deploy.ecs import main as ecs_main

    return ecs_main(passthrough)


def _validate(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.scenario import validate_file
    from dynlocust.scenario.catalog import resolve

    status = 0
    for path in args.files:
        try:
            print(validate_file(resolve(path)))
        except DynlocustError as exc:
            print(f"dynlocust: error: {exc}", file=sys.stderr)
            status = 2
    return status


def _scenarios(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.scenario.catalog import shipped_scenarios

    listed = shipped_scenarios()
    width = max(len(s.name) for s in listed)
    for s in listed:
        print(f"{s.name:<{width}}  {s.target:<6}  {s.summary}")
    return 0


def _init(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.starter import write_starter

    for path in write_starter(Path(args.directory), force=args.force):
        print(f"wrote {path}")
    where = "" if args.directory == "." else f"cd {args.directory}, then "
    print(f"next: {where}dynlocust run scenario.yaml, or read README.md for locust -f locustfile.py")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dynlocust", description="Load-test DynamoDB with Locust.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a scenario headless (further arguments go to Locust)",
        description="Run a scenario headless; arguments after the scenario go to Locust (e.g. --csv, --html).",
    )
    run.add_argument("scenario", help="scenario YAML file, or the name of a shipped one (see `dynlocust scenarios`)")
    run.add_argument("--host", default="", help="DynamoDB endpoint URL (default: the scenario's target)")
    run.add_argument("--baseline", metavar="RESULTS", help="then diff against these results (see dynlocust diff)")
    run.add_argument("--fail-on", default=None, help="with --baseline: the gate (see dynlocust diff --help)")
    run.add_argument("--run-noise", default=None, help="with --baseline: see dynlocust diff --help")
    run.add_argument("--diff-format", dest="format", choices=("console", "markdown"), default="console")
    run.add_argument("--diff-markdown", dest="markdown", metavar="FILE", help="with --baseline: the diff as Markdown")
    run.add_argument("--diff-html", dest="html", metavar="FILE", help="with --baseline: the diff as HTML")
    run.set_defaults(handler=_run)
    local = commands.add_parser("local", help="serve the local DynamoDB-compatible endpoint", add_help=False)
    local.set_defaults(handler=_local)
    report = commands.add_parser(
        "report", help="rebuild the HTML, Markdown, CSV and PNG reports of a results file", add_help=False
    )
    report.set_defaults(handler=_report)
    compare = commands.add_parser(
        "compare", help="time the mapper against the raw client, operation by operation", add_help=False
    )
    compare.set_defaults(handler=_compare)
    diff = commands.add_parser(
        "diff", help="compare two runs or two compare tables; exit 3 on a significant regression", add_help=False
    )
    diff.set_defaults(handler=_diff)
    ecs = commands.add_parser(
        "ecs", help="run a scenario on ECS Fargate (master + N workers), then tear down", add_help=False
    )
    ecs.set_defaults(handler=_ecs)
    validate = commands.add_parser("validate", help="check scenario files and summarise them")
    validate.add_argument("files", nargs="+", help="scenario YAML files, or names of shipped ones")
    validate.set_defaults(handler=_validate)
    scenarios = commands.add_parser("scenarios", help="list the shipped scenarios (run one with `dynlocust run NAME`)")
    scenarios.set_defaults(handler=_scenarios)
    init = commands.add_parser("init", help="write a starter project: locustfile, scenario, locust.conf, README")
    init.add_argument("directory", nargs="?", default=".", help="where to write it (default: here)")
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.set_defaults(handler=_init)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, passthrough = parser.parse_known_args(argv)
    if passthrough and args.command in ("validate", "scenarios", "init"):
        parser.error(f"unrecognized arguments: {' '.join(passthrough)}")
    try:
        return int(args.handler(args, passthrough))
    except DynlocustError as exc:
        print(f"dynlocust: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
