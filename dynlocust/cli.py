"""`dynlocust run | ui | local | validate | report | compare | diff | ecs | k8s | scenarios | init | witness`: the
command line.

`run` is Locust itself, pointed at dynlocust's scenario locustfile, so `dynlocust run FILE` and
`locust -f locustfiles/scenario.py --scenario FILE --headless` are the same run; any further arguments pass through to
Locust. Errors the user can fix are printed as one paragraph with exit code 2, never as a traceback; every way a
command ends prints its `exit code N: meaning` line last (`dynlocust.exit_codes.say`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynlocust.errors import ConfigurationError, DynlocustError

if TYPE_CHECKING:
    from dynlocust.plugin.settings import Settings

SCENARIO_LOCUSTFILE = Path(__file__).parent / "user_classes" / "locustfile.py"


class _Options:
    """Registers dynlocust's Locust options (`dynlocust.plugin.settings`) on an argparse group too, for `run`'s and
    `validate`'s help and early checks. Each help names its DYNLOCUST_* variable; an option not given stays out of
    the namespace (SUPPRESS), so only what the user typed is passed on to Locust, which reads the variables itself.
    """

    def __init__(self, group: Any, skip: tuple[str, ...] = ()) -> None:
        self.group = group
        self.skip = skip
        self.options: list[tuple[str, str, str, bool]] = []
        """(option, dest, env var, is a flag) of every option registered."""

    def add_argument(self, option: str, **kwargs: Any) -> None:
        if option in self.skip:
            return
        env = kwargs.pop("env_var")
        kwargs.pop("include_in_web_ui", None)
        kwargs.pop("type", None)
        kwargs["default"] = argparse.SUPPRESS
        kwargs["help"] = f"{kwargs.get('help', '')} [env {env}]"
        action = self.group.add_argument(option, **kwargs)
        self.options.append((option, action.dest, env, kwargs.get("action") == "store_true"))

    def set_defaults(self, **_kwargs: Any) -> None:
        """Locust's defaults (e.g. the web UI's host) are Locust's business."""

    def values(self, args: argparse.Namespace) -> argparse.Namespace:
        """The options as the run will see them: typed ones, else their environment variables."""
        given = vars(args)
        found = {dest: given[dest] if dest in given else os.environ.get(env) for _, dest, env, _ in self.options}
        return argparse.Namespace(**{dest: value for dest, value in found.items() if value is not None})

    def argv(self, args: argparse.Namespace) -> list[str]:
        """The typed options again, as arguments for Locust."""
        out: list[str] = []
        for option, dest, _, flag in self.options:
            if dest in vars(args):
                value = getattr(args, dest)
                out += ([option] if value else []) if flag else [option, str(value)]
        return out


def _settings(args: argparse.Namespace) -> Settings:
    """dynlocust's options validated now, before anything starts (one line and exit 2 on a bad one)."""
    from dynlocust.plugin import settings

    return settings.from_options(args.options.values(args))


def _run(args: argparse.Namespace, passthrough: list[str]) -> int:
    try:
        return _run_locust(args, passthrough)
    except KeyboardInterrupt:  # before Locust's init routed interrupts (later ones shut down through `quitting`)
        from dynlocust.exit_codes import ExitCode

        print("dynlocust: interrupted before the run began; no table was created", file=sys.stderr)
        return ExitCode.ABORTED


