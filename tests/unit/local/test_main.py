from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dynlocust.local.__main__ import build_parser, config_from_args, create_tables, main
from dynlocust.local.server import LocalServer
from tests.support.scenarios import put_scenario, write_scenario


def test_defaults() -> None:
    cfg = config_from_args(build_parser().parse_args([]))
    assert (cfg.host, cfg.port, cfg.region, cfg.capacity, cfg.verify_signatures) == (
        "127.0.0.1",
        8000,
        "us-east-1",
        True,
        False,
    )


def test_options_map_to_config() -> None:
    args = build_parser().parse_args(
        ["--port", "0", "--no-capacity", "--capacity-scale", "0.5", "--time-scale", "10", "--create-delay", "2"]
    )
    cfg = config_from_args(args)
    assert (cfg.port, cfg.capacity, cfg.capacity_scale, cfg.time_scale, cfg.create_delay) == (0, False, 0.5, 10.0, 2.0)


def test_connection_limits_map_to_config() -> None:
    defaults = build_parser().parse_args([])
    assert (defaults.idle_timeout, defaults.max_connections) == (60.0, 1000)
    argv = "--header-timeout 1.5 --body-timeout 2 --idle-timeout 3 --max-connections 7 --max-buffered-bytes 1000"
    args = build_parser().parse_args(argv.split())
    cfg = config_from_args(args)
    assert (cfg.header_timeout, cfg.body_timeout, cfg.idle_timeout, cfg.max_connections, cfg.max_buffered_bytes) == (
        1.5,
        2.0,
        3.0,
        7,
        1000,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--port", "abc"],
        ["--port", "70000"],
        ["--capacity-scale", "0"],
        ["--create-delay", "-1"],
        ["--bogus"],
        ["--header-timeout", "0"],
        ["--idle-timeout", "nan"],
        ["--max-connections", "1.5"],
        ["--max-buffered-bytes", "-1"],
    ],
)
def test_bad_options_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "error:" in err
    assert "Traceback" not in err


def test_verify_signatures_needs_env(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DYNLOCUST_LOCAL_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("DYNLOCUST_LOCAL_SECRET_ACCESS_KEY", raising=False)
    assert main(["--verify-signatures", "--port", "0"]) == 2
    assert "DYNLOCUST_LOCAL_ACCESS_KEY_ID" in capsys.readouterr().err


def test_credentials_come_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DYNLOCUST_LOCAL_ACCESS_KEY_ID", "AK")
    monkeypatch.setenv("DYNLOCUST_LOCAL_SECRET_ACCESS_KEY", "SK")
    cfg = config_from_args(build_parser().parse_args(["--verify-signatures"]))
    assert cfg.credentials == {"AK": "SK"}
    assert "SK" not in repr(cfg)


def test_unwritable_ready_file_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "missing-dir" / "ready"
    assert main(["--port", "0", "--no-capacity", "--ready-file", str(bad)]) == 2
    assert "cannot write --ready-file" in capsys.readouterr().err


def test_a_scenario_gives_its_local_scales_and_explicit_options_override(tmp_path: Path) -> None:
    scenario = write_scenario(tmp_path, put_scenario("s", "steps: [{rate: 10, window: 1s}]", capacity_scale=0.1))
    cfg = config_from_args(build_parser().parse_args(["--scenario", str(scenario)]))
    assert (cfg.capacity_scale, cfg.time_scale) == (0.1, 1.0)
    cfg = config_from_args(build_parser().parse_args(["--scenario", str(scenario), "--capacity-scale", "0.5"]))
    assert (cfg.capacity_scale, cfg.time_scale) == (0.5, 1.0)
    assert config_from_args(build_parser().parse_args([])).capacity_scale == 1.0


def test_a_remote_scenario_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = put_scenario("s", "steps: [{rate: 10, window: 1s}]").replace(
        "target: {local: {capacity_scale: 1.0}}", "target: remote\nlimits: {max_requests: 10, max_cost_dollars: 1}"
    )
    scenario = write_scenario(tmp_path, text)
    assert main(["--port", "0", "--scenario", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected target.local" in err and str(scenario) in err


def describe(server: LocalServer, name: str) -> dict[str, Any]:
    headers = {"x-amz-target": "DynamoDB_20120810.DescribeTable"}
    response = server.handle_request("POST", "/", headers, orjson.dumps({"TableName": name}))
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), response
    return dict(orjson.loads(body)["Table"])


def test_table_options_create_tables_before_the_endpoint_serves() -> None:
    args = build_parser().parse_args(["--table", "orders:pk:sk", "--table", "events:id"])
    assert args.table == [("orders", "pk", "sk"), ("events", "id")]
    server = LocalServer(config_from_args(args))
    create_tables(server, args.table)
    for name, keys in (("orders", [("pk", "HASH"), ("sk", "RANGE")]), ("events", [("id", "HASH")])):
        table = describe(server, name)
        assert [(k["AttributeName"], k["KeyType"]) for k in table["KeySchema"]] == keys
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_tables_are_created_with_verify_signatures_and_clients_are_still_verified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DYNLOCUST_LOCAL_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("DYNLOCUST_LOCAL_SECRET_ACCESS_KEY", "s")
    args = build_parser().parse_args(["--table", "orders:pk", "--verify-signatures"])
    server = LocalServer(config_from_args(args))
    verifier = server.verifier
    create_tables(server, args.table)
    assert verifier is not None and server.verifier is verifier
    with pytest.raises(AssertionError, match=r"HTTP/1\.1 4"):
        describe(server, "orders")  # an unsigned client is refused


def test_a_malformed_table_option_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--table", "orders"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "argument --table: expected NAME:PARTITION_KEY or NAME:PARTITION_KEY:SORT_KEY (e.g. orders:pk:sk)" in err


def test_a_refused_table_is_one_line_and_exit_2_before_listening(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--table", "ab:pk", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynlocust local: error: --table ab:pk: expected the table created, found 1 validation")
    assert len(err.strip().splitlines()) == 1
