"""A mergeable latency histogram with fixed log-linear buckets.

Why fixed buckets: workers record independently and the master adds their histograms; merging is exact only
if every process uses the same bucket boundaries. A value's bucket comes from its binary exponent (`frexp`)
and `SUB_BUCKETS` linear steps of the mantissa, so every bucket is at most `1/SUB_BUCKETS` (1.6%) wide
relative to its lower edge and a percentile read at the bucket middle is within 0.8% of a value in it, for any
positive value (10 us and 120 s alike). Buckets are stored sparsely: a typical latency run fills a few hundred.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from dynlocust.errors import DynlocustError

SUB_BUCKETS = 64
"""Linear steps per power of two; part of the format (a histogram with another value refuses to merge)."""

_ZERO_KEY = -(2**31)  # values <= 0 (a clock that did not move) share one bucket read as 0.0
_INF = math.inf
_STEPS = 2 * SUB_BUCKETS
_frexp = math.frexp


class HistogramError(DynlocustError):
    """A histogram was given something it cannot represent or merge."""


def bucket_key(value: float) -> int:
    """Return the bucket of `value` (seconds or any positive unit)."""
    return keyed(value)[0]


def keyed(value: float) -> tuple[int, float]:
    """`value` checked (finite; negative values count as 0) with its bucket: what `Histogram.record_keyed` takes.

    The bucket is computed here, once, for a positive finite value: three of these per request (the pacer's lag and
    the window's two latencies), 0.26 against 0.35 us by timeit when it was a call to a separate function."""
    if 0.0 < value < _INF:  # NaN is neither
        mantissa, exponent = _frexp(value)  # value = mantissa * 2**exponent, mantissa in [0.5, 1)
        return (exponent - 1) * SUB_BUCKETS + int(mantissa * _STEPS), value
    if value != value or value in (_INF, -_INF):
        raise HistogramError(f"histogram value: expected a finite number, found {value!r}")
    return _ZERO_KEY, 0.0


def bucket_bounds(key: int) -> tuple[float, float]:
    """Return the `[low, high)` interval of bucket `key`."""
    if key == _ZERO_KEY:
        return (0.0, 0.0)
    exponent, step = divmod(key, SUB_BUCKETS)
    low = math.ldexp(0.5 + step / (2 * SUB_BUCKETS), exponent)
    high = math.ldexp(0.5 + (step + 1) / (2 * SUB_BUCKETS), exponent)
    return (low, high)


class Histogram:
    """Counts of values per fixed log-linear bucket, plus the exact count, sum, min and max."""

    __slots__ = ("_buckets", "count", "max", "min", "sum")

    def __init__(self) -> None:
        self._buckets: dict[int, int] = {}
        self.count = 0
        self.sum = 0.0
        self.min = math.inf
        self.max = -math.inf

    def record(self, value: float, count: int = 1) -> None:
        """Add `count` observations of `value`; negative values are recorded as 0."""
        self.record_keyed(keyed(value), count)

    def record_keyed(self, keyed_value: tuple[int, float], count: int = 1) -> None:
        """Add `count` observations of a value from `keyed` (checked and bucketed once by a caller that records one
        value in several histograms)."""
        key, value = keyed_value
        buckets = self._buckets
        buckets[key] = buckets.get(key, 0) + count
        self.count += count
        self.sum += value * count
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def merge(self, other: Histogram) -> None:
        """Add `other`'s counts to this histogram (exact: counts add bucket by bucket)."""
        buckets = self._buckets
        for key, n in other._buckets.items():
            buckets[key] = buckets.get(key, 0) + n
        self.count += other.count
        self.sum += other.sum
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    def copy(self) -> Histogram:
        """Return an independent copy."""
        clone = Histogram()
        clone.merge(self)
        return clone

    def buckets(self) -> dict[int, int]:
        """Return a copy of the sparse `{bucket key: count}` map."""
        return dict(self._buckets)

    @property
    def mean(self) -> float | None:
        """Arithmetic mean, or None when empty."""
        return self.sum / self.count if self.count else None

    def percentile(self, q: float) -> float | None:
        """Return the nearest-rank `q` quantile (`q` in [0, 1]) within 0.8%, or None when empty.

        The answer is the middle of the bucket holding the value of rank `ceil(q * count)`, clamped to the
        exact min and max, so `percentile(0)` and `percentile(1)` are exact.
        """
        if not 0.0 <= q <= 1.0:
            raise HistogramError(f"percentile: expected q in [0, 1], found {q!r}")
        if self.count == 0:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for key in sorted(self._buckets):
            seen += self._buckets[key]
            if seen >= rank:
                low, high = bucket_bounds(key)
                return min(max((low + high) / 2, self.min), self.max)
        return self.max  # unreachable while counts are consistent

    def percentiles(self, qs: Iterable[float]) -> dict[float, float | None]:
        """Return several quantiles in one call."""
        return {q: self.percentile(q) for q in qs}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Histogram):
            return NotImplemented
        return (
            self._buckets == other._buckets
            and self.count == other.count
            and self.min == other.min
            and self.max == other.max
            and math.isclose(self.sum, other.sum, rel_tol=1e-9, abs_tol=1e-12)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable and equal by value, so unhashable (as eq dataclasses)

    def __repr__(self) -> str:
        return f"Histogram(count={self.count}, p50={self.percentile(0.5)}, max={self.max if self.count else None})"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe form that `from_dict` restores exactly."""
        return {
            "sub_buckets": SUB_BUCKETS,
            "count": self.count,
            "sum": self.sum,
            "min": self.min if self.count else None,
            "max": self.max if self.count else None,
            "buckets": [[key, n] for key, n in sorted(self._buckets.items())],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Histogram:
        """Rebuild a histogram written by `to_dict`."""
        if data.get("sub_buckets") != SUB_BUCKETS:
            raise HistogramError(f"histogram: expected sub_buckets={SUB_BUCKETS}, found {data.get('sub_buckets')!r}")
        hist = cls()
        try:
            for key, n in data["buckets"]:
                hist._buckets[int(key)] = int(n)
            hist.count = int(data["count"])
            hist.sum = float(data["sum"])
            if hist.count:
                hist.min = float(data["min"])
                hist.max = float(data["max"])
        except (KeyError, TypeError, ValueError) as exc:
            raise HistogramError(f"histogram: malformed dict ({exc!r}) in {dict(data)!r:.200}") from exc
        if sum(hist._buckets.values()) != hist.count:
            raise HistogramError(
                f"histogram: expected bucket counts to add up to count={hist.count}, "
                f"found {sum(hist._buckets.values())}"
            )
        return hist
