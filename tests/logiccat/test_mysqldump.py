"""MySQL dump -> SQLite through sqlglot's tree."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sqlbench_lmeval.logiccat import mysqldump
from sqlbench_lmeval.logiccat.mysql_functions import install
from sqlbench_lmeval.logiccat.transpile import tree_to_sqlite

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat"
DUMP = (FIXTURES / "shared_layout" / "MySQL" / "database" / "Charging_Net.sql").read_text("utf-8")


@pytest.fixture(scope="module")
def loaded():
    conn = sqlite3.connect(":memory:")
    install(conn)
    summary = mysqldump.load_dump(DUMP, conn, view_to_sqlite=tree_to_sqlite)
    yield conn, summary
    conn.close()


def ddl(conn, name):
    return conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]


def test_tables_views_and_rows_land(loaded):
    conn, summary = loaded
    assert summary.tables == ("stations", "charging_sessions")  # lower-cased, as MySQL kept them
    assert summary.views == ("active_stations",)
    assert summary.rows == 10
    assert conn.execute("SELECT COUNT(*) FROM Stations").fetchone() == (4,)


def test_ddl_keeps_comments_drops_mysql_only_clauses(loaded):
    conn, _ = loaded
    text = ddl(conn, "stations")
    assert text.startswith('CREATE TABLE "stations" ( -- 充电站\n')
    assert '"Capacity_Kw" REAL, -- 容量（千瓦）' in text
    assert '"Name" TEXT COLLATE NOCASE NOT NULL, -- 站点名称' in text
    assert "CHECK (\"Status\" IN ('active', 'inactive'))" in text  # ENUM's values kept
    for mysql_only in ("AUTO_INCREMENT", "utf8mb4", "ON UPDATE", "BTREE", "uk_name", "ENGINE"):
        assert mysql_only not in text
    sessions = ddl(conn, "charging_sessions")
    assert "-- 备注 （多行）" in sessions  # a newline inside a comment cannot end the comment
    assert 'FOREIGN KEY ("Station_ID") REFERENCES "stations" ("Station_ID")' in sessions
    assert 'CHECK ("Energy_Kwh" >= 0)' in sessions


def test_comments_survive_in_sqlite_master_and_ddl_is_valid(loaded):
    conn, _ = loaded
    copy = sqlite3.connect(":memory:")
    copy.execute(ddl(conn, "stations"))  # the stored text is itself valid SQL
    assert "-- 效率（0-1）" in ddl(copy, "stations")


def test_float_columns_hold_float32_values(loaded):
    conn, _ = loaded
    value, product = conn.execute(
        "SELECT Efficiency, Efficiency * 14 FROM Stations WHERE Station_ID = 1"
    ).fetchone()
    assert value == 46.20000076293945
    assert product == 646.8000106811523  # what MySQL answers for a FLOAT 46.2 times 14


def test_decimal_columns_divide_as_real_numbers(loaded):
    conn, _ = loaded
    assert conn.execute("SELECT Capacity_Kw / 3 FROM Stations WHERE Station_ID = 2").fetchone() == (
        pytest.approx(26.6666667),
    )
    assert conn.execute(
        "SELECT typeof(Capacity_Kw) FROM Stations WHERE Station_ID = 2"
    ).fetchone() == ("real",)


def test_text_compares_case_insensitively(loaded):
    conn, _ = loaded
    assert conn.execute("SELECT Station_ID FROM Stations WHERE Name = 'NORTH hub'").fetchall() == [
        (1,)
    ]


def test_values_keep_escapes_nulls_temporal_text_and_points(loaded):
    conn, _ = loaded
    rows = dict(conn.execute("SELECT Station_ID, Name FROM Stations"))
    assert rows[4] == "West 'Yard'"
    assert conn.execute("SELECT Note FROM charging_sessions WHERE Session_ID = 1").fetchone() == (
        "first\nline",
    )
    assert conn.execute(
        "SELECT Start_Date, Duration, Model_Year, Cost FROM charging_sessions WHERE Session_ID = 5"
    ).fetchone() == ("2024-05-21", "00:20:00", 2019, -1.5)
    assert conn.execute("SELECT Location FROM Stations WHERE Station_ID = 1").fetchone() == (
        "POINT(34.0522 -118.244)",
    )


def test_view_is_transpiled_and_runs_with_the_mysql_functions(loaded):
    conn, _ = loaded
    assert conn.execute("SELECT * FROM active_stations ORDER BY Station_ID").fetchall() == [
        (1, "North Hub", 2024),
        (3, "东站", 2023),
        (4, "West 'Yard'", None),
    ]


def test_float32_rounding():
    assert mysqldump.float32(46.2) == 46.20000076293945
    assert mysqldump.float32(0.5) == 0.5


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("12.5", "real", 12.5),
        (3, "real", 3.0),
        (2.5, "integer", 3),
        (-2.5, "integer", -3),
        (7, "text", "7"),
        ("abc", "integer", "abc"),
        (None, "float32", None),
    ],
)
def test_convert_value(value, kind, expected):
    assert mysqldump.convert_value(value, kind) == expected


def test_unsupported_statements_are_reported():
    conn = sqlite3.connect(":memory:")
    with pytest.raises(mysqldump.DumpError, match="before its CREATE TABLE"):
        mysqldump.load_dump("INSERT INTO `t` VALUES (1);", conn)
    with pytest.raises(mysqldump.DumpError, match="2 values for 1 columns"):
        mysqldump.load_dump("CREATE TABLE `t` (`a` int); INSERT INTO `t` VALUES (1, 2);", conn)


def test_later_create_replaces_an_earlier_table():
    conn = sqlite3.connect(":memory:")
    summary = mysqldump.load_dump(
        "DROP TABLE IF EXISTS `T`; CREATE TABLE `T` (`a` int);"
        "DROP TABLE IF EXISTS `T`; CREATE TABLE `T` (`b` varchar(5));"
        "INSERT INTO `T` VALUES ('x');",
        conn,
    )
    assert summary.tables == ("t",)
    assert conn.execute("SELECT b FROM t").fetchall() == [("x",)]


def test_rows_are_batched_in_dump_order_and_land_before_later_ddl():
    # Rows of consecutive INSERTs are collected and written together; an INSERT into another
    # table, or any other statement, writes what was collected first. So a gets 1, 2, 3, 4 in
    # dump order (rowids 1-4), and b's row is written before b is dropped (were it still
    # pending, writing it after the DROP would fail with "no such table"); 5 rows in all.
    conn = sqlite3.connect(":memory:")
    summary = mysqldump.load_dump(
        "CREATE TABLE `A` (`x` int);"
        "INSERT INTO `A` VALUES (1); INSERT INTO `A` VALUES (2);"
        "CREATE VIEW `v` AS SELECT COUNT(*) AS n FROM `A`;"
        "CREATE TABLE `B` (`y` int); INSERT INTO `B` VALUES (9);"
        "INSERT INTO `A` (`x`) VALUES (3), (4);"
        "DROP TABLE IF EXISTS `B`;",
        conn,
    )
    assert summary.rows == 5
    assert summary.tables == ("a",)
    assert conn.execute("SELECT rowid, x FROM a").fetchall() == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert conn.execute("SELECT n FROM v").fetchall() == [(4,)]
