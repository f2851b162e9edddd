"""Bootstrap intervals and the exact McNemar test, against values computed by hand."""

import math

import pytest

from sqlbench_lmeval.report.stats import (
    bootstrap_ci,
    bootstrap_cis,
    mcnemar_exact,
    paired_bootstrap_ci,
)


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (5, 0, 0.0625),  # 2 * (1/2)^5
        (0, 5, 0.0625),
        (0, 0, 1.0),  # no discordant pairs: no evidence either way
        (1, 1, 1.0),  # 2 * 3/4 capped at 1
        (8, 2, 2 * (1 + 10 + 45) / 1024),  # 2 * P(X <= 2), X ~ Bin(10, 1/2)
        (10, 0, 2 / 1024),
    ],
)
def test_mcnemar_exact_matches_the_binomial_tail(b, c, expected):
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_exact_stays_exact_for_thousands_of_pairs():
    # 2**n overflows a float for n > 1023; integer arithmetic must not.
    assert mcnemar_exact(1500, 1500) == 1.0
    assert 0 < mcnemar_exact(1500, 1000) < 1e-20


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_bootstrap_mean_is_the_plain_mean_and_the_interval_contains_it():
    interval = bootstrap_ci([1, 1, 1, 0])
    assert interval.mean == 0.75
    assert interval.n == 4
    assert 0.0 <= interval.low <= 0.75 <= interval.high <= 1.0


def test_bootstrap_is_reproducible_and_seeded():
    values = [(i * 37 % 101) / 101 for i in range(25)]  # continuous: percentiles move
    assert bootstrap_ci(values) == bootstrap_ci(values)
    assert bootstrap_ci(values, seed=1) != bootstrap_ci(values, seed=2)


def test_constant_values_have_a_zero_width_interval():
    interval = bootstrap_ci([1.0] * 30)
    assert (interval.mean, interval.low, interval.high) == (1.0, 1.0, 1.0)


def test_bootstrap_width_agrees_with_the_normal_approximation():
    # 400 items, half right: the 95% half-width is about 1.96 * sqrt(0.25 / 400) = 0.049.
    interval = bootstrap_ci([1, 0] * 200)
    assert interval.high - interval.mean == pytest.approx(0.049, abs=0.008)
    assert interval.mean - interval.low == pytest.approx(0.049, abs=0.008)


def test_nan_values_are_left_out_of_the_mean():
    interval = bootstrap_ci([1.0, math.nan, 0.0, math.nan])
    assert interval.mean == 0.5
    assert interval.n == 2


def test_no_values_give_nan():
    interval = bootstrap_ci([])
    assert math.isnan(interval.mean) and interval.n == 0


def test_columns_are_resampled_together():
    # Two identical columns must get identical intervals from the shared resamples.
    first, second = bootstrap_cis([[1, 1], [0, 0], [1, 1], [1, 1], [0, 0]])
    assert first == second


def test_paired_interval_of_identical_runs_is_zero():
    interval = paired_bootstrap_ci([1, 0, 1, 1], [1, 0, 1, 1])
    assert (interval.mean, interval.low, interval.high) == (0.0, 0.0, 0.0)


def test_paired_interval_is_narrower_than_unpaired_for_correlated_runs():
    # B is A plus two extra right answers: the paired difference is never negative.
    a = [1] * 50 + [0] * 50
    b = [1] * 52 + [0] * 48
    interval = paired_bootstrap_ci(b, a)
    assert interval.mean == pytest.approx(0.02)
    assert interval.low >= 0.0


def test_paired_inputs_must_have_the_same_length():
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap_ci([1, 0], [1])


def test_value_count_shortcut_matches_resampling_items():
    # 0/1 columns are bootstrapped through multinomial value counts; resampling the items
    # themselves must give the same interval up to Monte Carlo noise.
    import numpy as np

    from sqlbench_lmeval.report.stats import _item_means

    values = np.array([1.0] * 130 + [0.0] * 270 + [math.nan] * 20)
    shortcut = bootstrap_ci(values, resamples=4000)
    items = _item_means(values.reshape(-1, 1), 4000, np.random.default_rng(7))[:, 0]
    low, high = np.percentile(items, [2.5, 97.5])
    assert shortcut.mean == pytest.approx(130 / 400)
    assert shortcut.low == pytest.approx(low, abs=0.006)
    assert shortcut.high == pytest.approx(high, abs=0.006)