def _ui(args: argparse.Namespace, passthrough: list[str]) -> int:
    """Locust's web UI on the scenario locustfile inside the package: works wherever the package is installed."""
    from dynlocust.scenario import scale
    from dynlocust.scenario.catalog import resolve

    args.scenario = resolve(args.scenario)
    settings = _settings(args)
    scale.load(args.scenario, settings.scaling)  # fail early, before Locust starts
    web_host = (
        []
        if any(a == "--web-host" or a.startswith("--web-host=") for a in passthrough)
        else ["--web-host", "127.0.0.1"]
    )
    sys.argv = ["locust", "-f", str(SCENARIO_LOCUSTFILE), "--scenario", args.scenario, *web_host,
                *(["--host", args.host] if args.host else []), *args.options.argv(args), *passthrough]  # fmt: skip
    from locust import main as locust_main
    from locust.argument_parser import get_parser

    from dynlocust.plugin.settings import check_bindable

    web = get_parser().parse_known_args(sys.argv[1:])[0]  # as Locust will read them: options, variables, locust.conf
    if not web.headless:
        check_bindable("--web-port", web.web_host, web.web_port)

    try:
        locust_main.main()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def _run_locust(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.plugin import console
    from dynlocust.scenario import scale

    console.tolerate_closed_stdout()
    from dynlocust.scenario.catalog import resolve

    args.scenario = resolve(args.scenario)  # a bare name is a shipped scenario
    settings = _settings(args)
    if settings.scaling.local and args.host:
        raise ConfigurationError(f"--local: uses the embedded endpoint, so expected no --host, found {args.host}")
    scenario = scale.load(args.scenario, settings.scaling)  # fail early, before Locust starts
    if not settings.scaling.is_identity:
        print(f"dynlocust: {scenario.name} scaled ({settings.scaling.describe()})", flush=True)
    if args.baseline:  # so is a bad baseline or gate
        from dynlocust.observe.diff import cli as diff_cli

        baseline, passthrough, new_results = diff_cli.prepare_run(args, passthrough, settings)
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
        *args.options.argv(args),
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
    from dynlocust.observe.report.build import main as report_main

    return report_main(passthrough)


def _plan(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.observe.plan import main as plan_main

    return plan_main(passthrough)


def _compare(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.compare.cli import main as compare_main

    return compare_main(passthrough)


def _diff(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.observe.diff.cli import main as diff_main

    return diff_main(passthrough)


def _ecs(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.launch.ecs import main as ecs_main

    return ecs_main(passthrough)


def _k8s(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.launch.kubernetes import main as k8s_main

    return k8s_main(passthrough)


def _validate(args: argparse.Namespace, passthrough: list[str]) -> int:
    from dynlocust.scenario import describe, scale
    from dynlocust.scenario.catalog import resolve

    scaling = _settings(args).scaling
    status = 0
    for path in args.files:
        try:
            print(describe(scale.load(resolve(path), scaling), scaling))
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


def _cleanup(args: argparse.Namespace, passthrough: list[str]) -> int:
    """List the tables tagged with the run id, ask (unless --yes), delete them."""
    from dynlocust.plugin import settings
    from dynlocust.request.transport.boto3 import endpoint_errors, make_client, validate_endpoint
    from dynlocust.run.cleanup import delete_tables, tables_of_run

    region = args.region or os.environ.get("DYNLOCUST_REGION")
    chosen = settings.from_options(argparse.Namespace(run_id=args.run_id, region=region))
    if args.host:
        validate_endpoint(args.host)
    client = make_client(args.host, region=chosen.region, connect_timeout=5.0, read_timeout=10.0, pool_size=1)
    with endpoint_errors(args.host or f"DynamoDB in {chosen.region}"):
        names = tables_of_run(client, chosen.run_id)
    if not names:
        print(f"dynlocust cleanup: no table is tagged with run id {chosen.run_id}; nothing to delete")
        return 0
    print(f"tables of run {chosen.run_id}: {', '.join(names)}")
    if not args.yes:
        try:
            answer = input(f"delete these {len(names)} tables? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("dynlocust cleanup: nothing deleted")
            return 0
    with endpoint_errors(args.host or f"DynamoDB in {chosen.region}"):
        deleted = delete_tables(client, names)
    print(f"deleted {len(deleted)} tables: {', '.join(deleted)}")
    return 0


def _witness(args: argparse.Namespace, passthrough: list[str]) -> int:
    """CloudWatch's per-minute metrics of a run's tables beside the client's counts (`dynlocust.observe.witness`)."""
    from dynlocust.exit_codes import ExitCode
    from dynlocust.observe import witness
    from dynlocust.request.transport.boto3 import make_client, validate_endpoint

    region = args.region or os.environ.get("DYNLOCUST_REGION") or "us-east-1"
    if args.host:
        validate_endpoint(args.host)
    client = make_client(
        args.host, region=region, connect_timeout=5.0, read_timeout=30.0, pool_size=1, service="cloudwatch"
    )
    text, found = witness.witness(args.results, client)
    print(text)
    return ExitCode.FAILED if found else ExitCode.PASSED


def build_parser() -> argparse.ArgumentParser:
    from dynlocust.plugin.settings import add_arguments, add_scaling_arguments

    parser = argparse.ArgumentParser(prog="dynlocust", description="Load-test DynamoDB with Locust.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="run a scenario headless (further arguments go to Locust)",
        usage="dynlocust run SCENARIO [dynlocust options] [Locust options]",
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
    options = _Options(
        run.add_argument_group(
            "dynlocust options",
            "Also taken by `locust -f` (there Locust's --help cannot list them: it prints before the locustfile "
            "loads). Any other option goes to Locust.",
        ),
        skip=("--scenario",),
    )
    add_arguments(options)
    run.set_defaults(handler=_run, options=options)
    ui = commands.add_parser(
        "ui",
        help="run a scenario from Locust's web UI on 127.0.0.1 (further arguments go to Locust)",
        usage="dynlocust ui SCENARIO [dynlocust options] [Locust options]",
        description="Serve Locust's web UI for a scenario (on 127.0.0.1:8089 unless --web-host/--web-port say "
        "otherwise); each Start is a run, each run ends with its report. Arguments after the scenario go to Locust.",
    )
    ui.add_argument("scenario", help="scenario YAML file, or the name of a shipped one (see `dynlocust scenarios`)")
    ui.add_argument("--host", default="", help="DynamoDB endpoint URL (default: the scenario's target)")
    ui_options = _Options(ui.add_argument_group("dynlocust options", "As for `dynlocust run`."), skip=("--scenario",))
    add_arguments(ui_options)
    ui.set_defaults(handler=_ui, options=ui_options)
    local = commands.add_parser("local", help="serve the local DynamoDB-compatible endpoint", add_help=False)
    local.set_defaults(handler=_local)
    report = commands.add_parser(
        "report", help="rebuild the HTML, Markdown, CSV and PNG reports of a results file", add_help=False
    )
    report.set_defaults(handler=_report)
    plan = commands.add_parser(
        "plan", help="a capacity plan from a ceiling search's results (units, settings, cost)", add_help=False
    )
    plan.set_defaults(handler=_plan)
    compare = commands.add_parser(
        "compare", help="time the mapper against the raw client, operation by operation", add_help=False
    )
    compare.set_defaults(handler=_compare)
    diff = commands.add_parser(
        "diff", help="compare two runs or two compare tables; exit 6 on a significant regression", add_help=False
    )
    diff.set_defaults(handler=_diff)
    ecs = commands.add_parser(
        "ecs", help="run a scenario on ECS Fargate (master + N workers), then tear down", add_help=False
    )
    ecs.set_defaults(handler=_ecs)
    k8s = commands.add_parser("k8s", help="render a scenario's fleet as Kubernetes manifests", add_help=False)
    k8s.set_defaults(handler=_k8s)
    validate = commands.add_parser("validate", help="check scenario files and summarise them")
    validate.add_argument("files", nargs="+", help="scenario YAML files, or names of shipped ones")
    scaling = _Options(validate.add_argument_group("scaling (as for `dynlocust run`)"))
    add_scaling_arguments(scaling)
    validate.set_defaults(handler=_validate, options=scaling)
    scenarios = commands.add_parser("scenarios", help="list the shipped scenarios (run one with `dynlocust run NAME`)")
    scenarios.set_defaults(handler=_scenarios)
    cleanup = commands.add_parser("cleanup", help="delete a run's leftover tables (those tagged with its run id)")
    cleanup.add_argument("--run-id", required=True, help="the run whose tables to delete")
    cleanup.add_argument("--host", default=None, help="DynamoDB endpoint URL (default: AWS's, for --region)")
    cleanup.add_argument("--region", default=None, help="AWS region (default us-east-1, or DYNLOCUST_REGION)")
    cleanup.add_argument("--yes", action="store_true", help="delete without asking")
    cleanup.set_defaults(handler=_cleanup)
    witness = commands.add_parser(
        "witness", help="set CloudWatch's per-minute metrics of a run's tables beside the client's counts"
    )
    witness.add_argument("results", help="the run's results.jsonl")
    witness.add_argument("--host", default=None, help="the endpoint that answers CloudWatch (default: AWS's)")
    witness.add_argument("--region", default=None, help="AWS region (default us-east-1, or DYNLOCUST_REGION)")
    witness.set_defaults(handler=_witness)
    init = commands.add_parser("init", help="write a starter project: locustfile, scenario, locust.conf, README")
    init.add_argument("directory", nargs="?", default=".", help="where to write it (default: here)")
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.set_defaults(handler=_init)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Every way the command ends, ending with its `exit code N: meaning` line (on stderr, so stdout stays the
    command's output: manifests, Markdown), in the command's own words. A run's epilogue says it first; the line is
    added here only when none was said or the code changed since (a run's diff). `--help` ran nothing and has no
    line. A reader that closed stdout early (`| head -1`) cut the output short: one line, exit 1."""
    from dynlocust.exit_codes import ExitCode, last_said, say

    pid = os.getpid()
    command: list[str] = []
    try:
        code = _dispatch(argv, command)
    except SystemExit as exit_:  # argparse's usage errors and --help, ours or a subcommand's
        if exit_.code in (0, None):
            return 0
        code = exit_.code if isinstance(exit_.code, int) else ExitCode.FAILED
    except KeyboardInterrupt:
        code = ExitCode.ABORTED
    except BrokenPipeError:
        _stdout_closed()
        code = ExitCode.FAILED
    from dynlocust.plugin.console import stdout_lost

    if (last_said() != code or stdout_lost()) and os.getpid() == pid:  # a child of `--processes` is not the command
        with contextlib.suppress(OSError):  # stderr closed too: the exit code still says it
            say(code, sys.stderr, command[0] if command else None)
    return int(code)


def _stdout_closed() -> None:
    """Say once that stdout's reader went away; point stdout at /dev/null so the interpreter's own flush at exit
    does not print a second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    with contextlib.suppress(OSError):
        print(
            "dynlocust: error: stdout: expected a reader for the whole output, found it closed early", file=sys.stderr
        )


def _dispatch(argv: Sequence[str] | None, command: list[str]) -> int:
    parser = build_parser()
    args, passthrough = parser.parse_known_args(argv)
    command.append(args.command)
    if args.command in ("run", "ui"):  # a SIGTERM from now on exits 4, not 143 (Locust's handler comes later)
        from dynlocust.plugin import lifeline

        lifeline.install_early()
    if passthrough and args.command in ("validate", "scenarios", "init", "cleanup", "witness"):
        parser.error(f"unrecognized arguments: {' '.join(passthrough)}")
    try:
        return int(args.handler(args, passthrough))
    except DynlocustError as exc:
        print(f"dynlocust: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
