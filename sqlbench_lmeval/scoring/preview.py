"""Result previews: the first rows of a query's result, small enough to keep in every score dict
(``gold_preview``, ``prediction_preview``), so a reader of lm-eval samples or ``score`` output
can show what each query returned without a database (the form: docs/reports.md, the
explorer's previews).

>>> from sqlbench_lmeval.execution.outcome import Outcome, Status
>>> rows = ((1, None), (2, "x" * 100), (3, "short"))
>>> preview = result_preview(Outcome(Status.OK, columns=("n", "note"), rows=rows), rows=2)
>>> preview["row_count"], preview["rows"][0], len(preview["rows"][1][1])
(3, ['1', None], 80)
>>> result_preview(Outcome(Status.ERROR, error="no such table: t")) is None
True"""

from __future__ import annotations

from sqlbench_lmeval.execution import Outcome, Status

#: Rows kept per preview unless configured otherwise.
PREVIEW_ROWS = 5
#: Characters kept per cell; a longer cell ends in an ellipsis.
PREVIEW_CELL_CHARS = 80
#: Environment override of the preview size for runs through lm-eval (filters take no options).
PREVIEW_ROWS_ENV = "SQLBENCH_LMEVAL_PREVIEW_ROWS"


def cell_text(value, limit: int = PREVIEW_CELL_CHARS) -> str | None:
    """A result value as preview text: None for NULL, else ``str`` cut to ``limit`` chars."""
    if value is None:
        return None
    text = value.hex() if isinstance(value, (bytes, bytearray)) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def result_preview(outcome: Outcome | None, rows: int = PREVIEW_ROWS) -> dict | None:
    """The preview of one query's outcome; None when it did not run to a result."""
    if outcome is None or outcome.status is not Status.OK:
        return None
    return {
        "columns": [cell_text(column) for column in outcome.columns],
        "rows": [[cell_text(value) for value in row] for row in outcome.rows[: max(rows, 0)]],
        "row_count": len(outcome.rows),
    }


__all__ = ["PREVIEW_CELL_CHARS", "PREVIEW_ROWS", "PREVIEW_ROWS_ENV", "cell_text", "result_preview"]
