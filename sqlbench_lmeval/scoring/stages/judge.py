"""Stage: each answer compared with gold, tie-aware (not compared where gold is broken:
docs/scoring.md#verdicts), and whether it names a table where gold does (the syntactic half of
reading the data); an exception here fails that answer alone.
"""

from __future__ import annotations

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.scoring.answer import Answer
from sqlbench_lmeval.scoring.compare import Verdict, compare
from sqlbench_lmeval.scoring.data_dependence import NO_TABLE
from sqlbench_lmeval.scoring.gold_ties import tie_verdict
from sqlbench_lmeval.scoring.item import BROKEN_GOLD, gold_broken
from sqlbench_lmeval.sql.table_reads import surely_reads_no_table
from sqlbench_lmeval.vocabulary import Stage


def run(batch, scorer) -> None:
    for answer in batch.answers:
        if answer.failure is None and answer.outcome is not None:
            _judge(answer, batch)


def _judge(answer: Answer, batch) -> None:
    try:
        answer.verdict = _compared(answer)
    except Exception as error:
        answer.fail(Stage.COMPARE, error)
        return
    try:
        answer.dependence = _names_no_table(answer, batch)
    except Exception as error:
        answer.fail(Stage.SCORE, error)


def _compared(answer: Answer) -> Verdict:
    """The answer compared with gold; on an item whose gold is broken (its build-time status),
    not compared at all: every comparison 0, reason ``broken_gold`` for an answer that ran,
    else the answer's own failure."""
    pred, gold = answer.outcome, answer.gold
    if gold_broken(answer.item.gold_status):
        ran = pred.status is Status.OK
        return Verdict(False, False, False, BROKEN_GOLD if ran else f"pred_{pred.status.value}")
    verdict = compare(pred, gold, ordered=answer.ordered)
    return tie_verdict(verdict, pred, gold, answer.ties)


def _names_no_table(answer: Answer, batch) -> str | None:
    """``no_table`` for an answer that ran and names no table where gold names one (gold that
    is itself a calculation on constants, 116 LogicCat items, makes that no shortcut). Gold is
    asked first (its tie record keeps the answer); an answer whose text is gold's names a table
    exactly where gold does, so only other texts are tokenized."""
    if answer.outcome.status is not Status.OK or batch.gold_reads_no_table(answer.index):
        return None
    if answer.item.is_gold_text(answer.run.sql):
        return None
    parsed = None if answer.extraction is None else answer.extraction.table_reads  # parsed once
    return NO_TABLE if surely_reads_no_table(answer.run.sql, answer.item.dialect, parsed) else None
