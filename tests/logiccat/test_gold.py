"""Preparing gold queries: transpiled, passed through, or judged without running."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.logiccat import gold


@pytest.mark.parametrize(
    ("sql", "status", "note"),
    [
        ("", gold.NON_SELECT, "empty gold"),
        ("UPDATE t SET a = 1", gold.NON_SELECT, "not a query: UPDATE"),
        ("SET @x = 1; SELECT @x", gold.NON_SELECT, "not a query"),
        ("SELECT 1; SELECT 2;", gold.ERROR, "2 statements"),
        ("SELECT (1", gold.ERROR, "not valid MySQL"),
    ],
)
def test_gold_that_is_not_run(sql, status, note):
    prepared = gold.prepare_gold("shop", sql)
    assert not prepared.runnable
    assert prepared.status == status
    assert note in prepared.note


def test_mysql_gold_is_transpiled():
    prepared = gold.prepare_gold("shop", "SELECT a / b FROM t WHERE YEAR(d) = 2024;")
    assert prepared.runnable and prepared.status is None
    assert prepared.sql == "SELECT CAST(a AS REAL) / b FROM t WHERE YEAR(d) = 2024"
    assert prepared.flags == frozenset()


def test_spider_derived_gold_is_used_as_written():
    text = 'SELECT Name FROM singer WHERE Age > strftime("%Y", "now") - 2000'
    prepared = gold.prepare_gold("concert", text + ";")
    assert prepared.sql == text
    assert prepared.flags == {gold.CLOCK_DEPENDENT}


@pytest.mark.parametrize(
    ("sql", "flags"),
    [
        ("SELECT * FROM t WHERE d > NOW()", {gold.CLOCK_DEPENDENT}),
        ("SELECT * FROM t WHERE d > CURDATE() - INTERVAL 1 DAY", {gold.CLOCK_DEPENDENT}),
        ("SELECT CURRENT_TIMESTAMP", {gold.CLOCK_DEPENDENT}),
        ("SELECT UNIX_TIMESTAMP()", {gold.CLOCK_DEPENDENT}),
        ("SELECT UNIX_TIMESTAMP(d) FROM t", set()),
        ("SELECT * FROM t ORDER BY RAND() LIMIT 1", {gold.RANDOM}),
        ("SELECT DATE('now')", {gold.CLOCK_DEPENDENT}),
    ],
)
def test_static_flags(sql, flags):
    assert gold.prepare_gold("shop", sql).flags == flags


def test_coercions_are_made_explicit_and_the_plain_form_kept():
    types = {"code": frozenset({"TEXT"})}
    prepared = gold.prepare_gold("shop", "SELECT * FROM shop.t WHERE code = 5", types)
    assert prepared.sql == "SELECT * FROM t WHERE CAST(code AS REAL) = 5"
    assert prepared.plain_sql == "SELECT * FROM t WHERE code = 5"
    assert prepared.flags == frozenset()  # health decides, by running both
    assert "text column code" in prepared.note
    assert gold.prepare_gold("shop", "SELECT * FROM t WHERE code = 5").plain_sql is None


def test_reading_another_database_is_mysql_specific():
    prepared = gold.prepare_gold("shop", "SELECT * FROM warehouse.t")
    assert prepared.flags == {gold.MYSQL_SPECIFIC}
    assert prepared.note == "reads database warehouse"


def test_column_types(fixture_bundle):
    types = gold.column_types(str(fixture_bundle.database_path("chargingnet")))
    assert types["name"] == {"TEXT"}
    assert types["station_id"] == {"INTEGER"}
    assert types["opened_at"] == {"DATETIME"}
