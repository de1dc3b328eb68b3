"""Window statistics: routing to windows and bins, exact merges, JSON round trips, verdicts."""

from __future__ import annotations

import json

import pytest

from dynlocust.pacing import PacingCounts, Segment, split_segment
from dynlocust.saturation import Saturation
from dynlocust.windows import ClosedRecord, Verdict, WindowBook, WindowError, WindowStats, verdict

NOT_BOUND = Saturation(False, (), 0.2, 0.001, 0, 0)


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


def _window(scheduled: int | None = None, *, dropped: int = 0, cancelled: int = 0, **kinds: int) -> WindowStats:
    """A window whose pacer handed out every send it recorded (plus ``dropped`` and ``cancelled`` ones)."""
    sent = sum(kinds.values())
    scheduled = sent + dropped + cancelled if scheduled is None else scheduled
    ws = WindowStats(0, 0.0, 10.0, offered_per_bin=[scheduled])
    for kind, n in kinds.items():
        for _ in range(n):
            rec(ws, 1.0, kind, unprocessed=3 if kind == "unprocessed" else 0)
    counts = PacingCounts(0, scheduled, handed=scheduled - dropped - cancelled, dropped=dropped, cancelled=cancelled)
    ws.apply_pacing(counts)
    return ws


CPU_BOUND = Saturation(True, ("cpu",), 0.97, 0.001, 0, 0, cpu_seconds=10.0, due=100, sent=100)
"""Near a core, yet every send left on time: its shortfall is 0."""
DROPPING = Saturation(True, ("dropped",), 0.3, 0.001, 40, 0, cpu_seconds=10.0, due=100, sent=60)
"""40% of due sends dropped."""
UNJUDGED = Saturation(True, ("cpu",), 0.97, 0.001, 0, 0, judged=False)


@pytest.mark.parametrize(
    ("window", "saturation", "labels", "stronger"),
    [
        ({"ok": 100}, NOT_BOUND, ("ok",), None),
        ({"ok": 100, "condition_failed": 20}, NOT_BOUND, ("ok",), None),
        ({"ok": 90, "throttled": 10}, NOT_BOUND, ("throttled",), None),  # a healthy client: DynamoDB said no
        ({"ok": 99, "unprocessed": 1}, NOT_BOUND, ("throttled",), None),
        ({"ok": 100}, CPU_BOUND, ("client-bound",), None),
        # both sides at once: the stronger evidence first
        ({"ok": 90, "throttled": 10}, CPU_BOUND, ("throttled", "client-bound"), "service"),
        ({"ok": 50, "throttled": 10, "dropped": 40}, DROPPING, ("client-bound", "throttled"), "client"),
        ({"ok": 80, "timeout": 15, "throttled": 5}, NOT_BOUND, ("errors",), None),
        ({"ok": 80, "timeout": 15, "throttled": 5}, CPU_BOUND, ("errors", "client-bound"), "service"),
        ({"ok": 1000, "error": 1}, NOT_BOUND, ("ok",), None),  # below 1% of sent
        ({"ok": 80, "server_error": 5, "throttled": 15}, NOT_BOUND, ("throttled",), None),
        ({"ok": 100}, UNJUDGED, ("ok",), None),  # a saturation that judged nothing makes no verdict
    ],
)
def test_verdict_labels_both_sides_stronger_first(
    window: dict[str, int], saturation: Saturation, labels: tuple[str, ...], stronger: str | None
) -> None:
    kinds = dict(window)
    dropped = kinds.pop("dropped", 0)
    v = verdict(_window(dropped=dropped, **kinds), saturation)
    assert (v.labels, v.stronger, v.label, v.ran) == (labels, stronger, labels[0], 1.0)
    assert v.reasons == (saturation.reasons if "client-bound" in labels else ())


