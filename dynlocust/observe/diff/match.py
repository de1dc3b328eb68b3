"""Which windows of two runs are the same experiment, and which runs must not be compared at all.

Windows are matched by phase and target rate (the n-th window of a phase at a rate matches the n-th of the other
run), never by index: a scenario that gained a step still compares its other windows. A comparison is refused
(`DiffError`, exit code 2) when the tables or the operation mix differ, when no window matches, or when a matched
window was not a clean observation on either side (client-bound, partial, not run): its numbers would be the load
generator's or a fragment, and a diff must never print a misleading number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynlocust.observe.diff.errors import DiffError, DiffInconclusive
from dynlocust.observe.diff.load import RunSide
from dynlocust.observe.diff.shape import first_difference
from dynlocust.observe.report.build import WindowReport
from dynlocust.scenario.plan import window_number

NOT_COMPARABLE = frozenset({"client-bound", "partial", "not-run"})
"""Verdicts whose window says nothing about the service (read as strings: the vocabulary may grow)."""


@dataclass(frozen=True)
class Pair:
    """A matched window: the same phase and target rate on both sides."""

    label: str
    base: WindowReport
    new: WindowReport


@dataclass
class Matched:
    pairs: list[Pair]
    """The windows compared: clean on both sides."""
    only_base: list[str]
    only_new: list[str]
    skipped: list[str] = field(default_factory=list)
    """Matched windows not compared, each with its cause (`ramp 100/s: client-bound in the new, window 2 (lag)`)."""


def _keyed(windows: list[WindowReport]) -> dict[tuple[str, float, int], WindowReport]:
    seen: dict[tuple[str, float], int] = {}
    out = {}
    for w in sorted(windows, key=lambda w: w.start):
        key = (w.phase, round(float(w.summary["target_rate"]), 6))
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[(*key, n)] = w
    return out


def _label(phase: str, rate: float, n: int) -> str:
    return f"{phase or 'window'} {rate:,.6g}/s" + (f" #{n + 1}" if n else "")


def check_same_experiment(base: RunSide, new: RunSide) -> None:
    """Refuse runs of different tables or operation mixes (or, for results without a shape, other scenarios)."""
    if base.shape is not None and new.shape is not None:
        found = first_difference(base.shape, new.shape)
        if found:
            path, b, n = found
            raise DiffError(
                f"refused: the runs differ in their tables or operation mix at {path}: baseline {b!r:.60}, "
                f"new {n!r:.60} ({base.source} vs {new.source})"
            )
    elif base.report.scenario != new.report.scenario:
        raise DiffError(
            f"refused: expected runs of one scenario, found {base.report.scenario!r} ({base.source}) and "
            f"{new.report.scenario!r} ({new.source})"
        )


def match_windows(base: RunSide, new: RunSide) -> Matched:
    """Pair windows by phase and rate, skipping those not clean on a side; refuse when none match, and call the diff
    inconclusive when every match is skipped."""
    check_same_experiment(base, new)
    kb, kn = _keyed(base.report.windows), _keyed(new.report.windows)
    pairs = [Pair(_label(*key), kb[key], kn[key]) for key in kb if key in kn]
    if not pairs:
        raise DiffError(
            f"refused: expected windows of the same phase and target rate on both sides, found none in common "
            f"({base.source}: {[_label(*k) for k in kb]}; {new.source}: {[_label(*k) for k in kn]})"
        )
    clean, skipped = [], []
    for pair in pairs:
        cause = next(
            (why for side, w in ((base, pair.base), (new, pair.new)) if (why := _not_comparable(side, w))), None
        )
        if cause is None:
            clean.append(pair)
        else:
            skipped.append(f"{pair.label}: {cause}")
    if not clean:
        raise DiffInconclusive(
            f"nothing comparable: every matched window was skipped ({'; '.join(skipped)}); its figures are not the "
            "service's, so they are not compared"
        )
    return Matched(
        clean,
        [_label(*k) for k in kb if k not in kn],
        [_label(*k) for k in kn if k not in kb],
        skipped,
    )


def _not_comparable(side: RunSide, w: WindowReport) -> str | None:
    """Why window `w` of `side` is not a clean observation (`client-bound in the new, window 2 (lag)`), or None."""
    detail = w.verdict_detail
    labels = detail.labels if detail is not None else (str(w.verdict),)
    blocked = next((label for label in labels if label in NOT_COMPARABLE), None)
    if blocked is None:  # "throttled" or "ok" first does not make a client-bound window clean
        return None
    reasons = f" ({', '.join(detail.reasons)})" if detail is not None and detail.reasons else ""
    return f"{blocked} in the {side.label} ({side.source}, window {window_number(w.index)}){reasons}"
