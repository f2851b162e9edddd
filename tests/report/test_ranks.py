"""Rank intervals from a paired bootstrap and groups of models that do not differ, checked
against small cases worked out by hand (from the definitions, not from the program)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sqlbench_lmeval.report.stats import (
    bootstrap_ranks,
    holm,
    not_different_groups,
    paired_mcnemar_matrix,
    rank_of,
)


def test_rank_intervals_of_a_case_worked_out_by_hand():
    # Four items. A is right on all, B on items 1-2, C on none:
    #   A: 1 1 1 1    B: 1 1 0 0    C: 0 0 0 0
    # A resample draws 4 items with replacement, the same for every model, and ranks by mean
    # (rank = 1 + models strictly above). A's mean is 1 in every resample, C's 0, so A is
    # always rank 1. B ties A exactly when all four draws are items 1-2: probability
    # (2/4)^4 = 1/16 = 6.25%, then B is rank 1, else rank 2. B ties C when all four draws are
    # items 3-4 (1/16), then C is rank 2 (only A above), else rank 3.
    # The 2.5% quantile of B's ranks is therefore 1 (6.25% >= 2.5%), the 97.5% quantile 2;
    # C's are 2 and 3. On the observed items: A 1, B 2, C 3.
    values = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=float)
    a, b, c = bootstrap_ranks(values, resamples=4000, seed=7)
    assert (a.rank, a.low, a.high) == (1, 1, 1)
    assert (b.rank, b.low, b.high) == (2, 1, 2)
    assert (c.rank, c.low, c.high) == (3, 2, 3)


def test_a_model_always_ahead_has_a_point_interval_and_ties_share_a_rank():
    # Two models with identical answers tie in every resample: both rank 1, always.
    values = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]], dtype=float)
    first, second, third = bootstrap_ranks(values, resamples=500, seed=1)
    assert (first.rank, first.low, first.high) == (1, 1, 1)
    assert (second.rank, second.low, second.high) == (1, 1, 1)
    # The third is right on item 3 only: below both unless no draw is item 1, (2/3)^3 =
    # 29.6% > 2.5%, when all three tie at rank 1.
    assert (third.rank, third.low, third.high) == (3, 1, 3)
    assert rank_of([0.5, 0.5, 0.2], 2) == 3 and rank_of([0.5, 0.5, 0.2], 1) == 1


def _mcnemar_by_hand(b: int, c: int) -> float:
    # Two-sided exact McNemar: twice the lower binomial tail of min(b, c) of b + c at 1/2.
    n = b + c
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n)


def test_groups_of_models_that_do_not_differ_by_hand():
    # 12 items. A right on all; B right on 1-9; C right on 1-2.
    # Discordant pairs: A vs B: 3 (A only) / 0, A vs C: 10 / 0, B vs C: 7 / 0.
    a = [1] * 12
    b = [1] * 9 + [0] * 3
    c = [1] * 2 + [0] * 10
    values = np.array([a, b, c], dtype=float).T
    p = paired_mcnemar_matrix(values)
    assert p[0][1] == pytest.approx(_mcnemar_by_hand(3, 0)) == pytest.approx(2 / 8)
    assert p[0][2] == pytest.approx(2 / 2**10)
    assert p[1][2] == pytest.approx(2 / 2**7)
    # Holm over the three pairs: sorted p = 2/1024, 2/128, 2/8; adjusted 3 * 2/1024 = 0.00586,
    # max(that, 2 * 2/128 = 0.03125), max(that, 1 * 0.25) = 0.25. At 5%: A-C and B-C differ,
    # A-B does not.
    adjusted = holm([p[0][1], p[0][2], p[1][2]])
    assert adjusted == pytest.approx([0.25, 6 / 1024, 4 / 128])
    different = [[False] * 3 for _ in range(3)]
    for (i, j), value in zip([(0, 1), (0, 2), (1, 2)], adjusted, strict=True):
        different[i][j] = different[j][i] = value < 0.05
    # Best first: A, B, C. {A, B} is a group; C differs from both, so it stands alone.
    assert not_different_groups([0, 1, 2], different) == [(0, 1), (2,)]


def test_overlapping_groups_give_a_model_two_letters():
    # A ~ B and B ~ C, but A differs from C: groups {A, B} and {B, C}; B is in both.
    different = [[False, False, True], [False, False, False], [True, False, False]]
    assert not_different_groups([0, 1, 2], different) == [(0, 1), (1, 2)]
    # Nothing differs: one group.
    none = [[False] * 3 for _ in range(3)]
    assert not_different_groups([2, 0, 1], none) == [(2, 0, 1)]
