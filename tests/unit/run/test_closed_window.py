"""The closed window: a part's snapshot in its saved format, and old merged records still read."""

from __future__ import annotations

import json

import pytest

from dynlocust.run.closed_window import ClosedWindow
from dynlocust.run.tally import WindowError
from dynlocust.run.verdict import Verdict
from tests.unit.run._windows import NOT_BOUND, rec, sample_window

PART_KEYS = [
    "index", "start", "duration", "target_rate", "bin_seconds", "partial", "pacing", "bins", "summary", "phase",
    "saturation", "worker_index",
]  # fmt: skip
"""A worker's part as it has always been sent and spooled: `WindowStats.to_dict` and then the close's keys."""


def test_a_part_is_a_snapshot_in_the_format_it_always_had_and_reads_back_exactly() -> None:
    ws = sample_window()
    part = ClosedWindow.of_part(ws, phase="ramp", saturation=NOT_BOUND, worker_index=3)
    rec(ws, 1000.0 + 2.0)  # a late answer after the close changes the tally, never the closed record
    d = part.to_dict()
    assert list(d) == PART_KEYS
    assert d["summary"]["sent"] == 7 and ws.total().sent == 8
    assert (d["phase"], d["saturation"], d["worker_index"]) == ("ramp", NOT_BOUND.to_dict(), 3)
    back = ClosedWindow.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d and not back.merged and back.index == 2
    assert back.verdict_detail is None and back.verdict == "partial"  # nobody judged a part


def test_a_merged_record_written_before_the_verdict_detail_and_the_saturation_still_reads() -> None:
    d = {**sample_window().to_dict(), "phase": "p", "verdict": "throttled", "workers": {}, "missing_workers": [1]}
    closed = ClosedWindow.from_dict(d)
    assert closed.merged and closed.missing_workers == [1] and closed.saturation is None
    assert closed.verdict_detail == Verdict(("throttled",)) and closed.verdict == "throttled"
    with pytest.raises(WindowError, match="window 2: malformed record"):
        ClosedWindow.from_dict({**d, "missing_workers": ["one"]})
