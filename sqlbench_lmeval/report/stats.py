"""Statistics for comparing runs: percentile bootstrap confidence intervals over items (paired
ones too), the exact McNemar test, and Holm's adjustment of p-values for the many pairs of more
than two runs (the method and why: docs/reports.md#intervals-and-tests).

>>> mcnemar_exact(0, 6)  # six discordant pairs, all one way: 2 * (1/2) ** 6
0.03125
>>> holm([0.25, 0.0625, 0.125])  # 3 * 0.0625, then max(.1875, 2 * 0.125), max(.25, 1 * 0.25)
[0.25, 0.1875, 0.25]
>>> bootstrap_ci([1.0, float("nan"), 0.0]).n  # NaN is left out of a mean
2"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Bootstrap resamples per interval.
RESAMPLES = 2_000
#: Seed of every bootstrap; each interval starts from it, so intervals do not depend on order.
SEED = 20_240_719
#: Coverage of every interval.
LEVEL = 0.95

# Resamples drawn at once: bounds memory (a chunk is CHUNK x n counts) at any item count.
_CHUNK = 250
# Columns with at most this many distinct values are resampled through value counts.
_FEW_VALUES = 32


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap confidence interval (all NaN when there is nothing to average)."""

    mean: float
    low: float
    high: float
    n: int  # values that entered the mean (NaN values excluded)


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Interval:
    """Mean of ``values`` and its percentile bootstrap interval over items."""
    (interval,) = bootstrap_cis(
        np.asarray(values, dtype=float).reshape(-1, 1),
        resamples=resamples,
        seed=seed,
        level=level,
    )
    return interval


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Interval:
    """Mean of ``a[i] - b[i]`` and its bootstrap interval, resampling the pairs ``i``."""
    a_values, b_values = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_values.shape != b_values.shape:
        raise ValueError(f"paired samples differ in length: {a_values.size} vs {b_values.size}")
    return bootstrap_ci(a_values - b_values, resamples=resamples, seed=seed, level=level)


def bootstrap_cis(
    values, *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> list[Interval]:
    """One interval per column of the (items x metrics) array ``values``.

    Every column is resampled from a generator seeded with ``seed``, so two equal columns get
    equal intervals whatever their position.
    """
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("values must be a 2-d array (items x metrics)")
    n, columns = matrix.shape
    boot = np.full((resamples, columns), np.nan)
    many_values = []
    for column in range(columns):
        present = matrix[:, column][~np.isnan(matrix[:, column])]
        distinct, frequency = np.unique(present, return_counts=True)
        if present.size == 0:
            continue
        if distinct.size <= _FEW_VALUES:
            boot[:, column] = _category_means(
                distinct, frequency, n, resamples, np.random.default_rng(seed)
            )
        else:
            many_values.append(column)
    if many_values:
        boot[:, many_values] = _item_means(
            matrix[:, many_values], resamples, np.random.default_rng(seed)
        )
    tail = (1.0 - level) / 2.0 * 100.0
    intervals = []
    for column in range(columns):
        present = matrix[:, column][~np.isnan(matrix[:, column])]
        column_boot = boot[:, column]
        # A resample that drew only NaN items has no mean; it is left out of the percentiles.
        column_boot = column_boot[~np.isnan(column_boot)]
        if present.size == 0 or column_boot.size == 0:
            intervals.append(Interval(math.nan, math.nan, math.nan, int(present.size)))
            continue
        low, high = np.percentile(column_boot, [tail, 100.0 - tail])
        intervals.append(
            Interval(float(present.mean()), float(low), float(high), int(present.size))
        )
    return intervals


def _category_means(distinct, frequency, n: int, resamples: int, rng) -> np.ndarray:
    """Bootstrap means of a column with few distinct values (0/1 metrics, paired differences).

    Resampling n items with replacement only matters through how many copies of each distinct
    value (and of NaN) it draws, and those counts are Multinomial(n, frequency / n): drawing
    them directly is the same bootstrap, in O(resamples x distinct values) instead of
    O(resamples x n).
    """
    missing = n - int(frequency.sum())  # NaN items: drawn, then left out of the mean
    probabilities = np.append(frequency, missing) / n
    counts = rng.multinomial(n, probabilities, size=resamples)[:, :-1].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ distinct) / counts.sum(axis=1)


