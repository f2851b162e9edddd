"""Gold health judged by execution through the engine."""

from __future__ import annotations

import sqlglot

from sqlbench_lmeval.logiccat import gold, health
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.offline import gold_result_lines


def test_fixture_bundle_health(fixture_bundle):
    by_id = {record.id: record for record in fixture_bundle.records}
    expected = {
        1: (gold.OK, ()),
        2: (gold.OK, ()),
        3: (gold.OK, (gold.NONDETERMINISTIC_ORDER,)),  # two sessions charged 45.75 kWh
        4: (gold.OK, (gold.CLOCK_DEPENDENT,)),
        5: (gold.OK, (gold.NONDETERMINISTIC_ORDER, gold.RANDOM)),  # ORDER BY RAND() LIMIT 1
        6: (gold.OK, ()),
        7: (gold.NON_SELECT, ()),
        8: (gold.EMPTY, ()),
        9: (gold.ALL_NULL, ()),
        10: (gold.ERROR, ()),  # no such column
        11: (gold.OK, (gold.MYSQL_SPECIFIC,)),  # Start_Date neither grouped nor determined
        12: (gold.OK, (gold.MYSQL_SPECIFIC,)),  # the scalar subquery returns two rows
    }
    assert {i: (r.gold_status, r.flags) for i, r in by_id.items()} == expected


def test_health_summary(fixture_bundle):
    assert fixture_bundle.manifest["health"] == {
        "status": {"all_null": 1, "empty": 1, "error": 1, "non_select": 1, "ok": 8},
        "flags": {
            "clock_dependent": 1,
            "mysql_specific": 2,
            "nondeterministic_order": 2,
            "random": 1,
        },
    }


def test_coercions_flag_only_when_they_change_the_answer(fixture_bundle):
    path = str(fixture_bundle.database_path("chargingnet"))
    types = gold.column_types(path)
    queries = [
        # station 3 opened at 2023-06-01 00:00:00: MySQL finds it, plain SQLite text does not
        "SELECT Name FROM Stations WHERE Opened_At = '2023-06-01'",
        # the same rewrite, but no row sits at midnight of the bound: same answer either way
        "SELECT Name FROM Stations WHERE Opened_At >= '2024-01-01'",
    ]
    prepared = [gold.prepare_gold("chargingnet", q, types) for q in queries]
    assert all(p.plain_sql for p in prepared)
    judged = health.judge_health(prepared, [path, path], progress=False, workers=0)
    assert [h.rows for h in judged] == [(("东站",),), (("North Hub",), ("south hub",))]
    assert [h.flags for h in judged] == [(gold.MYSQL_SPECIFIC,), ()]


def parse(sql):
    return sqlglot.parse_one(sql, read="sqlite")


def test_tie_break_variants_extend_every_limited_order_by():
    tree = parse("SELECT a, b FROM t WHERE a IN (SELECT c FROM u ORDER BY d LIMIT 2) "
                 "ORDER BY b DESC LIMIT 3")  # fmt: skip
    ascending, descending = health.tie_break_variants(tree, 2)
    # SQLite sorts NULLs first ascending and last descending: the two orders are exact reverses.
    assert "ORDER BY d, 1 ASC LIMIT 2" in ascending
    assert "ORDER BY b DESC, 1 ASC, 2 ASC LIMIT 3" in ascending
    assert "ORDER BY b DESC, 1 DESC, 2 DESC LIMIT 3" in descending
    assert health.tie_break_variants(parse("SELECT a FROM t ORDER BY a"), 1) is None


def test_any_value_variants_only_for_ungrouped_columns():
    low, high = health.any_value_variants(parse("SELECT g, x, SUM(y) FROM t GROUP BY g"))
    assert 'MIN(x) AS "x"' in low and 'MAX(x) AS "x"' in high
    assert health.any_value_variants(parse("SELECT g, SUM(y) FROM t GROUP BY g")) is None
    assert health.any_value_variants(parse("SELECT t.g, g + 1 FROM t GROUP BY g")) is None


def test_scalar_subqueries():
    tree = parse(
        "SELECT (SELECT MAX(a) FROM u), b FROM (SELECT b FROM v) AS s "
        "WHERE b IN (SELECT c FROM w) AND EXISTS (SELECT 1 FROM x) AND b = (SELECT d FROM y)"
    )
    found = [node.sql("sqlite") for node in health.scalar_subqueries(tree)]
    assert found == ["SELECT MAX(a) FROM u", "SELECT d FROM y"]


def test_result_status():
    assert health.result_status(False, ()) == gold.ERROR
    assert health.result_status(True, ()) == gold.EMPTY
    assert health.result_status(True, ((None, None),)) == gold.ALL_NULL
    assert health.result_status(True, ((None, 0),)) == gold.OK


def test_gold_results_lines(fixture_bundle):
    lines = {
        line["id"]: line
        for line in gold_result_lines(items_from_bundle(fixture_bundle), progress=False)
    }
    assert len(lines) == 12
    assert lines[1] == {
        "id": 1,
        "db_id": "chargingnet",
        "gold_sql": "SELECT Efficiency * 14 AS Scaled FROM Stations WHERE Name = 'north hub'",
        "gold_status": "ok",
        "flags": [],
        "status": "ok",
        "error": None,
        "columns": ["Scaled"],
        "rows": [[646.8000106811523]],
    }
    assert lines[7]["columns"] == [] and lines[7]["rows"] == []
    assert (lines[7]["gold_status"], lines[7]["status"]) == ("non_select", "not_run")
    assert lines[4]["rows"] == [[1]]  # 2025-12-01 is within 30 days of the frozen clock
