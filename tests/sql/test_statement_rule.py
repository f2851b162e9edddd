"""The statement rule's table (``support.statement_rule``): docs/statement-rule.md shows exactly
that table,
and extraction alone, in each setting's dialect, refuses exactly the answers the table refuses.
Every row runs for real, through ``score`` and the lm-eval filter, in
tests/logiccat/test_statement_rule.py (SQLite, and SQLite asked in MySQL),
tests/tpcds/test_statement_rule.py (DuckDB), tests/logiccat/test_statement_rule_mysql.py
(MariaDB) and tests/tpcds/test_statement_rule_postgres.py (PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.statement_rule import REFUSALS, ROWS, SETTINGS, answer_text, readme_table, rows_for

from sqlbench_lmeval.sql.extract import extract_sql

PAGE = Path(__file__).resolve().parents[2] / "docs" / "statement-rule.md"
GOLD = "SELECT name FROM singer WHERE age > 30"
# The text of the LogicCat gold queries the table gives as answers (items 340, 1400, 1402).
GOLD_OF = {
    340: "SELECT 1000 / 10000 AS Energy_Consumption_Per_km; SELECT * FROM cars WHERE "
    "Battery_Capacity / Range < (1000 / 10000);",
    1400: "SET SESSION cte_max_recursion_depth = 1000000; WITH RECURSIVE h AS (SELECT -273.0 "
    "AS t UNION ALL SELECT t + 1 FROM h WHERE t < 100) SELECT MAX(t) AS total FROM h;",
}
GOLD_OF[1402] = GOLD_OF[1400]


def test_docs_show_the_table():
    assert readme_table() in PAGE.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("setting", "dialect"), [(key, dialect) for key, _, _, dialect in SETTINGS]
)
def test_extraction_refuses_what_the_table_refuses(setting, dialect):
    for row in rows_for(setting):
        gold = GOLD_OF.get(row.item, GOLD)
        extraction = extract_sql(answer_text(row, gold), dialect=dialect)
        expected = row.expected(setting)
        assert extraction.problem == (expected if expected in REFUSALS else None), row.case
        assert extraction.sql is not None, row.case


def test_every_row_is_tested_in_every_setting_it_names():
    cases = [row.case for row in ROWS]
    assert len(cases) == len(set(cases))
    for row in ROWS:
        assert all(row.expected(key) for key, _, _, _ in SETTINGS), row.case
