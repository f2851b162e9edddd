"""Efficiency of a right answer relative to gold: BIRD's R-VES buckets (:func:`r_ves_reward`) on
the ratio of the engine's deterministic work (``r_ves``) or of time (:func:`bird_time_ratio`,
BIRD's own procedure); the buckets, the work counts and the departures from BIRD, with why:
docs/r-ves.md.

>>> r_ves_reward(1200 / 500), r_ves(1200, 500, correct=True)  # the docs' worked example
(1.25, 1.118033988749895)
>>> r_ves(1200, 3000, correct=True), r_ves(1200, 500, correct=False)
(0.7071067811865476, 0.0)"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: (lower bound of the ratio, reward), highest first: BIRD mini-dev's R-VES buckets.
R_VES_BUCKETS = ((2.0, 1.25), (1.0, 1.0), (0.5, 0.75), (0.25, 0.5))
R_VES_FLOOR = 0.25  # a correct answer slower than 4x gold still earns this

#: BIRD's number of timed iterations and its outlier cut (standard deviations).
BIRD_ITERATIONS = 100
BIRD_SIGMAS = 3.0


def r_ves_reward(ratio: float | None, correct: bool = True) -> float:
    """BIRD's reward for a ``gold cost / prediction cost`` ratio; 0 when the prediction is not
    correct or there is no ratio (None, 0, NaN)."""
    if not correct or ratio is None or not ratio > 0:
        return 0.0
    for bound, reward in R_VES_BUCKETS:
        if ratio >= bound:
            return reward
    return R_VES_FLOOR


def work_ratio(gold_work: int | None, pred_work: int | None) -> float | None:
    """``gold_work / pred_work``, with a query that did no counted work as 1 unit of work (on
    DuckDB a plan proved empty, on MariaDB a query that reads no row; an SQLite statement
    always counts steps); None when either count is missing.

    >>> work_ratio(52, 71) < 1 <= work_ratio(64, 62) < 2
    True
    >>> work_ratio(0, 0), work_ratio(10, 0)
    (1.0, 10.0)
    """
    if gold_work is None or pred_work is None:
        return None
    return max(gold_work, 1) / max(pred_work, 1)


def resolved_by_counts(gold_work: int | None, pred_work: int | None) -> bool | None:
    """Whether the two counts pick the bucket of :func:`work_ratio` themselves: False where a
    count of 0 (taken as one unit) decides it, i.e. where the work under one unit it stands
    for could give another bucket (docs/r-ves.md, "Resolution": both 0, an answer's 0 beside
    gold's 1, gold's 0 beside an answer's 1 to 4); None when a count is missing.

    >>> [resolved_by_counts(g, p) for g, p in ((0, 0), (1, 0), (2, 0), (0, 4), (0, 5), (3, 7))]
    [False, False, True, False, True, True]
    """
    if gold_work is None or pred_work is None:
        return None
    if gold_work and pred_work:
        return True
    if not gold_work and not pred_work:
        return False
    bucket = r_ves_reward(work_ratio(gold_work, pred_work))
    # The answer's 0 stands for less than one unit: any ratio above gold's count. Gold's 0:
    # any ratio below one unit over the answer's count.
    extreme = R_VES_BUCKETS[0][1] if not pred_work else R_VES_FLOOR
    return bucket == extreme


def r_ves(gold_work: int | None, pred_work: int | None, correct: bool) -> float:
    """Our per-item ``r_ves``: the square root of BIRD's reward on the ratio of deterministic
    work (BIRD's per-item term; the mean over items times 100 is BIRD's R-VES)."""
    return math.sqrt(r_ves_reward(work_ratio(gold_work, pred_work), correct))


def bird_trimmed_mean(values: Sequence[float], sigmas: float = BIRD_SIGMAS) -> float:
    """BIRD's ``clean_abnormal`` then mean: keep values strictly within mean +- ``sigmas``
    population standard deviations. When that keeps nothing (all values equal, standard
    deviation 0), the plain mean (BIRD's harness would divide by zero and score 0)."""
    if not values:
        raise ValueError("no values to average")
    mean = math.fsum(values) / len(values)
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    kept = [v for v in values if mean - sigmas * std < v < mean + sigmas * std]
    return math.fsum(kept) / len(kept) if kept else mean


def bird_time_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """BIRD's time ratio: per iteration ``gold_time / pred_time``, trimmed mean of those."""
    if len(gold_times) != len(pred_times):
        raise ValueError("one gold time per prediction time")
    return bird_trimmed_mean([g / p for g, p in zip(gold_times, pred_times, strict=True)])
