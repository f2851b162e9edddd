"""Stage: whether an answer that matched gold reads the data, decided by running it on the perturbed
copies of its database where gold's result changed and asking whether its result there is gold's
(docs/scoring.md#data-dependence): only answers that ran as they are, matched gold and name a
table, where gold names one.
"""

from __future__ import annotations

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
from sqlbench_lmeval.scoring.data_dependence import UNDECIDABLE, Case, judge_all

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True


def run(batch, scorer) -> None:
    chosen = [a for a in batch.answers if _asks(a) and not _gold_reads_no_table(a, batch)]
    # Gold that draws random numbers gives on a copy no result an answer should give there.
    for answer in [a for a in chosen if UNREPEATABLE_FLAGS & set(a.item.flags)]:
        answer.dependence = UNDECIDABLE
    chosen = [a for a in chosen if a.dependence is None]
    if not chosen:
        return
    cases = [Case(a.item, a.run.sql, a.outcome, a.gold, a.ordered) for a in chosen]
    found = judge_all(
        cases, scorer.limits, scorer.workers, scorer.gold_cache, batch.pool, batch.ahead
    )
    for answer, dependence in zip(chosen, found, strict=True):
        answer.dependence = dependence


def _gold_reads_no_table(answer, batch) -> bool:
    extraction = answer.extraction
    parsed = None if extraction is None else extraction.table_reads
    return batch.gold_reads_no_table(answer.index, parsed)


def _asks(answer) -> bool:
    return (
        answer.stopped is None
        and answer.verdict is not None
        and answer.verdict.ex
        and answer.dependence is None
        and answer.outcome.status is Status.OK
    )
