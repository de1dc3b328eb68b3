"""The diff's tests on known distributions: identical -> not significant; shifted -> significant."""

from __future__ import annotations

import math
import random

import pytest

from dynlocust.observe.diff.stats import (
    RatioChange,
    Share,
    dispersion,
    holm,
    log_ratio_test,
    proportion_test,
    quantile_test,
    rank_ratio_test,
    t_quantile,
    t_two_sided,
)
from dynlocust.run.histogram import Histogram


def _bins(values: list[float], per_bin: int) -> list[Histogram]:
    out = []
    for start in range(0, len(values), per_bin):
        h = Histogram()
        for v in values[start : start + per_bin]:
            h.record(v)
        out.append(h)
    return out


def _lognormal(seed: int, n: int, median: float, sigma: float = 0.3) -> list[float]:
    rng = random.Random(seed)
    return [median * math.exp(rng.gauss(0, sigma)) for _ in range(n)]


def _shuffled(values: list[float]) -> list[float]:
    random.Random(0).shuffle(values)
    return values


@pytest.mark.parametrize(
    ("q", "base", "new", "significant"),
    [
        (0.5, _lognormal(1, 4000, 0.002), _lognormal(1, 4000, 0.002), False),  # the very same values
        (0.5, _lognormal(1, 4000, 0.002), _lognormal(2, 4000, 0.002), False),  # same distribution
        (0.99, _lognormal(3, 4000, 0.002), _lognormal(4, 4000, 0.002), False),
        (0.5, _lognormal(5, 4000, 0.002), _lognormal(6, 4000, 0.004), True),  # +2 ms at the median
        (0.5, _lognormal(7, 4000, 0.002), _lognormal(8, 4000, 0.0022), True),  # +10%
        (0.99, _lognormal(9, 4000, 0.002), _shuffled(_lognormal(10, 4000, 0.002) + [0.05] * 200), True),  # slow tail
        (0.5, _lognormal(11, 30, 0.002), _lognormal(12, 30, 0.0022), False),  # +10% on 30 requests: too few
    ],
)
def test_quantile_test_sampling_only(q: float, base: list[float], new: list[float], significant: bool) -> None:
    test = quantile_test(q, _bins(base, 400), _bins(new, 400), run_noise=0.0)
    assert test is not None
    assert (test.p_value < 0.01) is significant, test


@pytest.mark.parametrize(
    ("median", "significant"),
    [
        (0.0020, False),  # unchanged
        (0.0022, False),  # +10%: within what two runs of one build differ by (5% each)
        (0.0026, True),  # +30%
        (0.0040, True),  # +2 ms
    ],
)
def test_run_noise_keeps_a_shift_inside_it_from_being_called_significant(median: float, significant: bool) -> None:
    test = quantile_test(0.5, _bins(_lognormal(1, 4000, 0.002), 400), _bins(_lognormal(2, 4000, median), 400), 0.05)
    assert test is not None
    assert (test.p_value < 0.01) is significant, test
    assert test.ratio == pytest.approx(median / 0.002, rel=0.05)


def test_the_log_standard_error_holds_both_sampling_and_run_noise() -> None:
    base, new = _bins(_lognormal(1, 4000, 0.002), 400), _bins(_lognormal(2, 4000, 0.002), 400)
    sampling = quantile_test(0.5, base, new, 0.0)
    both = quantile_test(0.5, base, new, 0.05)
    assert sampling is not None and both is not None
    assert 0 < sampling.log_se < 0.05
    assert both.log_se == pytest.approx(math.sqrt(sampling.log_se**2 + 2 * 0.05**2))


def test_a_slow_burst_in_one_bin_is_not_mistaken_for_a_shift() -> None:
    # the same slow tail, all in one stretch of the run: the bins disagree, so it is not significant
    base = _lognormal(9, 4000, 0.002)
    new = _lognormal(10, 4000, 0.002) + [0.05] * 200
    test = quantile_test(0.99, _bins(base, 400), _bins(new, 400), 0.0)
    assert test is not None and test.p_value > 0.05


def test_quantile_test_of_an_empty_side_has_no_answer() -> None:
    assert quantile_test(0.5, _bins(_lognormal(1, 100, 0.002), 50), [Histogram()]) is None


def test_dispersion_inflates_variance_when_bins_disagree_beyond_chance() -> None:
    steady = Share(500, 1000, ((250, 500), (250, 500)))
    swinging = Share(500, 1000, ((100, 500), (400, 500)))
    assert dispersion(steady) == 1.0
    assert dispersion(swinging) > 50
    # the same totals: significant as independent requests, not once the swings between bins are counted
    a, b = Share(500, 1000), Share(560, 1000)
    assert proportion_test(a, b) < 0.01  # type: ignore[operator]
    a2 = Share(500, 1000, ((100, 500), (400, 500)))
    b2 = Share(560, 1000, ((160, 500), (400, 500)))
    assert proportion_test(a2, b2) > 0.05  # type: ignore[operator]


