"""The LogicCat leaderboard's side of the official split: its test set (``logiccat_test``), the
dialect it executes (MySQL), the note every local score of that set carries, and the records of
a predictions file for it: upstream's ``MySQL/test.json`` records, in their order, with
``query`` set to a run's SQL (what the file holds and how to adapt it: docs/which-number.md).

>>> is_board_data("logiccat-cb580e87ac17-builder5+split2026-test-b0d082cc109c")
True
>>> is_board_data("logiccat-cb580e87ac17-builder5"), is_board_data(None)
(False, False)"""

from __future__ import annotations

from collections.abc import Mapping

from sqlbench_lmeval.benchmarks import Board
from sqlbench_lmeval.logiccat.bundle import ensure_bundle
from sqlbench_lmeval.logiccat.split import official_split, split_of_version

#: Said beside every number scored on the test split: the board's gold of it is hidden.
GOLD_NOTE = "local gold of upstream cb580e8; the board scores its hidden gold"


def is_board_data(dataset_version: str | None) -> bool:
    """Whether ``dataset_version`` names the test split, whose gold the board hides."""
    return split_of_version(dataset_version) == "test"


def board_records(queries: Mapping[int, str], *, cache_dir=None, source=None) -> list[dict]:
    """The test split's 800 upstream records in upstream's order (ascending ``idx``, as
    ``MySQL/test.json`` lists them), each with ``query`` set to ``queries[idx]`` ("" for an item
    ``queries`` lacks). ``type`` is written as upstream writes it, a string ("1" to "4"), and
    ``format`` is ``MySQL``; ``step`` (the chain-of-thought annotation) is left out: a
    prediction file carries no reasoning."""
    test = official_split().ids["test"]
    records = sorted(
        (record for record in ensure_bundle(source, cache_dir).records if record.id in test),
        key=lambda record: record.id,
    )
    return [
        {
            "db_id": record.db_id,
            "type": str(record.type),
            "idx": record.id,
            "question": record.question,
            "query": queries.get(record.id, ""),
            "format": "MySQL",
        }
        for record in records
    ]


BOARD = Board(
    task="logiccat_test",
    dialect="mysql",
    note=GOLD_NOTE,
    records=board_records,
    is_board_data=is_board_data,
)
