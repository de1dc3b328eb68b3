"""The significance tests of a diff, in pure Python (no SciPy), each returning a two-sided p-value.

- **Latency percentiles**: the log ratio of the two sides' percentiles (read from the mergeable histograms exactly
  as they are stored), against a variance with two parts: each side's sampling variance (order statistics, or the
  bins' jackknife when they disagree more) and `run_noise`, the spread between two runs of an unchanged build.
- **Counts** (accepted of offered, throttled of sent): a two-proportion binomial z-test.
- **Mapper ratios** (one value per run): the Mann-Whitney rank test on the per-run ratios, with the
  Hodges-Lehmann factor and its distribution-free interval. Runs on a busy machine have outliers (one run at 1.85x
  among runs at 1.1x) that inflate a t-test's variance and hide a real shift; ranks ignore how far out they are.

Requests of one run are not independent (a stall slows many at once), so both request-level tests widen their
variance by what the bins of each window say: the count test by the over-dispersion between them (the
quasi-binomial factor: Pearson's chi-square of the per-bin shares over its degrees of freedom, at least 1), the
latency test by their jackknife. That still cannot see what differs
between two runs as a whole (a process placed on a busier core, a warmer cache): only a second run can, which is
why latency also carries `run_noise`, measured apart. The caller then applies Holm's correction over every test
of a diff, so "significant" holds at 5% for the whole table, not per cell.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dynlocust.run.histogram import Histogram, bucket_bounds

ALPHA = 0.05
"""Family-wise significance level of a diff (after Holm's correction)."""
RUN_NOISE: Mapping[str, float] = {"p50": 0.10, "p90": 0.25, "p99": 0.30}
"""Default standard deviation of log(latency percentile) between two runs of an unchanged build, per percentile:
`tests/benchmarks/bench_diff.py` measured 8.9%, 21.2% and 29.8% on an idle 2-core machine against the embedded
endpoint (20 pairs of runs), rounded up here. A tail moves more from run to run than the median. See
`quantile_test` and `--run-noise`."""
Z_95 = 1.959963984540054
"""The standard normal's 97.5% point: a two-sided 95% interval is +- this many standard errors."""


@dataclass(frozen=True)
class Share:
    """`hits` of `total` on one side, with the same split per bin (for the over-dispersion estimate)."""

    hits: int
    total: int
    bins: tuple[tuple[int, int], ...] = ()

    @property
    def ratio(self) -> float | None:
        return self.hits / self.total if self.total else None


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def two_sided_normal(z: float) -> float:
    return min(1.0, 2.0 * normal_sf(abs(z)))


def dispersion(*sides: Share) -> float:
    """Quasi-binomial over-dispersion of per-bin shares around each side's own share (>= 1; 1 with no bins)."""
    chi2 = 0.0
    df = 0
    for side in sides:
        p = side.ratio
        bins = [(h, n) for h, n in side.bins if n > 0]
        if p is None or p in (0.0, 1.0) or len(bins) < 2:
            continue
        chi2 += sum((h - n * p) ** 2 / (n * p * (1 - p)) for h, n in bins)
        df += len(bins) - 1
    return max(1.0, chi2 / df) if df else 1.0


def proportion_test(base: Share, new: Share) -> float | None:
    """Two-sided p-value that both shares come from one proportion (None when either side has no total)."""
    if not base.total or not new.total:
        return None
    pooled = (base.hits + new.hits) / (base.total + new.total)
    if pooled in (0.0, 1.0):
        return 1.0  # identical and degenerate: all hits or none on both sides
    variance = pooled * (1 - pooled) * (1 / base.total + 1 / new.total) * dispersion(base, new)
    z = (new.hits / new.total - base.hits / base.total) / math.sqrt(variance)
    return two_sided_normal(z)


def _at_or_below(buckets: Mapping[int, int], key: int) -> int:
    return sum(n for k, n in buckets.items() if k <= key)


@dataclass(frozen=True)
class QuantileChange:
    """new/base of one latency percentile, with the standard error of its logarithm and a two-sided p-value."""

    ratio: float
    log_se: float
    p_value: float


def _log_percentile(keys: Sequence[int], counts: Mapping[int, int], total: int, q: float) -> float:
    """log of the nearest-rank q-quantile's bucket middle, over `keys` in order (as `Histogram.percentile`)."""
    rank = max(1, math.ceil(q * total))
    seen = 0
    for key in keys:
        seen += counts.get(key, 0)
        if seen >= rank:
            break
    low, high = bucket_bounds(key)
    return math.log((low + high) / 2)


def _log_quantile_variance(q: float, bins: Sequence[Histogram], merged: Histogram) -> float:
    """Sampling variance of log(q-quantile) of one side: the larger of two estimates.

    - From the order statistics (distribution-free): the ranks `nq +- 1.96 sqrt(nq(1-q))` bound the quantile at
      95%; half that interval on the log scale over 1.96 is a standard error. Right for independent requests.
    - The bins' delete-one jackknife: requests of a run are not independent (a stall slows many at once), and a
      percentile that one bin's burst decides moves when that bin is left out.
    """
    n = merged.count
    spread = Z_95 * math.sqrt(n * q * (1 - q))
    low = merged.percentile(max(1.0, math.floor(n * q - spread)) / n)
    high = merged.percentile(min(float(n), math.ceil(n * q + spread)) / n)
    assert low is not None and high is not None
    order = ((math.log(high) - math.log(low)) / (2 * Z_95)) ** 2
    full = [h for h in bins if h.count]
    if len(full) < 2:
        return order
    counts = merged.buckets()
    keys = sorted(counts)
    left_out = []
    for h in full:
        mine = h.buckets()
        rest = {k: counts[k] - mine.get(k, 0) for k in keys}
        left_out.append(_log_percentile(keys, rest, n - h.count, q))
    mean = sum(left_out) / len(left_out)
    jackknife = (len(left_out) - 1) / len(left_out) * sum((x - mean) ** 2 for x in left_out)
    return max(order, jackknife)


def quantile_test(
    q: float, base: Sequence[Histogram], new: Sequence[Histogram], run_noise: float = 0.0
) -> QuantileChange | None:
    """Is the new side's q-quantile a factor away from the baseline's, beyond sampling and run-to-run noise?

    `base` and `new` are each side's per-bin histograms. The log ratio of the two percentiles is tested against
    its variance: each side's sampling variance (`_log_quantile_variance`) plus `run_noise` squared for each
    run. `run_noise` is the standard deviation of log(percentile) between two runs of an unchanged build: two
    processes differ by more than their requests' sampling (placement, caches, a busier second), and only a
    figure measured apart (`tests/benchmarks/bench_diff.py`) can say by how much. None when a side has no data or
    a zero percentile (a clock that did not move).
    """
    sides = []
    for bins in (base, new):
        merged = Histogram()
        for h in bins:
            merged.merge(h)
        value = merged.percentile(q)
        if value is None or value <= 0 or merged.min <= 0:
            return None
        sides.append((math.log(value), _log_quantile_variance(q, bins, merged)))
    (lb, vb), (ln, vn) = sides
    variance = vb + vn + 2 * run_noise * run_noise
    diff = ln - lb
    z = diff / math.sqrt(variance) if variance else (0.0 if diff == 0 else math.inf)
    return QuantileChange(math.exp(diff), math.sqrt(variance), two_sided_normal(z))


# -- Student's t, for per-run values ----------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T| > |t|) for Student's t with `df` degrees of freedom."""
    return incomplete_beta(df / 2, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The t value with P(T <= t) = p (bisection; p in (0.5, 1))."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1 - t_two_sided(mid, df) / 2 < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class RatioChange:
    """new/base as one factor, with a 95% interval and a two-sided p-value (None with too few values)."""

    ratio: float
    low: float
    high: float
    p_value: float | None


def log_ratio_test(base: Sequence[float], new: Sequence[float]) -> RatioChange:
    """Welch's t-test on log values: is `new` a constant factor away from `base`, beyond the runs' spread?"""
    if not base or not new or min(*base, *new) <= 0:
        raise ValueError("log_ratio_test: expected positive values on both sides")
    la, lb = [math.log(v) for v in base], [math.log(v) for v in new]
    ma, mb = sum(la) / len(la), sum(lb) / len(lb)
    diff = mb - ma
    if len(la) < 2 or len(lb) < 2:
        return RatioChange(math.exp(diff), math.nan, math.nan, None)
    va = sum((x - ma) ** 2 for x in la) / (len(la) - 1) / len(la)
    vb = sum((x - mb) ** 2 for x in lb) / (len(lb) - 1) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        p = 1.0 if diff == 0 else 0.0
        return RatioChange(math.exp(diff), math.exp(diff), math.exp(diff), p)
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    half = t_quantile(0.975, df) * se
    return RatioChange(math.exp(diff), math.exp(diff - half), math.exp(diff + half), t_two_sided(diff / se, df))


def median_run(ratios: Sequence[float]) -> int:
    """The index of the run whose mapper/raw ratio is the median (the lower one of an even count).

    Why one run: its ratio is what `compare`'s table prints, and its own raw and mapper medians are what its ms columns
    print, so the ratio is their quotient. Medians of each column taken apart can come from different runs and
    give another ratio on a machine whose speed drifts between runs.
    """
    ranked = sorted(range(len(ratios)), key=lambda i: ratios[i])
    return ranked[(len(ranked) - 1) // 2]


def rank_ratio_test(base: Sequence[float], new: Sequence[float]) -> RatioChange:
    """Mann-Whitney U on log values: is `new` shifted by a factor from `base`, beyond the runs' spread?

    The factor is the Hodges-Lehmann estimate (the median of every new/base pair's ratio) and its 95% interval is
    Moses' order-statistic interval of those pair ratios; the p-value is U's normal approximation with the tie and
    continuity corrections. None of them depends on how far out an outlier run lies, only on the runs' order.
    """
    if not base or not new or min(*base, *new) <= 0:
        raise ValueError("rank_ratio_test: expected positive values on both sides")
    la, lb = [math.log(v) for v in base], [math.log(v) for v in new]
    n1, n2 = len(la), len(lb)
    shifts = sorted(b - a for a in la for b in lb)
    shift = statistics.median(shifts)
    if n1 < 2 or n2 < 2:
        return RatioChange(math.exp(shift), math.nan, math.nan, None)
    u = sum(s > 0 for s in shifts) + sum(s == 0 for s in shifts) / 2  # pairs where new > base, ties count half
    n = n1 + n2
    ties = sum(t**3 - t for t in Counter(la + lb).values())
    spread = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    mean = n1 * n2 / 2
    if spread == 0:
        return RatioChange(1.0, 1.0, 1.0, 1.0)
    p = two_sided_normal(max(abs(u - mean) - 0.5, 0.0) / spread)
    k = math.floor(mean - Z_95 * spread)  # the k-th smallest and k-th largest pair ratios bound the interval
    if k < 1:
        return RatioChange(math.exp(shift), math.nan, math.nan, p)
    return RatioChange(math.exp(shift), math.exp(shifts[k - 1]), math.exp(shifts[-k]), p)


def holm(p_values: Sequence[float | None], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down correction: which of the p-values are significant at family-wise level `alpha`."""
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    significant = [False] * len(p_values)
    m = len(order)
    for rank, (p, i) in enumerate(order):
        if p > alpha / (m - rank):
            break
        significant[i] = True
    return significant
