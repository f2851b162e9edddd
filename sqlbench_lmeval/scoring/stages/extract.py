"""Stage: the SQL an output holds (``sql.extract``) and why it cannot run when it is refused; lazy,
so each answer is extracted as execution asks for the next job.

>>> extraction, failure = extract_answer("```sql\\nSELECT 1;\\n```")
>>> extraction.sql, failure
('SELECT 1', None)
>>> extract_answer("DROP TABLE t")[1].reason
'not_read_only'
"""

from __future__ import annotations

from sqlbench_lmeval.scoring.answer import REFUSED, Answer, Failure
from sqlbench_lmeval.sql.extract import Extraction, extract_sql
from sqlbench_lmeval.vocabulary import Stage


def run(batch, scorer) -> None:
    batch.stream = _extracted(batch, scorer.hooks.prompt_tail)


def _extracted(batch, prompt_tail: str):
    for index, output, done in batch.incoming:
        item = batch.items[index]
        answer = Answer(item, output, index)
        if done is None:
            done = extract_answer(output, prompt_tail, item.prompted_dialect)
        answer.extraction, answer.failure = done
        batch.answers.append(answer)
        yield answer


def extract_answer(
    output: str | None, prompt_tail: str = "", dialect: str | None = None
) -> tuple[Extraction | None, Failure | None]:
    """The extraction of one output (None: never submitted) and why it cannot run, if so;
    ``dialect``: the one the answer was asked in (``Item.prompted_dialect``)."""
    if output is None:
        return None, None
    try:
        extraction = extract_sql(output, prompt_tail=prompt_tail, dialect=dialect)
    except Exception as error:  # e.g. a text sqlite3 or sqlglot chokes on
        return Extraction(None, "failed"), Failure.at(Stage.EXTRACT, error)
    if extraction.problem is not None:
        return extraction, Failure(extraction.problem, REFUSED[extraction.problem])
    return extraction, None
