"""BIRD's time-based R-VES, on request (``sqlbench-lmeval score --r-ves-time N``).

For users who need numbers comparable with BIRD's: each correct answer and its gold run
``iterations`` times, alternately (the prediction first, as BIRD's ``iterated_execute_sql``),
each run timed by the engine (execute and fetch, the ``Outcome.elapsed_s`` of the sandbox);
the ratios ``gold time / prediction time`` are averaged after BIRD's 3-sigma trim and bucketed
(``efficiency.bird_time_ratio``, ``r_ves_reward``), and the item's ``r_ves_time`` is the square
root of the reward, as ``r_ves``. Unlike ``r_ves`` the result depends on the machine, its load
and the worker count: the lm-eval filter never computes it.

Departures from BIRD: BIRD times connecting and closing too (ours times the query on an open
sandboxed connection, so the connection's constant cost does not pull every ratio towards 1);
BIRD scores 0 when any timed run fails (so does this: a run that does not finish OK gives 0);
BIRD runs 100 iterations (``efficiency.BIRD_ITERATIONS``, the default of ``--r-ves-time``).
"""

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
