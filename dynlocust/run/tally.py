"""The tally of a run: per-window and per-bin counters, mergeable across workers.

The noun here is a *tally*: `Tally` counts one bin (or a whole window once its bins are merged), `WindowStats`
is one window's tally (its bins plus what the pacer did) and `WindowBook` routes each request to its window.
Every worker keeps one `WindowStats` per window of the plan; the master merges those of the same window
index (counts add, histograms merge, target rates add since each worker had a share). Bins are aligned to the
*window start* (bin b covers `[start + b * bin_seconds, start + (b + 1) * bin_seconds)`, the last one cut at
the window end), so bin 0 of every window shows how the service answered the first seconds of a new rate.

A request is attributed by `at` = its intended send time (`ticket.intended`): it then lands in the window
and bin in which it was offered, so offered, sent and answered add up per bin.

A window's names, one per stage: the plan's `Window` (`dynlocust.scenario.plan`, the fleet's offered load), a
worker's share of it, `Segment` (`dynlocust.run.pacing`), its tally, `WindowStats` (here), its verdict
(`dynlocust.run.verdict`) and once it has closed, its `ClosedWindow` (`dynlocust.run.closed_window`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dynlocust.cost import US_EAST_1, Prices, dollars
from dynlocust.errors import DynlocustError
from dynlocust.request.outcomes import (
    AUTH,
    CONDITION_FAILED,
    CONNECTION,
    ERROR,
    NOT_FOUND,
    OK,
    SERVER_ERROR,
    THROTTLED,
    TIMEOUT,
    TRANSACTION_CONFLICT,
    UNPROCESSED,
    VALIDATION,
)
from dynlocust.run.histogram import Histogram, keyed
from dynlocust.run.pacing import PacingCounts, Segment

if TYPE_CHECKING:
    from dynlocust.request.record import RequestRecord

ERROR_KINDS = frozenset({VALIDATION, NOT_FOUND, AUTH, TIMEOUT, CONNECTION, SERVER_ERROR, ERROR})
"""Kinds that are failures of the test itself; condition failures and transaction conflicts are answers."""

DEFAULT_BIN_SECONDS = 10.0
HANDED_ON_KEPT = 4
"""Windows a `WindowBook` keeps readable once handed on: a merge waits for a window's tables' state, a poll
within the per-call deadline, so at most one or two are waiting."""

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
        "throttle_causes",
        "throttled_by",
        "throttled_index",
        "timeouts_by",
        "unprocessed_items",
        "write_units",
    )

    def __init__(self, offered: int = 0) -> None:
        self.offered = offered
        self.by_kind: dict[str, int] = {}
        self.throttled_by: dict[str, int] = {}  # "code|reason" -> count; reason "" when none was given
        self.throttled_index: dict[str, int] = {}  # "index|reason" -> count: throttles an index's limit refused
        self.throttle_causes: dict[str, int] = {}  # why a shared on-demand budget was full -> count (local only)
        self.timeouts_by: dict[str, int] = {}  # timeout code (connect, read, deadline...) -> count
        self.errors_by: dict[str, int] = {}  # "kind:code" -> count, kinds in ERROR_KINDS other than timeout
        self.unprocessed_items = 0
        self.latency = Histogram()
        self.latency_from_intended = Histogram()
        self.first_throttle_at: float | None = None  # absolute epoch seconds
        self.read_units = 0.0
        self.write_units = 0.0
        self.operations: dict[str, Tally] = {}
        """The same counters per operation label (`put items`), so a diff can compare operation by operation;
        a sub-tally's `offered` stays 0 (the pacer offers sends, the mix picks their operation later)."""

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
        _add_counts(self.throttled_index, other.throttled_index)
        _add_counts(self.throttle_causes, other.throttle_causes)
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
        """Derived figures over `seconds` of time; `first_throttle_s` counts from `window_start`."""
        return {
            "offered": self.offered,
            "sent": self.sent,
            "accepted": self.accepted,
            "accepted_per_s": self.accepted / seconds if seconds > 0 else None,
            "throttled": self.throttled,
            "throttled_by": dict(sorted(self.throttled_by.items())),
            "throttled_index": dict(sorted(self.throttled_index.items())),
            "throttle_causes": dict(sorted(self.throttle_causes.items())),
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
            **({"throttled_index": dict(sorted(self.throttled_index.items()))} if self.throttled_index else {}),
            **({"throttle_causes": dict(sorted(self.throttle_causes.items()))} if self.throttle_causes else {}),
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
        tally.throttled_index = {str(k): int(v) for k, v in d.get("throttled_index", {}).items()}
        tally.throttle_causes = {str(k): int(v) for k, v in d.get("throttle_causes", {}).items()}
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
    latency: tuple[int, float],
    latency_from_intended: tuple[int, float],
    read_units: float,
    write_units: float,
) -> None:
    """Count one request in `tally`; each latency comes as (bucket key, seconds), its bucket computed once."""
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
    tally.latency.record_keyed(latency)
    tally.latency_from_intended.record_keyed(latency_from_intended)
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
        self._bins = [Tally(offered_per_bin[b] if offered_per_bin else 0) for b in range(n_bins)]
        self._pending: list[dict[str, Tally]] = [{} for _ in range(n_bins)]
        """Per bin, each operation's requests since the bins were last read: counted once here on the request
        path, and folded into both the bin and its operation's sub-tally when `bins` is read."""
        self._stale = False
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

    @property
    def bins(self) -> list[Tally]:
        """The per-bin tallies, each with its operations' sub-tallies, exact up to the last request counted."""
        if self._stale:
            self._fold()
        return self._bins

    @bins.setter
    def bins(self, bins: list[Tally]) -> None:
        self._fold()
        self._bins = bins
        self._pending = [{} for _ in bins]

    def _fold(self) -> None:
        """Add each operation's pending requests to its bin and to the bin's sub-tally of that operation."""
        self._stale = False
        for tally, pending in zip(self._bins, self._pending, strict=True):
            if not pending:
                continue
            for label, part in pending.items():
                tally.merge(part)
                sub = tally.operations.get(label)
                if sub is None:
                    tally.operations[label] = part
                else:
                    sub.merge(part)
            pending.clear()

    def bin_of(self, at: float) -> int:
        """Bin index of time `at`, clamped to the window's bins."""
        b = int((at - self.start) // self.bin_seconds)
        return min(max(b, 0), len(self._bins) - 1)

    def add(self, record: RequestRecord) -> None:
        """Count one request's record, at its ticket's intended send time (a record without a ticket is refused)."""
        ticket = record.ticket
        if ticket is None or record.latency_from_intended is None:
            raise WindowError(f"window {self.index}: expected a paced request (with a ticket), found {record.name}")
        outcome = record.outcome
        reasons = [r.reason for r in outcome.reasons] if outcome.reasons else ()
        self.count(
            ticket.intended,
            outcome.kind,
            outcome.code,
            reasons,
            outcome.unprocessed,
            record.latency,
            record.latency_from_intended,
            record.read_units,
            record.write_units,
            record.label,
        )
        if outcome.kind == THROTTLED and (outcome.cause or outcome.throttled_index):
            why = [(r.index, r.reason) for r in outcome.reasons if r.index]
            self.count_why(ticket.intended, record.label, outcome.cause, why)

    def count_why(
        self, at: float, operation: str | None, cause: str | None, index_reasons: Sequence[tuple[str, str]]
    ) -> None:
        """Count why a throttle came (cause, refusing index) in its bin and its operation's sub-tally: off the
        request path of accepted requests, which never have a why."""
        tally = self.bins[self.bin_of(at)]
        for t in (tally, tally.operations[operation]) if operation is not None else (tally,):
            if cause:
                t.throttle_causes[cause] = t.throttle_causes.get(cause, 0) + 1
            for index, reason in index_reasons:
                key = f"{index}|{reason}"
                t.throttled_index[key] = t.throttled_index.get(key, 0) + 1

    def count(
        self,
        at: float,
        kind: str,
        code: str | None,
        reasons: Sequence[str],
        unprocessed: int,
        latency: float,
        latency_from_intended: float,
        read_units: float,
        write_units: float,
        operation: str | None,
    ) -> None:
        """Count one answered (or failed) request: the request path's one count (positional: `add` runs once per
        request); latencies in seconds, `at` its intended send time.

        A request with an operation is counted once, in that operation's pending tally of its bin; the bin's own
        figures are derived from its operations when `bins` is read (counting it twice cost 7,700 instructions per
        request, 2.7% of the request path: `bench_hot_path.py`).
        """
        b = self.bin_of(at)
        if operation is None:
            tally = self._bins[b]
        else:
            pending = self._pending[b]
            part = pending.get(operation)
            if part is None:  # not setdefault: that would build a Tally for every request
                part = pending[operation] = Tally()
            tally = part
            self._stale = True
        _count(
            tally,
            at,
            kind,
            code,
            reasons,
            unprocessed,
            keyed(latency),
            keyed(latency_from_intended),
            read_units,
            write_units,
        )

    def apply_pacing(self, counts: PacingCounts) -> None:
        """Take this worker's pacer counters for the window (call once, when the window is over).

        Sends cancelled by a stop mean the window was not fully observed: it becomes `partial`.
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
        """Derived, human-readable figures of the whole window (not read back by `from_dict`)."""
        out = self.total().summary(self.duration, self.start)
        out["target_rate"] = self.target_rate
        out["dropped"] = self.dropped
        out["schedule_lag"] = _latency_summary(self.schedule_lag)
        out["partial"] = self.partial
        return out

    def report_summary(self, prices: Prices = US_EAST_1) -> dict[str, Any]:
        """`summary` plus what reports and SLOs read: errors, unprocessed requests and the estimated cost."""
        out = self.summary()
        total = self.total()
        out["errors"] = total.errors
        out["unprocessed_requests"] = total.by_kind.get(UNPROCESSED, 0)
        out["cost_dollars"] = dollars(out["read_units"], out["write_units"], prices)
        return out

    def bin_summaries(self) -> list[dict[str, Any]]:
        """`Tally.summary` of each bin, with its offset from the window start."""
        out = []
        for b, tally in enumerate(self.bins):
            lo = b * self.bin_seconds
            hi = min(self.duration, lo + self.bin_seconds)
            out.append({"offset_s": lo, **tally.summary(hi - lo, self.start)})
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form; `from_dict` restores it exactly (the `summary` key is for readers only)."""
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
        """An independent copy (exact, through `to_dict`): a closed record keeps the figures it closed with."""
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
        self._indexes = [w.index for w in sorted(self._by_index.values(), key=lambda w: w.start)]
        self.unrouted = 0
        """Records whose time fell in no window, or in one already handed on (counted, not lost silently)."""
        self._recent: dict[int, WindowStats] = {}
        """The last `HANDED_ON_KEPT` windows handed on, readable while the merge may still wait for them."""

    @classmethod
    def from_segments(cls, segments: Iterable[Segment], *, bin_seconds: float = DEFAULT_BIN_SECONDS) -> WindowBook:
        return cls(WindowStats.for_segment(s, bin_seconds=bin_seconds) for s in segments)

    def replace(self, stats: WindowStats) -> None:
        """Swap in fresh statistics for a window that has not started (its share of the rate changed)."""
        if stats.index not in self._by_index:
            raise WindowError(f"window book: expected one of {sorted(self._by_index)} to replace, found {stats.index}")
        self._by_index[stats.index] = stats

    def hand_on(self, index: int) -> WindowStats:
        """Window `index`'s statistics, no longer this book's: its closed record owns them, and a record that
        arrives later is counted as unrouted (a long run keeps no window twice)."""
        stats = self[index]
        del self._by_index[index]
        self._recent[index] = stats
        for old in sorted(self._recent)[:-HANDED_ON_KEPT]:
            del self._recent[old]
        return stats

    def handed_on(self, index: int) -> WindowStats | None:
        """Window `index`'s statistics as handed on, if it was one of the last few (the web UI shows such a window
        as closing until the fleet's merge has closed it)."""
        return self._recent.get(index)

    def __getitem__(self, index: int) -> WindowStats:
        try:
            return self._by_index[index]
        except KeyError:
            raise WindowError(f"window book: expected one of {sorted(self._by_index)}, found {index!r}") from None

    def get(self, index: int) -> WindowStats | None:
        """Window `index`'s statistics while this book has them (not yet handed on), else None."""
        return self._by_index.get(index)

    def __iter__(self) -> Iterator[WindowStats]:
        return (self._by_index[i] for i in self._indexes if i in self._by_index)

    def __len__(self) -> int:
        return len(self._by_index)

    def add(self, record: RequestRecord) -> None:
        """Count a paced request's record in its ticket's window (counted as unrouted when that is not here)."""
        assert record.ticket is not None, "only paced requests are recorded in windows"
        w = self._by_index.get(record.ticket.window)
        if w is None:
            self.unrouted += 1
            return
        w.add(record)
