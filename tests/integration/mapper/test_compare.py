"""`dynlocust compare` against the local endpoint: every reference row runs both ways, tables are cleaned up."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from dynlocust.compare.cli import main, run
from dynlocust.compare.reference import Bench

SAMPLE_PAIRS = Path(__file__).with_name("sample_pairs.py")


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
    for line in out[2:4]:  # the ratio printed is the quotient of the ms columns printed, each rounded to 0.01
        raw, mapper, ratio = (float(x) for x in re.findall(r"(\d+\.\d\d)x?(?=\s)", line)[:3])
        rounding = 0.005 + mapper / raw * (0.005 / mapper + 0.005 / raw)
        assert ratio == pytest.approx(mapper / raw, abs=rounding), line
    assert compare_tables(client) == []


def test_a_baseline_says_the_direction_in_words(
    endpoint: Any, client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "base.json"
    argv = ["--endpoint", endpoint.url, "--runs", "3", "--repeat", "1", "--only", "retrieve by key"]
    assert main([*argv, "--save", str(saved)]) == 0
    capsys.readouterr()
    assert main([*argv, "--baseline", str(saved), "--fail-on", "ratio>+1000%"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("retrieve by key") and "mapper/raw" in line)
    # the words say the shift the test measured (printed beside them), not the two median runs' quotient
    shift = re.search(r"shift x(\d+\.\d{3})", row)
    words = re.search(r"mapper (\d+\.\d)% (slower|faster) than baseline|mapper level with baseline", row)
    assert words and shift, row
    change = (float(shift[1]) - 1) * 100
    said = 0.0 if words[1] is None else float(words[1]) * (1 if words[2] == "slower" else -1)
    assert said == pytest.approx(change, abs=0.06), row
    assert "no significant regression past the gate (ratio>+1000%)" in out
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


def test_pynamodb_adapter_runs_every_reference_row(endpoint: Any, client: Any) -> None:
    pytest.importorskip("pynamodb")
    rows = run(endpoint.url, runs=1, repeat=1, adapter="pynamodb")
    bench_names = [case.name for case in Bench(client, "names-only").cases()]
    assert [row.name for row in rows] == bench_names and len(rows) == 20
    for row in rows:
        assert row.raw_ms[0] > 0 and row.mapper_ms[0] > 0 and row.alloc_ratio > 0
    assert compare_tables(client) == []


def test_main_prints_the_pynamodb_table(endpoint: Any, client: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pynamodb")
    argv = ["--endpoint", endpoint.url, "--runs", "1", "--repeat", "1", "--adapter", "pynamodb", "--only", "move"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("mapper (pynamodb) vs raw client, 1 runs x 1 repetitions")
    assert out[2].startswith("move (read, then delete + put in one transaction)")


@pytest.mark.parametrize("spec", ["tests.integration.mapper.sample_pairs", str(SAMPLE_PAIRS)])
def test_pairs_module_rows_are_measured_and_torn_down(
    endpoint: Any, client: Any, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--endpoint", endpoint.url, "--runs", "2", "--repeat", "2", "--pairs", spec]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"mapper ({spec}) vs raw client, 2 runs x 2 repetitions")
    assert [line.split("  ")[0] for line in out[2:4]] == ["save a cart", "load a cart"]
    assert all(line.rstrip().endswith("x") for line in out[2:4])
    assert compare_tables(client) == []  # teardown deleted the module's table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pairs", "no_such_pairs_module"], "compare --pairs no_such_pairs_module: expected an importable module"),
        (["--pairs", "json"], "compare --pairs json: expected a function pairs(context), found none"),
        (["--pairs", "missing/pairs.py"], "expected a Python file, found no file at missing/pairs.py"),
        (["--pairs", str(SAMPLE_PAIRS), "--adapter", "pynamodb"], "expected either --adapter or --pairs"),
        (["--adapter", "sqlalchemy"], "argument --adapter: invalid choice: 'sqlalchemy'"),
    ],
)
def test_pairs_and_adapter_errors_exit_2(
    endpoint: Any, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code: int | str | None
    try:
        code = main(["--endpoint", endpoint.url, *argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
