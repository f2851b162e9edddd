"""Stage: gold, its tie probes and the answers run in one batch of sandboxed workers, gold through
the gold cache and the answers' jobs made lazily from the stream of answers (so extraction
overlaps execution); an answer that cannot run (refused, not translated) gets a failed outcome
and no job.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from sqlbench_lmeval.execution import Job, Outcome, Status, execute_many
from sqlbench_lmeval.execution.held_results import from_index
from sqlbench_lmeval.scoring.compare import gold_order_matters
from sqlbench_lmeval.scoring.item import Item

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True


def run(batch, scorer) -> None:
    submitted = []

    def jobs() -> Iterator[Job]:
        for answer in batch.stream:
            if answer.submitted:
                submitted.append(answer)
                yield Job(answer.item.database, answer.run.sql)

    plan = batch.tie_plan
    gold, predicted, batch.ordered = _execute(
        batch, batch.gold_jobs + plan.probe_jobs, jobs(), plan.orders, scorer
    )
    count = len(batch.items)
    batch.gold, batch.probes = gold[:count], gold[count:]
    for answer, outcome in zip(submitted, predicted, strict=True):
        answer.outcome = outcome
    for answer in batch.answers:
        if answer.run is not None and answer.run.error is not None:  # translation failed
            answer.outcome = Outcome(Status.ERROR, error=answer.run.error)
        if answer.failure is not None:  # refused or failed before running: nothing ran
            answer.outcome = Outcome(Status.ERROR, error=answer.failure.error)


def _execute(batch, gold_jobs, pred_jobs, orders, scorer):
    """Gold outcomes, prediction outcomes (in the order ``pred_jobs`` yields them) and per
    item whether gold's row order counts (``orders`` holds those the tie plan already read)."""
    # Once the last prediction job is made (the parent then mostly waits on the workers), a
    # thread parses gold for its ORDER BY; earlier it would slow the extraction that feeds them.
    description = "executing SQL" if scorer.progress else None
    limits, workers, cache = scorer.limits, scorer.workers, scorer.gold_cache
    with ThreadPoolExecutor(max_workers=1) as background:
        found = []
        pred_jobs = _then(
            pred_jobs, lambda: found.append(background.submit(_gold_orders, batch.items, orders))
        )
        if cache is not None:
            gold, predicted = cache.run_together(
                gold_jobs, pred_jobs, limits, workers=workers, progress=description,
                expected=batch.expected, pool=batch.pool, keep=batch.held.keep,
            )  # fmt: skip
        else:
            expected = None if batch.expected is None else len(gold_jobs) + batch.expected
            both = execute_many(
                itertools.chain(gold_jobs, pred_jobs), limits, workers=workers,
                progress=description, expected=expected, pool=batch.pool,
                keep=from_index(len(gold_jobs), batch.held.keep),
            )  # fmt: skip
            gold, predicted = both[: len(gold_jobs)], both[len(gold_jobs) :]
        return gold, predicted, found[0].result()


def _then(jobs: Iterable[Job], action: Callable[[], object]) -> Iterator[Job]:
    """``jobs``, then ``action()`` once they are all taken."""
    yield from jobs
    action()


def _gold_orders(items: Sequence[Item], known: Sequence[bool | None]) -> list[bool]:
    """Per item, whether its gold result has a defined row order (outermost ORDER BY): as the
    tie plan read it (``known``; a cold run parses gold once), else parsed here (gold whose
    tie record was stored, so not planned)."""
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
