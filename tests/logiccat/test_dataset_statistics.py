"""docs/logiccat.md's dataset statistics are what the released records give, recomputed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import logiccat_source

from sqlbench_lmeval.logiccat.dataset_statistics import dataset_statistics

PAGE = Path(__file__).resolve().parents[2] / "docs" / "logiccat.md"
#: The page's rows and the statistic each shows in its "Released files" column.
ROWS = {
    "Questions": "questions",
    "Databases": "databases",
    "Physical (type 1)": ("per_category", "physical"),
    "Mathematical (type 2)": ("per_category", "mathematical"),
    "Common-sense (type 3)": ("per_category", "commonsense"),
    "Hypothetical (type 4)": ("per_category", "hypothetical"),
    "Reasoning steps": "reasoning_steps",
    "Joins per query": "joins_per_query",
    "Tables per query": "tables_per_query",
    "Golds without a join": "queries_without_join",
    "Golds that nest a query": "nested_queries",
    "Golds sqlglot cannot parse": "unparsed_queries",
    "Difficulty labels": "difficulty_labels",
}


def page_rows() -> dict[str, str]:
    section = PAGE.read_text(encoding="utf-8").split("## Dataset statistics", 1)[1]
    section = section.split("\n## ", 1)[0]
    return {
        cells[0]: cells[2]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| Figure", "| ---"))
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    }


def test_the_pages_statistics_are_the_released_records():
    records = json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    stats = dataset_statistics(records)
    rows = page_rows()
    assert set(rows) == set(ROWS)
    for figure, key in ROWS.items():
        value = stats[key[0]][key[1]] if isinstance(key, tuple) else stats[key]
        shown = rows[figure].replace(",", "")
        assert re.fullmatch(r"[0-9.]+", shown), (figure, rows[figure])
        assert float(shown) == value, f"{figure}: the page says {rows[figure]}, recomputed {value}"
