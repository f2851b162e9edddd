"""Stage: gold checked against what the benchmark's build recorded; gold that did not finish or
errors now runs once more, and what still fails stops the run (docs/failures.md).

>>> recheck_gold([], [])
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlbench_lmeval.execution import GoldCache, Job, Limits, Outcome, Status, execute_many
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.scoring.item import GOLD_RAN, Item

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True

#: What the user can do about gold that does not finish.
UNFINISHED_ADVICE = (
    "give gold more time (--gold-timeout SECONDS; under lm_eval $SQLBENCH_LMEVAL_GOLD_TIMEOUT), "
    "run on a less loaded machine, or leave these items out of every mean "
    "(--exclude-unfinished-gold; under lm_eval $SQLBENCH_LMEVAL_EXCLUDE_UNFINISHED_GOLD=1)"
)


def run(batch, scorer) -> None:
    limits, workers, cache = scorer.limits, scorer.workers, scorer.gold_cache
    batch.gold = recheck_gold(batch.items, batch.gold, limits, workers, cache, batch.pool)


def recheck_gold(
    items: Sequence[Item],
    gold: Sequence[Outcome],
    limits: Limits = Limits(),
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    pool: WorkerPool | None = None,
) -> list[Outcome]:
    """``gold`` (outcomes of the items' gold, in item order), checked against what the build
    recorded. Two kinds of gold run once more, in fresh worker processes, under gold's own,
    longer time limit (``Limits.for_gold``: gold is the benchmark's, its cost is not the
    model's):

    - gold that ran at build time and did not finish now (``timeout``, ``crashed``). What
      finishes is stored in ``gold_cache`` under the key of ``limits`` (the next run reads
      it); what still does not finish raises :class:`EvaluationUnavailable` naming the items,
      unless ``limits.exclude_unfinished_gold``: then it stays unfinished, and scoring leaves
      those items out (status :data:`EXCLUDED`).
    - gold that ran at build time and errors now (also after the first rerun): the database is
      not the one the benchmark was built on (a table or database dropped, a file replaced, a
      server reloaded with other data). What still errors raises
      :class:`EvaluationUnavailable` naming the items.

    What runs now replaces the failed outcome. Gold that ran at build time and returns more
    rows than ``limits.max_rows`` now (a lower ``--max-rows`` than the build's) raises
    :class:`EvaluationUnavailable` too: no answer can be compared with a result cut off.
    Gold recorded as broken at build time (:func:`gold_broken`) is not run again: no answer is
    compared with it. ``pool``: the run's workers; its idle ones are stopped first, so the rerun
    is on fresh workers."""
    rechecked = list(gold)
    fresh = _Fresh(workers, pool)
    _rerun_unfinished(items, rechecked, limits, fresh, gold_cache)
    _rerun_errors(items, rechecked, limits, fresh)  # also gold that finished only now
    _check_row_cap(items, rechecked, limits)
    return rechecked


@dataclass(frozen=True)
class _Fresh:
    """Runs jobs on fresh worker processes: new ones, or the run's pool once its idle workers
    are stopped (as the failure messages and ``--gold-timeout``'s help promise)."""

    workers: int | None
    pool: WorkerPool | None

    def run(self, jobs, limits: Limits) -> list[Outcome]:
        if self.pool is not None:
            self.pool.renew()
        return execute_many(jobs, limits, workers=self.workers, pool=self.pool)


def _ran_at_build(items: Sequence[Item], gold: Sequence[Outcome], statuses) -> list[int]:
    """The items whose gold ran at build time and whose outcome now has one of ``statuses``."""
    return [
        index
        for index, (item, outcome) in enumerate(zip(items, gold, strict=True))
        if item.gold_status in GOLD_RAN and outcome.status in statuses
    ]


def _rerun_unfinished(items, rechecked, limits, fresh, gold_cache) -> None:
    unfinished = _ran_at_build(items, rechecked, UNFINISHED)
    if not unfinished:
        return
    jobs = [Job(items[index].database, items[index].gold_sql) for index in unfinished]
    gold_limits = limits.for_gold()
    again = fresh.run(jobs, gold_limits)
    finished = [
        (job, outcome)
        for job, outcome in zip(jobs, again, strict=True)
        if outcome.status not in UNFINISHED
    ]
    if gold_cache is not None and finished:
        gold_cache.store([job for job, _ in finished], [o for _, o in finished], limits)
    still = [
        (items[index], outcome)
        for index, outcome in zip(unfinished, again, strict=True)
        if outcome.status in UNFINISHED
    ]
    if still and not limits.exclude_unfinished_gold:
        ids = ", ".join(str(item.id) for item, _ in still[:100])
        ids += ", ..." if len(still) > 100 else ""
        raise EvaluationUnavailable(
            f"gold of {len(still)} item(s) did not finish, also when run again on a fresh "
            f"worker with gold's own limit of {gold_limits.timeout_s:g} s (items {ids}; "
            f"{_some_items(still)}); gold is the benchmark's, so no answer is scored "
            f"against it: {UNFINISHED_ADVICE}"
        )
    for index, outcome in zip(unfinished, again, strict=True):
        rechecked[index] = outcome


def _rerun_errors(items, rechecked, limits, fresh) -> None:
    broken = _ran_at_build(items, rechecked, {Status.ERROR})
    if not broken:
        return
    jobs = [Job(items[index].database, items[index].gold_sql) for index in broken]
    again = fresh.run(jobs, limits.for_gold())
    failing = [
        (items[index], outcome)
        for index, outcome in zip(broken, again, strict=True)
        if outcome.status is Status.ERROR
    ]
    if failing:
        raise EvaluationUnavailable(
            f"gold that ran when the benchmark's data was prepared fails now "
            f"({_some_items(failing)}): the database is not the one the benchmark was built "
            "on (a table or database dropped or changed, another engine version?); "
            "prepare the data again"
        )
    for index, outcome in zip(broken, again, strict=True):
        rechecked[index] = outcome


def _check_row_cap(items, rechecked, limits) -> None:
    too_many = [items[i] for i in _ran_at_build(items, rechecked, {Status.TOO_MANY_ROWS})]
    if too_many:
        raise EvaluationUnavailable(
            f"gold of {len(too_many)} item(s) returns more rows than the limit of "
            f"{limits.max_rows} (items {', '.join(str(item.id) for item in too_many[:100])}"
            f"{', ...' if len(too_many) > 100 else ''}): gold is the benchmark's, so no answer "
            "is compared with a result cut off; raise the limit (--max-rows; under lm_eval "
            "$SQLBENCH_LMEVAL_MAX_ROWS)"
        )


def _some_items(failing: Sequence[tuple[Item, Outcome]]) -> str:
    """The first items of ``failing`` with their errors, for a message."""
    shown = "; ".join(f"item {item.id}: {outcome.error}" for item, outcome in failing[:3])
    return shown + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
