"""Gold health judged by execution through the engine."""

from __future__ import annotations

import sqlglot
from support.ties import scores_database

from sqlbench_lmeval.data.gold import gold_status
from sqlbench_lmeval.logiccat import gold, health
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.offline import gold_result_lines


def test_fixture_bundle_health(fixture_bundle):
    by_id = {record.id: record for record in fixture_bundle.records}
    expected = {
        1: (gold.OK, ()),
        2: (gold.OK, ()),
        # Two sessions charged 45.75 kWh and LIMIT 1 keeps one: a tie of the outermost query,
        # which tie-aware EX resolves, so no flag.
        3: (gold.OK, ()),
        4: (gold.OK, (gold.CLOCK_DEPENDENT,)),
        5: (gold.OK, (gold.RANDOM,)),  # ORDER BY RAND() LIMIT 1: outermost, RAND() says it
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


# Gold over the README's scores (ann 9, bob 8, cid 7, dan 7, eve 7, fay 5) and its expected
# flags: ``nondeterministic_order`` only where an inner ORDER BY ... LIMIT cuts through ties
# and the rows it picks reach the result.
TIE_GOLD = {
    # The outermost query's cut takes one of cid/dan/eve: tie-aware EX's, no flag.
    "SELECT name FROM scores ORDER BY score DESC LIMIT 3": (),
    # The subquery's cut takes one of them and the outer query shows which.
    "SELECT name FROM (SELECT name, score FROM scores ORDER BY score DESC LIMIT 3) AS top "
    "ORDER BY name": (gold.NONDETERMINISTIC_ORDER,),
    # The tied rows are equal in what the subquery returns: any pick gives the same result.
    "SELECT AVG(score) FROM (SELECT score FROM scores ORDER BY score DESC LIMIT 3) AS top": (),
    # The subquery's cut falls between 8 and 7: no tie.
    "SELECT name FROM (SELECT name FROM scores ORDER BY score DESC LIMIT 2) AS top": (),
    # The outer cut keeps ann and bob whichever 7 the subquery picked ...
    "SELECT name FROM (SELECT name, score FROM scores ORDER BY score DESC LIMIT 3) AS top "
    "ORDER BY score DESC LIMIT 2": (),
    # ... and here the pick reaches the result.
    "SELECT name FROM (SELECT name, score FROM scores ORDER BY score DESC LIMIT 3) AS top "
    "ORDER BY score DESC LIMIT 3": (gold.NONDETERMINISTIC_ORDER,),
    # RAND(): never probed; an inner ORDER BY ... LIMIT is flagged by definition, the
    # outermost one is not (``random`` says it).
    "SELECT name FROM (SELECT name FROM scores ORDER BY RAND() LIMIT 2) AS r": (
        gold.NONDETERMINISTIC_ORDER,
        gold.RANDOM,
    ),
    "SELECT name FROM scores ORDER BY RAND() LIMIT 1": (gold.RANDOM,),
}


def test_only_ties_inside_subqueries_are_flagged(tmp_path):
    path = scores_database(tmp_path / "scores.sqlite").path
    types = gold.column_types(path)
    prepared = [gold.prepare_gold("scores", sql, types) for sql in TIE_GOLD]
    judged = health.judge_health(prepared, [path] * len(prepared), progress=False, workers=0)
    assert all(h.status == gold.OK for h in judged), [h.error for h in judged]
    assert {sql: h.flags for sql, h in zip(TIE_GOLD, judged, strict=True)} == TIE_GOLD


def parse(sql):
    return sqlglot.parse_one(sql, read="sqlite")


def variants(sql: str, width: int):
    return health.tie_break_variants(sql, parse(sql), width)


def test_tie_break_variants_extend_only_inner_order_by_limit():
    sql = "SELECT a, b FROM t WHERE a IN (SELECT c FROM u ORDER BY d LIMIT 2) ORDER BY b DESC"
    (ascending, descending), outer_cut = variants(sql, 2)
    # SQLite sorts NULLs first ascending and last descending: the two orders are exact reverses.
    assert ascending == sql.replace("ORDER BY d LIMIT", "ORDER BY d, 1 ASC LIMIT")
    assert descending == sql.replace("ORDER BY d LIMIT", "ORDER BY d, 1 DESC LIMIT")
    assert outer_cut is False
    # The outermost query's own ties are tie-aware EX's: alone, they give no variants.
    assert variants("SELECT a FROM t ORDER BY a LIMIT 2", 1) is None
    assert variants("SELECT a FROM t ORDER BY a", 1) is None


def test_an_outer_cut_is_ordered_by_its_columns_alike_in_both_variants():
    sql = "SELECT x, y FROM (SELECT x, y FROM t ORDER BY y LIMIT 3) AS s ORDER BY y LIMIT 2"
    (ascending, descending), outer_cut = variants(sql, 2)
    assert outer_cut is True
    assert ascending.endswith("ORDER BY y, 1 ASC, 2 ASC LIMIT 2")
    assert descending.endswith("ORDER BY y, 1 ASC, 2 ASC LIMIT 2")
    assert "ORDER BY y, 1 DESC, 2 DESC LIMIT 3" in descending
    (ascending, _), _ = variants("SELECT x FROM (SELECT x FROM t ORDER BY x LIMIT 3) LIMIT 2", 1)
    assert ascending.endswith(") ORDER BY 1 ASC LIMIT 2")


def test_tie_break_variants_edit_the_text_and_keep_what_sqlglot_would_rewrite():
    # sqlglot's SQLite writer turns VAR_SAMP into VARIANCE and drops the comment; the variants
    # keep every character of gold's and only add the tie-break.
    sql = (
        "WITH top AS (SELECT p, q FROM t ORDER BY q DESC -- the five largest\nLIMIT 5) "
        "SELECT VAR_SAMP(q) FROM top"
    )
    (ascending, descending), _ = variants(sql, 1)
    assert ascending == sql.replace("q DESC -- the", "q DESC, 1 ASC, 2 ASC -- the")
    assert descending == sql.replace("q DESC -- the", "q DESC, 1 DESC, 2 DESC -- the")


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
    assert gold_status(False, ()) == gold.ERROR
    assert gold_status(True, ()) == gold.EMPTY
    assert gold_status(True, ((None, None),)) == gold.ALL_NULL
    assert gold_status(True, ((None, 0),)) == gold.OK


def test_gold_results_lines(fixture_bundle):
    lines = {
        line["id"]: line
        for line in gold_result_lines(items_from_bundle(fixture_bundle), progress=False)
    }
    assert len(lines) == 12
    assert lines[1] == {
        "id": 1,
        "db_id": "chargingnet",
        "question": "What is the rated capacity times the efficiency of North Hub, times 14?",
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


def test_gold_past_the_build_limit_is_judged_under_gold_own_limit(fixture_bundle):
    # 2,000,000 recursion steps: most of a second, far past 0.02 s on any machine; the
    # build-time verdict must not depend on how loaded the machine was.
    path = str(fixture_bundle.database_path("chargingnet"))
    slow = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) "
        "SELECT count(*) FROM c"
    )
    prepared = [gold.prepare_gold("chargingnet", slow, gold.column_types(path))]
    (judged,) = health.judge_health(prepared, [path], progress=False, workers=1, timeout_s=0.02)
    assert (judged.status, judged.rows) == (gold.OK, ((2000000,),))
