"""BIRD's time-based R-VES, on request (``sqlbench-lmeval score --r-ves-time N``), for numbers
comparable with BIRD's: each correct answer and its gold timed ``iterations`` times, alternately,
the ratios trimmed, averaged and bucketed as :mod:`~sqlbench_lmeval.scoring.efficiency` does;
it depends on the machine, so the lm-eval filter never computes it (the procedure and its
departures from BIRD: docs/r-ves.md, departure 1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlbench_lmeval.execution import Job, Limits, Status, execute_many
from sqlbench_lmeval.scoring.efficiency import bird_time_ratio, r_ves_reward
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import EX


def timed_r_ves(
    items: Sequence[Item],
    scores: Sequence[dict],
    iterations: int,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = False,
) -> list[float]:
    """``r_ves_time`` of each score (of ``items[i]``'s answer): 0 unless the answer is correct
    (``ex``) and every timed run of it and of gold finished OK."""
    if iterations < 1:
        raise ValueError("--r-ves-time needs at least 1 iteration")
    timed = [
        index
        for index, score in enumerate(scores)
        if score.get(EX) and score.get("executed_sql") and score["status"] == Status.OK.value
    ]
    jobs = []
    for index in timed:
        item, sql = items[index], scores[index]["executed_sql"]
        jobs += [Job(item.database, sql), Job(item.database, item.gold_sql)] * iterations
    outcomes = execute_many(
        jobs, limits, workers=workers, progress="timing (r_ves_time)" if progress else None
    )
    values = [0.0] * len(scores)
    per_item = 2 * iterations
    for position, index in enumerate(timed):
        runs = outcomes[position * per_item : (position + 1) * per_item]
        if any(run.status is not Status.OK for run in runs):
            continue
        # A clock step of 0 cannot be a ratio's denominator: the clock's resolution instead.
        predicted = [max(run.elapsed_s, 1e-9) for run in runs[0::2]]
        gold = [max(run.elapsed_s, 1e-9) for run in runs[1::2]]
        values[index] = math.sqrt(r_ves_reward(bird_time_ratio(gold, predicted)))
    return values
