"""Stage: each answer's numbers: the registry's execution metrics of a compared answer and the
benchmark's own per-item numbers (``Hooks.item_metrics``; those of no SQL for an answer that has
none); an exception here fails that answer alone.
"""

from __future__ import annotations

from sqlbench_lmeval.scoring.answer import Answer
from sqlbench_lmeval.scoring.metrics import Executed, compute_metrics
from sqlbench_lmeval.vocabulary import Stage


def run(batch, scorer) -> None:
    item_metrics = scorer.hooks.item_metrics
    for answer in batch.answers:
        if answer.stopped is None and answer.verdict is not None:
            try:
                answer.metrics = compute_metrics(_executed(answer))
            except Exception as error:
                answer.fail(Stage.SCORE, error)
        if item_metrics is not None:
            _item_values(answer, item_metrics)


def _executed(answer: Answer) -> Executed:
    return Executed(
        item=answer.item,
        sql=None if answer.run is None else answer.run.sql,
        predicted=answer.outcome,
        gold=answer.gold,
        ordered=answer.ordered,
        verdict=answer.verdict,
        reads_no_table=answer.flagged,
        ties=answer.ties,
    )


def _item_values(answer: Answer, item_metrics) -> None:
    """The benchmark's numbers. When they raise for an answer not yet failed, it fails
    (``structure``); a failed answer gets those of no SQL, or none when those raise too."""
    if answer.fault is None:
        try:
            answer.item_values = _as_logged(item_metrics(answer.item, _measured_sql(answer)))
            return
        except Exception as error:
            answer.fail(Stage.STRUCTURE, error)
    try:
        answer.item_values = _as_logged(item_metrics(answer.item, None))
    except Exception:
        answer.item_values = None


def _measured_sql(answer: Answer) -> str | None:
    if answer.extraction is None or answer.stopped is not None:
        return None
    return answer.extraction.sql


def _as_logged(values) -> dict:
    """Numbers become floats; anything else (e.g. ``parsed_dialect``) is logged as it is and
    never averaged (``aggregate`` and ``process_results`` take numbers only)."""
    return {
        name: float(value) if isinstance(value, (int, float)) else value
        for name, value in values.items()
    }
