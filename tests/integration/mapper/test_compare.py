"""`dynlocust compare` against the local endpoint: every reference row runs both ways, tables are cleaned up."""

from __future__ import annotations

from typing import Any

import pytest

from dynlocust.mapper.compare import main, run


def compare_tables(client: Any) -> list[str]:
    return [name for name in client.list_tables()["TableNames"] if name.startswith("dynlocust-compare-")]


def test_every_reference_row_runs_both_ways(endpoint: Any, client: Any) -> None:
    rows = run(endpoint.url, runs=1, repeat=1)
    assert len(rows) == 20
    assert {"retrieve by key", "move (read, then delete + put in one transaction)"} <= {row.name for row in rows}
    for row in rows:
        assert row.raw_ms[0] > 0 and row.mapper_ms[0] > 0
        assert row.ratios[0] == pytest.approx(row.mapper_ms[0] / row.raw_ms[0])
        assert row.alloc_ratio > 0
    assert compare_tables(client) == []


def test_main_prints_the_table(endpoint: Any, client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "--endpoint",
        endpoint.url,
        "--runs",
        "2",
        "--repeat",
        "1",
        "--only",
        "retrieve by key",
        "--only",
        "move",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("mapper (dynlocust) vs raw client, 2 runs x 1 repetitions")
    assert [line.split("  ")[0] for line in out[2:4]] == [
        "retrieve by key",
        "move (read, then delete + put in one transaction)",
    ]
    assert all(line.rstrip().endswith("x") for line in out[2:4])
    assert compare_tables(client) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--only", "no such operation"], "--only"), (["--runs", "0"], "--runs")],
)
def test_main_errors_exit_2_with_a_message(
    endpoint: Any, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--endpoint", endpoint.url, *argv]) == 2
    assert message in capsys.readouterr().err
