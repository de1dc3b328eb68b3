"""Command-line options (each with a `DYNLOCUST_*` environment variable), registered on Locust's parser.

Options are registered through Locust's `init_command_line_parser` so that `locust -f`, `dynlocust run` and the web
UI's start form all see the same ones, and they are validated once, at start-up, into a frozen `Settings`.
"""

from __future__ import annotations

import math
import os
import re
from argparse import Namespace
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from dynlocust.errors import ConfigurationError, DynlocustError
from dynlocust.fleet.results_table import ResultsTable
from dynlocust.run.saturation import THRESHOLD_FIELDS, Thresholds
from dynlocust.scenario.catalog import resolve
from dynlocust.scenario.scale import Scaling, factor

DEFAULT_DEADLINE = 8.0
DEFAULT_CONNECT_TIMEOUT = 3.0
DEFAULT_REGION = "us-east-1"
DEFAULT_METRICS_PORT = 9646
DEFAULT_MASTER_TIMEOUT = 10.0
DEFAULT_WEB_HOST = "127.0.0.1"
MAX_RUN_ID = 64
"""A run id names a folder under --results-dir and ends every physical table name (at most 255 characters)."""
_RUN_ID_RE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{MAX_RUN_ID - 1}}}")


@dataclass(frozen=True)
class Settings:
    """Validated dynlocust options. Times are seconds; `read_timeout=None` means "the deadline"."""

    deadline: float = DEFAULT_DEADLINE
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float | None = None
    region: str = DEFAULT_REGION
    pool_size: int = 0
    scenario: str = ""
    results_dir: str = field(default_factory=lambda: os.path.abspath("results"))
    """Absolute: a relative one given is read against the working directory at start-up (`_results_dir`)."""
    run_id: str = ""
    metrics_host: str = "127.0.0.1"
    metrics_port: int = DEFAULT_METRICS_PORT
    web_origin: str = ""
    metrics_port_given: bool = False
    """--metrics-port (or its variable) was given: a port that cannot be bound stops the process (exit 2); the
    default one taken by another process only loses /metrics, with a warning at the start and at the end."""
    witness: bool = False
    """At the run's end, once its last minute has settled, set CloudWatch's metrics beside the client's counts."""
    stall_seconds: float | None = None
    run_margin: float | None = None
    master_timeout: float = DEFAULT_MASTER_TIMEOUT
    thresholds: Thresholds = field(default_factory=Thresholds)
    scaling: Scaling = field(default_factory=Scaling)
    results_table: ResultsTable = field(default_factory=lambda: ResultsTable(region=DEFAULT_REGION))
    """Where the master also publishes its results records, for a launcher to poll (`dynlocust ecs run`)."""

    @property
    def effective_read_timeout(self) -> float:
        return self.read_timeout if self.read_timeout is not None else self.deadline


