"""Result previews: the first rows of gold's and the prediction's result in every score dict."""

from __future__ import annotations

import datetime as dt

from support.explorer_runs import ANSWERS, make_items

from sqlbench_lmeval.execution import Outcome, Status
from sqlbench_lmeval.scoring.preview import (
    PREVIEW_CELL_CHARS,
    PREVIEW_ROWS_ENV,
    cell_text,
    result_preview,
)
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate


def test_cell_text_keeps_null_and_cuts_long_text():
    assert cell_text(None) is None
    assert cell_text(7.25) == "7.25"
    assert cell_text(b"\x00\xff") == "00ff"
    assert cell_text(dt.date(2024, 2, 29)) == "2024-02-29"
    long = "x" * (PREVIEW_CELL_CHARS + 10)
    # PREVIEW_CELL_CHARS characters in all: the first PREVIEW_CELL_CHARS - 1, then the ellipsis.
    assert cell_text(long) == "x" * (PREVIEW_CELL_CHARS - 1) + "…"
    assert cell_text("x" * PREVIEW_CELL_CHARS) == "x" * PREVIEW_CELL_CHARS


def test_preview_keeps_first_rows_and_the_full_count():
    outcome = Outcome(Status.OK, ("n", "name"), tuple((i, f"row {i}") for i in range(7)))
    assert result_preview(outcome, rows=2) == {
        "columns": ["n", "name"],
        "rows": [["0", "row 0"], ["1", "row 1"]],
        "row_count": 7,
    }
    assert result_preview(outcome, rows=0)["rows"] == []
    assert result_preview(Outcome(Status.ERROR, error="boom")) is None
    assert result_preview(None) is None


def test_score_items_keeps_previews_of_gold_and_prediction(tmp_path):
    # support.explorer_runs: alpha answers item 1 with gold's SQL (rows (dates, 4.0),
    # (cheese, 7.25)), item 2 with a missing table (an error: no result), item 3 with nothing.
    items = make_items(tmp_path)
    outputs = [ANSWERS["alpha"][item.id] for item in items]
    scores = Scorer(workers=1, progress=False, preview_rows=1).score(items, outputs)
    first, error, empty, _ = scores
    expected = {"columns": ["name", "price"], "rows": [["dates", "4.0"]], "row_count": 2}
    assert first["gold_preview"] == expected
    assert first["prediction_preview"] == expected
    assert error["prediction_preview"] is None
    assert error["gold_preview"] == {"columns": ["COUNT(*)"], "rows": [["4"]], "row_count": 1}
    assert empty["prediction_preview"] is None
    # Previews are not numbers: nothing about them is averaged.
    assert not any("preview" in name for name in aggregate(scores))


def test_the_lmeval_filter_reads_the_preview_size_from_the_environment(monkeypatch):
    monkeypatch.delenv(PREVIEW_ROWS_ENV, raising=False)
    assert Scorer.from_env([]).preview_rows == 5
    monkeypatch.setenv(PREVIEW_ROWS_ENV, "12")
    assert Scorer.from_env([]).preview_rows == 12
