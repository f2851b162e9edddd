"""The tie probe as a specification: what gold's outermost ORDER BY and LIMIT leave open, and
the query that shows it (pure sqlglot; ``test_ties_engines`` runs the probes)."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.scoring.tie_probe import (
    ALIAS_OR_COLUMN,
    KEY_NOT_IN_OUTPUT,
    LIMIT_NOT_LITERAL,
    NOT_A_QUERY,
    PROBE_ROWS,
    STAR_WITH_KEY,
    UNPARSED,
    ExtraKey,
    OutputKey,
    plan_ties,
)


def body(plan) -> str:
    """The probe without the row-cap LIMIT every probe ends with."""
    head, _, cap = plan.probe_sql.rpartition("\nLIMIT ")
    assert cap == str(PROBE_ROWS) and plan.probe_limit == PROBE_ROWS
    return head


def test_no_order_and_no_cut_needs_nothing():
    plan = plan_ties("SELECT a FROM t WHERE b > 1", "sqlite")
    assert plan.handled and not plan.has_order_or_cut and plan.probe_sql is None


@pytest.mark.parametrize(
    ("sql", "key"),
    [
        ("SELECT a, b FROM t ORDER BY 2", OutputKey(1)),  # a position
        ("SELECT a, b AS total FROM t ORDER BY total", OutputKey(1)),  # an output alias
        ("SELECT a, b FROM t ORDER BY b DESC", OutputKey(1)),  # an output column's name
        ("SELECT a, COUNT(*) FROM t GROUP BY a ORDER BY COUNT(*)", OutputKey(1)),  # its text
    ],
)
def test_keys_in_gold_output_need_no_probe_without_a_cut(sql, key):
    plan = plan_ties(sql, "sqlite")
    assert plan.handled and plan.ordered and plan.keys == (key,)
    assert plan.probe_sql is None  # gold's own rows hold the key


def test_a_cut_is_probed_without_limit_and_offset():
    plan = plan_ties("SELECT a, b FROM t ORDER BY b DESC LIMIT 3 OFFSET 2", "sqlite")
    assert (plan.offset, plan.limit) == (2, 3)
    assert body(plan) == "SELECT a, b FROM t ORDER BY b DESC"


def test_mysql_limit_offset_comma_form():
    plan = plan_ties("SELECT a FROM t ORDER BY a LIMIT 5, 10", "mysql")
    assert (plan.offset, plan.limit) == (5, 10)
    assert body(plan) == "SELECT a FROM t ORDER BY a"


def test_a_key_outside_the_output_becomes_an_extra_column():
    plan = plan_ties("SELECT name FROM t ORDER BY price * qty DESC LIMIT 1", "sqlite")
    assert plan.keys == (ExtraKey(0),) and plan.extra_columns == 1
    assert body(plan) == "SELECT name, price * qty AS __tie_key_0 FROM t ORDER BY price * qty DESC"


def test_gold_text_is_kept_character_for_character():
    # sqlglot's writer would turn this SQLite shim call into DATE(d, '1 YEAR'): the probe only
    # cuts the LIMIT off the text.
    sql = "SELECT id, DATE_ADD(d, '1', 'YEAR') AS e  -- note\nFROM t ORDER BY e DESC LIMIT 10;"
    plan = plan_ties(sql, "sqlite")
    assert body(plan) == "SELECT id, DATE_ADD(d, '1', 'YEAR') AS e  -- note\nFROM t ORDER BY e DESC"


def test_key_text_is_copied_without_direction_nulls_or_collation():
    sql = "SELECT a FROM t ORDER BY LOWER(b) COLLATE NOCASE DESC NULLS LAST, c ASC LIMIT 1"
    plan = plan_ties(sql, "sqlite")
    assert plan.keys == (ExtraKey(0), ExtraKey(1))
    assert body(plan) == (
        "SELECT a, LOWER(b) AS __tie_key_0, c AS __tie_key_1 FROM t "
        "ORDER BY LOWER(b) COLLATE NOCASE DESC NULLS LAST, c ASC"
    )


def test_a_key_over_output_aliases_is_computed_over_golds_result():
    # ``ABS(cov)`` in gold's select list could not read the alias cov on SQLite or MySQL;
    # MySQL's ORDER BY reads the alias before any table column of its name: the wrapper alone.
    sql = "SELECT x AS cov, y FROM t ORDER BY ABS(cov) DESC LIMIT 3"
    plan = plan_ties(sql, "mysql")
    assert plan.keys == (ExtraKey(0),) and plan.fallback_sql is None
    wrapper = (
        "SELECT __tie_probe.*, ABS(cov) AS __tie_key_0 FROM (SELECT x AS cov, y FROM t "
        "ORDER BY ABS(cov) DESC\n) AS __tie_probe ORDER BY ABS(cov) DESC"
    )
    assert body(plan) == wrapper
    # SQLite reads a table column cov there if t has one: the copy first (it reads what
    # ORDER BY reads), the wrapper when the copy fails (t has no cov: the alias's name).
    plan = plan_ties(sql, "sqlite")
    assert body(plan) == (
        "SELECT x AS cov, y, ABS(cov) AS __tie_key_0 FROM t ORDER BY ABS(cov) DESC"
    )
    assert plan.fallback_sql == wrapper + "\nLIMIT 10000"


def test_distinct_ordered_by_a_function_of_its_output():
    plan = plan_ties("SELECT DISTINCT a FROM t ORDER BY ABS(a) LIMIT 3", "sqlite")
    assert body(plan) == (
        "SELECT __tie_probe.*, ABS(a) AS __tie_key_0 FROM (SELECT DISTINCT a FROM t "
        "ORDER BY ABS(a)\n) AS __tie_probe ORDER BY ABS(a)"
    )


def test_limit_inside_a_cte_is_left_alone():
    sql = "WITH c AS (SELECT a FROM t ORDER BY a LIMIT 2) SELECT a FROM c ORDER BY a DESC LIMIT 1"
    plan = plan_ties(sql, "sqlite")
    assert plan.inner_cuts and plan.limit == 1
    assert (
        body(plan)
        == "WITH c AS (SELECT a FROM t ORDER BY a LIMIT 2) SELECT a FROM c ORDER BY a DESC"
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t ORDER BY 'x' LIMIT 10",
        "SELECT a FROM t ORDER BY NULL LIMIT 10",
        "SELECT a FROM t ORDER BY 1.5 LIMIT 10",
        "SELECT a FROM t LIMIT 10",  # no ORDER BY: any 10 rows
    ],
)
def test_constant_or_no_order_every_row_ties(sql):
    plan = plan_ties(sql, "mysql")
    assert plan.handled and not plan.ordered and plan.limit == 10 and plan.probe_sql


def test_constant_keys_are_dropped_beside_real_ones():
    plan = plan_ties("SELECT a, b FROM t ORDER BY 'x', b LIMIT 1", "sqlite")
    assert plan.keys == (OutputKey(1),)


def test_set_operation_ordered_by_an_output_column():
    plan = plan_ties("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 LIMIT 5", "sqlite")
    assert plan.keys == (OutputKey(0),) and plan.limit == 5
    assert body(plan) == "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT DISTINCT a FROM t ORDER BY b LIMIT 5",
        "SELECT a FROM t UNION SELECT b FROM u ORDER BY LENGTH(c) LIMIT 5",
    ],
)
def test_a_key_that_cannot_be_computed_is_not_handled(sql):
    plan = plan_ties(sql, "sqlite")
    assert not plan.handled and plan.reason == KEY_NOT_IN_OUTPUT


def test_a_key_reading_an_alias_and_a_table_column():
    sql = "SELECT x AS cov FROM t ORDER BY ABS(cov) * z LIMIT 5"
    # MySQL reads the alias cov: a wrapper cannot compute z over the output.
    assert plan_ties(sql, "mysql").reason == KEY_NOT_IN_OUTPUT
    # SQLite reads a table column cov if there is one: the copy, nothing to fall back on.
    plan = plan_ties(sql, "sqlite")
    assert plan.handled and plan.fallback_sql is None
    assert body(plan) == "SELECT x AS cov, ABS(cov) * z AS __tie_key_0 FROM t ORDER BY ABS(cov) * z"
    # Under DISTINCT no copy is possible and the wrapper may read the wrong one.
    distinct = plan_ties("SELECT DISTINCT x AS c FROM t ORDER BY -c LIMIT 2", "sqlite")
    assert distinct.reason == ALIAS_OR_COLUMN


def test_mysql_star_gets_qualified_for_extra_columns():
    plan = plan_ties("SELECT * FROM t AS x ORDER BY b LIMIT 2", "mysql")
    assert body(plan) == "SELECT x.*, b AS __tie_key_0 FROM t AS x ORDER BY b"
    joined = plan_ties("SELECT * FROM t JOIN u ON t.a = u.a ORDER BY b LIMIT 2", "mysql")
    assert not joined.handled and joined.reason == STAR_WITH_KEY


def test_parenthesised_query_with_outer_limit():
    plan = plan_ties("(SELECT a FROM t ORDER BY a) LIMIT 3", "sqlite")
    assert plan.limit == 3 and plan.keys == (OutputKey(0),)
    assert "LIMIT" not in body(plan)


def test_duckdb_order_by_all():
    plan = plan_ties("SELECT a, b FROM t ORDER BY ALL LIMIT 3", "duckdb")
    assert plan.keys == (OutputKey(0), OutputKey(1))


def test_ties_inside_subqueries_are_not_read():
    plan = plan_ties("SELECT a FROM t WHERE a = (SELECT a FROM u ORDER BY b LIMIT 1)", "sqlite")
    assert plan.handled and not plan.has_order_or_cut and plan.inner_cuts


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT a FROM t ORDER BY a LIMIT (SELECT 1)", LIMIT_NOT_LITERAL),
        ("SELECT FROM WHERE", UNPARSED),
        ("UPDATE t SET a = 1", NOT_A_QUERY),
    ],
)
def test_not_handled(sql, reason):
    plan = plan_ties(sql, "sqlite")
    assert not plan.handled and plan.reason == reason


def test_a_comment_before_the_cut_cannot_swallow_the_probes_limit():
    plan = plan_ties("SELECT a FROM t ORDER BY a -- biggest first\nLIMIT 3", "sqlite")
    assert plan.probe_sql == "SELECT a FROM t ORDER BY a -- biggest first\nLIMIT 10000"
    wrapped = plan_ties("SELECT x AS c FROM t ORDER BY -c -- note\nLIMIT 3", "sqlite")
    assert wrapped.fallback_sql == (
        "SELECT __tie_probe.*, -c AS __tie_key_0 FROM (SELECT x AS c FROM t ORDER BY -c -- note\n"
        "\n) AS __tie_probe ORDER BY -c\nLIMIT 10000"
    )