@pytest.mark.parametrize(
    ("base", "new", "significant"),
    [
        (Share(1000, 1000), Share(1000, 1000), False),  # all accepted on both sides
        (Share(0, 1000), Share(0, 1000), False),
        (Share(990, 1000), Share(985, 1000), False),
        (Share(1000, 1000), Share(800, 1000), True),  # 20% fewer accepted
        (Share(10, 5000), Share(80, 5000), True),  # throttle ratio 0.2% -> 1.6%
        (Share(1, 20), Share(3, 20), False),  # too few to say
    ],
)
def test_proportion_test(base: Share, new: Share, significant: bool) -> None:
    p = proportion_test(base, new)
    assert p is not None
    assert (p < 0.01) is significant, p


def test_proportion_test_without_data() -> None:
    assert proportion_test(Share(0, 0), Share(1, 2)) is None


def test_student_t_matches_known_values() -> None:
    # two-sided 5% critical values of Student's t
    for df, critical in ((1, 12.706), (4, 2.776), (10, 2.228), (30, 2.042)):
        assert t_two_sided(critical, df) == pytest.approx(0.05, abs=1e-3)
        assert t_quantile(0.975, df) == pytest.approx(critical, abs=1e-3)
    assert t_two_sided(0.0, 5) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("base", "new", "significant"),
    [
        ([1.10, 1.12, 1.09, 1.11, 1.10], [1.10, 1.12, 1.09, 1.11, 1.10], False),
        ([1.10, 1.12, 1.09, 1.11, 1.10], [1.11, 1.09, 1.12, 1.10, 1.10], False),
        ([1.10, 1.12, 1.09, 1.11, 1.10], [1.21, 1.23, 1.20, 1.22, 1.21], True),  # +10%, spread ~1%
        ([1.0, 1.3, 0.8, 1.2, 0.9], [1.1, 1.4, 0.9, 1.3, 1.0], False),  # +10% within a +/-25% spread
    ],
)
def test_log_ratio_test(base: list[float], new: list[float], significant: bool) -> None:
    change = log_ratio_test(base, new)
    assert change.p_value is not None
    assert (change.p_value < 0.01) is significant, change
    assert change.low <= change.ratio <= change.high


def test_log_ratio_test_with_one_run_has_no_p_value() -> None:
    change = log_ratio_test([1.0], [1.2])
    assert change.p_value is None
    assert change.ratio == pytest.approx(1.2)


@pytest.mark.parametrize(
    ("base", "new", "p_value", "factor", "interval"),
    [  # p-values from scipy.stats.mannwhitneyu(log new, log base, method="asymptotic"); intervals are exact Moses
        ([1.10, 1.12, 1.09, 1.11, 1.10], [1.21, 1.23, 1.20, 1.22, 1.21], 0.01167, 1.1, (1.0804, 1.1182)),
        ([1.0, 1.3, 0.8, 1.2, 0.9], [1.1, 1.4, 0.9, 1.3, 1.0], 0.46060, 1.1, (0.7692, 1.5556)),
        ([1.1, 1.1, 1.2, 1.0], [1.1, 1.2, 1.2, 1.3, 1.1], 0.24087, 1.0909, (0.9167, 1.2)),  # ties across sides
    ],
)
def test_rank_ratio_test_matches_reference_values(
    base: list[float], new: list[float], p_value: float, factor: float, interval: tuple[float, float]
) -> None:
    change = rank_ratio_test(base, new)
    assert change.p_value == pytest.approx(p_value, abs=1e-5)
    assert (change.ratio, change.low, change.high) == pytest.approx((factor, *interval), abs=1e-4)


def test_an_outlier_run_hides_a_shift_from_welch_but_not_from_ranks() -> None:
    """The shape that failed in CI: 15 runs a side, +10%, one run of each side far out on a busy machine."""
    steady = [1.06 * (1 + 0.02 * math.sin(i)) for i in range(15)]
    base, new = [*steady[:-1], 1.85], [*(r * 1.10 for r in steady[:-1]), 0.84]
    assert log_ratio_test(base, new).p_value > 0.05  # type: ignore[operator]
    change = rank_ratio_test(base, new)
    assert change.p_value is not None and change.p_value < 0.001
    assert 1.05 < change.low < change.ratio < change.high < 1.15


@pytest.mark.parametrize(
    ("base", "new", "factor"),
    [([1.0], [1.2], 1.2), ([1.0, 1.1], [1.2], 1.2 / math.sqrt(1.1))],  # one run on a side: a factor, no test
)
def test_rank_ratio_test_with_one_run_has_no_p_value(base: list[float], new: list[float], factor: float) -> None:
    change = rank_ratio_test(base, new)
    assert change.p_value is None and math.isnan(change.low)
    assert change.ratio == pytest.approx(factor)


def test_rank_ratio_test_of_identical_constant_runs_is_level() -> None:
    assert rank_ratio_test([1.1] * 5, [1.1] * 5) == RatioChange(1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("p_values", "expected"),
    [
        ([0.001, 0.2, None, 0.04], [True, False, False, False]),  # 0.04 > 0.05/2 after 0.001
        ([0.01, 0.02, 0.03], [True, True, True]),  # 0.01 <= 0.05/3, 0.02 <= 0.05/2, 0.03 <= 0.05
        ([0.03, 0.03, 0.03], [False, False, False]),
        ([], []),
    ],
)
def test_holm(p_values: list[float | None], expected: list[bool]) -> None:
    assert holm(p_values) == expected