def add_arguments(parser: Any, **_kwargs: Any) -> None:
    """Register every dynlocust option on a Locust (configargparse) parser (Locust's `init_command_line_parser`)."""
    group = parser  # Locust's own parser: its argument groups do not take include_in_web_ui
    # Locust's web UI can start load with the operator's credentials: loopback unless --web-host says otherwise
    # (Locust's default is every interface). DEFAULT_WEB_HOST is a default only: the option and env var still win.
    # So is the master's port (5557) under --processes: whoever joins it has numbers merged into the results. A
    # distributed fleet's master passes --master-bind-host explicitly.
    parser.set_defaults(web_host=DEFAULT_WEB_HOST, master_bind_host=DEFAULT_WEB_HOST)
    group.add_argument(
        "--deadline",
        type=str,
        default=str(DEFAULT_DEADLINE),
        env_var="DYNLOCUST_DEADLINE",
        help="Total deadline of one DynamoDB call in seconds, whatever the socket does (default 8).",
    )
    group.add_argument(
        "--connect-timeout",
        type=str,
        default=str(DEFAULT_CONNECT_TIMEOUT),
        env_var="DYNLOCUST_CONNECT_TIMEOUT",
        help="TCP connect timeout in seconds (default 3).",
    )
    group.add_argument(
        "--read-timeout",
        type=str,
        default="",
        env_var="DYNLOCUST_READ_TIMEOUT",
        help="Socket read timeout in seconds (default: the deadline).",
    )
    group.add_argument(
        "--region",
        type=str,
        default=DEFAULT_REGION,
        env_var="DYNLOCUST_REGION",
        help="AWS region of the DynamoDB endpoint (default us-east-1).",
    )
    group.add_argument(
        "--pool-size",
        type=str,
        default="0",
        env_var="DYNLOCUST_POOL_SIZE",
        help="HTTP connections per process (default 0: one per Locust user, at least 10).",
    )
    group.add_argument(
        "--scenario",
        type=str,
        default="",
        env_var="DYNLOCUST_SCENARIO",
        help="Scenario YAML file to run, or the name of a shipped one (see `dynlocust scenarios`).",
    )
    add_scaling_arguments(group)
    group.add_argument(
        "--results-dir",
        type=str,
        default="results",
        env_var="DYNLOCUST_RESULTS_DIR",
        help="Directory that receives one folder of results per run (default ./results).",
    )
    group.add_argument(
        "--run-id",
        type=str,
        default="",
        env_var="DYNLOCUST_RUN_ID",
        help="Identity of the run (default: generated): 1 to 64 letters, digits, '_', '-' or '.', starting with a "
        "letter or digit, without '..'. A run id that already has results is refused.",
    )
    group.add_argument(
        "--results-table",
        type=str,
        default="",
        env_var="DYNLOCUST_RESULTS_TABLE",
        include_in_web_ui=False,
        help="DynamoDB table the master also publishes every results record to, for a launcher to poll "
        "(`dynlocust ecs run` sets it; default none: the results file alone).",
    )
    group.add_argument(
        "--results-endpoint",
        type=str,
        default="",
        env_var="DYNLOCUST_RESULTS_ENDPOINT",
        include_in_web_ui=False,
        help="Endpoint URL of the --results-table (default: AWS's own in --region).",
    )
    group.add_argument(
        "--metrics-host",
        type=str,
        default="127.0.0.1",
        env_var="DYNLOCUST_METRICS_HOST",
        include_in_web_ui=False,
        help="Address the Prometheus /metrics endpoint binds to (default 127.0.0.1).",
    )
    group.add_argument(
        "--web-origin",
        type=str,
        default="",
        env_var="DYNLOCUST_WEB_ORIGIN",
        include_in_web_ui=False,
        help="The scheme://host[:port] a reverse proxy serves the web UI at: its pages may drive the UI too "
        "(default: only the address the UI was requested at). See docs/options.md.",
    )
    group.add_argument(
        "--metrics-port",
        type=str,
        default="",
        env_var="DYNLOCUST_METRICS_PORT",
        include_in_web_ui=False,
        help="Port of the Prometheus /metrics endpoint (default 9646; 0 turns it off).",
    )

    group.add_argument(
        "--witness",
        action="store_true",
        default=False,
        env_var="DYNLOCUST_WITNESS",
        include_in_web_ui=False,
        help="At the end of a headless run, once its last minute has settled (a minute on a local endpoint, five on "
        "AWS), read CloudWatch's per-minute metrics of its tables and set them beside the client's counts, as "
        "`dynlocust witness` does (needs cloudwatch:GetMetricData).",
    )
    group.add_argument(
        "--stall-seconds",
        type=str,
        default="",
        env_var="DYNLOCUST_STALL_SECONDS",
        include_in_web_ui=False,
        help="Watchdog: stop the run when requests are in flight and none completed for this long "
        "(default: the deadline + 10 s).",
    )
    group.add_argument(
        "--run-margin-seconds",
        type=str,
        default="",
        env_var="DYNLOCUST_RUN_MARGIN_SECONDS",
        include_in_web_ui=False,
        help="Watchdog: seconds past the plan's end (and the deadline) by which a run must be over "
        "(default: max(30, 10%% of the plan)).",
    )
    group.add_argument(
        "--master-timeout",
        type=str,
        default=str(DEFAULT_MASTER_TIMEOUT),
        env_var="DYNLOCUST_MASTER_TIMEOUT",
        include_in_web_ui=False,
        help="A worker stops on its own after this many seconds without a heartbeat from the master (default 10).",
    )
    for f in THRESHOLD_FIELDS:
        option = threshold_option(f.name)
        group.add_argument(
            option,
            type=str,
            default=str(f.default),
            env_var=env_var(option),
            include_in_web_ui=False,
            help=f"Client-bound verdicts: {f.metadata['why']} (default {f.default}).".replace("%", "%%"),
        )


