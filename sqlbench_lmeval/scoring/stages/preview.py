"""Stage: the first rows of gold's and the answer's results, kept in the score
(``scoring.preview``)."""

from __future__ import annotations

from sqlbench_lmeval.scoring.preview import result_preview


def run(batch, scorer) -> None:
    for answer in batch.answers:
        answer.gold_preview = result_preview(answer.gold, scorer.preview_rows)
        answer.prediction_preview = result_preview(answer.outcome, scorer.preview_rows)
