"""Results records as items: the layout the master writes and the launcher reads back."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from dynlocust.fleet.results_table import (
    END_SEQ,
    PublishingResultsWriter,
    ResultsTable,
    ResultsTableError,
    item_for,
    record_of,
    results_writer,
    seq_of,
)
from dynlocust.run.results import ResultsWriter, read_results


@pytest.mark.parametrize(
    ("record", "seq"),
    [({"type": "run"}, 0), ({"type": "window", "index": 0}, 1), ({"type": "window", "index": 41}, 42),
     ({"type": "end"}, END_SEQ)],
)  # fmt: skip
def test_records_sort_in_the_order_they_are_written(record: dict[str, object], seq: int) -> None:
    assert seq_of(record) == seq
    item = item_for("r1", record)
    assert item["seq"] == {"N": str(seq)} and item["run_id"] == {"S": "r1"} and item["type"] == {"S": record["type"]}
    assert record_of(item) == record


def test_a_window_with_histograms_stays_far_below_the_item_limit() -> None:
    record = {
        "type": "window",
        "index": 3,
        "latency": {"counts": list(range(2000))},
        "bins": [{"x": i} for i in range(60)],
    }
    assert len(item_for("r", record)["body"]["B"]) < 20_000


@pytest.mark.parametrize(
    ("item", "message"),
    [({"seq": {"N": "1"}, "body": {"B": b"not zlib"}}, "zlib-compressed JSON"),
     ({"seq": {"N": "1"}, "body": {"B": zlib.compress(b"[1]")}}, "JSON object"),
     ({"seq": {"N": "1"}}, "zlib-compressed JSON")],
)  # fmt: skip
def test_unreadable_items_are_reported_with_their_seq(item: dict[str, object], message: str) -> None:
    with pytest.raises(ResultsTableError, match=f"seq .*{message}"):
        record_of(item)


def test_an_unknown_record_type_is_refused() -> None:
    with pytest.raises(ResultsTableError, match="expected type run, window or end, found 'stats'"):
        item_for("r", {"type": "stats"})


def test_a_plain_writer_unless_the_results_table_is_configured(tmp_path: Path) -> None:
    plain = results_writer(tmp_path / "a.jsonl", "r", ResultsTable())
    publishing = results_writer(tmp_path / "b.jsonl", "r", ResultsTable("dynlocust-results-r", region="eu-west-1"))
    try:
        assert type(plain) is ResultsWriter
        assert isinstance(publishing, PublishingResultsWriter) and publishing.table == "dynlocust-results-r"
        assert publishing.client.meta.region_name == "eu-west-1"
    finally:
        plain.close()
        publishing.close()


class _Unreachable:
    def put_item(self, **_kwargs: object) -> None:
        raise ConnectionError("no route to the results table")  # a failure the test cannot cause otherwise


def test_a_failed_publish_keeps_the_local_record_and_the_run_going(tmp_path: Path) -> None:
    writer = PublishingResultsWriter(tmp_path / "r.jsonl", _Unreachable(), "t", "r")
    with writer:
        writer.write_run(run_id="r")
        writer.write_end(exit_code=0)
    assert writer.failures == 2
    assert [r["type"] for r in read_results(tmp_path / "r.jsonl")] == ["run", "end"]
