"""Which answers read no table of the database (``table_reads.reads_no_table``)."""

import pytest

from sqlbench_lmeval.sql.table_reads import reads_no_table


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        ("SELECT 646.8 UNION ALL SELECT 1292.2", "sqlite", True),
        ("SELECT 1 + 1 AS two", "mysql", True),
        ("SELECT 'from' AS word", "sqlite", True),  # the word in a string: parsed, no table
        ("WITH r AS (SELECT 1 AS x) SELECT x FROM r", "sqlite", True),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
            "SELECT n FROM r",
            "sqlite",
            True,
        ),
        ("SELECT * FROM (VALUES (1), (2)) AS v", "sqlite", True),
        ("SELECT * FROM generate_series(1, 3)", "duckdb", True),
        ("SELECT * FROM json_each('[1, 2]')", "sqlite", True),
        ("SELECT 1 FROM DUAL", "mysql", True),
        ("SELECT name FROM pump", "sqlite", False),
        ("SELECT (SELECT MAX(flow) FROM pump) AS top", "sqlite", False),
        ("SELECT * FROM main.pump", "sqlite", False),
        ("WITH r AS (SELECT flow FROM pump) SELECT * FROM r", "sqlite", False),
        ("SELECT 1 FROM t1 JOIN t2 ON t1.a = t2.a", "duckdb", False),
        ("SELECT x FROM (SELECT 1 AS x) AS s JOIN pump ON TRUE", "sqlite", False),
    ],
)
def test_reads_no_table(sql, dialect, expected):
    assert reads_no_table(sql, dialect) is expected


def test_text_sqlglot_cannot_parse_claims_nothing():
    assert reads_no_table("SELECT FROM FROM ((", "sqlite") is None
