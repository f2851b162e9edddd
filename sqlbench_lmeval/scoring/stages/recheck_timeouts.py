"""Stage: an answer that ran past its time limit runs once more, alone on a fresh worker, right
after its gold ran alone, before it counts as ``timeout`` (``scoring.timeouts``; the rule:
docs/failures.md#an-answer-that-runs-out-of-time).
"""

from __future__ import annotations

from sqlbench_lmeval.execution import Job, Status
from sqlbench_lmeval.scoring.timeouts import settle

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True


def run(batch, scorer) -> None:
    for answer in batch.answers:
        if answer.submitted and answer.outcome is not None:
            if answer.outcome.status is Status.TIMEOUT:
                item = answer.item
                answer.outcome = settle(
                    Job(item.database, answer.run.sql),
                    Job(item.database, item.gold_sql),
                    answer.outcome,
                    scorer.limits,
                    scorer.workers,
                    batch.pool,
                )
