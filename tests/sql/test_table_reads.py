"""Which answers read no table of the database (``table_reads.reads_no_table``)."""

import pytest
import sqlglot

from sqlbench_lmeval.sql import table_reads
from sqlbench_lmeval.sql.extract import extract_sql
from sqlbench_lmeval.sql.table_reads import (
    TableReads,
    reads_no_table,
    surely_reads_no_table,
    table_reads_of,
)

# ``surely_reads_no_table`` without its cache: each call below does the work.
surely_uncached = table_reads._surely_reads_no_table.__wrapped__

READS_CASES = [
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
    # System catalogs describe the database, not its data (issue 31).
    ("SELECT 874 FROM sqlite_master LIMIT 1", "sqlite", True),
    ("SELECT 874 FROM sqlite_schema", "sqlite", True),
    ("SELECT 874 FROM information_schema.tables LIMIT 1", "duckdb", True),
    ("SELECT 874 FROM pg_catalog.pg_class LIMIT 1", "postgres", True),
    ("SELECT 874 FROM pg_class LIMIT 1", "postgres", True),
    ("SELECT 874 FROM information_schema.TABLES LIMIT 1", "mysql", True),
    ("SELECT 874 FROM sqlite_master JOIN pump ON TRUE", "sqlite", False),
    ("SELECT name FROM pump", "sqlite", False),
    ("SELECT (SELECT MAX(flow) FROM pump) AS top", "sqlite", False),
    ("SELECT * FROM main.pump", "sqlite", False),
    ("WITH r AS (SELECT flow FROM pump) SELECT * FROM r", "sqlite", False),
    ("SELECT 1 FROM t1 JOIN t2 ON t1.a = t2.a", "duckdb", False),
    ("SELECT x FROM (SELECT 1 AS x) AS s JOIN pump ON TRUE", "sqlite", False),
]


@pytest.mark.parametrize(("sql", "dialect", "expected"), READS_CASES)
def test_reads_no_table(sql, dialect, expected):
    assert reads_no_table(sql, dialect) is expected


def test_text_sqlglot_cannot_parse_claims_nothing():
    assert reads_no_table("SELECT FROM FROM ((", "sqlite") is None


