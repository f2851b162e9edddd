"""Stage: an answer in the engine's dialect when the prompt asked for another
(``scoring.translate``), wrapped lazily around the stream of answers; a translator that raises
fails that answer, not the run.
"""

from __future__ import annotations

from sqlbench_lmeval.scoring.answer import Failure
from sqlbench_lmeval.scoring.translate import engine_sql
from sqlbench_lmeval.vocabulary import Stage


def run(batch, scorer) -> None:
    batch.stream = _translated(batch.stream, scorer.hooks.transpile)


def _translated(stream, transpile):
    for answer in stream:
        if answer.extraction is not None and answer.failure is None:
            try:
                answer.run = engine_sql(answer.item, answer.extraction.sql, transpile)
            except Exception as error:  # a broken translator fails this item, not the run
                answer.failure = Failure.at(Stage.TRANSPILE, error)
        yield answer