SCALING_OPTIONS = (
    ("--rate-scale", "rate", "Multiply every offered rate (and the SLOs' rate bounds) by this factor (default 1)."),
    ("--duration-scale", "duration", "Multiply every window (and the bin) by this factor (default 1)."),
    (
        "--capacity-scale",
        "capacity",
        "Local endpoint: multiply its emulated capacity by this factor (default: the --rate-scale, so the outcome "
        "keeps its shape).",
    ),
    (
        "--time-scale",
        "time",
        "Local endpoint: multiply its clock's speed by this factor (default: 1 / --duration-scale, so capacity "
        "changes keep pace with the windows).",
    ),
)
"""(option, `Scaling` field, help) of the factors applied to the loaded scenario (`dynlocust.scenario.scale`)."""


def env_var(option: str) -> str:
    """The environment variable of an option: `--rate-scale` -> `DYNLOCUST_RATE_SCALE`."""
    return "DYNLOCUST_" + option[2:].upper().replace("-", "_")


def add_scaling_arguments(parser: Any) -> None:
    """`--local` and the scale factors, on Locust's parser (`locust -f`, `dynlocust run`) or `dynlocust validate`'s.

    Not in the web UI's form: they shape the plan, which the process reads once, at start-up."""
    parser.add_argument(
        "--local",
        action="store_true",
        default=False,
        env_var="DYNLOCUST_LOCAL",
        include_in_web_ui=False,
        help="Run a remote scenario against the embedded local endpoint instead.",
    )
    for option, _, why in SCALING_OPTIONS:
        parser.add_argument(option, type=str, default="", env_var=env_var(option), include_in_web_ui=False, help=why)


def scaling_from(get: Any) -> Scaling:
    """Validate the scaling options (read with `get(dest, default)`) into a `Scaling`."""
    values: dict[str, float | None] = {}
    for option, name, _ in SCALING_OPTIONS:
        raw = get(option[2:].replace("-", "_"), "")
        values[name] = None if raw in ("", None) else factor(option, raw)
    return Scaling(
        local=_flag(get("local", False)),
        rate=values["rate"] or 1.0,
        duration=values["duration"] or 1.0,
        capacity=values["capacity"],
        time=values["time"],
    )


def _flag(raw: Any) -> bool:
    """A store_true option, also when it came from its environment variable as text."""
    return raw is True or str(raw).strip().lower() in ("1", "true", "yes", "on")


def threshold_option(name: str) -> str:
    """The option of a `Thresholds` field: `cpu_min_seconds` -> `--client-cpu-min-seconds`."""
    return "--client-" + name.replace("_", "-")


