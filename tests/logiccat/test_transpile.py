"""MySQL gold -> SQLite: each rewrite checked by running the result against MySQL's answer."""

from __future__ import annotations

import sqlite3

import pytest

from sqlbench_lmeval.logiccat import transpile
from sqlbench_lmeval.logiccat.mysql_functions import install


@pytest.fixture(scope="module")
def db():
    conn = sqlite3.connect(":memory:")
    install(conn)
    conn.executescript(
        """
        CREATE TABLE t (id INTEGER, name TEXT COLLATE NOCASE, code TEXT, x REAL,
                        d DATETIME, day DATE, dur TIME, ratio TEXT);
        INSERT INTO t VALUES (1, 'Alpha', '10', 2.5, '2024-01-31 10:00:00', '2024-01-31',
                              '01:30:00', '18:1');
        INSERT INTO t VALUES (2, 'beta', '9', -1.25, '2024-02-01 00:00:00', '2024-02-01',
                              '00:10:00', '11.5:1');
        INSERT INTO t VALUES (3, 'Gamma', '100', 4.0, '2024-03-15 23:59:59', '2024-03-15',
                              '02:00:00', '9:1');
        CREATE TABLE u (id INTEGER, v REAL);
        INSERT INTO u VALUES (1, 1.0), (2, 2.0);
        """
    )
    yield conn
    conn.close()


TYPES = {
    "id": frozenset({"INTEGER"}),
    "name": frozenset({"TEXT"}),
    "code": frozenset({"TEXT"}),
    "x": frozenset({"REAL"}),
    "d": frozenset({"DATETIME"}),
    "day": frozenset({"DATE"}),
    "dur": frozenset({"TIME"}),
    "ratio": frozenset({"TEXT"}),
    "v": frozenset({"REAL"}),
}


def run(db, mysql: str, types=None):
    return db.execute(transpile.mysql_to_sqlite(mysql, types)).fetchall()


@pytest.mark.parametrize(
    ("mysql", "expected"),
    [
        ("SELECT 1 / 4", [(0.25,)]),
        ("SELECT 7 DIV 2", [(3,)]),
        (
            "SELECT YEAR(d), MONTH(d), DAY(d), HOUR(d), QUARTER(d) FROM t WHERE id = 1",
            [(2024, 1, 31, 10, 1)],
        ),
        ("SELECT EXTRACT(YEAR FROM d), EXTRACT(HOUR FROM d) FROM t WHERE id = 3", [(2024, 23)]),
        ("SELECT DATE_ADD(day, INTERVAL 1 MONTH) FROM t WHERE id = 1", [("2024-02-29",)]),
        ("SELECT DATE_ADD(d, INTERVAL 1 DAY) FROM t WHERE id = 1", [("2024-02-01 10:00:00",)]),
        ("SELECT DATE_SUB('2024-03-01', INTERVAL 1 DAY)", [("2024-02-29",)]),
        ("SELECT d + INTERVAL 2 HOUR FROM t WHERE id = 1", [("2024-01-31 12:00:00",)]),
        ("SELECT TIMESTAMPDIFF(HOUR, '2024-01-01 00:00:00', d) FROM t WHERE id = 2", [(744,)]),
        ("SELECT TIMESTAMPDIFF(MONTH, day, '2024-03-30') FROM t WHERE id = 1", [(1,)]),
        ("SELECT DATEDIFF(d, '2024-01-30 23:00:00') FROM t WHERE id = 1", [(1,)]),
        ("SELECT TIMEDIFF('2024-01-01 10:00:00', '2024-01-01 08:30:00')", [("01:30:00",)]),
        ("SELECT DATE_FORMAT(d, '%Y-%m %H:%i') FROM t WHERE id = 3", [("2024-03 23:59",)]),
        ("SELECT STR_TO_DATE('31/01/2024', '%d/%m/%Y')", [("2024-01-31",)]),
        ("SELECT TRUNCATE(x, 1) FROM t WHERE id = 2", [(-1.2,)]),
        ("SELECT CAST(2.567 AS DECIMAL(10, 2))", [(2.57,)]),
        ("SELECT CAST(2.5 AS SIGNED), CAST('2.7' AS SIGNED)", [(3, 2)]),
        ("SELECT CAST(SUBSTRING_INDEX(ratio, ':', 1) AS UNSIGNED) FROM t WHERE id = 2", [(11,)]),
        ("SELECT LEFT(name, 2), RIGHT(name, 3) FROM t WHERE id = 1", [("Al", "pha")]),
        ("SELECT ATAN(1, 1) * 4", [(pytest.approx(3.14159265),)]),
        ("SELECT MOD(7.5, 2), 7.5 % 2", [(1.5, 1.5)]),
        ("SELECT 6 ^ 3", [(5,)]),
        ("SELECT CONCAT('n', FLOOR(7.9)), CONCAT('n', NULL)", [("n7", None)]),
        ("SELECT LENGTH('东站'), CHAR_LENGTH('东站')", [(6, 2)]),
        ("SELECT IF(x > 0, 'pos', 'neg') FROM t WHERE id = 2", [("neg",)]),
        ("SELECT 'x' FROM DUAL", [("x",)]),
        ("SELECT id FROM t WHERE x > ALL (SELECT v FROM u) ORDER BY id", [(1,), (3,)]),
        ("SELECT id FROM t WHERE x < ANY (SELECT v FROM u) ORDER BY id", [(2,)]),
        ("SELECT id, x * 2 AS twice FROM t HAVING twice > 4 ORDER BY id", [(1, 5.0), (3, 8.0)]),
        ("SELECT MAX(x) AS m FROM t HAVING m > 1", [(4.0,)]),
        ("SELECT STDDEV(v), VARIANCE(v) FROM u", [(0.5, 0.25)]),
        ("SELECT COUNT(*) FROM t WHERE name = 'ALPHA'", [(1,)]),
        ("SELECT id FROM t WHERE id = @undefined", []),
        ("SELECT COUNT(*) FROM mydb.t", [(3,)]),
        ("WITH t AS (SELECT id FROM t WHERE id > 1) SELECT COUNT(*) FROM t", [(2,)]),
    ],
)
def test_transpiled_gold_gives_mysql_answers(db, mysql, expected):
    assert run(db, mysql) == expected


