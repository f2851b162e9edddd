"""Result previews: the first rows of a query's result, small enough to keep in every score dict.

A score dict carries ``gold_preview`` and ``prediction_preview`` so that a reader of lm-eval
samples or ``score`` output (the report's item explorer) can show what each query returned
without a database. A preview is ``{"columns", "rows", "row_count"}``: the first ``rows`` rows
(default :data:`PREVIEW_ROWS`), every cell as text cut to :data:`PREVIEW_CELL_CHARS` characters
(NULL stays ``None``), and the full row count. A query that did not run has no preview (None).
"""

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
