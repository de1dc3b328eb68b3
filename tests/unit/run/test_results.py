"""The JSON-lines results file: one record per line, never two runs in one file, tolerant of a cut tail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dynlocust.run.results import ResultsError, ResultsExistError, ResultsWriter, read_results
from dynlocust.run.tally import WindowStats
from tests.support.tally import count_outcome


def test_write_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    ws = WindowStats(0, 100.0, 10.0, target_rate=50.0)
    count_outcome(ws, at=101.0, kind="ok", latency=0.004, latency_from_intended=0.005, write_units=1.0)
    with ResultsWriter(path) as writer:
        writer.write_run(run_id="r1", t0=100.0)
        writer.write_window(index=0, stats=ws.to_dict(), verdict="ok")
        writer.write_end(reason="completed")
    records = read_results(path)
    assert [r["type"] for r in records] == ["run", "window", "end"]
    assert WindowStats.from_dict(records[1]["stats"]).to_dict() == ws.to_dict()
    assert path.read_text().count("\n") == 3


def test_each_window_is_on_disk_before_the_writer_closes(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = ResultsWriter(path)
    writer.write_run(run_id="r1")
    writer.write_window(index=0)
    assert [r["type"] for r in read_results(path)] == ["run", "window"]  # a crash now loses nothing closed
    writer.close()


def test_refuses_a_path_with_results(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with ResultsWriter(path) as writer:
        writer.write_run(run_id="r1")
    with pytest.raises(ResultsExistError, match="expected a new or empty file"):
        ResultsWriter(path)
    assert len(read_results(path)) == 1  # untouched


def test_an_empty_existing_file_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.touch()
    with ResultsWriter(path) as writer:
        writer.write_end(reason="x")
    assert read_results(path) == [{"type": "end", "reason": "x"}]


def test_an_exclusive_writer_is_the_only_one_of_its_path(tmp_path: Path) -> None:
    """Two runs given one id and one results directory at once: the create itself decides, so one writes."""
    path = tmp_path / "run.jsonl"
    first = ResultsWriter(path, exclusive=True)
    with pytest.raises(ResultsExistError, match=r"expected a new file, found one already .* choose another --run-id"):
        ResultsWriter(path, exclusive=True)  # still empty: the non-exclusive check would have let it in
    first.write_end(reason="x")
    first.close()
    assert read_results(path) == [{"type": "end", "reason": "x"}]


def test_truncated_last_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    full = json.dumps({"type": "run", "run_id": "r1"}) + "\n" + json.dumps({"type": "window", "index": 0})
    path.write_text(full + "\n" + full[: len(full) - 5])
    reports: list[str] = []
    records = read_results(path, on_truncated=reports.append)
    assert [r["type"] for r in records] == ["run", "window", "run"]
    assert len(reports) == 1 and "run.jsonl:4" in reports[0]


def test_a_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"type": "run"}\n{"type": "win\n{"type": "end"}\n')
    with pytest.raises(ResultsError, match=r"run\.jsonl:2"):
        read_results(path)


@pytest.mark.parametrize(
    "record", [{"type": "bogus"}, {"no_type": 1}, {"type": "window", "x": float("nan")}, {"type": "end", "x": {1}}]
)
def test_write_refuses_bad_records(tmp_path: Path, record: dict) -> None:
    with ResultsWriter(tmp_path / "r.jsonl") as writer, pytest.raises(ResultsError):
        writer.write(record)


def test_reading_a_missing_or_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="expected a readable file"):
        read_results(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").touch()
    assert read_results(tmp_path / "empty.jsonl") == []


def test_a_record_the_disk_refuses_raises_naming_the_path() -> None:
    writer = ResultsWriter("/dev/full")  # a real device whose every write fails with ENOSPC
    try:
        with pytest.raises(ResultsError, match=r"results file /dev/full: expected to write a run record .*space"):
            writer.write_run(scenario="s")
    finally:
        writer.close()