def _thresholds(get: Any) -> Thresholds:
    values: dict[str, Any] = {}
    for f in THRESHOLD_FIELDS:
        option, raw = threshold_option(f.name), get(f"client_{f.name}", f.default)
        low, high = f.metadata["low"], f.metadata["high"]
        kind = "a whole number" if isinstance(f.default, int) else "a number"
        expected = (
            f"{kind} from {low:,} to {high:,}" if isinstance(f.default, int) else f"{kind} from {low:g} to {high:g}"
        )
        try:
            value = int(str(raw)) if isinstance(f.default, int) else float(raw)
        except (TypeError, ValueError):
            raise ConfigurationError(f"{option}: expected {expected}, found {raw!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise ConfigurationError(f"{option}: expected {expected}, found {raw!r}")
        values[f.name] = value
    return Thresholds(**values)


def from_options(options: Namespace | None) -> Settings:
    """Validate parsed options once; raise `ConfigurationError` naming the option, what was expected and found."""
    if options is None:
        return Settings()
    get = options.__dict__.get
    deadline = _positive_seconds("--deadline", get("deadline", DEFAULT_DEADLINE))
    connect_timeout = _positive_seconds("--connect-timeout", get("connect_timeout", DEFAULT_CONNECT_TIMEOUT))
    raw_read = get("read_timeout", "")
    read_timeout = None if raw_read in ("", None) else _positive_seconds("--read-timeout", raw_read)
    pool_size = _non_negative_int("--pool-size", get("pool_size", 0))
    raw_port = get("metrics_port", "")
    metrics_port = DEFAULT_METRICS_PORT if raw_port in ("", None) else _non_negative_int("--metrics-port", raw_port)
    if metrics_port > 65535:
        raise ConfigurationError(f"--metrics-port: expected a TCP port from 0 to 65535, found {metrics_port}")
    region = str(get("region") or DEFAULT_REGION)
    if not region.replace("-", "").isalnum():
        raise ConfigurationError(f"--region: expected an AWS region name such as us-east-1, found {region!r}")
    raw_stall = get("stall_seconds", "")
    raw_margin = get("run_margin_seconds", "")
    return Settings(
        stall_seconds=None if raw_stall in ("", None) else _positive_seconds("--stall-seconds", raw_stall),
        run_margin=None if raw_margin in ("", None) else _positive_seconds("--run-margin-seconds", raw_margin),
        master_timeout=_positive_seconds("--master-timeout", get("master_timeout", DEFAULT_MASTER_TIMEOUT)),
        deadline=deadline,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        region=region,
        pool_size=pool_size,
        scenario=_scenario(str(get("scenario") or "")),
        results_dir=_results_dir(str(get("results_dir") or "results")),
        run_id=_run_id(str(get("run_id") or "")),
        metrics_host=str(get("metrics_host") or "127.0.0.1"),
        metrics_port=metrics_port,
        web_origin=_web_origin(str(get("web_origin") or "")),
        metrics_port_given=raw_port not in ("", None),
        witness=_flag(get("witness", False)),
        thresholds=_thresholds(get),
        scaling=scaling_from(get),
        results_table=ResultsTable(
            str(get("results_table") or ""), _results_table_region(region), str(get("results_endpoint") or "")
        ),
    )


def _scenario(raw: str) -> str:
    """The scenario file: as given, or the shipped one of a bare name (as `dynlocust run NAME` takes it)."""
    try:
        return resolve(raw) if raw else raw
    except DynlocustError as exc:
        raise ConfigurationError(f"--scenario: {exc}") from None


def check_bindable(option: str, host: str, port: int) -> None:
    """Raise `ConfigurationError` when `host:port` cannot be listened on now (another process has it), so the
    command stops with one line before anything starts instead of a server's traceback later."""
    import socket

    if not port:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gevent's servers bind
        try:
            probe.bind((host if host not in ("*", "") else "", port))
        except OSError as exc:
            raise ConfigurationError(
                f"{option}: expected a port free to listen on at {host or '*'}, found {port} taken ({exc.strerror})"
            ) from None


def _results_dir(raw: str) -> str:
    """The results directory as an absolute path, against the directory it was given in (the process's working
    directory): a relative one would otherwise be read against whatever a library takes as its base (Flask's
    `send_file` takes Locust's package directory, so the web UI's report link answered 500)."""
    return os.path.abspath(os.path.expanduser(raw))


def _run_id(raw: str) -> str:
    """A run id that is one safe path component and table-name suffix ("" means: generate one)."""
    if raw and (not _RUN_ID_RE.fullmatch(raw) or ".." in raw):
        raise ConfigurationError(
            f"--run-id: expected 1 to {MAX_RUN_ID} of letters, digits, '_', '-' or '.' (starting with a letter or "
            f"digit, without '..'), found {raw!r}"
        )
    return raw


def _web_origin(raw: str) -> str:
    """An origin as a browser sends it, `scheme://host[:port]` lower-cased, or "" for none."""
    if not raw:
        return ""
    try:
        parts = urlsplit(raw.strip())
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number from 0 to 65535
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ConfigurationError(
            f"--web-origin: expected an origin such as https://locust.example.com (http or https, a host, no path), "
            f"found {raw!r}"
        )
    return f"{parts.scheme}://{parts.netloc}".lower()


def _positive_seconds(option: str, raw: Any) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ConfigurationError(f"{option}: expected a positive number of seconds, found {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigurationError(f"{option}: expected a positive number of seconds, found {raw!r}")
    return value


def _non_negative_int(option: str, raw: Any) -> int:
    try:
        value = int(str(raw))
    except ValueError:
        raise ConfigurationError(f"{option}: expected a whole number >= 0, found {raw!r}") from None
    if value < 0:
        raise ConfigurationError(f"{option}: expected a whole number >= 0, found {raw!r}")
    return value


def _results_table_region(region: str) -> str:
    """The results table's region: the run's, when set (`--region` other than the default, or DYNLOCUST_REGION), else
    the AWS CLI's own variables, as the table's region was read before it became a setting (ECS sets
    DYNLOCUST_REGION)."""
    if region != DEFAULT_REGION or "DYNLOCUST_REGION" in os.environ:
        return region
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION
