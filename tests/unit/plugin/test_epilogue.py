"""The end of a headless run: conclusion from the window verdicts, report beside the results, exit code in words."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from dynlocust.exit_codes import ExitCode, meaning
from dynlocust.observe.report.build import load_report
from dynlocust.observe.report.table import COLUMNS, format_window_table
from dynlocust.plugin import epilogue, listeners
from dynlocust.plugin.context import RunOutcome
from dynlocust.run.results import ResultsWriter


def test_no_windows_no_conclusion() -> None:
    assert epilogue.conclusion(SimpleNamespace(windows=[])) is None


def test_writes_the_report_beside_the_results_and_prints_the_table_then_the_three_lines(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parents[1] / "observe" / "report" / "data" / "complete.jsonl").read_bytes())
    out = io.StringIO()
    path, _ = epilogue.write(results, out, exit_code=ExitCode.SLO_FAILED)
    assert path == results.parent / "report" / "report.html" and path.is_file()
    report = load_report(results)
    text = out.getvalue()
    assert text.startswith("\n" + format_window_table(report.windows) + "\n")  # the window table, once
    lines = text.strip().splitlines()[len(report.windows) + 2 :]
    assert lines[0] == ""
    assert report.conclusion is not None
    assert lines[1] == f"conclusion: {report.conclusion.text}"  # decided once, by `conclude`
    assert lines[2].startswith(f"report: {path} (html, markdown, csv")
    assert lines[-1] == f"exit code 3: {meaning(ExitCode.SLO_FAILED)}"


def test_without_the_table_a_web_ui_run_still_gets_its_report_and_exit_code(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parents[1] / "observe" / "report" / "data" / "complete.jsonl").read_bytes())
    out = io.StringIO()
    path, _ = epilogue.write(results, out, False, exit_code=ExitCode.PASSED)
    assert path is not None and path.is_file()
    lines = out.getvalue().strip().splitlines()
    assert lines[0].startswith(f"report: {path}") and lines[-1].startswith("exit code 0: passed")
    assert "conclusion:" not in out.getvalue() and COLUMNS[2] not in out.getvalue()


def test_a_results_file_with_no_run_still_gets_its_exit_code_line(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    with ResultsWriter(results):
        pass
    out = io.StringIO()
    assert epilogue.write(results, out, exit_code=ExitCode.ABORTED) == (None, ExitCode.ABORTED)
    assert out.getvalue().splitlines()[1].startswith("report: not written (")
    assert out.getvalue().splitlines()[-1].startswith("exit code 4: aborted")


def test_printed_once_per_run_when_locust_quits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from locust import events

    listeners.register_scenario()  # what the scenario locustfile does: the epilogue listens to `quit`
    headless, web_ui = tmp_path / "headless.jsonl", tmp_path / "web-ui.jsonl"
    epilogue.arm(SimpleNamespace(headless=False), web_ui)
    epilogue.arm(SimpleNamespace(headless=True, json=False), headless)
    epilogue.arm(SimpleNamespace(headless=True, json=False), headless)
    events.quit.fire(exit_code=ExitCode.WORKER_LOST)
    events.quit.fire(exit_code=ExitCode.PASSED)
    out = capsys.readouterr().out
    assert str(headless) in out and str(web_ui) in out  # every run gets its report (here: why it has none)
    assert out.count("exit code") == 2 and f"exit code 5: {meaning(ExitCode.WORKER_LOST)}" in out
    assert "exit code 0" not in out


def test_only_headless_runs_leave_the_table_to_the_epilogue() -> None:
    assert epilogue.prints_table(SimpleNamespace(headless=True))
    assert not epilogue.prints_table(SimpleNamespace(headless=False))


def test_with_json_the_epilogue_leaves_stdout_to_locusts_stats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from locust import events

    listeners.register_scenario()  # what the scenario locustfile does: the epilogue listens to `quit`
    epilogue.arm(SimpleNamespace(headless=True, json=True), tmp_path / "results.jsonl")
    events.quit.fire(exit_code=ExitCode.PASSED)
    captured = capsys.readouterr()
    assert captured.out == "" and "exit code 0: passed" in captured.err


def test_a_web_ui_process_ends_with_one_line_per_run_then_its_own_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from locust import events

    listeners.register_scenario()  # what the scenario locustfile does: the epilogue listens to `quit`
    options = SimpleNamespace(headless=False)
    report = tmp_path / "a" / "report" / "report.html"
    epilogue.arm_ended(options, RunOutcome("a", ExitCode.SLO_FAILED, report=report))
    epilogue.arm_ended(options, RunOutcome("b", ExitCode.PASSED))
    epilogue.arm_ended(options, RunOutcome("b", ExitCode.PASSED))  # once per run
    events.quit.fire(exit_code=ExitCode.SLO_FAILED)
    assert capsys.readouterr().out.splitlines() == [
        "",
        "2 runs in this process:",
        f"run a: report {report}, exit code 3: {meaning(ExitCode.SLO_FAILED)}",
        f"run b: exit code 0: {meaning(ExitCode.PASSED)}",
        f"exit code 3: {meaning(ExitCode.SLO_FAILED)}",
    ]


def test_a_web_ui_runs_report_is_built_when_it_ends(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parents[1] / "observe" / "report" / "data" / "complete.jsonl").read_bytes())
    out = io.StringIO()
    path, error, failed = epilogue.build(results, out)
    assert (path, error, failed) == (results.parent / "report" / "report.html", "", False)
    assert path is not None and path.is_file()
    assert out.getvalue().startswith(f"report: {path} (html, markdown, csv")
    path, error, _ = epilogue.build(tmp_path / "absent.jsonl", io.StringIO())
    assert path is None and "absent.jsonl" in error  # why, for the tab to say


def complete_results(tmp_path: Path) -> Path:
    results = tmp_path / "run" / "results.jsonl"
    results.parent.mkdir()
    results.write_bytes((Path(__file__).parents[1] / "observe" / "report" / "data" / "complete.jsonl").read_bytes())
    return results


def test_a_report_that_cannot_be_written_fails_the_run(tmp_path: Path) -> None:
    results = complete_results(tmp_path)
    (results.parent / "report").write_text("a file where the report directory goes")
    out = io.StringIO()
    assert epilogue.write(results, out, exit_code=ExitCode.PASSED) == (None, ExitCode.FAILED)
    assert "run failed: report not written: report directory" in out.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("exit code 1: ")
    path, error, failed = epilogue.build(results, io.StringIO())  # a web UI run's report, built as it ends
    assert path is None and failed and "report directory" in error


def test_any_fault_while_building_the_report_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen for real: a package upgraded under a long run, whose report then could not import a module."""
    import dynlocust.observe.report.build as build_module

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ImportError("cannot import name 'why_line'")

    monkeypatch.setattr(build_module, "build_reports", broken)
    results = complete_results(tmp_path)
    out = io.StringIO()
    assert epilogue.write(results, out, exit_code=ExitCode.SLO_FAILED) == (None, ExitCode.FAILED)
    assert "run failed: report not written: cannot import name 'why_line'" in out.getvalue()
    assert epilogue.build(results, io.StringIO())[2]
