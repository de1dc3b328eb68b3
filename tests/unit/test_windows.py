"""Window statistics: routing to windows and bins, exact merges, JSON round trips, verdicts."""

from __future__ import annotations

import json

import pytest

from dynlocust.pacing import PacingCounts, Segment, split_segment
from dynlocust.saturation import Saturation
from dynlocust.windows import WindowBook, WindowError, WindowStats, verdict

NOT_BOUND = Saturation(False, (), 0.2, 0.001, 0, 0)
BOUND = Saturation(True, ("cpu",), 0.97, 0.001, 0, 0)


def rec(ws: WindowStats | WindowBook, at: float, kind: str = "ok", **kw: object) -> None:
    kw.setdefault("latency", 0.004)
    kw.setdefault("latency_from_intended", 0.005)
    ws.record(at=at, kind=kind, **kw)  # type: ignore[arg-type]


def sample_window(start: float = 1000.0) -> WindowStats:
    ws = WindowStats.for_segment(Segment(2, start, 25.0, 40.0), bin_seconds=10.0)
    rec(ws, start + 1.0, write_units=1.0)
    rec(ws, start + 12.5, "throttled", code="ThrottlingException", reasons=["TableWriteProvisionedThroughputExceeded"])
    rec(ws, start + 11.0, "throttled", code="ProvisionedThroughputExceededException")
    rec(ws, start + 21.0, "unprocessed", unprocessed=7, write_units=18.0)
    rec(ws, start + 22.0, "timeout", code="read", latency=8.0, latency_from_intended=8.1)
    rec(ws, start + 23.0, "server_error", code="InternalServerError")
    rec(ws, start + 24.0, "condition_failed", code="ConditionalCheckFailedException", read_units=0.5)
    return ws


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


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(WindowError, match="expected kind"):
        rec(WindowStats(0, 0.0, 10.0), 1.0, "throttle")


def _window(**kinds: int) -> WindowStats:
    ws = WindowStats(0, 0.0, 10.0)
    for kind, n in kinds.items():
        for _ in range(n):
            rec(ws, 1.0, kind, unprocessed=3 if kind == "unprocessed" else 0)
    return ws


@pytest.mark.parametrize(
    ("kinds", "saturation", "partial", "expected"),
    [
        ({"ok": 100}, NOT_BOUND, False, "ok"),
        ({"ok": 100, "condition_failed": 20}, NOT_BOUND, False, "ok"),
        ({"ok": 90, "throttled": 10}, NOT_BOUND, False, "throttled"),
        ({"ok": 99, "unprocessed": 1}, NOT_BOUND, False, "throttled"),
        ({"ok": 90, "throttled": 10}, BOUND, False, "client-bound"),  # never reported as the service's limit
        ({"ok": 90, "throttled": 10}, BOUND, True, "client-bound"),
        ({"ok": 90, "throttled": 10}, NOT_BOUND, True, "partial"),
        ({"ok": 80, "timeout": 15, "throttled": 5}, NOT_BOUND, False, "errors"),
        ({"ok": 1000, "error": 1}, NOT_BOUND, False, "ok"),  # below 1% of sent
        ({"ok": 80, "server_error": 5, "throttled": 15}, NOT_BOUND, False, "throttled"),
    ],
)
def test_verdict(kinds: dict[str, int], saturation: Saturation, partial: bool, expected: str) -> None:
    ws = _window(**kinds)
    if partial:
        ws.mark_partial()
    assert verdict(ws, saturation) == expected


def test_pacing_with_cancelled_sends_makes_the_window_partial() -> None:
    ws = WindowStats(0, 0.0, 10.0)
    ws.apply_pacing(PacingCounts(0, 100, handed=40, cancelled=60))
    assert ws.partial and verdict(ws, NOT_BOUND) == "partial"


def test_bin_summaries() -> None:
    bins = sample_window().bin_summaries()
    assert [b["offset_s"] for b in bins] == [0.0, 10.0, 20.0]
    assert [b["offered"] for b in bins] == [400, 400, 200]
    assert bins[1]["throttled"] == 2 and bins[1]["first_throttle_s"] == pytest.approx(11.0)
    assert bins[2]["accepted_per_s"] == 0.0 and bins[0]["accepted_per_s"] == pytest.approx(0.1)
