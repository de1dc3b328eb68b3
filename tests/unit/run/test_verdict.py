"""The verdict: both sides' labels, the stronger first, and its round trip."""

from __future__ import annotations

import json

import pytest

from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowError
from dynlocust.run.verdict import Verdict, verdict
from tests.unit.run._windows import CPU_BOUND, DROPPING, NOT_BOUND, SLIGHT, UNJUDGED, _window


@pytest.mark.parametrize(
    ("window", "saturation", "labels", "stronger"),
    [
        ({"ok": 100}, NOT_BOUND, ("ok",), None),
        ({"ok": 100, "condition_failed": 20}, NOT_BOUND, ("ok",), None),
        ({"ok": 90, "throttled": 10}, NOT_BOUND, ("throttled",), None),  # a healthy client: DynamoDB said no
        ({"ok": 99, "unprocessed": 1}, NOT_BOUND, ("throttled",), None),
        # every send went out and nothing was throttled: the table took what was sent, the client's flag after it
        ({"ok": 100}, CPU_BOUND, ("ok", "client-bound"), "service"),
        ({"ok": 96, "dropped": 4}, SLIGHT, ("ok", "client-bound"), "service"),
        ({"ok": 60, "dropped": 40}, DROPPING, ("client-bound",), None),  # a shortfall that could fake a limit
        # 4% short against 2% refused: within the tolerance, DynamoDB's refusals still decide
        ({"ok": 94, "throttled": 2, "dropped": 4}, SLIGHT, ("throttled", "client-bound"), "service"),
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
