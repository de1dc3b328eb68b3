"""The start form: what it offers, its defaults, and a Start refused as the command line refuses it."""

from __future__ import annotations

import socket
from argparse import Namespace
from pathlib import Path

import pytest

from dynlocust.errors import ConfigurationError
from dynlocust.local.embedded import LocalEndpoint
from dynlocust.plugin import webform
from dynlocust.plugin.settings import Settings, from_options

OPTIONS = {
    "deadline": "8.0",
    "connect_timeout": "3.0",
    "read_timeout": "",
    "region": "us-east-1",
    "pool_size": "0",
    "scenario": "s.yaml",
    "results_dir": "results",
    "run_id": "",
}


def _options(**over: object) -> Namespace:
    return Namespace(**{**OPTIONS, "num_users": None, "spawn_rate": 1, **over})


def test_a_scenario_run_offers_neither_the_scenario_nor_the_deadline() -> None:
    hidden = webform.not_offered(scenario_run=True, fleet=False)
    assert set(webform.offered(OPTIONS, hidden)) == set(OPTIONS) - {"scenario", "deadline"}


def test_a_fleet_offers_only_what_the_master_applies() -> None:
    hidden = webform.not_offered(scenario_run=True, fleet=True)
    assert set(webform.offered(OPTIONS, hidden)) == {"results_dir", "run_id"}


def test_users_and_spawn_rate_default_to_the_scenarios_concurrency() -> None:
    options = _options()
    webform.fill_defaults(options, 12)
    assert (options.num_users, options.spawn_rate) == (12, 12)


def test_a_user_count_from_the_command_line_is_kept() -> None:
    options = _options(num_users=3, spawn_rate=2.0)
    webform.fill_defaults(options, 12)
    assert (options.num_users, options.spawn_rate) == (3, 2.0)


def test_good_form_values_become_the_settings() -> None:
    hidden = webform.not_offered(scenario_run=True, fleet=False)
    settings = webform.validate({"user_count": "4", "read_timeout": "2", "run_id": "r1"}, _options(), hidden)
    assert settings.effective_read_timeout == 2.0 and settings.run_id == "r1"


@pytest.mark.parametrize(
    ("form", "option"),
    [({"read_timeout": "abc"}, "read_timeout"), ({"run_id": "../x"}, "run_id"), ({"pool_size": "-1"}, "pool_size")],
)
def test_a_bad_value_is_refused_with_the_command_lines_message(form: dict[str, str], option: str) -> None:
    with pytest.raises(ConfigurationError) as on_the_command_line:
        from_options(_options(**form))
    with pytest.raises(ConfigurationError) as in_the_form:
        webform.validate(form, _options(), webform.not_offered(scenario_run=True, fleet=False))
    assert str(in_the_form.value) == str(on_the_command_line.value)
    assert str(in_the_form.value).startswith(f"--{option.replace('_', '-')}: expected")


def test_a_field_the_process_cannot_apply_is_refused_not_ignored() -> None:
    hidden = webform.not_offered(scenario_run=True, fleet=False)
    with pytest.raises(ConfigurationError, match=r"^--scenario: set when the process starts, not from the web UI"):
        webform.validate({"scenario": "missing.yaml"}, _options(), hidden)
    assert webform.validate({"scenario": "s.yaml"}, _options(), hidden).scenario == "s.yaml"  # unchanged: fine


def test_a_bad_host_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"^--host: expected a DynamoDB endpoint URL"):
        webform.validate({"host": "localhost:8000"}, _options(), frozenset())


def test_a_run_id_with_results_is_refused(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.jsonl").write_text("")
    with pytest.raises(ConfigurationError, match=r"^--run-id: expected a new run id, found existing results"):
        webform.validate({"run_id": "old"}, _options(results_dir=str(tmp_path)), frozenset())


def test_preflight_passes_against_an_endpoint_that_answers() -> None:
    with LocalEndpoint(capacity=False) as endpoint:
        webform.preflight(endpoint.url, Settings(), "us-east-1")


def test_preflight_refuses_an_endpoint_that_does_not_answer() -> None:
    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
        with pytest.raises(ConfigurationError, match=r"^--host: expected a DynamoDB endpoint that answers, found none"):
            webform.preflight(url, Settings(connect_timeout=1.0), "us-east-1")


def test_preflight_refuses_credentials_the_endpoint_does_not_accept(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    refused = pytest.raises(ConfigurationError, match=r"^credentials: expected credentials that .* accepts, found")
    endpoint = LocalEndpoint(capacity=False, verify_signatures=True, credentials={"AKIDLOCAL": "s3cret"})
    with endpoint, refused:
        webform.preflight(endpoint.url, Settings(), "us-east-1")


def test_preflight_refuses_missing_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # credentials are looked up before any connection: this name is never resolved
    with pytest.raises(ConfigurationError, match=r"^credentials: expected AWS credentials for https://dynamodb"):
        webform.preflight("https://dynamodb.example.invalid", Settings(), "us-east-1")


def test_a_local_scenario_needs_a_host() -> None:
    with pytest.raises(ConfigurationError, match=r"^--host: expected the endpoint of a local scenario"):
        webform.check_host("", local=True)
    webform.check_host("http://127.0.0.1:8000", local=True)
    webform.check_host(None, local=False)  # a remote scenario: the region's endpoint
