"""Two runs compared window by window: every metric of every matched window, each with its test.

Requests are tested per window (binomial shares for counts, the quantile test for latency, per-bin dispersion
included; see `stats`); units and cost per accepted request by Welch's t-test over the bins; the verdict is an
exact figure; the first throttle is one observation per run, so it is shown and never called significant.
Holm's correction runs over all tested cells, so the table holds at 5% as a whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dynlocust.cost import US_EAST_1, dollars
from dynlocust.diff.cells import METRICS, Cell
from dynlocust.diff.load import RunSide
from dynlocust.diff.match import Matched, Pair, match_windows
from dynlocust.diff.stats import Share, holm, log_ratio_test, proportion_test, quantile_test
from dynlocust.windows import Tally, WindowStats

VERDICT_RANK = {"ok": 0, "throttled": 1, "errors": 2}
"""How bad a comparable verdict is; an unknown one ranks worst."""

QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


@dataclass
class RunDiff:
    base: RunSide
    new: RunSide
    matched: Matched
    cells: list[Cell]


def _share(stats: WindowStats, hits: Callable[[Tally], int], total: Callable[[Tally], int]) -> Share:
    bins = tuple((hits(b), total(b)) for b in stats.bins)
    return Share(sum(h for h, _ in bins), sum(n for _, n in bins), bins)


def _throttle_signals(t: Tally) -> int:
    return t.throttled + t.by_kind.get("unprocessed", 0)


def _errors(t: Tally) -> int:
    return t.errors


def _relative(base: float | None, new: float | None) -> float | None:
    if base is None or new is None:
        return None
    if base == 0:
        return 0.0 if new == 0 else None
    return new / base - 1


def _count_cell(pair: Pair, name: str, base: Share, new: Share, b: float | None, n: float | None) -> Cell:
    metric = METRICS[name]
    change = _relative(b, n) if metric.relative else (None if b is None or n is None else n - b)
    if change is None:
        worse = b is not None and n is not None and (n > b) == metric.higher_is_worse
    else:
        worse = change != 0 and (change > 0) == metric.higher_is_worse
    return Cell(
        pair.label,
        metric,
        b,
        n,
        change,
        worse,
        "binomial",
        proportion_test(base, new),
        detail=f"{base.hits:,}/{base.total:,} vs {new.hits:,}/{new.total:,}",
    )


def _first_throttle(pair: Pair) -> Cell:
    b, n = pair.base.summary["first_throttle_s"], pair.new.summary["first_throttle_s"]
    if b is None and n is None:
        change, worse = None, False
    elif b is None or n is None:
        change, worse = None, b is None  # throttles appeared (worse) or disappeared
    else:
        change, worse = _relative(b, n), n < b
    return Cell(pair.label, METRICS["first_throttle"], b, n, change, worse, "none", detail="one observation per run")


def _quantile(pair: Pair, name: str, sb: WindowStats, sn: WindowStats) -> Cell:
    b, n = pair.base.summary["latency"][name], pair.new.summary["latency"][name]
    change = _relative(b, n)
    p = quantile_test(QUANTILES[name], [x.latency for x in sb.bins], [x.latency for x in sn.bins])
    return Cell(
        pair.label,
        METRICS[name],
        b,
        n,
        change,
        bool(change and change > 0),
        "quantile",
        p,
        detail=f"n {sb.total().latency.count:,} vs {sn.total().latency.count:,}",
    )


def _per_bin_test(pair: Pair, name: str, value: Callable[[Tally], float | None]) -> Cell:
    """A per-request figure (units, cost) of the whole window, tested with the bins as replicates: a random
    operation mix makes it vary a little from bin to bin; a fixed workload makes it exact (a zero spread)."""
    sb, sn = pair.base.stats, pair.new.stats
    assert sb is not None and sn is not None
    b, n = value(sb.total()), value(sn.total())
    change = _relative(b, n)
    worse = bool(change and change > 0) or (change is None and b is not None and n is not None and n > b)
    per_bin = [[v for v in map(value, s.bins) if v] for s in (sb, sn)]
    p = log_ratio_test(*per_bin).p_value if all(per_bin) else None
    return Cell(pair.label, METRICS[name], b, n, change, worse, "welch-t", p)


def _units(t: Tally) -> float | None:
    """Consumed units per accepted request (throttled and failed requests consume none)."""
    return (t.read_units + t.write_units) / t.accepted if t.accepted else None


def _cost(t: Tally) -> float | None:
    """Cost per million accepted requests: a window's total cost moves with its accepted count, which is noise."""
    return dollars(t.read_units, t.write_units, US_EAST_1) / t.accepted * 1e6 if t.accepted else None


def _verdict(pair: Pair) -> Cell:
    b, n = str(pair.base.verdict), str(pair.new.verdict)
    worse = VERDICT_RANK.get(n, 9) > VERDICT_RANK.get(b, 9)
    return Cell(pair.label, METRICS["verdict"], b, n, None, worse, "exact", significant=b != n)


def _offered(t: Tally) -> int:
    return max(t.offered, t.sent)


def _sent(t: Tally) -> int:
    return t.sent


def _accepted(t: Tally) -> int:
    return t.accepted


def pair_cells(pair: Pair) -> list[Cell]:
    """Every metric of one matched window (before Holm's correction)."""
    sb, sn = pair.base.stats, pair.new.stats
    assert sb is not None and sn is not None
    accepted = _share(sb, _accepted, _offered), _share(sn, _accepted, _offered)
    throttled = _share(sb, _throttle_signals, _sent), _share(sn, _throttle_signals, _sent)
    errors = _share(sb, _errors, _sent), _share(sn, _errors, _sent)
    rates = pair.base.summary["accepted_per_s"], pair.new.summary["accepted_per_s"]
    return [
        _count_cell(pair, "accepted", *accepted, *rates),
        _count_cell(pair, "throttle_ratio", *throttled, throttled[0].ratio, throttled[1].ratio),
        _count_cell(pair, "error_ratio", *errors, errors[0].ratio, errors[1].ratio),
        _first_throttle(pair),
        *(_quantile(pair, name, sb, sn) for name in QUANTILES),
        _per_bin_test(pair, "units", _units),
        _per_bin_test(pair, "cost", _cost),
        _verdict(pair),
    ]


def apply_holm(cells: list[Cell]) -> None:
    """Mark tested cells significant by Holm's step-down correction over all of them."""
    tested = [c for c in cells if c.test not in ("exact", "none")]
    for cell, significant in zip(tested, holm([c.p_value for c in tested]), strict=True):
        cell.significant = significant


def diff_runs(base: RunSide, new: RunSide) -> RunDiff:
    """Match the windows (or refuse), then compare every metric of every matched window."""
    matched = match_windows(base, new)
    cells = [c for pair in matched.pairs for c in pair_cells(pair)]
    apply_holm(cells)
    return RunDiff(base, new, matched, cells)
