"""MySQL-compatible functions and the frozen clock on a sqlite3 connection."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from sqlbench_lmeval.logiccat import mysql_functions as mf

NOW = mf.FROZEN_NOW_TEXT
TODAY = mf.FROZEN_NOW.strftime("%Y-%m-%d")


def one(conn: sqlite3.Connection, sql: str) -> object:
    return conn.execute(sql).fetchone()[0]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # MySQL's clock functions
        ("SELECT NOW()", NOW),
        ("SELECT SYSDATE()", NOW),
        ("SELECT CURDATE()", TODAY),
        ("SELECT CURTIME()", "12:00:00"),
        ("SELECT UNIX_TIMESTAMP()", 1765368000),
        # SQLite's keywords are zero-argument functions that an override replaces
        ("SELECT CURRENT_DATE", TODAY),
        ("SELECT CURRENT_TIME", "12:00:00"),
        ("SELECT CURRENT_TIMESTAMP", NOW),
        # SQLite's 'now' time value in every date function, with or without modifiers
        ("SELECT date('now')", TODAY),
        ("SELECT date()", TODAY),
        ("SELECT DATE('NOW', '-1 day')", "2025-12-09"),
        ("SELECT datetime('now')", NOW),
        ("SELECT datetime('now', 'localtime')", NOW),
        ("SELECT time('now')", "12:00:00"),
        ("SELECT julianday('now')", 2461020.0),
        ("SELECT strftime('%Y', 'now')", "2025"),
        ("SELECT strftime('%Y-%m-%d %H', 'now', '+1 hour')", "2025-12-10 13"),
        ("SELECT unixepoch()", 1765368000),
        ("SELECT unixepoch('now')", 1765368000),
        # a real time value is untouched
        ("SELECT date('2024-02-29', '+1 year')", "2025-03-01"),
        ("SELECT strftime('%m', '2024-07-04')", "07"),
    ],
)
def test_clock_is_frozen(mysql_conn, sql, expected):
    assert one(mysql_conn, sql) == expected


def test_clock_override_works_inside_the_sandboxed_engine(tmp_path):
    from sqlbench_lmeval.execution import Database, Job, execute

    path = tmp_path / "empty.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    database = Database("sqlite", str(path), "sqlbench_lmeval.logiccat.mysql_functions:install")
    outcome = execute(Job(database, "SELECT CURRENT_DATE, date('now'), NOW(), YEAR(NOW())"))
    assert outcome.ok, outcome.error
    assert outcome.rows == ((TODAY, TODAY, NOW, 2025),)


def test_install_accepts_another_instant_for_measurements():
    conn = sqlite3.connect(":memory:")
    mf.install(conn, now=dt.datetime(2026, 11, 29, 8, 30))
    assert conn.execute("SELECT NOW(), CURRENT_DATE, date('now')").fetchone() == (
        "2026-11-29 08:30:00",
        "2026-11-29",
        "2026-11-29",
    )


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT YEAR('2024-03-05 10:11:12')", 2024),
        ("SELECT MONTH('2024-03-05')", 3),
        ("SELECT DAY('2024-03-05')", 5),
        ("SELECT HOUR('2024-03-05 10:11:12')", 10),
        ("SELECT HOUR('27:00:00')", 27),
        ("SELECT MINUTE('10:11:12')", 11),
        ("SELECT QUARTER('2024-08-01')", 3),
        ("SELECT DAYOFWEEK('2024-03-03')", 1),  # a Sunday
        ("SELECT WEEKDAY('2024-03-03')", 6),
        ("SELECT DAYNAME('2024-03-03')", "Sunday"),
        ("SELECT MONTHNAME('2024-03-03')", "March"),
        ("SELECT WEEK('2024-01-07')", 1),
        ("SELECT YEAR(NULL)", None),
        ("SELECT YEAR('not a date')", None),
        ("SELECT DATE_ADD('2024-01-31', 1, 'MONTH')", "2024-02-29"),
        ("SELECT DATE_ADD('2024-01-31 10:00:00', 2, 'HOUR')", "2024-01-31 12:00:00"),
        ("SELECT DATE_ADD('2024-01-31', 2, 'HOUR')", "2024-01-31 02:00:00"),
        ("SELECT DATE_ADD('2024-01-31', '1:30', 'HOUR_MINUTE')", "2024-01-31 01:30:00"),
        ("SELECT DATE_SUB('2024-03-01', 1, 'DAY')", "2024-02-29"),
        ("SELECT DATE_SUB('2024-03-01', '1', 'YEAR')", "2023-03-01"),
        ("SELECT DATEDIFF('2024-03-01 01:00:00', '2024-02-28 23:00:00')", 2),
        ("SELECT TIMESTAMPDIFF('MONTH', '2024-01-31', '2024-02-29')", 0),
        ("SELECT TIMESTAMPDIFF('MONTH', '2024-01-31', '2024-03-31')", 2),
        ("SELECT TIMESTAMPDIFF('YEAR', '2000-06-15', '2025-06-14')", 24),
        ("SELECT TIMESTAMPDIFF('HOUR', '2024-01-01 00:00:00', '2024-01-01 05:59:59')", 5),
        ("SELECT TIMESTAMPDIFF('SECOND', '2024-01-01 00:00:10', '2024-01-01 00:00:00')", -10),
        ("SELECT MYSQL_TIMEDIFF('2024-01-02 01:00:00', '2024-01-01 00:30:00')", "24:30:00"),
        ("SELECT TIME_TO_SEC('01:30:05')", 5405),
        ("SELECT SEC_TO_TIME(5405)", "01:30:05"),
        ("SELECT LAST_DAY('2024-02-10')", "2024-02-29"),
        ("SELECT UNIX_TIMESTAMP('1970-01-02 00:00:00')", 86400),
        ("SELECT FROM_UNIXTIME(86400)", "1970-01-02 00:00:00"),
        (
            "SELECT DATE_FORMAT('2024-03-05 14:07:09', '%Y/%m/%d %H:%i:%s %W %M')",
            "2024/03/05 14:07:09 Tuesday March",
        ),
        ("SELECT STR_TO_DATE('05/03/2024', '%d/%m/%Y')", "2024-03-05"),
        ("SELECT STR_TO_DATE('08:30', '%H:%i')", "08:30:00"),
        ("SELECT TRUNCATE(3.14159, 2)", 3.14),
        ("SELECT TRUNCATE(-3.999, 0)", -3.0),
        ("SELECT TRUNCATE(1234, -2)", 1200),
        ("SELECT SUBSTRING_INDEX('a,b,c', ',', 2)", "a,b"),
        ("SELECT SUBSTRING_INDEX('a,b,c', ',', -1)", "c"),
        ("SELECT LPAD('7', 3, '0')", "007"),
        ("SELECT RPAD('abcdef', 3, '-')", "abc"),
        ("SELECT REVERSE('abc')", "cba"),
        ("SELECT LOCATE('B', 'abcb')", 2),
        ("SELECT 'Hello' REGEXP '^h'", 1),
        ("SELECT REGEXP_REPLACE('a1b22', '[0-9]+', '#')", "a#b#"),
        ("SELECT MYSQL_FORMAT(1234567.891, 2)", "1,234,567.89"),
        ("SELECT MYSQL_CONCAT('a', 7500.0, 'b', 1.5)", "a7500b1.5"),
        ("SELECT MYSQL_CONCAT('a', NULL)", None),
        ("SELECT MYSQL_TEMPORAL_NUMBER('2024-03-05 10:11:12')", 20240305101112),
        ("SELECT MYSQL_TEMPORAL_NUMBER('2024-03-05')", 20240305),
        ("SELECT MYSQL_TEMPORAL_NUMBER('01:30:00')", 13000),
        ("SELECT ST_X(ST_GEOMFROMTEXT('POINT(34.5 -118.25)'))", 34.5),
        ("SELECT ST_Y('POINT(34.5 -118.25)')", -118.25),
        ("SELECT concat('a', NULL, 1)", "a1"),  # SQLite's own concat semantics
        ("SELECT RAND() BETWEEN 0 AND 1", 1),
        ("SELECT RAND(7) = RAND(7)", 1),
    ],
)
def test_mysql_function(mysql_conn, sql, expected):
    value = one(mysql_conn, sql)
    if isinstance(expected, float):
        assert value == pytest.approx(expected)
    else:
        assert value == expected


def test_distance_sphere_uses_mysql_radius(mysql_conn):
    metres = one(mysql_conn, "SELECT ST_DISTANCE_SPHERE('POINT(0 0)', 'POINT(0 1)')")
    assert metres == pytest.approx(6370986 * 3.141592653589793 / 180)


def test_variance_and_stddev_are_population_like_mysql(mysql_conn):
    mysql_conn.execute("CREATE TABLE v (x)")
    mysql_conn.executemany("INSERT INTO v VALUES (?)", [(1,), (2,), (4,), (None,)])
    row = mysql_conn.execute(
        "SELECT STDDEV(x), STD(x), STDDEV_POP(x), STDDEV_SAMP(x), VARIANCE(x), VAR_POP(x), "
        "VAR_SAMP(x) FROM v"
    ).fetchone()
    assert row == pytest.approx(
        (1.247219, 1.247219, 1.247219, 1.527525, 1.555556, 1.555556, 2.333333), rel=1e-5
    )
    assert one(mysql_conn, "SELECT STDDEV(x) FROM v WHERE x > 100") is None


def test_stddev_works_as_a_window_function(mysql_conn):
    mysql_conn.execute("CREATE TABLE w (g, x)")
    mysql_conn.executemany("INSERT INTO w VALUES (?, ?)", [(1, 1), (1, 3), (2, 5), (2, 5)])
    rows = mysql_conn.execute(
        "SELECT g, STDDEV(x) OVER (PARTITION BY g), "
        "STDDEV_POP(x) OVER (ORDER BY rowid ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
        "FROM w ORDER BY rowid"
    ).fetchall()
    assert rows == [(1, 1.0, 0.0), (1, 1.0, 1.0), (2, 0.0, 1.0), (2, 0.0, 0.0)]


def test_install_is_idempotent_and_keeps_sqlite_builtins(mysql_conn):
    mf.install(mysql_conn)
    assert one(mysql_conn, "SELECT log(100)") == 2.0  # SQLite's base-10 log, not MySQL's ln
    assert one(mysql_conn, "SELECT round(2.5)") == 3.0
    assert one(mysql_conn, "SELECT format('%05d', 42)") == "00042"  # SQLite's printf format


# -- memoized functions: remembered results must never differ from computed ones --------------


def test_memoized_date_functions_agree_with_the_plain_functions_row_by_row(mysql_conn):
    mysql_conn.execute("CREATE TABLE d (a, b)")
    values = ["2024-03-01 01:00:00", "2024-02-28", 20240301, 20240301.0, "x", None, "2024-02-28"]
    pairs = [(a, b) for a in values for b in values]
    mysql_conn.executemany("INSERT INTO d VALUES (?, ?)", pairs * 2)  # every pair twice
    rows = mysql_conn.execute(
        "SELECT a, b, DATEDIFF(a, b), YEAR(a), DATE_ADD(a, 1, 'DAY'), DATE_FORMAT(a, '%Y %j') "
        "FROM d"
    ).fetchall()
    for a, b, diff, year, added, formatted in rows:
        assert diff == mf.datediff(a, b)
        assert year == (None if mf.parse_datetime(a) is None else mf.parse_datetime(a).year)
        assert added == mf.date_add(a, 1, "DAY")
        assert formatted == mf.date_format(a, "%Y %j")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # equal keys of different types stay apart: 1 and 1.0 are different formats
        (
            "SELECT strftime(1, 'now'), strftime(1.0, 'now'), strftime('1', 'now')",
            ("1", "1.0", "1"),
        ),
        # -0.0 and 0.0 are one memo key: SQLite itself does not tell them apart
        ("SELECT strftime(-0.0, 'now'), strftime(0.0, 'now')", ("0.0", "0.0")),
        ("SELECT julianday(-0.0), julianday(0.0), date(-0.0)", (0.0, 0.0, "-4713-11-24")),
        # the same call with and without 'now' in one query
        (
            "SELECT date('2024-01-05'), date('now'), date('2024-01-05')",
            ("2024-01-05", TODAY, "2024-01-05"),
        ),
    ],
)
def test_remembered_clock_overrides_keep_every_argument_distinct(mysql_conn, sql, expected):
    assert mysql_conn.execute(sql).fetchone() == expected


def test_rand_without_seed_varies_and_other_arities_keep_their_meaning(mysql_conn):
    values = {one(mysql_conn, "SELECT RAND()") for _ in range(20)}
    assert len(values) > 1 and all(0 <= v < 1 for v in values)
    assert one(mysql_conn, "SELECT RAND(3)") == one(mysql_conn, "SELECT rand(3)")
    assert 0 <= one(mysql_conn, "SELECT RAND(NULL)") < 1
    with pytest.raises(sqlite3.OperationalError):
        mysql_conn.execute("SELECT RAND(1, 2)").fetchone()


def _parsed_by_every_format(text: str) -> dt.datetime | None:
    """parse_datetime's loop without its character test: what strptime alone makes of it."""
    for fmt in mf._DATETIME_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-01 01:02:03.5",
        "2024-03-01t01:02",  # strptime reads 'T' in either case
        "2024-03-01   01:02:03",  # a format's space matches any run of spaces
        "2024/3/1",
        "20240301010203",
        "٢٠٢٤-٠٣-٠١",  # Arabic-Indic digits are digits to strptime
        "2024-03-01\u200301:02",  # so is a Unicode space a space
        "2024-03-01~",  # a perturbed copy's text
        "2024-03-01 01:02:03+00",
        "March 1, 2024",
        "x",
        "",
    ],
)
def test_the_character_test_turns_away_only_what_no_format_matches(text):
    assert mf.parse_datetime.__wrapped__(text) == _parsed_by_every_format(text)