# Scoring asks ``surely_reads_no_table``: the same answer as ``reads_no_table(...) is True``,
# read from the tokens where they show a table read. Texts where the tokens could mislead.
AGREEMENT_CASES = [
    *((sql, dialect) for sql, dialect, _ in READS_CASES),
    ("SELECT 1 IS DISTINCT FROM pump", "duckdb"),  # FROM of an operator, not a table
    ("SELECT 1 IS NOT DISTINCT FROM pump", "postgres"),
    ("SELECT EXTRACT(YEAR FROM d) AS y", "sqlite"),  # FROM inside a call
    ("SELECT SUBSTRING('pump' FROM 2)", "postgres"),
    ("SELECT TRIM(BOTH ' ' FROM ' x ')", "mysql"),
    ("SELECT COUNT(*) FROM table_{n} WHERE x > 1", "sqlite"),  # name{...}: not a plain table
    ("SELECT * FROM range(3) AS r", "duckdb"),  # name(...): a table function
    ("SELECT * FROM main.pump", "sqlite"),  # name.name: left to the parse
    ("SELECT 1 FROM Dual", "mysql"),
    ('SELECT 1 FROM "dual"', "postgres"),
    ("SELECT flow FROM pump;", "sqlite"),
    ("SELECT flow FROM pump;;", "sqlite"),
    ("SELECT 1; SELECT flow FROM pump", "sqlite"),
    ("SELECT flow FROM pump; EXPLAIN SELECT 1", "sqlite"),  # another statement after ';'
    ("EXPLAIN SELECT flow FROM pump", "sqlite"),  # not a SELECT: parsed
    ("(SELECT flow FROM pump)", "sqlite"),
    ("SELECT x FROM r, (WITH r AS (SELECT 1 AS x) SELECT x FROM r) AS s", "sqlite"),
    ("SELECT x FROM r WITH ROLLUP", "mysql"),
    ("SELECT [flow] FROM [pump] p JOIN valve v ON p.id = v.id", "sqlite"),
    ("SELECT 'x FROM pump' AS s -- FROM pump", "sqlite"),
    ("SELECT * FROM pump WHERE 'unterminated", "sqlite"),
    ("SELECT FROM FROM ((", "sqlite"),
    # WITH and subqueries: a FROM right inside a parenthesis that opens a query, and names
    # that a CTE takes (anywhere in the query) or that follow a WITH that is no CTE list.
    ("WITH pump AS (SELECT 1 AS flow) SELECT flow FROM pump", "sqlite"),
    ("WITH r AS (SELECT 1 AS x), s AS (SELECT x FROM r) SELECT * FROM s", "sqlite"),
    ("WITH r(x) AS (SELECT 1) SELECT x FROM r JOIN pump ON TRUE", "sqlite"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM pump) SELECT n FROM r", "sqlite"),
    ("WITH r AS MATERIALIZED (SELECT flow FROM pump) SELECT * FROM r", "postgres"),
    ("WITH r AS (SELECT flow FROM pump) SELECT * FROM r; SELECT 1", "sqlite"),
    ("SELECT (SELECT 1 FROM pump) AS one", "sqlite"),
    ("SELECT EXTRACT(YEAR FROM d) FROM (SELECT DATE('now') AS d)", "sqlite"),
    ("SELECT * FROM (SELECT 1 AS x) WHERE x IN (SELECT flow FROM pump)", "sqlite"),
    ("SELECT 1 WHERE EXISTS (SELECT 1 FROM sqlite_master)", "sqlite"),
    ("SELECT a FROM (SELECT 1 AS a FROM dual) AS d", "mysql"),
    (
        "SELECT x FROM (SELECT x FROM r) AS s, (WITH r AS (SELECT 1 AS x) SELECT x FROM r) AS t",
        "sqlite",
    ),
    ("SELECT COALESCE((SELECT flow FROM pump), 0)", "sqlite"),
    ("SELECT TRIM(BOTH ' ' FROM (SELECT name FROM pump))", "mysql"),
    ("SELECT * FROM (VALUES (1)) AS v WHERE 1 IN (SELECT 1 FROM v)", "sqlite"),
    ("SELECT a FROM t)", "sqlite"),
    ("SELECT (SELECT a FROM t", "sqlite"),
]


@pytest.mark.parametrize(("sql", "dialect"), AGREEMENT_CASES)
def test_surely_reads_no_table_agrees_with_the_parse(sql, dialect):
    assert surely_uncached(sql, dialect) is (reads_no_table.__wrapped__(sql, dialect) is True)


def parsed_as_extraction_parses(sql: str, dialect: str) -> TableReads:
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:
        trees = None
    return table_reads_of(sql, dialect, trees)


@pytest.mark.parametrize(("sql", "dialect"), AGREEMENT_CASES)
def test_a_parse_at_hand_gives_the_same_answer_without_tokens(monkeypatch, sql, dialect):
    # Where extraction parsed the answer already, its parse answers (and the tokens are not
    # made again); the answer is the one the text alone gets.
    parsed = parsed_as_extraction_parses(sql, dialect)
    expected = reads_no_table.__wrapped__(sql, dialect) is True
    monkeypatch.setattr(table_reads, "_reader", None)  # no tokenizer, no parser at hand
    assert surely_reads_no_table(sql, dialect, parsed) is expected


def test_a_parse_of_another_text_or_dialect_is_not_used():
    # Extraction parsed the answer in the dialect it was asked in; a translated answer, or one
    # judged in another dialect, is tested on its own.
    said_wrongly = TableReads("SELECT name FROM pump", "sqlite", True)
    assert surely_reads_no_table("SELECT name FROM pump", "sqlite", said_wrongly) is True
    assert surely_reads_no_table("SELECT name FROM pump", "duckdb", said_wrongly) is False
    assert surely_reads_no_table("SELECT name FROM pump AS p", "sqlite", said_wrongly) is False


