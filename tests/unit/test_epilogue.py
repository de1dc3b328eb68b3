"""The end of a headless run: conclusion from the window verdicts, report beside the results, exit code in words."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from dynlocust import epilogue
from dynlocust.coordination import EXIT_ABORTED, EXIT_INCOMPLETE, EXIT_OK, EXIT_SLO
from dynlocust.report.build import load_report
from dynlocust.report.table import COLUMNS, format_window_table
from dynlocust.results import ResultsWriter


def test_no_windows_no_conclusion() -> None:
    assert epilogue.conclusion(SimpleNamespace(windows=[])) is None


@pytest.mark.parametrize(
    ("code", "words"),
    [(EXIT_OK, "passed"), (2, "bad input"), (EXIT_SLO, "SLO failed"), (EXIT_ABORTED, "aborted"),
     (EXIT_INCOMPLETE, "worker was lost"), (1, "not one of dynlocust's")],
)  # fmt: skip
def test_every_exit_code_has_its_meaning(code: int, words: str) -> None:
    assert words in epilogue.exit_meaning(code)


def test_writes_the_report_beside_the_results_and_prints_the_table_then_the_three_lines(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parent / "report" / "data" / "complete.jsonl").read_bytes())
    out = io.StringIO()
    path = epilogue.write(results, out, exit_code=EXIT_SLO)
    assert path == results.parent / "report" / "report.html" and path.is_file()
    report = load_report(results)
    text = out.getvalue()
    assert text.startswith("\n" + format_window_table(report.windows) + "\n")  # the window table, once
    lines = text.strip().splitlines()[len(report.windows) + 2 :]
    assert lines[0] == ""
    assert lines[1] == f"conclusion: {report.conclusion.text}"  # decided once, by `conclude`
    assert lines[2].startswith(f"report: {path} (html, markdown, csv")
    assert lines[-1] == f"exit code 3: {epilogue.exit_meaning(EXIT_SLO)}"


def test_without_the_table_a_web_ui_run_still_gets_its_report_and_exit_code(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parent / "report" / "data" / "complete.jsonl").read_bytes())
    out = io.StringIO()
    path = epilogue.write(results, out, False, exit_code=EXIT_OK)
    assert path is not None and path.is_file()
    lines = out.getvalue().strip().splitlines()
    assert lines[0].startswith(f"report: {path}") and lines[-1].startswith("exit code 0: passed")
    assert "conclusion:" not in out.getvalue() and COLUMNS[2] not in out.getvalue()


def test_a_results_file_with_no_run_still_gets_its_exit_code_line(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    with ResultsWriter(results):
        pass
    out = io.StringIO()
    assert epilogue.write(results, out, exit_code=EXIT_ABORTED) is None
    assert out.getvalue().splitlines()[1].startswith("report: not written (")
    assert out.getvalue().splitlines()[-1].startswith("exit code 4: aborted")


def test_printed_once_per_run_when_locust_quits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from locust import events

    headless, web_ui = tmp_path / "headless.jsonl", tmp_path / "web-ui.jsonl"
    epilogue.arm(SimpleNamespace(headless=False), web_ui)
    epilogue.arm(SimpleNamespace(headless=True, json=False), headless)
    epilogue.arm(SimpleNamespace(headless=True, json=False), headless)
    events.quit.fire(exit_code=EXIT_INCOMPLETE)
    events.quit.fire(exit_code=EXIT_OK)
    out = capsys.readouterr().out
    assert str(headless) in out and str(web_ui) in out  # every run gets its report (here: why it has none)
    assert out.count("exit code") == 2 and f"exit code 5: {epilogue.exit_meaning(EXIT_INCOMPLETE)}" in out
    assert "exit code 0" not in out


def test_only_headless_runs_leave_the_table_to_the_epilogue() -> None:
    assert epilogue.prints_table(SimpleNamespace(headless=True))
    assert not epilogue.prints_table(SimpleNamespace(headless=False))


def test_with_json_the_epilogue_leaves_stdout_to_locusts_stats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from locust import events

    epilogue.arm(SimpleNamespace(headless=True, json=True), tmp_path / "results.jsonl")
    events.quit.fire(exit_code=EXIT_OK)
    captured = capsys.readouterr()
    assert captured.out == "" and "exit code 0: passed" in captured.err
