"""R-VES as a specification: BIRD's buckets, its time procedure, and ours on work."""

from __future__ import annotations

import math

import pytest

from sqlbench_lmeval.scoring.efficiency import (
    bird_time_ratio,
    bird_trimmed_mean,
    r_ves,
    r_ves_reward,
    work_ratio,
)


def bird_r_ves(rewards) -> float:
    """BIRD's reported R-VES of per-item rewards, as its evaluation script computes it:
    ``100 * mean(sqrt(reward))`` (0 for no item)."""
    values = [math.sqrt(reward) for reward in rewards]
    return 100 * math.fsum(values) / len(values) if values else 0.0


@pytest.mark.parametrize(
    ("ratio", "reward"),
    [
        (10.0, 1.25),
        (2.0, 1.25),  # a bucket includes its lower bound
        (1.999, 1.0),
        (1.0, 1.0),  # as fast as gold
        (0.999, 0.75),
        (0.5, 0.75),
        (0.4999, 0.5),
        (0.25, 0.5),
        (0.2499, 0.25),
        (1e-9, 0.25),  # right but very slow still earns the floor
    ],
)
def test_bird_buckets(ratio, reward):
    assert r_ves_reward(ratio) == reward


@pytest.mark.parametrize("ratio", [None, 0.0, float("nan"), -1.0])
def test_no_ratio_no_reward(ratio):
    assert r_ves_reward(ratio) == 0.0


def test_a_wrong_answer_earns_nothing_however_fast():
    assert r_ves_reward(100.0, correct=False) == 0.0
    assert r_ves(gold_work=1000, pred_work=10, correct=False) == 0.0


def test_work_ratio_is_gold_over_prediction():
    assert work_ratio(300, 100) == 3.0


def test_r_ves_is_birds_per_item_term_on_work():
    # BIRD reports 100 * mean(sqrt(reward)): the per-item term is sqrt(reward).
    assert r_ves(gold_work=300, pred_work=100, correct=True) == math.sqrt(1.25)
    assert r_ves(gold_work=300, pred_work=300, correct=True) == 1.0  # gold as prediction
    assert r_ves(gold_work=300, pred_work=1300, correct=True) == 0.5  # sqrt(0.25)
    assert 100 * r_ves(300, 100, True) == bird_r_ves([1.25])


def test_no_counted_work_counts_as_one_unit():
    # SELECT 1 on DuckDB reads and produces next to nothing; a ratio must still exist.
    assert work_ratio(0, 0) == 1.0
    assert work_ratio(8, 0) == 8.0
    assert work_ratio(None, 5) is None and r_ves(None, 5, True) == 0.0


def test_bird_trimming_drops_values_beyond_three_sigma():
    values = [1.0] * 20 + [100.0]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert 100.0 > mean + 3 * std  # so 100 is dropped
    assert bird_trimmed_mean(values) == 1.0


def test_bird_trimming_keeps_everything_when_nothing_varies():
    # BIRD's code keeps nothing here (std 0) and divides by zero; we keep every value.
    assert bird_trimmed_mean([2.0, 2.0, 2.0]) == 2.0


def test_bird_time_ratio_is_per_iteration_gold_over_prediction():
    assert bird_time_ratio([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]) == 2.0
    with pytest.raises(ValueError):
        bird_time_ratio([1.0], [1.0, 2.0])


def test_bird_reports_the_mean_square_root_of_rewards():
    assert bird_r_ves([1.25, 1.0, 0.0, 0.25]) == pytest.approx(
        100 * (math.sqrt(1.25) + 1 + 0 + 0.5) / 4
    )
    assert bird_r_ves([]) == 0.0
