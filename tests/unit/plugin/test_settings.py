"""Options are validated once, into Settings; every bad value names the option, what was expected and found."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.plugin.settings import Settings, from_options
from dynlocust.run.saturation import Thresholds
from dynlocust.scenario.catalog import SHIPPED_DIR
from dynlocust.scenario.scale import Scaling


def test_defaults() -> None:
    settings = from_options(Namespace())
    assert settings == Settings()
    assert settings.deadline == 8.0 and settings.effective_read_timeout == 8.0
    assert settings.metrics_host == "127.0.0.1" and settings.metrics_port == 9646


@pytest.mark.parametrize(
    ("options", "field", "value"),
    [
        ({"deadline": "2.5"}, "deadline", 2.5),
        ({"read_timeout": "1"}, "effective_read_timeout", 1.0),
        ({"read_timeout": ""}, "read_timeout", None),
        ({"pool_size": "64"}, "pool_size", 64),
        ({"metrics_port": "0"}, "metrics_port", 0),
        ({"region": "eu-west-1"}, "region", "eu-west-1"),
        ({"stall_seconds": "30"}, "stall_seconds", 30.0),
        ({"run_margin_seconds": "5"}, "run_margin", 5.0),
        ({"master_timeout": "3"}, "master_timeout", 3.0),
        ({"client_cpu": "0.8"}, "thresholds", Thresholds(cpu=0.8)),
        (
            {"client_late_min": "50", "client_late_seconds": "0.05"},
            "thresholds",
            Thresholds(late_min=50, late_seconds=0.05),
        ),
        ({"client_dropped_fraction": "0"}, "thresholds", Thresholds(dropped_fraction=0.0)),
        ({"run_id": "nightly-2026.11_30"}, "run_id", "nightly-2026.11_30"),
        ({"run_id": "x" * 64}, "run_id", "x" * 64),
        ({"rate_scale": "0.025", "duration_scale": "0.25"}, "scaling", Scaling(rate=0.025, duration=0.25)),
        ({"local": True, "capacity_scale": "2", "time_scale": "3"}, "scaling", Scaling(True, capacity=2, time=3)),
        ({"local": "true"}, "scaling", Scaling(local=True)),  # from DYNLOCUST_LOCAL, as text
        ({"local": "0", "rate_scale": ""}, "scaling", Scaling()),
        ({"scenario": "quickstart"}, "scenario", str(SHIPPED_DIR / "quickstart.yaml")),  # a bare name, shipped
        ({"web_origin": "https://Locust.Example.com/"}, "web_origin", "https://locust.example.com"),
        ({"web_origin": "http://10.0.0.5:8089"}, "web_origin", "http://10.0.0.5:8089"),
        ({"web_origin": ""}, "web_origin", ""),
    ],
)
def test_good_values(options: dict, field: str, value: object) -> None:
    assert getattr(from_options(Namespace(**options)), field) == value


WEB_ORIGIN = "expected an origin such as https://locust.example.com (http or https, a host, no path)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deadline": "0"}, "--deadline: expected a positive number of seconds, found '0'"),
        ({"deadline": "nan"}, "--deadline: expected a positive number of seconds, found 'nan'"),
        ({"connect_timeout": "soon"}, "--connect-timeout: expected a positive number of seconds, found 'soon'"),
        ({"read_timeout": "-1"}, "--read-timeout: expected a positive number of seconds, found '-1'"),
        ({"pool_size": "-3"}, "--pool-size: expected a whole number >= 0, found '-3'"),
        ({"metrics_port": "70000"}, "--metrics-port: expected a TCP port from 0 to 65535, found 70000"),
        ({"region": "us east 1"}, "--region: expected an AWS region name such as us-east-1, found 'us east 1'"),
        ({"stall_seconds": "-1"}, "--stall-seconds: expected a positive number of seconds, found '-1'"),
        ({"client_cpu": "1.5"}, "--client-cpu: expected a number from 0.05 to 1, found '1.5'"),
        ({"client_cpu": "high"}, "--client-cpu: expected a number from 0.05 to 1, found 'high'"),
        ({"client_late_min": "2.5"}, "--client-late-min: expected a whole number from 1 to 1,000,000,000, found '2.5'"),
        ({"client_late_fraction": "nan"}, "--client-late-fraction: expected a number from 0 to 1, found 'nan'"),
        ({"client_cpu_min_seconds": "0"}, "--client-cpu-min-seconds: expected a number from 0.1 to 3600, found '0'"),
        ({"rate_scale": "fast"}, "--rate-scale: expected a positive scale factor such as 0.25, found 'fast'"),
        ({"time_scale": "-2"}, "--time-scale: expected a scale factor above 0 and at most 1000, found '-2'"),
        ({"web_origin": "locust.example.com"}, f"--web-origin: {WEB_ORIGIN}, found 'locust.example.com'"),
        ({"web_origin": "https://x.example/locust"}, f"--web-origin: {WEB_ORIGIN}, found 'https://x.example/locust'"),
        ({"web_origin": "ftp://x.example"}, f"--web-origin: {WEB_ORIGIN}, found 'ftp://x.example'"),
        ({"web_origin": "https://x.example:99999"}, f"--web-origin: {WEB_ORIGIN}, found 'https://x.example:99999'"),
        ({"web_origin": "https://u@x.example"}, f"--web-origin: {WEB_ORIGIN}, found 'https://u@x.example'"),
    ],
)
def test_bad_values(options: dict, message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        from_options(Namespace(**options))
    assert str(raised.value) == message


def test_a_scenario_name_that_is_neither_a_file_nor_shipped_is_refused() -> None:
    expected = r"^--scenario: quikstart: expected a scenario file or a shipped scenario \("
    with pytest.raises(ConfigurationError, match=expected):
        from_options(Namespace(scenario="quikstart"))


@pytest.mark.parametrize(
    "run_id", ["..", ".", "../escape", "a/b", "/abs", "a..b", "-flag", "run id", "r\u00e9", "x" * 65, "a\nb"]
)
def test_unsafe_run_ids_are_refused(run_id: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        from_options(Namespace(run_id=run_id))
    message = str(raised.value)
    assert message.startswith("--run-id: expected 1 to 64 of letters, digits, '_', '-' or '.'")
    assert message.endswith(f"found {run_id!r}") and "\n" not in message


@pytest.mark.parametrize(("argv", "env", "host"), [([], {}, "127.0.0.1"), (["--web-host", "0.0.0.0"], {}, "0.0.0.0"),
    ([], {"LOCUST_WEB_HOST": "10.0.0.5"}, "10.0.0.5")])  # fmt: skip
def test_the_web_ui_defaults_to_loopback_and_stays_overridable(
    argv: list[str], env: dict[str, str], host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from locust.argument_parser import get_parser

    import dynlocust.user_classes.dynamodb_user  # noqa: F401 - registers the plugin, its options included

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    options = get_parser(default_config_files=[]).parse_args(["-f", "locustfiles/scenario.py", *argv])
    assert options.web_host == host


def test_the_results_table_is_a_setting_of_its_options_or_their_environment_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from locust.argument_parser import get_parser

    import dynlocust.user_classes.dynamodb_user  # noqa: F401 - registers the plugin, its options included
    from dynlocust.fleet.results_table import ResultsTable

    parser = get_parser(default_config_files=[])
    for name in ("DYNLOCUST_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    assert from_options(parser.parse_args(["-f", "x.py"])).results_table == ResultsTable(region="us-east-1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")  # read as before the table was a setting
    assert from_options(parser.parse_args(["-f", "x.py"])).results_table.region == "ap-south-1"
    monkeypatch.setenv("AWS_REGION", "sa-east-1")
    assert from_options(parser.parse_args(["-f", "x.py"])).results_table.region == "sa-east-1"
    monkeypatch.setenv("DYNLOCUST_RESULTS_TABLE", "dynlocust-results-r1")  # as the ECS task definition sets it
    monkeypatch.setenv("DYNLOCUST_REGION", "eu-west-1")
    monkeypatch.setenv("DYNLOCUST_RESULTS_ENDPOINT", "http://127.0.0.1:8000")
    assert from_options(parser.parse_args(["-f", "x.py"])).results_table == ResultsTable(
        "dynlocust-results-r1", "eu-west-1", "http://127.0.0.1:8000"
    )
    given = parser.parse_args(["-f", "x.py", "--results-table", "other", "--region", "us-west-2"])
    assert from_options(given).results_table == ResultsTable("other", "us-west-2", "http://127.0.0.1:8000")


def test_a_relative_results_dir_is_read_against_the_working_directory_it_was_given_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert from_options(Namespace()).results_dir == str(tmp_path / "results")  # the default, too
    assert from_options(Namespace(results_dir="out/runs")).results_dir == str(tmp_path / "out" / "runs")
    assert from_options(Namespace(results_dir="/abs/runs")).results_dir == "/abs/runs"