class _CountedParses:
    """A sqlglot dialect that tokenizes, and counts its parses (the tests below): what
    ``table_reads._reader(name)`` gives when it is ``_CountedParses.get_or_raise``."""

    parses: list[str] = []

    def __init__(self, dialect):
        self.dialect = dialect

    @classmethod
    def get_or_raise(cls, name):
        return cls(sqlglot.Dialect.get_or_raise(name))

    def tokenize(self, sql):
        return self.dialect.tokenize(sql)

    def parser(self, *args, **kwargs):
        _CountedParses.parses.append(self.dialect)
        return self.dialect.parser(*args, **kwargs)


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT name FROM pump", "sqlite"),
        ("SELECT a FROM t AS x JOIN u ON x.id = u.id WHERE a > 1", "mysql"),
        ("SELECT 1 UNION SELECT flow FROM pump ORDER BY 1", "duckdb"),
        ("SELECT (SELECT 1 FROM DUAL) AS one FROM pump;", "mysql"),
        ("WITH r AS (SELECT flow FROM pump) SELECT * FROM r", "sqlite"),
        ("SELECT (SELECT MAX(flow) FROM pump) AS top", "sqlite"),
        ("SELECT 1 WHERE 2 IN (SELECT flow FROM pump)", "duckdb"),
    ],
)
def test_a_plain_table_read_is_answered_without_a_parse(monkeypatch, sql, dialect):
    monkeypatch.setattr(table_reads, "_reader", _CountedParses.get_or_raise)
    monkeypatch.setattr(_CountedParses, "parses", [])
    assert surely_uncached(sql, dialect) is False
    assert _CountedParses.parses == []


def test_a_read_the_tokens_cannot_show_is_parsed_once(monkeypatch):
    monkeypatch.setattr(table_reads, "_reader", _CountedParses.get_or_raise)
    monkeypatch.setattr(_CountedParses, "parses", [])
    # FROM r names a CTE, valve follows a JOIN: the tokens do not tell, the parse does.
    sql = "WITH r AS (SELECT 1 AS x) SELECT x FROM r JOIN valve ON TRUE"
    assert surely_uncached(sql, "sqlite") is False
    assert len(_CountedParses.parses) == 1


@pytest.mark.parametrize(
    ("output", "parsed"),
    [
        ("SELECT name FROM pump", False),  # one line that starts the query: taken whole
        ("WITH r AS (SELECT 1 AS x) SELECT x FROM r", True),  # WITH: parsed (WITH ... DELETE?)
        ("WITH r AS (SELECT flow FROM pump) SELECT * FROM r", True),
        ("SELECT 646.8\nUNION ALL SELECT 1292.2", True),  # lines: parsed to find its end
        ("The answer:\n```sql\nSELECT name\nFROM pump\n```", True),
        ("Here it is:\nSELECT 1 FROM DUAL", True),
    ],
)
def test_what_extraction_parsed_is_not_parsed_again(monkeypatch, output, parsed):
    dialect = "mysql" if "DUAL" in output else "sqlite"
    extraction = extract_sql(output, dialect=dialect)
    sql = extraction.sql
    expected = reads_no_table.__wrapped__(sql, dialect) is True
    assert (extraction.table_reads is not None) is parsed
    if parsed:
        assert extraction.table_reads == TableReads(sql, dialect, reads_no_table(sql, dialect))
        monkeypatch.setattr(table_reads, "_reader", None)  # neither tokens nor a parse
    assert surely_reads_no_table(sql, dialect, extraction.table_reads) is expected


def test_surely_reads_no_table_agrees_on_every_logiccat_gold_query(logiccat_cache):
    from sqlbench_lmeval.logiccat.bundle import load_bundle

    queries = [record.gold_sql for record in load_bundle(logiccat_cache).records]
    differ = [
        sql
        for sql in queries
        if surely_uncached(sql, "sqlite") is not (reads_no_table.__wrapped__(sql, "sqlite") is True)
    ]
    assert len(queries) == 4036
    assert differ == []
    # Gold as the answer: where extraction parsed it (WITH, several lines), from that parse.
    extractions = [extract_sql(sql, dialect="sqlite") for sql in queries]
    carried = [e for e in extractions if e.table_reads is not None]
    assert carried  # the WITH queries at least
    differ = [
        e.sql
        for e in carried
        if surely_reads_no_table(e.sql, "sqlite", e.table_reads)
        is not (reads_no_table.__wrapped__(e.sql, "sqlite") is True)
    ]
    assert differ == []
