"""Windows the tally, verdict and closed-window tests share: a sample window and a judged one."""

from __future__ import annotations

from dynlocust.run.pacing import PacingCounts, Segment
from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowBook, WindowStats
from tests.support.tally import count_outcome

NOT_BOUND = Saturation(False, (), 0.2, 0.001, 0, 0)


def rec(ws: WindowStats | WindowBook, at: float, kind: str = "ok", **kw: object) -> None:
    kw.setdefault("latency", 0.004)
    kw.setdefault("latency_from_intended", 0.005)
    count_outcome(ws, at=at, kind=kind, **kw)  # type: ignore[arg-type]


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
SLIGHT = Saturation(True, ("dropped",), 0.3, 0.001, 4, 0, cpu_seconds=10.0, due=100, sent=96)
"""4% of due sends dropped: within `SENT_TOLERANCE`, a shortfall that does not change the answer."""
UNJUDGED = Saturation(True, ("cpu",), 0.97, 0.001, 0, 0, judged=False)