@pytest.mark.parametrize(
    ("mysql", "expected", "note"),
    [
        # a text column against a number compares numbers in MySQL ('9' < '10')
        ("SELECT id FROM t WHERE code < 50 ORDER BY id", [(1,), (2,)], "text column code"),
        # a number column against non-numeric text uses the text's numeric prefix
        ("SELECT id FROM t WHERE x = '2.5 kW'", [(1,)], "number column x"),
        # a DATETIME column against a date compares with midnight
        ("SELECT id FROM t WHERE d = '2024-02-01'", [(2,)], "datetime column d"),
        ("SELECT id FROM t WHERE d <= '2024-02-01' ORDER BY id", [(1,), (2,)], "datetime"),
        # temporal values in arithmetic are numbers
        ("SELECT d - day FROM t WHERE id = 1", [(20240131100000 - 20240131,)], "temporal"),
        ("SELECT dur * 10 FROM t WHERE id = 1", [(13000 * 10,)], "temporal"),
    ],
)
def test_coercions_need_column_types(db, mysql, expected, note):
    tree = transpile.parse_mysql(mysql)[0]
    rewritten, notes = transpile.rewrite_tree(tree, TYPES)
    assert db.execute(transpile.generate(rewritten)).fetchall() == expected
    assert any(note in text for text in notes)


def test_other_database_qualifiers_are_kept_and_reported():
    tree = transpile.parse_mysql("SELECT * FROM shop.t JOIN other.u ON t.id = u.id")[0]
    rewritten, notes = transpile.rewrite_tree(tree, None, database="shop")
    sql = transpile.generate(rewritten)
    assert "FROM t JOIN other.u" in sql
    assert notes == ["reads database other"]


def test_date_interval_arithmetic_is_not_a_temporal_number():
    _, notes = transpile.rewrite_tree(
        transpile.parse_mysql("SELECT d - INTERVAL 1 DAY FROM t")[0], TYPES
    )
    assert notes == []


def test_strftime_to_mysql_format():
    assert transpile.strftime_to_mysql("%Y-%m-%d %H:%M:%S %B %-d") == "%Y-%m-%d %H:%i:%s %M %e"


def test_errors():
    with pytest.raises(transpile.TranspileError, match="expected one statement"):
        transpile.mysql_to_sqlite("SELECT 1; SELECT 2")
    with pytest.raises(transpile.TranspileError, match="cannot parse"):
        transpile.mysql_to_sqlite("SELECT (1")
