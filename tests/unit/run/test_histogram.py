"""The histogram's percentiles against an exact sorted computation, and exact merges."""

from __future__ import annotations

import json
import math
import random

import pytest

from dynlocust.run.histogram import SUB_BUCKETS, Histogram, HistogramError, bucket_bounds, bucket_key


def exact_percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def lognormal_latencies(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [min(120.0, max(1e-5, rng.lognormvariate(math.log(0.005), 1.2))) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("q", [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0])
def test_percentile_within_one_percent_of_exact(seed: int, q: float) -> None:
    values = lognormal_latencies(20_000, seed)
    hist = Histogram()
    for v in values:
        hist.record(v)
    got = hist.percentile(q)
    want = exact_percentile(values, q)
    assert got is not None
    assert abs(got - want) <= 0.01 * want


@pytest.mark.parametrize("value", [1e-5, 3.3e-4, 0.004, 0.5, 1.0, 7.77, 120.0])
def test_each_value_lies_in_its_bucket_and_buckets_are_narrow(value: float) -> None:
    low, high = bucket_bounds(bucket_key(value))
    assert low <= value < high
    assert (high - low) / low <= 1.0 / SUB_BUCKETS + 1e-12


def test_merge_of_splits_equals_the_whole() -> None:
    values = lognormal_latencies(5_000, 7)
    whole = Histogram()
    parts = [Histogram() for _ in range(4)]
    for i, v in enumerate(values):
        whole.record(v)
        parts[i % 4].record(v)
    merged = Histogram()
    for part in parts:
        merged.merge(part)
    assert merged.buckets() == whole.buckets()
    assert merged.count == whole.count == 5_000
    assert (merged.min, merged.max) == (whole.min, whole.max)
    assert merged == whole
    for q in (0.5, 0.9, 0.99):
        assert merged.percentile(q) == whole.percentile(q)


def test_round_trip_through_json_is_exact() -> None:
    hist = Histogram()
    for v in lognormal_latencies(1_000, 11):
        hist.record(v)
    back = Histogram.from_dict(json.loads(json.dumps(hist.to_dict())))
    assert back.buckets() == hist.buckets()
    assert back.to_dict() == hist.to_dict()


def test_empty_and_zero() -> None:
    hist = Histogram()
    assert hist.percentile(0.5) is None and hist.mean is None
    assert Histogram.from_dict(hist.to_dict()).count == 0
    hist.record(0.0)
    hist.record(-0.001)  # a clock step backwards counts as zero lag
    assert hist.percentile(1.0) == 0.0 and hist.count == 2


@pytest.mark.parametrize(
    "bad",
    [
        {"sub_buckets": 32, "count": 0, "sum": 0.0, "min": None, "max": None, "buckets": []},
        {"sub_buckets": SUB_BUCKETS, "count": 2, "sum": 1.0, "min": 0.5, "max": 0.5, "buckets": [[1, 1]]},
        {"sub_buckets": SUB_BUCKETS, "count": 1},
    ],
)
def test_from_dict_rejects_malformed(bad: dict) -> None:
    with pytest.raises(HistogramError):
        Histogram.from_dict(bad)


def test_rejects_nan_and_bad_quantile() -> None:
    hist = Histogram()
    with pytest.raises(HistogramError):
        hist.record(float("nan"))
    hist.record(1.0)
    with pytest.raises(HistogramError):
        hist.percentile(1.5)
