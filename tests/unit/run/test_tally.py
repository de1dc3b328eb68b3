"""The tally: routing to windows and bins, exact merges, JSON round trips."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynlocust.run.pacing import PacingCounts, Segment, split_segment
from dynlocust.run.tally import WindowBook, WindowError, WindowStats
from tests.support.tally import count_outcome
from tests.unit.run._windows import rec, sample_window


def test_bins_are_aligned_to_the_window_start_and_offered_comes_from_the_schedule() -> None:
    ws = sample_window()
    assert len(ws.bins) == 3
    assert [b.offered for b in ws.bins] == [400, 400, 200]
    assert [b.sent for b in ws.bins] == [1, 2, 4]
    assert ws.bins[1].throttled_by == {
        "ThrottlingException|TableWriteProvisionedThroughputExceeded": 1,
        "ProvisionedThroughputExceededException|": 1,
    }
    assert ws.bins[1].first_throttle_at == 1011.0


def test_summary_figures() -> None:
    s = sample_window().summary()
    assert (s["offered"], s["sent"], s["accepted"], s["throttled"]) == (1000, 7, 1, 2)
    assert s["unprocessed_items"] == 7
    assert s["timeouts_by"] == {"read": 1}
    assert s["errors_by"] == {"server_error:InternalServerError": 1}
    assert s["condition_failed"] == 1
    assert s["first_throttle_s"] == pytest.approx(11.0)
    assert (s["read_units"], s["write_units"]) == (0.5, 19.0)
    assert s["latency"]["max"] == 8.0
    assert s["latency"]["p50"] == pytest.approx(0.004, rel=0.01)


def test_round_trip_is_exact() -> None:
    ws = sample_window()
    counts = PacingCounts(2, 1000, handed=990, dropped=10)
    counts.lag.record(0.0012)
    ws.apply_pacing(counts)
    back = WindowStats.from_dict(json.loads(json.dumps(ws.to_dict())))
    assert back.to_dict() == ws.to_dict()
    assert back.dropped == 10 and back.schedule_lag.count == 1


def test_merge_of_workers_equals_one_process_seeing_everything() -> None:
    segments = split_segment(0, 500.0, 20.0, 100.0, [1, 1])
    whole = WindowStats.for_segment(Segment(0, 500.0, 20.0, 100.0))
    parts = [WindowStats.for_segment(s) for s in segments]
    for i in range(200):
        at = 500.0 + i * 0.1
        kind = "throttled" if i % 7 == 0 else "ok"
        lat = 0.001 * (1 + i % 13)
        for ws in (whole, parts[i % 2]):
            rec(ws, at, kind, code="ThrottlingException", latency=lat, latency_from_intended=lat * 1.1)
    merged = parts[0]
    merged.merge(parts[1])
    assert merged.target_rate == pytest.approx(whole.target_rate)
    hist_keys = ("latency", "latency_from_intended")
    for a, b in zip(merged.bins, whole.bins, strict=True):
        assert a.latency == b.latency and a.latency_from_intended == b.latency_from_intended  # sums to 1e-9
        da, db = a.to_dict(), b.to_dict()
        assert {k: v for k, v in da.items() if k not in hist_keys} == {
            k: v for k, v in db.items() if k not in hist_keys
        }
        assert da["latency"]["buckets"] == db["latency"]["buckets"]
    assert sum(b.sent for b in merged.bins) == 200


def test_merge_refuses_another_window() -> None:
    a = WindowStats(0, 0.0, 10.0)
    with pytest.raises(WindowError, match="expected window 0"):
        a.merge(WindowStats(1, 10.0, 10.0))


def test_book_routes_by_time_or_index_and_counts_strays() -> None:
    book = WindowBook.from_segments([Segment(0, 100.0, 10.0, 5.0), Segment(1, 110.0, 10.0, 5.0)])
    rec(book, 105.0)
    rec(book, 110.0)
    rec(book, 109.9999, window=1)  # the ticket's window wins over the time
    rec(book, 99.0)
    rec(book, 125.0)
    assert [w.total().sent for w in book] == [1, 2]
    assert book.unrouted == 2
    assert book[1].index == 1


def test_a_window_handed_on_is_no_longer_the_books_and_its_late_records_are_strays() -> None:
    """A closed window's record owns its statistics: a long run keeps no window twice, and an answer arriving after
    the close changes nothing that was reported."""
    book = WindowBook.from_segments([Segment(0, 100.0, 10.0, 5.0), Segment(1, 110.0, 10.0, 5.0)])
    rec(book, 105.0)
    first = book.hand_on(0)
    rec(book, 106.0, window=0)  # late, by its ticket
    rec(book, 107.0)  # late, by its time
    rec(book, 111.0)
    assert first.total().sent == 1 and book.unrouted == 2
    assert book.get(0) is None and [w.index for w in book] == [1] and len(book) == 1
    with pytest.raises(WindowError, match="expected one of \\[1\\]"):
        book.hand_on(0)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(WindowError, match="expected kind"):
        rec(WindowStats(0, 0.0, 10.0), 1.0, "throttle")


def test_bin_summaries() -> None:
    bins = sample_window().bin_summaries()
    assert [b["offset_s"] for b in bins] == [0.0, 10.0, 20.0]
    assert [b["offered"] for b in bins] == [400, 400, 200]
    assert bins[1]["throttled"] == 2 and bins[1]["first_throttle_s"] == pytest.approx(11.0)
    assert bins[2]["accepted_per_s"] == 0.0 and bins[0]["accepted_per_s"] == pytest.approx(0.1)


def test_each_operation_is_counted_apart_and_survives_a_merge_and_a_round_trip() -> None:
    a, b = (WindowStats(0, 100.0, 2.0, target_rate=2.0, bin_seconds=1.0) for _ in range(2))
    rec(a, 100.1, write_units=1.0, operation="put t")
    rec(a, 100.2, "throttled", code="ThrottlingException", operation="put t")
    rec(b, 101.5, read_units=0.5, operation="get t")
    rec(b, 101.6)  # no operation: the window only
    a.merge(b)
    total = a.total()
    assert total.sent == 4
    assert sorted(total.operations) == ["get t", "put t"]
    put, get = total.operation("put t"), total.operation("get t")
    assert (put.sent, put.accepted, put.throttled, put.write_units, put.offered) == (2, 1, 1, 1.0, 0)
    assert (get.sent, get.read_units, get.latency.count) == (1, 0.5, 1)
    assert total.operation("scan t").sent == 0
    again = WindowStats.from_dict(json.loads(json.dumps(a.to_dict())))
    assert again.total().operation("put t").throttled_by == put.throttled_by
    assert again.bins[1].operations["get t"].latency == get.latency


def test_throttles_are_counted_by_cause_and_by_index_and_survive_a_merge_and_a_round_trip() -> None:
    def window() -> WindowStats:
        return WindowStats(0, 1000.0, 10.0, bin_seconds=5.0)

    a, b = window(), window()
    read = "TableReadKeyRangeThroughputExceeded"
    gsi = "IndexWriteKeyRangeThroughputExceeded"
    common: dict[str, Any] = {
        "kind": "throttled",
        "code": "ThrottlingException",
        "latency": 0.001,
        "latency_from_intended": 0.001,
    }
    count_outcome(a, at=1001.0, reasons=[read], cause="writes-over-ceiling", operation="get", **common)
    count_outcome(b, at=1007.0, reasons=[read], cause="writes-over-ceiling", operation="get", **common)
    count_outcome(b, at=1007.0, reasons=[gsi], index_reasons=[("by_owner", gsi)], operation="put", **common)
    a.merge(b)
    summary = WindowStats.from_dict(json.loads(json.dumps(a.to_dict()))).summary()
    assert summary["throttle_causes"] == {"writes-over-ceiling": 2}
    assert summary["throttled_index"] == {f"by_owner|{gsi}": 1}
    total = a.total()
    assert total.operation("get").throttle_causes == {"writes-over-ceiling": 2}
    assert (
        total.operation("put").throttled_index == {f"by_owner|{gsi}": 1} and not total.operation("get").throttled_index
    )


def test_bins_read_while_requests_arrive_stay_exact() -> None:
    # each request is counted once, in its operation's part of the bin; reads between requests see every one of
    # them in the bin and in its operation, never twice (the web UI reads an open window every second)
    live = WindowStats(0, 100.0, 2.0, target_rate=4.0, bin_seconds=1.0)
    for i in range(3):
        rec(live, 100.1 + i * 0.1, write_units=1.0, latency=0.001 * (i + 1), operation="put t")
        first = live.bins[0]
        assert (first.sent, first.write_units, first.latency.count) == (i + 1, i + 1.0, i + 1)
        assert first.operations["put t"].sent == i + 1
    rec(live, 100.5, "throttled", code="ThrottlingException", operation="get t")
    rec(live, 100.6)  # no operation: the bin only
    first = live.bins[0]
    assert (first.sent, first.throttled, first.latency.count) == (5, 1, 5)
    assert {label: t.sent for label, t in first.operations.items()} == {"put t": 3, "get t": 1}
    assert live.total().sent == 5 and live.bins[1].sent == 0