def _item_means(matrix, resamples: int, rng) -> np.ndarray:
    """Bootstrap means of each column of ``matrix`` by resampling its rows (items)."""
    n, columns = matrix.shape
    present = (~np.isnan(matrix)).astype(float)
    sums = np.where(np.isnan(matrix), 0.0, matrix)
    boot = np.empty((resamples, columns))
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        # Each resample as item multiplicities: a (size x n) count matrix, then one matmul.
        picks = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        weights = np.bincount((picks + offsets).ravel(), minlength=size * n).reshape(size, n)
        weights = weights.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot[start : start + size] = (weights @ sums) / (weights @ present)
    return boot


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under the null hypothesis each discordant pair goes either way with probability 1/2, so the
    smaller count is Binomial(b + c, 1/2); the p-value doubles its lower tail (capped at 1).
    Python's exact integer arithmetic keeps this exact at any size.
    """
    if b < 0 or c < 0:
        raise ValueError("counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    # sum of C(n, i) for i <= min(b, c), each term from the last: C(n, i+1) = C(n, i)(n-i)/(i+1).
    tail = term = 1
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2**n)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``p_values`` for testing them all (same order out).

    With the p-values sorted ascending as p(1) <= ... <= p(m), the adjusted p(k) is
    max over j <= k of min(1, (m - j + 1) * p(j)): the smallest family-wise error level at which
    Holm's procedure rejects that hypothesis. It controls the family-wise error rate under any
    dependence between the tests (the pairs of one view share runs, so they are dependent).
    """
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class RankInterval:
    """A model's rank on the items as given and the bootstrap interval of its rank."""

    rank: int  # 1 + the number of models with a strictly higher mean
    low: int
    high: int


def rank_of(means: Sequence[float], index: int, tolerance: float = 1e-12) -> int:
    """1 + how many of ``means`` are above ``means[index]`` (tied models share a rank)."""
    return 1 + sum(1 for value in means if value > means[index] + tolerance)


def bootstrap_ranks(
    values, *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> list[RankInterval]:
    """Each model's rank and its ``level`` interval from a paired bootstrap over items.

    ``values`` is an (items x models) array with no NaN. Each resample draws items with
    replacement, the same items for every model (so the models' answers to an item stay
    together), and ranks the models by their means there; a model's interval runs from the
    ``(1 - level) / 2`` to the ``(1 + level) / 2`` quantile of its ranks over resamples (the
    smallest rank whose cumulative share reaches that level: ranks are whole numbers).
    """
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or np.isnan(matrix).any():
        raise ValueError("values must be a 2-d array (items x models) without NaN")
    n, models = matrix.shape
    if n == 0 or models == 0:
        return [RankInterval(1, 1, 1) for _ in range(models)]
    rng = np.random.default_rng(seed)
    ranks = np.empty((resamples, models), dtype=int)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        picks = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * n)[:, None]
        weights = np.bincount((picks + offsets).ravel(), minlength=size * n).reshape(size, n)
        means = (weights.astype(float) @ matrix) / n
        # Rank = 1 + models strictly above; the tolerance keeps float noise from breaking ties.
        above = means[:, None, :] > means[:, :, None] + 1e-12
        ranks[start : start + size] = 1 + above.sum(axis=2)
    tail = (1.0 - level) / 2.0
    observed = matrix.mean(axis=0)
    return [
        RankInterval(
            rank=rank_of(list(observed), model),
            low=int(np.quantile(ranks[:, model], tail, method="inverted_cdf")),
            high=int(np.quantile(ranks[:, model], 1.0 - tail, method="inverted_cdf")),
        )
        for model in range(models)
    ]


def paired_mcnemar_matrix(values) -> list[list[float]]:
    """Exact McNemar p-values of every two columns of an (items x models) 0/1 array
    (``p[i][i]`` is 1): the paired test of two models' EX on the same items."""
    matrix = np.asarray(values, dtype=float) >= 0.5
    models = matrix.shape[1]
    p = [[1.0] * models for _ in range(models)]
    for i in range(models):
        for j in range(i + 1, models):
            only_i = int(np.sum(matrix[:, i] & ~matrix[:, j]))
            only_j = int(np.sum(matrix[:, j] & ~matrix[:, i]))
            p[i][j] = p[j][i] = mcnemar_exact(only_i, only_j)
    return p


def not_different_groups(
    order: Sequence[int], different: Sequence[Sequence[bool]]
) -> list[tuple[int, ...]]:
    """Groups of models that are not significantly different, for models listed best first.

    A group is a run of consecutive models in ``order`` no two of which differ
    (``different[i][j]`` False for every pair), as long as it can be made; only the runs that
    no longer one contains are kept. Each model belongs to one group or more: the letters of
    a compact letter display (models sharing a letter are not significantly different).
    """
    groups: list[tuple[int, ...]] = []
    last_end = -1
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and not any(
            different[order[k]][order[end + 1]] for k in range(start, end + 1)
        ):
            end += 1
        if end > last_end:
            groups.append(tuple(order[start : end + 1]))
            last_end = end
    return groups


__all__ = [
    "LEVEL",
    "RESAMPLES",
    "SEED",
    "Interval",
    "RankInterval",
    "bootstrap_ci",
    "bootstrap_cis",
    "bootstrap_ranks",
    "holm",
    "mcnemar_exact",
    "not_different_groups",
    "paired_mcnemar_matrix",
    "rank_of",
    "paired_bootstrap_ci",
]
