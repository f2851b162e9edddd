"""Stage: gold's jobs and the tie probes that run beside them as more gold jobs of the first batch
(``gold_ties.plan_batch``).
"""

from __future__ import annotations

from sqlbench_lmeval.execution import Job
from sqlbench_lmeval.scoring.gold_ties import plan_batch

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True


def run(batch, scorer) -> None:
    batch.gold_jobs = [Job(item.database, item.gold_sql) for item in batch.items]
    batch.tie_plan = plan_batch(
        batch.items, batch.gold_jobs, scorer.limits, scorer.gold_cache, reads=True
    )
    # Whether each gold surely reads no table, as its tie record keeps it: asked by the judge
    # and the read_data stage, never tokenized again.
    batch.gold_reading.update(
        (index, found) for index, found in enumerate(batch.tie_plan.no_table) if found is not None
    )