@pytest.mark.parametrize(
    ("kwargs", "partial", "labels", "ran"),
    [
        ({"ok": 40, "cancelled": 60}, False, ("partial",), 0.4),  # stopped mid-way: cancelled sends
        ({"ok": 30, "throttled": 10, "cancelled": 60}, False, ("partial", "throttled"), 0.4),
        ({"cancelled": 100}, False, ("not-run",), 0.0),  # stopped before it
        ({"ok": 100}, True, ("partial",), 1.0),  # a worker missing: every due send ran, yet not all of it
        ({"ok": 1, "cancelled": 2}, False, ("partial",), pytest.approx(1 / 3)),  # a tiny sample
    ],
)
def test_a_window_that_ran_in_part_is_never_client_bound(
    kwargs: dict[str, int], partial: bool, labels: tuple[str, ...], ran: float
) -> None:
    ws = _window(**kwargs)
    if partial:
        ws.mark_partial()
    v = verdict(ws, CPU_BOUND)
    assert (v.labels, v.ran) == (labels, ran)
    assert "client-bound" not in v.labels and v.reasons == ()


def test_the_part_that_ran_never_reads_100_percent_when_short() -> None:
    assert [Verdict(("partial",), ran=r).ran_text for r in (1199 / 1200, 0.4, 0.0, 1.0)] == [
        "99.9%",
        "40%",
        "0%",
        "100%",
    ]


def test_a_fleet_window_counts_what_ran_against_the_fleet_plan() -> None:
    ws = _window(ok=50)  # the one reporting worker's share; the plan holds 100 sends
    ws.mark_partial()
    assert verdict(ws, NOT_BOUND, planned=100).ran == 0.5
    assert verdict(None, NOT_BOUND, planned=100).labels == ("not-run",)


def test_verdict_round_trips_and_old_records_still_read() -> None:
    v = verdict(_window(dropped=40, ok=50, throttled=10), DROPPING)
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v
    assert Verdict.of_record({"verdict_detail": v.to_dict(), "verdict": "ok"}) == v
    old = {"verdict": "client-bound", "saturation": {"reasons": ["lag"]}}  # before verdict_detail existed
    assert Verdict.of_record(old) == Verdict(("client-bound",), reasons=("lag",))
    with pytest.raises(WindowError, match="expected labels from"):
        Verdict.from_dict({"labels": ["bound"]})


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


PART_KEYS = [
    "index", "start", "duration", "target_rate", "bin_seconds", "partial", "pacing", "bins", "summary", "phase",
    "saturation", "worker_index",
]  # fmt: skip
"""A worker's part as it has always been sent and spooled: `WindowStats.to_dict` and then the close's keys."""


def test_a_part_is_a_snapshot_in_the_format_it_always_had_and_reads_back_exactly() -> None:
    ws = sample_window()
    part = ClosedRecord.of_part(ws, phase="ramp", saturation=NOT_BOUND, worker_index=3)
    rec(ws, 1000.0 + 2.0)  # a late answer after the close changes the tally, never the closed record
    d = part.to_dict()
    assert list(d) == PART_KEYS
    assert d["summary"]["sent"] == 7 and ws.total().sent == 8
    assert (d["phase"], d["saturation"], d["worker_index"]) == ("ramp", NOT_BOUND.to_dict(), 3)
    back = ClosedRecord.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d and not back.merged and back.index == 2
    assert back.verdict_detail is None and back.verdict == "partial"  # nobody judged a part


def test_a_merged_record_written_before_the_verdict_detail_and_the_saturation_still_reads() -> None:
    d = {**sample_window().to_dict(), "phase": "p", "verdict": "throttled", "workers": {}, "missing_workers": [1]}
    closed = ClosedRecord.from_dict(d)
    assert closed.merged and closed.missing_workers == [1] and closed.saturation is None
    assert closed.verdict_detail == Verdict(("throttled",)) and closed.verdict == "throttled"
    with pytest.raises(WindowError, match="window 2: malformed record"):
        ClosedRecord.from_dict({**d, "missing_workers": ["one"]})
