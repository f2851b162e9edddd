"""Stage: gold's tie records from its outcomes and probes (``gold_ties``), and each answer
given its item's gold outcome, row order and ties."""

from __future__ import annotations

#: Exceptions here are the evaluation's fault, never an answer's: they stop the run.
RUNS_SQL = True


def run(batch, scorer) -> None:
    batch.ties = list(batch.tie_plan.finish(batch.gold, batch.probes))
    for answer in batch.answers:
        index = answer.index
        answer.gold = batch.gold[index]
        answer.ordered = batch.ordered[index]
        answer.ties = batch.ties[index]
