"""Per-window and per-bin statistics of a run, mergeable across workers, and the verdict on each window.

Every worker keeps one ``WindowStats`` per window of the plan; the master merges those of the same window
index (counts add, histograms merge, target rates add since each worker had a share). Bins are aligned to the
*window start* (bin b covers ``[start + b * bin_seconds, start + (b + 1) * bin_seconds)``, the last one cut at
the window end), so bin 0 of every window shows how the service answered the first seconds of a new rate.

A request is attributed by ``at`` = its intended send time (``ticket.intended``): it then lands in the window
and bin in which it was offered, so offered, sent and answered add up per bin.

A window's names, one per stage: the plan's ``Window`` (`dynlocust.scenario.plan`, the fleet's offered load), a
worker's share of it, ``Segment`` (`dynlocust.pacing`), its tally, ``WindowStats`` (here), and once it has closed,
its ``ClosedRecord`` (here: a worker's part, then the fleet's merged and judged window, the line of results.jsonl).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.errors import DynlocustError
from dynlocust.histogram import Histogram
from dynlocust.outcomes import (
    AUTH,
    CONDITION_FAILED,
    CONNECTION,
    ERROR,
    KINDS,
    NOT_FOUND,
    OK,
    SERVER_ERROR,
    THROTTLED,
    TIMEOUT,
    TRANSACTION_CONFLICT,
    UNPROCESSED,
    VALIDATION,
)
from dynlocust.pacing import PacingCounts, Segment
from dynlocust.saturation import Saturation

if TYPE_CHECKING:
    from dynlocust.record import RequestRecord

ERROR_KINDS = frozenset({VALIDATION, NOT_FOUND, AUTH, TIMEOUT, CONNECTION, SERVER_ERROR, ERROR})
"""Kinds that are failures of the test itself; condition failures and transaction conflicts are answers."""

DEFAULT_BIN_SECONDS = 10.0

VERDICTS = ("ok", "throttled", "client-bound", "errors", "partial", "not-run")

_KIND_SET = frozenset(KINDS)
_PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


class WindowError(DynlocustError):
    """Statistics that cannot be recorded, merged or read back as given."""


def _add_counts(into: dict[str, int], other: Mapping[str, int]) -> None:
    for key, n in other.items():
        into[key] = into.get(key, 0) + n


def _latency_summary(hist: Histogram) -> dict[str, float | None]:
    out: dict[str, float | None] = {name: hist.percentile(q) for name, q in _PERCENTILES.items()}
    out["max"] = hist.max if hist.count else None
    return out


class Tally:
    """Counters of one bin (or of a whole window once bins are merged)."""

    __slots__ = (
        "by_kind",
        "errors_by",
        "first_throttle_at",
        "latency",
        "latency_from_intended",
        "offered",
        "operations",
        "read_units",
        "throttled_by",
        "timeouts_by",
        "unprocessed_items",
        "write_units",
    )

    def __init__(self, offered: int = 0) -> None:
        self.offered = offered
        self.by_kind: dict[str, int] = {}
        self.throttled_by: dict[str, int] = {}  # "code|reason" -> count; reason "" when none was given
        self.timeouts_by: dict[str, int] = {}  # timeout code (connect, read, deadline...) -> count
        self.errors_by: dict[str, int] = {}  # "kind:code" -> count, kinds in ERROR_KINDS other than timeout
        self.unprocessed_items = 0
        self.latency = Histogram()
        self.latency_from_intended = Histogram()
        self.first_throttle_at: float | None = None  # absolute epoch seconds
        self.read_units = 0.0
        self.write_units = 0.0
        self.operations: dict[str, Tally] = {}
        """The same counters per operation label (``put items``), so a diff can compare operation by operation;
        a sub-tally's ``offered`` stays 0 (the pacer offers sends, the mix picks their operation later)."""

    @property
    def sent(self) -> int:
        return sum(self.by_kind.values())

    @property
    def accepted(self) -> int:
        return self.by_kind.get(OK, 0)

    @property
    def throttled(self) -> int:
        return self.by_kind.get(THROTTLED, 0)

    @property
    def errors(self) -> int:
        return sum(n for kind, n in self.by_kind.items() if kind in ERROR_KINDS)

    def merge(self, other: Tally) -> None:
        self.offered += other.offered
        _add_counts(self.by_kind, other.by_kind)
        _add_counts(self.throttled_by, other.throttled_by)
        _add_counts(self.timeouts_by, other.timeouts_by)
        _add_counts(self.errors_by, other.errors_by)
        self.unprocessed_items += other.unprocessed_items
        self.latency.merge(other.latency)
        self.latency_from_intended.merge(other.latency_from_intended)
        if other.first_throttle_at is not None and (
            self.first_throttle_at is None or other.first_throttle_at < self.first_throttle_at
        ):
            self.first_throttle_at = other.first_throttle_at
        self.read_units += other.read_units
        self.write_units += other.write_units
        for label, sub in other.operations.items():
            self.operations.setdefault(label, Tally()).merge(sub)

    def operation(self, label: str) -> Tally:
        """This tally's counters of one operation (an empty tally when it saw none)."""
        return self.operations.get(label) or Tally()

    def summary(self, seconds: float, window_start: float) -> dict[str, Any]:
        """Derived figures over ``seconds`` of time; ``first_throttle_s`` counts from ``window_start``."""
        return {
            "offered": self.offered,
            "sent": self.sent,
            "accepted": self.accepted,
            "accepted_per_s": self.accepted / seconds if seconds > 0 else None,
            "throttled": self.throttled,
            "throttled_by": dict(sorted(self.throttled_by.items())),
            "unprocessed_items": self.unprocessed_items,
            "condition_failed": self.by_kind.get(CONDITION_FAILED, 0),
            "transaction_conflict": self.by_kind.get(TRANSACTION_CONFLICT, 0),
            "timeouts_by": dict(sorted(self.timeouts_by.items())),
            "errors_by": dict(sorted(self.errors_by.items())),
            "latency": _latency_summary(self.latency),
            "latency_from_intended": _latency_summary(self.latency_from_intended),
            "first_throttle_s": None if self.first_throttle_at is None else self.first_throttle_at - window_start,
            "read_units": self.read_units,
            "write_units": self.write_units,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "offered": self.offered,
            "by_kind": dict(sorted(self.by_kind.items())),
            "throttled_by": dict(sorted(self.throttled_by.items())),
            "timeouts_by": dict(sorted(self.timeouts_by.items())),
            "errors_by": dict(sorted(self.errors_by.items())),
            "unprocessed_items": self.unprocessed_items,
            "latency": self.latency.to_dict(),
            "latency_from_intended": self.latency_from_intended.to_dict(),
            "first_throttle_at": self.first_throttle_at,
            "read_units": self.read_units,
            "write_units": self.write_units,
            **({"operations": {k: v.to_dict() for k, v in sorted(self.operations.items())}} if self.operations else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tally:
        tally = cls(int(d["offered"]))
        tally.by_kind = {str(k): int(v) for k, v in d["by_kind"].items()}
        tally.throttled_by = {str(k): int(v) for k, v in d["throttled_by"].items()}
        tally.timeouts_by = {str(k): int(v) for k, v in d["timeouts_by"].items()}
        tally.errors_by = {str(k): int(v) for k, v in d["errors_by"].items()}
        tally.unprocessed_items = int(d["unprocessed_items"])
        tally.latency = Histogram.from_dict(d["latency"])
        tally.latency_from_intended = Histogram.from_dict(d["latency_from_intended"])
        fta = d["first_throttle_at"]
        tally.first_throttle_at = None if fta is None else float(fta)
        tally.read_units = float(d["read_units"])
        tally.write_units = float(d["write_units"])
        tally.operations = {str(k): cls.from_dict(v) for k, v in d.get("operations", {}).items()}
        return tally


def _count(
    tally: Tally,
    at: float,
    kind: str,
    code: str | None,
    reasons: Sequence[str],
    unprocessed: int,
    latency: float,
    latency_from_intended: float,
    read_units: float,
    write_units: float,
) -> None:
    tally.by_kind[kind] = tally.by_kind.get(kind, 0) + 1
    if kind == THROTTLED:
        for reason in reasons or ("",):
            key = f"{code or ''}|{reason}"
            tally.throttled_by[key] = tally.throttled_by.get(key, 0) + 1
    elif kind == TIMEOUT:
        key = code or ""
        tally.timeouts_by[key] = tally.timeouts_by.get(key, 0) + 1
    elif kind in ERROR_KINDS:
        key = f"{kind}:{code or ''}"
        tally.errors_by[key] = tally.errors_by.get(key, 0) + 1
    if unprocessed:
        tally.unprocessed_items += unprocessed
    if (kind == THROTTLED or unprocessed > 0) and (tally.first_throttle_at is None or at < tally.first_throttle_at):
        tally.first_throttle_at = at
    tally.latency.record(latency)
    tally.latency_from_intended.record(latency_from_intended)
    tally.read_units += read_units
    tally.write_units += write_units


class WindowStats:
    """Statistics of one window: per-bin tallies plus what the pacer did (dropped sends, schedule lag)."""

    def __init__(
        self,
        index: int,
        start: float,
        duration: float,
        *,
        target_rate: float = 0.0,
        bin_seconds: float = DEFAULT_BIN_SECONDS,
        offered_per_bin: Sequence[int] | None = None,
    ) -> None:
        if duration <= 0 or bin_seconds <= 0:
            raise WindowError(
                f"window {index}: expected duration > 0 and bin_seconds > 0, found {duration!r}, {bin_seconds!r}"
            )
        self.index = index
        self.start = start
        self.duration = duration
        self.target_rate = target_rate
        self.bin_seconds = bin_seconds
        n_bins = max(1, math.ceil(duration / bin_seconds - 1e-9))
        if offered_per_bin is not None and len(offered_per_bin) != n_bins:
            raise WindowError(
                f"window {index}: expected {n_bins} offered counts (one per bin), found {len(offered_per_bin)}"
            )
        self.bins = [Tally(offered_per_bin[b] if offered_per_bin else 0) for b in range(n_bins)]
        self.handed = 0
        self.dropped = 0
        self.cancelled = 0
        self.schedule_lag = Histogram()
        self.partial = False

    @classmethod
    def for_segment(cls, segment: Segment, *, bin_seconds: float = DEFAULT_BIN_SECONDS) -> WindowStats:
        """Window statistics whose target rate and per-bin offered counts come from the pacing schedule."""
        n_bins = max(1, math.ceil(segment.duration / bin_seconds - 1e-9))
        offered = [
            segment.count_between(
                segment.start + b * bin_seconds,
                segment.end if b == n_bins - 1 else segment.start + (b + 1) * bin_seconds,
            )
            for b in range(n_bins)
        ]
        return cls(
            segment.index,
            segment.start,
            segment.duration,
            target_rate=segment.rate,
            bin_seconds=bin_seconds,
            offered_per_bin=offered,
        )

    @property
    def end(self) -> float:
        return self.start + self.duration

    def bin_of(self, at: float) -> int:
        """Bin index of time ``at``, clamped to the window's bins."""
        b = int((at - self.start) // self.bin_seconds)
        return min(max(b, 0), len(self.bins) - 1)

    def add(self, record: RequestRecord) -> None:
        """Count one request's record, at its ticket's intended send time (a record without a ticket is refused)."""
        ticket = record.ticket
        if ticket is None or record.latency_from_intended is None:
            raise WindowError(f"window {self.index}: expected a paced request (with a ticket), found {record.name}")
        outcome = record.outcome
        self.record(
            at=ticket.intended,
            kind=outcome.kind,
            code=outcome.code,
            reasons=[r.reason for r in outcome.reasons],
            unprocessed=outcome.unprocessed,
            latency=record.latency,
            latency_from_intended=record.latency_from_intended,
            read_units=record.read_units,
            write_units=record.write_units,
            operation=record.label,
        )

    def record(
        self,
        *,
        at: float,
        kind: str,
        code: str | None = None,
        reasons: Sequence[str] = (),
        unprocessed: int = 0,
        latency: float,
        latency_from_intended: float,
        read_units: float = 0.0,
        write_units: float = 0.0,
        operation: str | None = None,
    ) -> None:
        """Count one answered (or failed) request; latencies in seconds, ``at`` its intended send time.

        ``operation`` (the scenario operation's label) also counts it in that operation's sub-tally of the bin.
        """
        if kind not in _KIND_SET:
            raise WindowError(f"window {self.index}: expected kind in {KINDS}, found {kind!r}")
        tally = self.bins[self.bin_of(at)]
        _count(tally, at, kind, code, reasons, unprocessed, latency, latency_from_intended, read_units, write_units)
        if operation is not None:
            sub = tally.operations.get(operation)
            if sub is None:  # not setdefault: that would build a Tally for every request
                sub = tally.operations[operation] = Tally()
            _count(sub, at, kind, code, reasons, unprocessed, latency, latency_from_intended, read_units, write_units)

    def apply_pacing(self, counts: PacingCounts) -> None:
        """Take this worker's pacer counters for the window (call once, when the window is over).

        Sends cancelled by a stop mean the window was not fully observed: it becomes ``partial``.
        """
        if counts.index != self.index:
            raise WindowError(f"window {self.index}: expected pacing counts of it, found window {counts.index}")
        self.handed = counts.handed
        self.dropped = counts.dropped
        self.cancelled = counts.cancelled
        self.schedule_lag = counts.lag.copy()
        if counts.cancelled or not counts.settled:
            self.partial = True

    def mark_partial(self) -> None:
        """Declare the window not fully observed (a late start, an early stop, a lost worker)."""
        self.partial = True

    def total(self) -> Tally:
        """All bins merged into one tally."""
        tally = Tally()
        for b in self.bins:
            tally.merge(b)
        return tally

    def merge(self, other: WindowStats) -> None:
        """Add another worker's statistics of the same window (exact: counts add, histograms merge)."""
        if (other.index, other.start, other.duration, other.bin_seconds, len(other.bins)) != (
            self.index,
            self.start,
            self.duration,
            self.bin_seconds,
            len(self.bins),
        ):
            raise WindowError(
                f"merge: expected window {self.index} (start {self.start}, {self.duration} s, bins of "
                f"{self.bin_seconds} s), found window {other.index} (start {other.start}, {other.duration} s, "
                f"bins of {other.bin_seconds} s)"
            )
        self.target_rate += other.target_rate
        for mine, theirs in zip(self.bins, other.bins, strict=True):
            mine.merge(theirs)
        self.handed += other.handed
        self.dropped += other.dropped
        self.cancelled += other.cancelled
        self.schedule_lag.merge(other.schedule_lag)
        self.partial = self.partial or other.partial

    def summary(self) -> dict[str, Any]:
        """Derived, human-readable figures of the whole window (not read back by ``from_dict``)."""
        out = self.total().summary(self.duration, self.start)
        out["target_rate"] = self.target_rate
        out["dropped"] = self.dropped
        out["schedule_lag"] = _latency_summary(self.schedule_lag)
        out["partial"] = self.partial
        return out

    def report_summary(self, prices: Prices = US_EAST_1) -> dict[str, Any]:
        """``summary`` plus what reports and SLOs read: errors, unprocessed requests and the estimated cost."""
        out = self.summary()
        total = self.total()
        out["errors"] = total.errors
        out["unprocessed_requests"] = total.by_kind.get(UNPROCESSED, 0)
        out["cost_dollars"] = dollars(out["read_units"], out["write_units"], prices)
        return out

    def bin_summaries(self) -> list[dict[str, Any]]:
        """``Tally.summary`` of each bin, with its offset from the window start."""
        out = []
        for b, tally in enumerate(self.bins):
            lo = b * self.bin_seconds
            hi = min(self.duration, lo + self.bin_seconds)
            out.append({"offset_s": lo, **tally.summary(hi - lo, self.start)})
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; ``from_dict`` restores it exactly (the ``summary`` key is for readers only)."""
        return {
            "index": self.index,
            "start": self.start,
            "duration": self.duration,
            "target_rate": self.target_rate,
            "bin_seconds": self.bin_seconds,
            "partial": self.partial,
            "pacing": {
                "handed": self.handed,
                "dropped": self.dropped,
                "cancelled": self.cancelled,
                "lag": self.schedule_lag.to_dict(),
            },
            "bins": [b.to_dict() for b in self.bins],
            "summary": self.summary(),
        }

    def copy(self) -> WindowStats:
        """An independent copy (exact, through ``to_dict``): a closed record keeps the figures it closed with."""
        return WindowStats.from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WindowStats:
        try:
            ws = cls(
                int(d["index"]),
                float(d["start"]),
                float(d["duration"]),
                target_rate=float(d["target_rate"]),
                bin_seconds=float(d["bin_seconds"]),
            )
            bins = [Tally.from_dict(b) for b in d["bins"]]
            if len(bins) != len(ws.bins):
                raise WindowError(f"window {ws.index}: expected {len(ws.bins)} bins, found {len(bins)}")
            ws.bins = bins
            ws.partial = bool(d["partial"])
            pacing = d["pacing"]
            ws.handed = int(pacing["handed"])
            ws.dropped = int(pacing["dropped"])
            ws.cancelled = int(pacing["cancelled"])
            ws.schedule_lag = Histogram.from_dict(pacing["lag"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WindowError(f"window statistics: malformed dict ({exc!r})") from exc
        return ws


class WindowBook:
    """All windows of a run in one process, keyed by window index; routes each record to its window and bin."""

    def __init__(self, windows: Iterable[WindowStats]) -> None:
        self._by_index: dict[int, WindowStats] = {}
        for w in windows:
            if w.index in self._by_index:
                raise WindowError(f"window book: expected unique window indexes, found {w.index} twice")
            self._by_index[w.index] = w
        self._ordered = sorted(self._by_index.values(), key=lambda w: w.start)
        self._starts = [w.start for w in self._ordered]
        self.unrouted = 0
        """Records whose time fell in no window (counted, not lost silently)."""

    @classmethod
    def from_segments(cls, segments: Iterable[Segment], *, bin_seconds: float = DEFAULT_BIN_SECONDS) -> WindowBook:
        return cls(WindowStats.for_segment(s, bin_seconds=bin_seconds) for s in segments)

    def replace(self, stats: WindowStats) -> None:
        """Swap in fresh statistics for a window that has not started (its share of the rate changed)."""
        old = self[stats.index]
        self._by_index[stats.index] = stats
        self._ordered[self._ordered.index(old)] = stats

    def __getitem__(self, index: int) -> WindowStats:
        try:
            return self._by_index[index]
        except KeyError:
            raise WindowError(f"window book: expected one of {sorted(self._by_index)}, found {index!r}") from None

    def __iter__(self) -> Iterator[WindowStats]:
        return iter(self._ordered)

    def __len__(self) -> int:
        return len(self._ordered)

    def window_at(self, at: float) -> WindowStats | None:
        """The window covering time ``at``, or None."""
        i = bisect.bisect_right(self._starts, at) - 1
        if i < 0:
            return None
        w = self._ordered[i]
        return w if at < w.end else None

    def add(self, record: RequestRecord) -> None:
        """Count a paced request's record in its ticket's window (counted as unrouted when that is not here)."""
        assert record.ticket is not None, "only paced requests are recorded in windows"
        w = self._by_index.get(record.ticket.window)
        if w is None:
            self.unrouted += 1
            return
        w.add(record)

    def record(self, *, at: float, window: int | None = None, **outcome: Any) -> None:
        """Record into window ``window`` (e.g. ``ticket.window``) or, if None, the window covering ``at``.

        ``outcome`` takes ``WindowStats.record``'s keywords.
        """
        w = self._by_index.get(window) if window is not None else self.window_at(at)
        if w is None:
            self.unrouted += 1
            return
        w.record(at=at, **outcome)


@dataclass(frozen=True)
class Verdict:
    """What limited a window, decided once when it closes; every view renders it, none decides again.

    ``labels`` holds every verdict that applies, the stronger evidence first (``labels[0]`` is *the* verdict):
    a window can be ``throttled`` and ``client-bound`` at once, and ``stronger`` then says which side's evidence
    weighs more (``service`` or ``client``). ``ran`` is the fraction of the window's schedule that came due before
    it closed; ``reasons`` and ``workers`` are the client's (see `dynlocust.saturation`).
    """

    labels: tuple[str, ...]
    ran: float = 1.0
    stronger: str | None = None
    reasons: tuple[str, ...] = ()
    workers: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.labels[0]

    @property
    def ran_text(self) -> str:
        """``ran`` as a percentage rounded down, so a window short of one send never reads 100%."""
        return f"{math.floor(self.ran * 1000) / 10:g}%"

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "ran": self.ran,
            "stronger": self.stronger,
            "reasons": list(self.reasons),
            "workers": list(self.workers),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        labels = tuple(str(v) for v in d["labels"])
        if not labels or any(v not in VERDICTS for v in labels):
            raise WindowError(f"verdict: expected labels from {VERDICTS}, found {list(labels)}")
        return cls(
            labels=labels,
            ran=float(d.get("ran", 1.0)),
            stronger=d.get("stronger"),
            reasons=tuple(str(r) for r in d.get("reasons", ())),
            workers=tuple(int(w) for w in d.get("workers", ())),
        )

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> Verdict:
        """The verdict a window record carries; records written before ``verdict_detail`` give their label."""
        detail = record.get("verdict_detail")
        if detail is not None:
            return cls.from_dict(detail)
        label = str(record.get("verdict", "partial"))
        sat = record.get("saturation") or {}
        return cls(
            labels=(label if label in VERDICTS else "partial",),
            reasons=tuple(sat.get("reasons", ())) if label == "client-bound" else (),
        )


@dataclass(frozen=True)
class ClosedRecord:
    """A closed window's record: what leaves the process that closed it, and what a results file holds.

    One class for both stages of a window's close:
    - a worker's part (``worker_index`` set, no verdict): `ScenarioRun` builds it with `of_part` when the window
      closes; a worker spools it and sends it to the master, a standalone run hands it to its own `FleetReport`;
    - the fleet's window (``merged``): `FleetReport` merges the parts, judges them and writes the result to the
      results file; it is also what the progress line and the window table print.

    ``to_dict`` is the only place the record's dict (the message payload and the ``window`` line of results.jsonl)
    is built; ``from_dict`` reads it back, also from files written before some of its keys existed.
    """

    stats: WindowStats
    """The window's statistics as they were when it closed (a copy: late answers do not change a closed record)."""
    phase: str
    summary: dict[str, Any]
    """``WindowStats.summary`` of a part; the fleet's ``report_summary`` (errors, cost) of a merged window."""
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

    @classmethod
    def of_part(cls, stats: WindowStats, *, phase: str, saturation: Saturation, worker_index: int) -> ClosedRecord:
        """One worker's part of a window that has just closed."""
        snapshot = stats.copy()
        return cls(snapshot, phase, snapshot.summary(), saturation, worker_index)

    @property
    def index(self) -> int:
        return self.stats.index

    @property
    def merged(self) -> bool:
        """The fleet's window (all parts merged), not one worker's part."""
        return self.workers is not None or self.missing_workers is not None

    @property
    def verdict(self) -> str:
        """The verdict's label; a record nobody judged reads ``partial`` (as `Verdict.of_record` always has)."""
        return self.verdict_detail.label if self.verdict_detail is not None else "partial"

    def to_dict(self) -> dict[str, Any]:
        """The JSON- and msgpack-safe form: ``WindowStats.to_dict`` and then the close's own keys."""
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
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClosedRecord:
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
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WindowError(f"window {stats.index}: malformed record ({exc!r})") from exc


def verdict(
    stats: WindowStats | None,
    saturation: Saturation,
    *,
    planned: int | None = None,
    error_fraction: float = 0.01,
) -> Verdict:
    """Say what limited a window (``stats`` None: nobody observed it). ``planned`` is the fleet's scheduled count
    (default: the window's own offered count). In this order:

    - ``not-run``: nothing of the window's schedule came due (the run stopped before it, or nobody reported it);
    - ``partial``: only part of it ran (stopped early, a worker lost or late): never judged ``client-bound``,
      since its CPU and lag were measured over a fraction of it; throttles or errors seen are listed after it;
    - otherwise the service's side, ``errors`` (test failures reach ``error_fraction`` of sent requests and
      outnumber the throttle signals) or ``throttled`` (at least one throttled request or unprocessed batch), and
      the client's side, ``client-bound`` (``saturation.client_bound``), the stronger evidence first: the client's
      is the fraction of due sends that never went out (``Saturation.shortfall``), the service's the fraction of
      sent requests it refused (or failed). Throttles with a healthy client mean DynamoDB said no;
    - ``ok``: none of the above.
    """
    if stats is None:
        return Verdict(("not-run",), ran=0.0)
    scheduled = stats.total().offered if planned is None else planned
    due = stats.handed + stats.dropped
    ran = min(1.0, due / scheduled) if scheduled else (0.0 if stats.partial else 1.0)
    t = stats.total()
    throttle_signals = t.throttled + t.by_kind.get(UNPROCESSED, 0)
    sent = t.sent
    service: str | None = None
    if sent and t.errors >= error_fraction * sent and t.errors > throttle_signals:
        service = "errors"
    elif throttle_signals > 0 or t.unprocessed_items > 0:
        service = "throttled"
    if stats.partial or ran < 1.0:
        if due == 0 and sent == 0:
            return Verdict(("not-run",), ran=0.0)
        return Verdict(("partial",) if service is None else ("partial", service), ran=ran)
    client = saturation.client_bound and saturation.judged
    reasons, workers = (saturation.reasons, saturation.workers) if client else ((), ())
    if service is None:
        return Verdict(("client-bound",) if client else ("ok",), reasons=reasons, workers=workers)
    if not client:
        return Verdict((service,))
    refused = (t.errors if service == "errors" else throttle_signals) / sent if sent else 0.0
    if saturation.shortfall > refused:
        return Verdict(("client-bound", service), stronger="client", reasons=reasons, workers=workers)
    return Verdict((service, "client-bound"), stronger="service", reasons=reasons, workers=workers)
