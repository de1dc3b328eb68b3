"""The significance tests of a diff, in pure Python (no SciPy), each returning a two-sided p-value.

- **Latency percentiles**: a quantile test on the binned counts (Mood's median test generalised to any quantile).
  Pool both sides' histograms, take the pooled q-quantile's bucket ``v``, and compare the share of each side's
  requests at or below ``v`` (a 2 x k table of binned counts: no raw values needed, so it works on the mergeable
  histograms exactly as they are stored). If the new side is slower at that quantile, fewer of its requests fall
  at or below ``v``.
- **Counts** (accepted of offered, throttled of sent): a two-proportion binomial z-test.
- **Mapper ratios** (one value per run): Welch's t-test on the logarithm of the per-run ratios.

Requests of one run are not independent (a stall slows many at once), so a test that treats them as independent
calls run-to-run noise significant. Both request-level tests therefore inflate their variance by the
over-dispersion measured between the bins of each window (the quasi-binomial factor: Pearson's chi-square of the
per-bin shares over its degrees of freedom, at least 1). The caller then applies Holm's correction over every
test of a diff, so "significant" holds at 5% for the whole table, not per cell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dynlocust.histogram import Histogram

ALPHA = 0.05
"""Family-wise significance level of a diff (after Holm's correction)."""


@dataclass(frozen=True)
class Share:
    """``hits`` of ``total`` on one side, with the same split per bin (for the over-dispersion estimate)."""

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


def quantile_test(q: float, base: Sequence[Histogram], new: Sequence[Histogram]) -> float | None:
    """Two-sided p-value that both sides have the same q-quantile, from per-bin histograms of each side.

    The bucket boundary nearest the pooled quantile splits every bin into "at or below" and "above"; the shares
    are compared by `proportion_test`, with the over-dispersion between bins.
    """
    pooled = Histogram()
    for h in (*base, *new):
        pooled.merge(h)
    if pooled.count == 0 or not any(h.count for h in base) or not any(h.count for h in new):
        return None
    # split at the bucket boundary whose pooled share "at or below" is nearest q, never one that holds every
    # request or none (a tail that fills the top bucket must still split the sides)
    split = None
    best = math.inf
    seen = 0
    all_buckets = pooled.buckets()
    for key in sorted(all_buckets):
        seen += all_buckets[key]
        if seen < pooled.count and abs(seen / pooled.count - q) < best:
            split, best = key, abs(seen / pooled.count - q)
    if split is None:  # a single bucket: the sides cannot differ at this resolution
        return 1.0

    def share(hists: Sequence[Histogram]) -> Share:
        bins = tuple((_at_or_below(h.buckets(), split), h.count) for h in hists)
        return Share(sum(b[0] for b in bins), sum(b[1] for b in bins), bins)

    return proportion_test(share(base), share(new))


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
    """P(|T| > |t|) for Student's t with ``df`` degrees of freedom."""
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
    """new/base of per-run values' geometric means, with a 95% interval and Welch's two-sided p-value."""

    ratio: float
    low: float
    high: float
    p_value: float | None


def log_ratio_test(base: Sequence[float], new: Sequence[float]) -> RatioChange:
    """Welch's t-test on log values: is ``new`` a constant factor away from ``base``, beyond the runs' spread?"""
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


def holm(p_values: Sequence[float | None], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down correction: which of the p-values are significant at family-wise level ``alpha``."""
    order = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    significant = [False] * len(p_values)
    m = len(order)
    for rank, (p, i) in enumerate(order):
        if p > alpha / (m - rank):
            break
        significant[i] = True
    return significant
