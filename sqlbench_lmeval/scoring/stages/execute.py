"""Stage: gold, its tie probes and the answers run in one batch of sandboxed workers, gold through
the gold cache and the answers' jobs made lazily from the stream of answers (so extraction
overlaps execution); an answer that cannot run (refused, not translated) gets a failed outcome
and no job. An answer whose result is gold's also runs on the perturbed copies in the same
batch, as soon as its outcome is in (``data_dependence.CopiesAhead``; the read_data stage
takes those runs instead of making them): no second batch waits for the last answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from sqlbench_lmeval.execution import Job, Outcome, Status, execute_many
from sqlbench_lmeval.execution.held_results import from_index
from sqlbench_lmeval.scoring.answer import Answer
from sqlbench_lmeval.scoring.compare import gold_order_matters
from sqlbench_lmeval.scoring.data_dependence import CopiesAhead
from sqlbench_lmeval.scoring.item import Item

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True
#: While answers are still being made, their copy runs are made for this many matched answers
#: at a time (one read of the gold cache each); after the last, for as many as there are.
AHEAD_AT_ONCE = 256


def run(batch, scorer) -> None:
    count = len(batch.items)
    cache = scorer.gold_cache
    ahead = None if cache is None else CopiesAhead(scorer.limits, cache)
    known: list[Outcome | None] = [None] * count  # gold read from the cache, per item
    roles: list[Answer | Job] = []  # per job after gold's: its answer, or a copy run's job
    outstanding = [0]  # answers' jobs whose outcome is not in yet

    def jobs() -> Iterator[Job]:
        for answer in batch.stream:
            if answer.submitted:
                roles.append(answer)
                outstanding[0] += 1
                yield Job(answer.item.database, answer.run.sql)
            yield from copy_runs(AHEAD_AT_ONCE)

    def more() -> list[Job] | None:
        """Once every answer's job is made: the copy runs of those matched since, in the same
        groups while answers still run (asked each time results come in, it would read the
        gold cache for a few answers at a time); None once every answer's outcome is in and
        none is left."""
        runs = list(copy_runs(AHEAD_AT_ONCE if outstanding[0] else 1))
        return None if not runs and not outstanding[0] else runs

    def copy_runs(at_least: int = 1) -> Iterator[Job]:
        if ahead is not None:
            for job in ahead.jobs(at_least):
                roles.append(job)
                yield job

    def keep(index: int, outcome: Outcome) -> Outcome:
        role = roles[index]
        if isinstance(role, Answer):
            outstanding[0] -= 1
            if ahead is not None:
                ordered = batch.tie_plan.orders[role.index]
                ahead.offer(role.item, role.run.sql, outcome, known[role.index], ordered)
        return batch.held.keep(outcome)

    def found(cached: list[Outcome | None]) -> None:
        known[:] = cached[:count]

    answers = _Answers(jobs(), keep, found, more)
    gold, predicted, batch.ordered = _execute(batch, answers, scorer)
    batch.gold, batch.probes = gold[:count], gold[count:]
    for role, outcome in zip(roles, predicted, strict=True):
        if isinstance(role, Answer):
            role.outcome = outcome
        else:
            ahead.done[role] = outcome
    batch.ahead = ahead
    for answer in batch.answers:
        if answer.run is not None and answer.run.error is not None:  # translation failed
            answer.outcome = Outcome(Status.ERROR, error=answer.run.error)
        if answer.failure is not None:  # refused or failed before running: nothing ran
            answer.outcome = Outcome(Status.ERROR, error=answer.failure.error)


@dataclass(frozen=True)
class _Answers:
    """The answers' side of the batch: their jobs (lazy), what is kept of each outcome, and the
    callbacks of gold found cached and of more jobs."""

    jobs: Iterator[Job]
    keep: Callable[[int, Outcome], Outcome]
    found: Callable[[list[Outcome | None]], None]
    more: Callable[[], list[Job] | None]


def _execute(batch, answers: _Answers, scorer):
    """Gold outcomes (gold's jobs, then its tie probes), the answers' outcomes (in the order
    their jobs came) and per item whether gold's row order counts (as the tie plan read it)."""
    gold_jobs = batch.gold_jobs + batch.tie_plan.probe_jobs
    keep, found, more = answers.keep, answers.found, answers.more
    description = "executing SQL" if scorer.progress else None
    limits, workers, cache = scorer.limits, scorer.workers, scorer.gold_cache
    if cache is not None:
        gold, predicted = cache.run_together(
            gold_jobs, answers.jobs, limits, workers=workers, progress=description,
            expected=batch.expected, pool=batch.pool, keep=keep, found=found, more=more,
        )  # fmt: skip
    else:
        expected = None if batch.expected is None else len(gold_jobs) + batch.expected
        both = execute_many(
            itertools.chain(gold_jobs, answers.jobs), limits, workers=workers,
            progress=description, expected=expected, pool=batch.pool,
            keep=from_index(len(gold_jobs), keep), more=more,
        )  # fmt: skip
        gold, predicted = both[: len(gold_jobs)], both[len(gold_jobs) :]
    return gold, predicted, _gold_orders(batch.items, batch.tie_plan.orders)


def _gold_orders(items: Sequence[Item], known: Sequence[bool | None]) -> list[bool]:
    """Per item, whether its gold result has a defined row order (outermost ORDER BY): as the
    tie plan read it (``known``: from the plan's parse, or kept with the stored tie record, so
    a warm run parses no gold), else parsed here. (Parsed in a thread while the batch ran, it
    held the interpreter lock against the loop that feeds the workers.)"""
    memo: dict[tuple[str, str], bool] = {}
    orders = []
    for item, order in zip(items, known, strict=True):
        if order is None:
            key = (item.gold_sql, item.dialect)
            if key not in memo:
                try:
                    memo[key] = gold_order_matters(item.gold_sql, item.dialect)
                except Exception:  # unreadable gold: unordered, as for gold sqlglot cannot parse
                    memo[key] = False
            order = memo[key]
        orders.append(order)
    return orders
