"""The closed window: a window's saved format, once it has closed.

The noun here is a *closed window*: `ClosedWindow` is what leaves the process that closed a window (a worker's
part, or the fleet's merged and judged window) and what a line of results.jsonl holds; `to_dict` and
`from_dict` are the one place that format is written and read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowError, WindowStats
from dynlocust.run.verdict import Verdict


@dataclass(frozen=True)
class ClosedWindow:
    """A closed window's record: what leaves the process that closed it, and what a results file holds.

    One class for both stages of a window's close:
    - a worker's part (`worker_index` set, no verdict): `LocalRun` builds it with `of_part` when the window
      closes; a worker spools it and sends it to the master, a standalone run hands it to its own `FleetMerge`;
    - the fleet's window (`merged`): `FleetMerge` merges the parts, judges them and writes the result to the
      results file; it is also what the progress line and the window table print.

    `to_dict` is the only place the record's dict (the message payload and the `window` line of results.jsonl)
    is built; `from_dict` reads it back, also from files written before some of its keys existed.
    """

    stats: WindowStats
    """The window's statistics as they were when it closed (its process counts late answers elsewhere: they do not
    change a closed record); once `settled`, only their header."""
    phase: str
    summary: dict[str, Any]
    """`WindowStats.summary` of a part; the fleet's `report_summary` (errors, cost) of a merged window."""
    saturation: Saturation | None = None
    """The client's evidence (a part's own, or the fleet's combined); None only in records written before it."""
    worker_index: int | None = None
    """The worker share this part was measured by; None on a merged window."""
    verdict_detail: Verdict | None = None
    """What limited the window, decided once by the fleet (None on a part: nobody has judged it yet)."""
    slo_failures: list[str] = field(default_factory=list)
    workers: dict[str, dict[str, Any]] | None = None
    """A merged window's per-worker figures, by worker; None on a part."""
    missing_workers: list[int] | None = None
    """Workers whose part a merged window lacks; None on a part."""
    rebalanced: list[int] = field(default_factory=list)
    """Lost workers whose share the survivors had taken over by this window."""
    table_state: dict[str, Any] | None = None
    """What DescribeTable said of the run's tables at the window's end (`dynlocust.run.table_state`); None on a
    part, and on a window closed before its end or whose poll did not answer."""

    bin_summaries: list[dict[str, Any]] | None = None
    """Each bin's figures (`WindowStats.bin_summaries`) once the window is `settled`; None before."""

    @classmethod
    def of_part(cls, stats: WindowStats, *, phase: str, saturation: Saturation, worker_index: int) -> ClosedWindow:
        """One worker's part of a window that has just closed (`stats` are the part's from now on)."""
        return cls(stats, phase, stats.summary(), saturation, worker_index)

    def settled(self) -> ClosedWindow:
        """This window as a run keeps it once its record is written: its summaries, per-bin figures and verdict,
        without the per-bin histograms (tens of KB a bin; the results file has them). The statistics left are
        their header, with no bins."""
        s = self.stats
        header = WindowStats(s.index, s.start, s.duration, target_rate=s.target_rate, bin_seconds=s.duration)
        header.bins, header.bin_seconds, header.partial = [], s.bin_seconds, s.partial
        header.handed, header.dropped, header.cancelled = s.handed, s.dropped, s.cancelled
        return dataclasses.replace(self, stats=header, bin_summaries=s.bin_summaries())

    @property
    def index(self) -> int:
        return self.stats.index

    @property
    def merged(self) -> bool:
        """The fleet's window (all parts merged), not one worker's part."""
        return self.workers is not None or self.missing_workers is not None

    @property
    def verdict(self) -> str:
        """The verdict's label; a record nobody judged reads `partial` (as `Verdict.of_record` always has)."""
        return self.verdict_detail.label if self.verdict_detail is not None else "partial"

    def to_dict(self) -> dict[str, Any]:
        """The JSON- and msgpack-safe form: `WindowStats.to_dict` and then the close's own keys."""
        out = self.stats.to_dict()
        out["summary"] = self.summary
        out["phase"] = self.phase
        if self.verdict_detail is not None:
            out["verdict"] = self.verdict_detail.label
            out["verdict_detail"] = self.verdict_detail.to_dict()
        if self.saturation is not None:
            out["saturation"] = self.saturation.to_dict()
        if self.worker_index is not None:
            out["worker_index"] = self.worker_index
        if self.merged:
            out["slo_failures"] = list(self.slo_failures)
            out["workers"] = self.workers or {}
            out["missing_workers"] = list(self.missing_workers or ())
            out["rebalanced"] = list(self.rebalanced)
        if self.table_state is not None:
            out["table_state"] = self.table_state
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClosedWindow:
        stats = WindowStats.from_dict(d)
        try:
            saturation = d.get("saturation")
            return cls(
                stats,
                phase=str(d.get("phase") or ""),
                summary=dict(d.get("summary") or stats.summary()),
                saturation=Saturation.from_dict(saturation) if saturation else None,
                worker_index=None if d.get("worker_index") is None else int(d["worker_index"]),
                verdict_detail=Verdict.of_record(d) if "verdict" in d or "verdict_detail" in d else None,
                slo_failures=[str(f) for f in d.get("slo_failures") or ()],
                workers=dict(d["workers"] or {}) if "workers" in d else None,
                missing_workers=[int(w) for w in d["missing_workers"] or ()] if "missing_workers" in d else None,
                rebalanced=[int(w) for w in d.get("rebalanced") or ()],
                table_state=dict(d["table_state"]) if d.get("table_state") else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WindowError(f"window {stats.index}: malformed record ({exc!r})") from exc
