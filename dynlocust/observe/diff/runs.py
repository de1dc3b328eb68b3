"""Two runs compared window by window and operation by operation, each figure with its test.

Requests are tested per window (binomial shares for counts, the quantile test for latency, per-bin dispersion
included; see `stats`); units and cost per accepted request by Welch's t-test over the bins; the verdict is an
exact figure; the first throttle is one observation per run, so it is shown and never called significant.
Each operation of the mix gets its own rows under its window (`ramp 200/s · get items`), from the per-operation
tallies the results hold: accepted, throttle and error ratios of what it sent, its latency and its units. Holm's
correction runs over all tested cells, so the table holds at 5% as a whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dynlocust.cost import US_EAST_1, dollars
from dynlocust.observe.diff.cells import METRICS, Cell
from dynlocust.observe.diff.load import RunSide
from dynlocust.observe.diff.match import Matched, Pair, match_windows
from dynlocust.observe.diff.stats import RUN_NOISE, Z_95, Share, holm, log_ratio_test, proportion_test, quantile_test
from dynlocust.run.histogram import Histogram
from dynlocust.run.tally import Tally

VERDICT_RANK = {"ok": 0, "throttled": 1, "errors": 2}
"""How bad a comparable verdict is; an unknown one ranks worst."""

QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}


@dataclass
class RunDiff:
    base: RunSide
    new: RunSide
    matched: Matched
    cells: list[Cell]


@dataclass(frozen=True)
class Rows:
    """What one row of cells compares: a window's bins on each side (or one operation's part of them)."""

    label: str
    base: list[Tally]
    new: list[Tally]
    base_seconds: float
    new_seconds: float

    def totals(self) -> tuple[Tally, Tally]:
        return _merged(self.base), _merged(self.new)


def _merged(bins: list[Tally]) -> Tally:
    total = Tally()
    for b in bins:
        total.merge(b)
    return total


def _share(bins: list[Tally], hits: Callable[[Tally], int], total: Callable[[Tally], int]) -> Share:
    counts = tuple((hits(b), total(b)) for b in bins)
    return Share(sum(h for h, _ in counts), sum(n for _, n in counts), counts)


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


def _count_cell(row: str, name: str, base: Share, new: Share, b: float | None, n: float | None) -> Cell:
    metric = METRICS[name]
    change = _relative(b, n) if metric.relative else (None if b is None or n is None else n - b)
    if change is None:
        worse = b is not None and n is not None and (n > b) == metric.higher_is_worse
    else:
        worse = change != 0 and (change > 0) == metric.higher_is_worse
    return Cell(
        row,
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


def _latency(bins: list[Tally]) -> list[Histogram]:
    return [b.latency for b in bins]


def _quantile(rows: Rows, name: str, run_noise: Mapping[str, float]) -> Cell:
    b, n = (_merged(side).latency.percentile(QUANTILES[name]) for side in (rows.base, rows.new))
    change = _relative(b, n)
    test = quantile_test(QUANTILES[name], _latency(rows.base), _latency(rows.new), run_noise[name])
    base_n, new_n = (sum(t.latency.count for t in side) for side in (rows.base, rows.new))
    detail = f"n {base_n:,} vs {new_n:,}"
    if test is not None:
        detail += f", +-{(math.exp(Z_95 * test.log_se) - 1) * 100:.0f}% at 95%"
    return Cell(
        rows.label,
        METRICS[name],
        b,
        n,
        change,
        bool(change and change > 0),
        "quantile",
        None if test is None else test.p_value,
        detail=detail,
    )


def _per_bin_test(rows: Rows, name: str, value: Callable[[Tally], float | None]) -> Cell:
    """A per-request figure (units, cost) of the whole window, tested with the bins as replicates: a random
    operation mix makes it vary a little from bin to bin; a fixed workload makes it exact (a zero spread)."""
    b, n = (value(t) for t in rows.totals())
    change = _relative(b, n)
    worse = bool(change and change > 0) or (change is None and b is not None and n is not None and n > b)
    per_bin = [[v for v in map(value, side) if v] for side in (rows.base, rows.new)]
    p = log_ratio_test(*per_bin).p_value if all(per_bin) else None
    return Cell(rows.label, METRICS[name], b, n, change, worse, "welch-t", p)


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


def _rate(t: Tally, seconds: float) -> float | None:
    return t.accepted / seconds if seconds > 0 else None


def row_cells(rows: Rows, run_noise: Mapping[str, float]) -> list[Cell]:
    """The figures every row has, a window's or one operation's: shares of what was sent, latency, units."""
    accepted = _share(rows.base, _accepted, _offered), _share(rows.new, _accepted, _offered)
    throttled = _share(rows.base, _throttle_signals, _sent), _share(rows.new, _throttle_signals, _sent)
    errors = _share(rows.base, _errors, _sent), _share(rows.new, _errors, _sent)
    tb, tn = rows.totals()
    return [
        _count_cell(rows.label, "accepted", *accepted, _rate(tb, rows.base_seconds), _rate(tn, rows.new_seconds)),
        _count_cell(rows.label, "throttle_ratio", *throttled, throttled[0].ratio, throttled[1].ratio),
        _count_cell(rows.label, "error_ratio", *errors, errors[0].ratio, errors[1].ratio),
        *(_quantile(rows, name, run_noise) for name in QUANTILES),
        _per_bin_test(rows, "units", _units),
    ]


def pair_cells(pair: Pair, run_noise: Mapping[str, float] = RUN_NOISE) -> list[Cell]:
    """Every metric of one matched window, then each operation's rows (before Holm's correction)."""
    sb, sn = pair.base.stats, pair.new.stats
    assert sb is not None and sn is not None
    window = Rows(pair.label, sb.bins, sn.bins, sb.duration, sn.duration)
    cells = row_cells(window, run_noise)
    cells[3:3] = [_first_throttle(pair)]
    cells += [_per_bin_test(window, "cost", _cost), _verdict(pair)]
    labels = sorted({label for side in (sb, sn) for b in side.bins for label in b.operations})
    if len(labels) > 1:  # one operation's rows would repeat its window's
        for label in labels:
            part = Rows(
                f"{pair.label} · {label}",
                [b.operation(label) for b in sb.bins],
                [b.operation(label) for b in sn.bins],
                sb.duration,
                sn.duration,
            )
            cells += row_cells(part, run_noise)
    return cells


def apply_holm(cells: list[Cell]) -> None:
    """Mark tested cells significant by Holm's step-down correction over all of them."""
    tested = [c for c in cells if c.test not in ("exact", "none")]
    for cell, significant in zip(tested, holm([c.p_value for c in tested]), strict=True):
        cell.significant = significant


def diff_runs(base: RunSide, new: RunSide, run_noise: Mapping[str, float] = RUN_NOISE) -> RunDiff:
    """Match the windows (or refuse), then compare every metric of every matched window and operation."""
    matched = match_windows(base, new)
    cells = [c for pair in matched.pairs for c in pair_cells(pair, run_noise)]
    apply_holm(cells)
    ceiling = _ceiling(base.report.ceiling, new.report.ceiling)
    return RunDiff(base, new, matched, cells + ([ceiling] if ceiling is not None else []))


def _ceiling(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> Cell | None:
    """Two searches' ceilings set by DynamoDB: the change of their estimates, significant when the brackets are
    apart (each bracket holds its run's ceiling, so apart means it moved)."""
    if base is None or new is None or not all(s.get("limited_by") == "dynamodb" for s in (base, new)):
        return None
    if any(s.get(k) is None for s in (base, new) for k in ("low", "high", "rate")):
        return None
    b, n = float(base["rate"]), float(new["rate"])
    apart = float(new["high"]) < float(base["low"]) or float(new["low"]) > float(base["high"])
    label = f"search ({base.get('operation', 'mix')})"
    return Cell(label, METRICS["ceiling"], b, n, _relative(b, n), n < b, "exact", significant=apart)
