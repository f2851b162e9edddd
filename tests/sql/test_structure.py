"""SQL structure features and structural similarity (structure.py); the complexity counts are
in test_complexity_counts.py.

Feature cases and similarity pairs use the TPC-DS schema from the installed extension, so
aliases resolve to real table names as they do when scoring.
"""

from collections import Counter
from fractions import Fraction

import pytest

from sqlbench_lmeval.sql.structure import (
    FEATURES,
    SIMILARITY_METRICS,
    count_similarity,
    jaccard,
    similarity,
    structure_of,
)
from sqlbench_lmeval.tpcds.data import gold_queries, schema_mapping


@pytest.fixture(scope="module")
def schema():
    return schema_mapping()


def features(sql, schema, dialect="duckdb"):
    structure = structure_of(sql, dialect, schema)
    assert structure is not None, sql
    return {name: dict(bag) for name, bag in structure.features.items()}


# ---------------------------------------------------------------- similarity primitives


def test_multiset_jaccard_is_min_counts_over_max_counts():
    assert jaccard(Counter(a=2, b=1), Counter(a=1, c=1)) == pytest.approx(1 / 4)
    assert jaccard(Counter(a=3), Counter(a=3)) == 1.0
    assert jaccard(Counter(), Counter()) == 1.0
    assert jaccard(Counter(a=1), Counter()) == 0.0


def test_count_similarity_is_min_over_max_of_bag_sizes():
    assert count_similarity(Counter(a=2, b=1), Counter(c=1)) == pytest.approx(1 / 3)
    assert count_similarity(Counter(), Counter()) == 1.0
    assert count_similarity(Counter(a=1), Counter()) == 0.0


# ---------------------------------------------------------------- feature extraction cases

FEATURE_CASES = {
    "compound predicate counts as its basic predicates": (
        "SELECT i_item_id FROM item WHERE (i_category = 'Books' OR i_category = 'Home') "
        "AND NOT (i_current_price > 5 AND i_size IS NULL) AND i_color NOT IN ('red', 'blue')",
        {
            "where_predicates": {
                "item.i_category = 'Books'": 1,
                "item.i_category = 'Home'": 1,
                "item.i_current_price > 5": 1,
                "item.i_size IS NULL": 1,
                "NOT item.i_color IN ('blue', 'red')": 1,
            },
            "constants": {"Books": 1, "Home": 1, "5": 1, "red": 1, "blue": 1},
        },
    ),
    "nested subqueries keep their own predicates": (
        "SELECT i_item_id FROM item WHERE i_item_sk IN (SELECT ss_item_sk FROM store_sales "
        "WHERE ss_quantity > (SELECT AVG(ss_quantity) FROM store_sales))",
        {
            "tables": {"item": 1, "store_sales": 2},
            "where_predicates": {
                "item.i_item_sk IN (subquery)": 1,
                "store_sales.ss_quantity > (subquery)": 1,
            },
            "aggregation": {"AVG(store_sales.ss_quantity)": 1},
        },
    ),
    # t.ss_item_sk passes store_sales.ss_item_sk through: it is that column; p is SUM(...).
    "a CTE is not a table; its columns are their definitions": (
        "WITH t AS (SELECT ss_item_sk, SUM(ss_net_profit) AS p FROM store_sales "
        "GROUP BY ss_item_sk) SELECT i_item_id, p FROM t, item WHERE t.ss_item_sk = i_item_sk",
        {
            "tables": {"store_sales": 1, "item": 1},
            "joins": {"item.i_item_sk = store_sales.ss_item_sk": 1},
            "columns": {
                # CTE select list and GROUP BY, then the outer join condition
                "store_sales.ss_item_sk": 3,
                "store_sales.ss_net_profit": 1,
                "item.i_item_id": 1,
                "item.i_item_sk": 1,
                "SUM(store_sales.ss_net_profit)": 1,  # the outer reference to p
            },
            "aggregation": {
                "SUM(store_sales.ss_net_profit)": 1,
                "GROUP BY store_sales.ss_item_sk": 1,
            },
        },
    ),
    "window functions are functions, window aggregates aggregates": (
        "SELECT i_category, RANK() OVER (PARTITION BY i_category ORDER BY SUM(ss_net_profit) "
        "DESC) AS r FROM store_sales, item WHERE ss_item_sk = i_item_sk GROUP BY i_category",
        {
            "functions": {"RANK": 1},
            "aggregation": {"SUM(store_sales.ss_net_profit)": 1, "GROUP BY item.i_category": 1},
            "joins": {"item.i_item_sk = store_sales.ss_item_sk": 1},
        },
    ),
    # 2000-08-23 + 30 days: 8 days to the end of August, 22 into September.
    "a date plus an INTERVAL is the date it computes, date casts are plain strings": (
        "SELECT COUNT(*) FROM date_dim "
        "WHERE d_date BETWEEN DATE '2000-08-23' AND DATE '2000-08-23' + INTERVAL 30 DAY",
        {
            "constants": {"2000-08-23": 1, "2000-09-22": 1},
            "where_predicates": {"date_dim.d_date BETWEEN '2000-08-23' AND '2000-09-22'": 1},
            "functions": {},
        },
    ),
    "ROLLUP keys are grouping keys": (
        "SELECT i_category, i_class, SUM(ss_net_paid) FROM store_sales, item "
        "WHERE ss_item_sk = i_item_sk GROUP BY ROLLUP (i_category, i_class)",
        {
            "aggregation": {
                "SUM(store_sales.ss_net_paid)": 1,
                "ROLLUP item.i_category": 1,
                "ROLLUP item.i_class": 1,
            }
        },
    ),
    "a self-join condition is a join, not a predicate": (
        "SELECT d1.d_date FROM date_dim d1, date_dim d2 "
        "WHERE d1.d_week_seq = d2.d_week_seq AND d1.d_year = 2001+1",
        {
            "tables": {"date_dim": 2},
            "joins": {"date_dim.d_week_seq = date_dim.d_week_seq": 1},
            "where_predicates": {"date_dim.d_year = 2002": 1},
            "constants": {"2002": 1},
        },
    ),
    "outer joins carry their side": (
        "SELECT 1 FROM store_sales LEFT JOIN store_returns ON ss_ticket_number = "
        "sr_ticket_number AND ss_item_sk = sr_item_sk AND sr_return_quantity > 1",
        {
            "joins": {
                "LEFT store_returns.sr_ticket_number = store_sales.ss_ticket_number": 1,
                "LEFT store_returns.sr_item_sk = store_sales.ss_item_sk": 1,
            },
            "where_predicates": {"store_returns.sr_return_quantity > 1": 1},
        },
    ),
    "USING is its equality": (
        "WITH t AS (SELECT ss_item_sk AS i_item_sk FROM store_sales) "
        "SELECT i_brand FROM t JOIN item USING (i_item_sk)",
        # t.i_item_sk is store_sales.ss_item_sk renamed: the join is with that column
        {
            "joins": {"item.i_item_sk = store_sales.ss_item_sk": 1},
            "tables": {"store_sales": 1, "item": 1},
        },
    ),
    "CAST is syntax; type parameters and ORDER BY positions are no constants": (
        "SELECT CAST(ss_net_paid AS DECIMAL(7, 2)), COALESCE(ss_coupon_amt, 0) FROM store_sales "
        "ORDER BY 1 LIMIT 100",
        {"functions": {"COALESCE": 1}, "constants": {"0": 1, "100": 1}},
    ),
    "identifiers are case-insensitive and aliases resolve": (
        'SELECT SS.SS_QUANTITY FROM "Store_Sales" AS ss WHERE ss.ss_quantity >= 1.50',
        {
            "tables": {"store_sales": 1},
            "columns": {"store_sales.ss_quantity": 2},
            "where_predicates": {"store_sales.ss_quantity >= 1.5": 1},
        },
    ),
}


@pytest.mark.parametrize("case", list(FEATURE_CASES), ids=list(FEATURE_CASES))
def test_feature_extraction(case, schema):
    sql, expected = FEATURE_CASES[case]
    found = features(sql, schema)
    for feature, bag in expected.items():
        assert found[feature] == bag, feature


def test_equivalent_spellings_give_the_same_features(schema):
    spellings = [
        "SELECT s_state FROM store, store_sales WHERE s_store_sk = ss_store_sk AND 5 < ss_quantity",
        "SELECT s.s_state FROM store_sales AS x JOIN store s ON x.ss_store_sk = s.s_store_sk "
        "WHERE x.ss_quantity > 5",
        "select S_STATE from STORE_SALES inner join STORE on SS_STORE_SK = S_STORE_SK "
        "where SS_QUANTITY > 2 + 3",
    ]
    first, *others = [features(sql, schema) for sql in spellings]
    for other in others:
        assert other == first


# ---------------------------------------------------------------- hand-computed pairs

PAIR_A = (
    # gold
    "SELECT s_state, COUNT(*) FROM store, store_sales WHERE s_store_sk = ss_store_sk "
    "AND ss_quantity > 10 GROUP BY s_state",
    # prediction: explicit join, aliases, another threshold, one more predicate
    "SELECT s.s_state, COUNT(*) FROM store_sales ss JOIN store s ON ss.ss_store_sk = s.s_store_sk "
    "WHERE ss.ss_quantity > 20 AND s.s_state = 'TN' GROUP BY s.s_state",
)
# tables {store, store_sales} both: 1. columns gold {s_state: 2, s_store_sk, ss_store_sk,
# ss_quantity} (5), pred the same with s_state 3 (6): 5/6. predicates {ss_quantity > 10} vs
# {ss_quantity > 20, s_state = 'TN'}: 0/3. constants {10} vs {20, TN}: 0/3. functions none: 1.
# aggregation {COUNT(*), GROUP BY s_state} both: 1. joins {s_store_sk = ss_store_sk} both: 1.
PAIR_A_EXPECTED = {
    "sim_tables": Fraction(1),
    "sim_columns": Fraction(5, 6),
    "sim_where_predicates": Fraction(0),
    "sim_constants": Fraction(0),
    "sim_functions": Fraction(1),
    "sim_aggregation": Fraction(1),
    "sim_joins": Fraction(1),
    "structural_similarity": Fraction(29, 42),  # (4 + 5/6) / 7
    # sizes: tables 2/2, columns 5/6, predicates 1/2, constants 1/2, functions 0/0, aggregation
    # 2/2, joins 1/1
    "structural_count_similarity": Fraction(35, 42),  # (5 + 5/6) / 7
}

PAIR_B = (
    "SELECT SUBSTRING(ca_zip, 1, 5), SUM(ws_sales_price), SUM(ws_sales_price) "
    "FROM web_sales, customer_address WHERE ws_bill_addr_sk = ca_address_sk "
    "AND ca_gmt_offset = -5 LIMIT 100",
    "SELECT UPPER(SUBSTRING(ca_zip, 1, 5)), SUM(ws_sales_price), AVG(ws_sales_price) "
    "FROM web_sales LEFT JOIN customer_address ON ws_bill_addr_sk = ca_address_sk "
    "WHERE ca_gmt_offset = -5.0 LIMIT 10",
)
# tables, columns (6 each) and predicates {ca_gmt_offset = -5} equal: 1. constants {1, 5, -5, 100}
# vs {1, 5, -5, 10}: 3/5. functions {SUBSTRING} vs {UPPER, SUBSTRING}: 1/2. aggregation
# {SUM(x): 2} vs {SUM(x), AVG(x)}: 1/3. joins inner vs LEFT: 0/2.
PAIR_B_EXPECTED = {
    "sim_tables": Fraction(1),
    "sim_columns": Fraction(1),
    "sim_where_predicates": Fraction(1),
    "sim_constants": Fraction(3, 5),
    "sim_functions": Fraction(1, 2),
    "sim_aggregation": Fraction(1, 3),
    "sim_joins": Fraction(0),
    "structural_similarity": Fraction(19, 30),  # (3 + 3/5 + 1/2 + 1/3) / 7
    "structural_count_similarity": Fraction(13, 14),  # only functions differ: 1/2
}


@pytest.mark.parametrize(
    ("pair", "expected"), [(PAIR_A, PAIR_A_EXPECTED), (PAIR_B, PAIR_B_EXPECTED)], ids=["A", "B"]
)
def test_hand_computed_similarities(pair, expected, schema):
    gold, prediction = (structure_of(sql, "duckdb", schema) for sql in pair)
    found = similarity(prediction, gold)
    assert set(found) == set(SIMILARITY_METRICS)
    for name, value in expected.items():
        assert found[name] == pytest.approx(float(value)), name


# ---------------------------------------------------------------- unparseable predictions

UNPARSEABLE = [
    None,
    "",
    "   ",
    "SELEC 1 FROMM",
    "SELEC oops",  # sqlglot reads an expression ``SELEC AS oops``: not a query
    "SELECT 1; SELECT 2",
    "SELECT (((1",
    "'unterminated",
    "DELETE FROM store_sales",  # a statement, not a query
]


@pytest.mark.parametrize("sql", UNPARSEABLE)
def test_unparseable_predictions_score_zero_without_raising(sql, schema):
    assert structure_of(sql, "duckdb", schema) is None
    gold = structure_of("SELECT 1 FROM store", "duckdb", schema)
    assert similarity(None, gold) == dict.fromkeys(SIMILARITY_METRICS, 0.0)


def test_unknown_names_and_odd_statements_still_give_features(schema):
    for sql in [
        "SELECT ss_foo FROM store_sales WHERE ss_bar = 1",
        "SELECT x.a FROM nosuch x JOIN store_sales y ON x.k = y.ss_item_sk",
        "SELECT a FROM (SELECT 1 AS a) WHERE a IN (SELECT b FROM c)",
        "FROM store_sales",  # DuckDB's FROM-first query
    ]:
        structure = structure_of(sql, "duckdb", schema)
        assert structure is not None, sql
        assert set(structure.features) == set(FEATURES)


def test_gold_against_itself_is_one_for_all_99(schema):
    for number, sql in gold_queries().items():
        structure = structure_of(sql, "duckdb", schema)
        assert structure is not None and structure.qualified, number
        assert set(similarity(structure, structure).values()) == {1.0}, number


# ---------------------------------------------------------------- normalisation rules
# One or more cases per row of the rule table of docs/structure.md#normalisation: the two
# spellings (each with the dialect it is read in) must give the same seven bags.

SAME_STRUCTURE = {
    "tokens are rendered in one dialect whatever the dialect read": (
        ("SELECT SUBSTRING(i_brand, 1, 2) FROM item", "duckdb"),
        ("SELECT SUBSTRING(i_brand FROM 1 FOR 2) FROM item", "postgres"),
    ),
    "a base-table column is table.column whatever the alias": (
        ("SELECT ss.ss_quantity FROM store_sales ss WHERE ss.ss_quantity > 5", "duckdb"),
        ("SELECT ss_quantity FROM store_sales WHERE store_sales.ss_quantity > 5", "duckdb"),
    ),
    "a CTE column that passes a column through is that column": (
        (
            "WITH t AS (SELECT ss_item_sk FROM store_sales) "
            "SELECT i_brand FROM t, item WHERE t.ss_item_sk = i_item_sk",
            "duckdb",
        ),
        (
            "WITH renamed (k) AS (SELECT ss_item_sk FROM store_sales) "
            "SELECT i_brand FROM renamed r, item WHERE r.k = i_item_sk",
            "duckdb",
        ),
    ),
    "a derived-table column defined by an expression is its definition": (
        (
            "SELECT x.p FROM (SELECT SUM(ss_net_profit) AS p FROM store_sales) x WHERE x.p > 0",
            "duckdb",
        ),
        (
            "SELECT y.profit FROM (SELECT SUM(ss_net_profit) AS profit FROM store_sales) AS y "
            "WHERE y.profit > 0",
            "duckdb",
        ),
    ),
    "a CTE and a derived table with the same body are the same": (
        (
            "WITH t AS (SELECT ss_item_sk AS k, SUM(ss_quantity) AS q FROM store_sales "
            "GROUP BY ss_item_sk) SELECT k FROM t WHERE q > 5",
            "duckdb",
        ),
        (
            "SELECT k FROM (SELECT ss_item_sk AS k, SUM(ss_quantity) AS q FROM store_sales "
            "GROUP BY ss_item_sk) AS t WHERE q > 5",
            "duckdb",
        ),
    ),
    "a comparison of two columns is written in one orientation": (
        ("SELECT 1 FROM store_sales WHERE ss_list_price < ss_sales_price", "duckdb"),
        ("SELECT 1 FROM store_sales WHERE ss_sales_price > ss_list_price", "duckdb"),
    ),
    "a comparison with a constant puts the constant second": (
        ("SELECT i_category FROM item GROUP BY i_category HAVING 5 < COUNT(*)", "duckdb"),
        ("SELECT i_category FROM item GROUP BY i_category HAVING COUNT(*) > 5", "duckdb"),
    ),
    "ORDER BY position, alias and qualified name are the select item": (
        ("SELECT c.c_customer_id AS id FROM customer c ORDER BY 1", "duckdb"),
        ("SELECT c_customer_id AS x FROM customer ORDER BY x", "duckdb"),
    ),
    "ORDER BY a bare and a qualified select item are the same": (
        ("SELECT c_customer_id FROM customer ORDER BY c_customer_id", "duckdb"),
        ("SELECT c.c_customer_id FROM customer c ORDER BY c.c_customer_id", "duckdb"),
    ),
    "ORDER BY over a UNION by position or by name": (
        ("SELECT i_brand FROM item UNION ALL SELECT s_store_name FROM store ORDER BY 1", "duckdb"),
        (
            "SELECT i_brand AS b FROM item UNION ALL SELECT s_store_name FROM store ORDER BY b",
            "duckdb",
        ),
    ),
    "GROUP BY position, GROUP BY alias and HAVING alias are the select item": (
        (
            "SELECT i_category AS c, COUNT(*) AS n FROM item GROUP BY 1 HAVING COUNT(*) > 5",
            "duckdb",
        ),
        ("SELECT i_category AS cat, COUNT(*) AS k FROM item GROUP BY cat HAVING k > 5", "duckdb"),
    ),
    "a bare column of a query over SELECT * reads its one source": (
        (
            "WITH t AS (SELECT ss_item_sk, SUM(ss_quantity) AS q FROM store_sales GROUP BY 1) "
            "SELECT ss_item_sk, q FROM (SELECT * FROM t UNION ALL SELECT * FROM t) AS x",
            "duckdb",
        ),
        (
            "WITH t AS (SELECT ss_item_sk, SUM(ss_quantity) AS q FROM store_sales GROUP BY 1) "
            "SELECT x.ss_item_sk, x.q FROM (SELECT * FROM t UNION ALL SELECT * FROM t) AS x",
            "duckdb",
        ),
    ),
    "SELECT x AS x is SELECT x": (
        (
            "WITH a AS (SELECT i_brand, i_class FROM item) SELECT i_brand AS i_brand, COUNT(*) "
            "FROM (SELECT * FROM a UNION ALL SELECT * FROM a) AS t GROUP BY i_brand",
            "duckdb",
        ),
        (
            "WITH a AS (SELECT i_brand, i_class FROM item) SELECT i_brand, COUNT(*) "
            "FROM (SELECT * FROM a UNION ALL SELECT * FROM a) AS t GROUP BY i_brand",
            "duckdb",
        ),
    ),
    "a select item's name inside an ORDER BY expression is the item": (
        (
            "SELECT i_category AS cat, i_class FROM item "
            "ORDER BY CASE WHEN cat = 'Books' THEN 0 END",
            "duckdb",
        ),
        (
            "SELECT i_category, i_class FROM item "
            "ORDER BY CASE WHEN i_category = 'Books' THEN 0 END",
            "duckdb",
        ),
    ),
    "ORDER BY q is the output q; inside SUM(q), q is the source's column": (
        ("SELECT SUM(t.q) AS q FROM (SELECT ss_quantity AS q FROM store_sales) t ORDER BY q",)
        + ("duckdb",),
        ("SELECT SUM(t.q) AS q FROM (SELECT ss_quantity AS q FROM store_sales) t ORDER BY SUM(q)",)
        + ("duckdb",),
    ),
    "numbers are folded and written canonically": (
        ("SELECT 1 FROM date_dim WHERE d_year = 2000 + 1 AND d_moy > -(5.00)", "duckdb"),
        ("SELECT 1 FROM date_dim WHERE d_year = 2001 AND d_moy > -5", "duckdb"),
    ),
    "an INTERVAL on a column is one canonical token": (
        ("SELECT 1 FROM date_dim WHERE d_date > d_date + INTERVAL '30 days'", "duckdb"),
        ("SELECT 1 FROM date_dim WHERE d_date > d_date + INTERVAL 30 DAY", "duckdb"),
    ),
    "x * 1.0000 is x": (
        ("SELECT SUM(ss_net_profit * 1.0000) / SUM(ss_quantity) FROM store_sales", "duckdb"),
        ("SELECT SUM(ss_net_profit) / SUM(ss_quantity) FROM store_sales", "duckdb"),
    ),
    "1 * x, x / 1, x + 0, 0 + x and x - 0 are x": (
        (
            "SELECT 1 * ss_quantity, ss_list_price / 1, ss_sales_price + 0, 0 + ss_net_paid, "
            "ss_net_profit - 0 FROM store_sales",
            "duckdb",
        ),
        (
            "SELECT ss_quantity, ss_list_price, ss_sales_price, ss_net_paid, ss_net_profit "
            "FROM store_sales",
            "duckdb",
        ),
    ),
    "parentheses around a single column or call group nothing": (
        ("SELECT (SUM(ss_quantity)) / (ss_item_sk) FROM store_sales GROUP BY ss_item_sk",)
        + ("duckdb",),
        ("SELECT SUM(ss_quantity) / ss_item_sk FROM store_sales GROUP BY ss_item_sk", "duckdb"),
    ),
    "a cast to a number type is no structure": (
        ("SELECT CAST(SUM(ss_quantity) AS DOUBLE) / 3 FROM store_sales", "duckdb"),
        ("SELECT SUM(ss_quantity) / 3 FROM store_sales", "duckdb"),
    ),
    "an IN list loses repeated items and its order": (
        ("SELECT 1 FROM store WHERE s_state IN ('TN', 'GA', 'TN')", "duckdb"),
        ("SELECT 1 FROM store WHERE s_state IN ('GA', 'TN')", "duckdb"),
    ),
    "a one-item IN is =": (
        ("SELECT 1 FROM store WHERE s_state IN ('TN', 'TN')", "duckdb"),
        ("SELECT 1 FROM store WHERE s_state = 'TN'", "duckdb"),
    ),
    "a one-item NOT IN is <>": (
        ("SELECT 1 FROM store WHERE s_state NOT IN ('TN')", "duckdb"),
        ("SELECT 1 FROM store WHERE s_state <> 'TN'", "duckdb"),
    ),
    "TRY_CAST is CAST": (
        ("SELECT TRY_CAST(d_date AS DATE) FROM date_dim", "duckdb"),
        ("SELECT CAST(d_date AS DATE) FROM date_dim", "duckdb"),
    ),
    "a / NULLIF(b, 0) is a / b": (
        ("SELECT ss_net_paid / NULLIF(ss_quantity, 0) FROM store_sales", "duckdb"),
        ("SELECT ss_net_paid / ss_quantity FROM store_sales", "duckdb"),
    ),
    "STDDEV is STDDEV_SAMP": (
        ("SELECT STDDEV(inv_quantity_on_hand) FROM inventory", "snowflake"),
        ("SELECT STDDEV_SAMP(inv_quantity_on_hand) FROM inventory", "duckdb"),
    ),
    "|| and CONCAT are one concatenation, COALESCE(x, '') inside it is x": (
        ("SELECT c_last_name || ', ' || c_first_name FROM customer", "duckdb"),
        (
            "SELECT CONCAT(COALESCE(c_last_name, ''), ', ', COALESCE(c_first_name, '')) "
            "FROM customer",
            "spark",
        ),
    ),
    "a CASE whose conditions compare numbers is its value": (
        ("SELECT SUBSTRING(ca_zip, CASE WHEN 1 = 0 THEN 1 ELSE 1 END, 5) FROM customer_address",)
        + ("snowflake",),
        ("SELECT SUBSTRING(ca_zip, 1, 5) FROM customer_address", "duckdb"),
    ),
}


@pytest.mark.parametrize("rule", list(SAME_STRUCTURE), ids=list(SAME_STRUCTURE))
def test_normalisation_rule_gives_the_same_structure(rule, schema):
    (first, first_dialect), (second, second_dialect) = SAME_STRUCTURE[rule]
    assert features(first, schema, first_dialect) == features(second, schema, second_dialect)
    # Both resolved their names: the equality is not two unresolved spellings agreeing.
    assert structure_of(first, first_dialect, schema).qualified
    assert structure_of(second, second_dialect, schema).qualified


def test_order_by_an_output_name_is_the_output(schema):
    found = features(
        "SELECT SUM(t.q) AS q FROM (SELECT ss_quantity AS q FROM store_sales) t ORDER BY q", schema
    )
    # ORDER BY q is the select item SUM(t.q), and t.q is store_sales.ss_quantity: the aggregate
    # twice (select list and ORDER BY), never SUM(SUM(...)).
    assert found["aggregation"] == {"SUM(store_sales.ss_quantity)": 2}


#: Date arithmetic on a literal, in every spelling sqlglot reads, is the date it computes.
DATE_SPELLINGS = [
    ("d_date > DATE '2000-08-23' + INTERVAL 14 DAY", "duckdb", "2000-09-06"),
    ("d_date > DATE '2000-08-23' + INTERVAL '14 days'", "duckdb", "2000-09-06"),
    ("d_date > CAST('2000-08-23' AS DATE) + 14", "duckdb", "2000-09-06"),
    ("d_date > '2000-08-23'::date + 14", "postgres", "2000-09-06"),
    ("d_date > DATE_ADD(DATE '2000-08-23', INTERVAL 14 DAY)", "bigquery", "2000-09-06"),
    ("d_date > DATE_ADD('2000-08-23', INTERVAL 14 DAY)", "mysql", "2000-09-06"),
    ("d_date > '2000-08-23' + INTERVAL 14 DAY", "mysql", "2000-09-06"),
    ("d_date > DATEADD(day, 14, '2000-08-23')", "snowflake", "2000-09-06"),
    ("d_date > DATEADD(day, 14, '2000-08-23')", "tsql", "2000-09-06"),
    ("d_date > date_add('2000-08-23', 14)", "spark", "2000-09-06"),
    ("d_date > INTERVAL 14 DAY + DATE '2000-08-23'", "duckdb", "2000-09-06"),
    # 30 - 8 = 22 days past the end of August; 2000 is a leap year; months clamp.
    ("d_date > DATE '2000-08-23' - INTERVAL 30 DAY", "duckdb", "2000-07-24"),
    ("d_date > DATE '2000-01-31' + INTERVAL 1 MONTH", "duckdb", "2000-02-29"),
    ("d_date > DATEADD(month, 1, '2000-01-31')", "snowflake", "2000-02-29"),
    ("d_date > DATE '2000-02-29' + INTERVAL 1 YEAR", "duckdb", "2001-02-28"),
    ("d_date > DATE '2000-11-15' + INTERVAL 1 QUARTER", "duckdb", "2001-02-15"),
    ("d_date > DATE_SUB(DATE '2000-03-01', INTERVAL 1 DAY)", "mysql", "2000-02-29"),
    # Other dialects' spellings that DuckDB reads without complaint (no parse fallback):
    ("d_date > DATEADD(day, 14, '2000-08-23')", "duckdb", "2000-09-06"),
    ("d_date > DATE('2000-08-23') + INTERVAL 14 DAY", "duckdb", "2000-09-06"),
    ("d_date > DATE('2000-08-23') + 14", "duckdb", "2000-09-06"),
    ("d_date > TO_DATE('2000-08-23') + 14", "snowflake", "2000-09-06"),
    ("d_date > DATE_ADD(DATE('2000-08-23'), INTERVAL 14 DAY)", "mysql", "2000-09-06"),
]


@pytest.mark.parametrize(("condition", "dialect", "date"), DATE_SPELLINGS)
def test_date_arithmetic_on_a_literal_is_the_date(condition, dialect, date, schema):
    found = features(f"SELECT d_date_sk FROM date_dim WHERE {condition}", schema, dialect)
    assert found["where_predicates"] == {f"date_dim.d_date > '{date}'": 1}
    assert found["constants"] == {date: 1}


def test_date_arithmetic_past_the_calendar_is_left_as_written(schema):
    found = features("SELECT 1 FROM date_dim WHERE d_date > DATE '9999-12-31' + 1", schema)
    assert found["where_predicates"] == {"date_dim.d_date > '9999-12-31' + 1": 1}


def test_a_date_plus_a_number_is_arithmetic_in_mysql(schema):
    # MySQL reads DATE '2000-08-23' + 14 as the number 20000837: not folded to a date.
    found = features(
        "SELECT 1 FROM date_dim WHERE d_date > DATE '2000-08-23' + 14", schema, "mysql"
    )
    assert "2000-09-06" not in found["constants"]


def test_a_self_join_comparison_keeps_its_direction(schema):
    cte = (
        "WITH t AS (SELECT ss_item_sk AS k, SUM(ss_net_profit) AS p FROM store_sales "
        "GROUP BY ss_item_sk) "
    )
    forward = features(cte + "SELECT a.k FROM t a, t b WHERE a.k = b.k AND a.p > b.p", schema)
    same = features(cte + "SELECT a.k FROM t a, t b WHERE a.k = b.k AND b.p < a.p", schema)
    backward = features(cte + "SELECT a.k FROM t a, t b WHERE a.k = b.k AND b.p > a.p", schema)
    # a is the first instance of t in the query (#1), b the second (#2); p is its definition.
    p = "SUM(store_sales.ss_net_profit)"
    assert forward["where_predicates"] == {f"{p}#1 > {p}#2": 1}
    assert same == forward
    assert backward["where_predicates"] == {f"{p}#1 < {p}#2": 1}
    # a.k = b.k is a join of two instances of one column, not a predicate.
    assert forward["joins"] == {"store_sales.ss_item_sk = store_sales.ss_item_sk": 1}


def test_instance_numbers_follow_the_query_order_past_nine(schema):
    # a and b are the 10th and 11th table references (instances 9 and 10 counting from 0):
    # a is still #1 and b #2, as in the query with the two alone (numbers, not text, ordered).
    many = (
        "SELECT 1 FROM item, store, store_sales, web_sales, catalog_sales, customer, "
        "customer_address, promotion, reason, date_dim a, date_dim b WHERE a.d_date > b.d_date"
    )
    two = "SELECT 1 FROM date_dim a, date_dim b WHERE a.d_date > b.d_date"
    expected = {"date_dim.d_date#1 > date_dim.d_date#2": 1}
    assert features(many, schema)["where_predicates"] == expected
    assert features(two, schema)["where_predicates"] == expected


def test_a_correlated_column_resolves_to_its_outer_source(schema):
    found = features(
        "SELECT 1 FROM store_sales o WHERE o.ss_quantity > "
        "(SELECT AVG(i.ss_quantity) FROM store_sales i WHERE i.ss_item_sk = o.ss_item_sk)",
        schema,
    )
    assert found["joins"] == {"store_sales.ss_item_sk = store_sales.ss_item_sk": 1}
    assert found["columns"] == {"store_sales.ss_quantity": 2, "store_sales.ss_item_sk": 2}


def test_parse_fallback_reports_the_dialect_that_read_the_query(schema):
    # DuckDB does not read backticks; PostgreSQL neither; Spark, second in line, does.
    backticks = structure_of(
        "SELECT `i_item_id` FROM `item` WHERE `i_size` = 'N/A'", "duckdb", schema
    )
    plain = structure_of("SELECT i_item_id FROM item WHERE i_size = 'N/A'", "duckdb", schema)
    assert backticks is not None and backticks.dialect == "spark"
    assert plain.dialect == "duckdb"
    assert backticks.features == plain.features
    # T-SQL's square brackets: only tsql reads them, sixth in line.
    brackets = structure_of("SELECT TOP 5 [i_item_id] FROM [item]", "duckdb", schema)
    assert brackets is not None and brackets.dialect == "tsql"
    # Nothing reads it: unparseable.
    assert structure_of("SELEC i_item_id FROMM item", "duckdb", schema) is None


# ---------------------------------------------------------------- hand-computed pair table
# (gold, prediction, {feature: expected sim_<feature>}); a feature not listed is expected 1.
# structural_similarity is then the mean of the seven. Every number is derived in the comment
# from the definitions (multiset Jaccard = sum of minimum counts / sum of maximum counts).

F = Fraction
PAIRS = {
    # Both resolve ORDER BY to the select item SUM(store_sales.ss_ext_sales_price); the aliases
    # (total, revenue, s, i) never reach a token; comma join and JOIN ... ON give one join token.
    "ORDER BY alias vs ORDER BY position, comma vs JOIN": (
        "SELECT i_brand, SUM(ss_ext_sales_price) AS total FROM store_sales, item "
        "WHERE ss_item_sk = i_item_sk GROUP BY i_brand ORDER BY total DESC",
        "SELECT i.i_brand, SUM(s.ss_ext_sales_price) AS revenue FROM store_sales s "
        "JOIN item i ON s.ss_item_sk = i.i_item_sk GROUP BY 1 ORDER BY 2 DESC",
        {},
    ),
    # The example: bare and qualified ORDER BY name both resolve to customer.c_customer_id.
    "ORDER BY bare vs qualified name": (
        "SELECT c_customer_id FROM customer ORDER BY c_customer_id",
        "SELECT c.c_customer_id FROM customer c ORDER BY c.c_customer_id",
        {},
    ),
    # CTE name, CTE column name and the reference to it are arbitrary: p and profit are both
    # SUM(store_sales.ss_net_profit), so the predicate tokens agree.
    "CTE and CTE column renamed": (
        "WITH t AS (SELECT ss_item_sk, SUM(ss_net_profit) AS p FROM store_sales "
        "GROUP BY ss_item_sk) SELECT ss_item_sk FROM t WHERE p > 100",
        "WITH x AS (SELECT ss_item_sk, SUM(ss_net_profit) AS profit FROM store_sales "
        "GROUP BY ss_item_sk) SELECT x.ss_item_sk FROM x WHERE x.profit > 100",
        {},
    ),
    # Gold: {p#1 > p#2}; prediction b.p > a.p is p#2 > p#1, oriented p#1 < p#2: 0 of 2 tokens
    # shared. Everything else (the columns, the join a.k = b.k, the aggregate) is equal.
    "CTE self-join with the comparison reversed": (
        "WITH t AS (SELECT ss_item_sk AS k, SUM(ss_net_profit) AS p FROM store_sales "
        "GROUP BY ss_item_sk) SELECT a.k FROM t a, t b WHERE a.k = b.k AND a.p > b.p",
        "WITH t AS (SELECT ss_item_sk AS k, SUM(ss_net_profit) AS p FROM store_sales "
        "GROUP BY ss_item_sk) SELECT a.k FROM t a, t b WHERE a.k = b.k AND b.p > a.p",
        {"where_predicates": F(0)},
    ),
    # DATE '2000-08-23' + 14 in PostgreSQL adds days, as DuckDB's + INTERVAL 14 DAY: both are
    # '2000-09-06'; the constants are {'2000-08-23', '2000-09-06'} on both sides.
    "date + INTERVAL (DuckDB) vs date + 14 (PostgreSQL)": (
        "SELECT COUNT(*) FROM date_dim WHERE d_date BETWEEN CAST('2000-08-23' AS DATE) "
        "AND CAST('2000-08-23' AS DATE) + INTERVAL 14 DAY",
        (
            "SELECT COUNT(*) FROM date_dim WHERE d_date BETWEEN DATE '2000-08-23' "
            "AND DATE '2000-08-23' + 14",
            "postgres",
        ),
        {},
    ),
    # x * 1.0000 is x: the same aggregate tokens, and no constant 1 left over.
    "x * 1.0000 vs x": (
        "SELECT SUM(ss_net_profit * 1.0000) / SUM(ss_quantity) FROM store_sales",
        "SELECT SUM(ss_net_profit) / SUM(ss_quantity) FROM store_sales",
        {},
    ),
    # IN ('TN', 'TN') is = 'TN': one predicate token s_state = 'TN', one constant TN each.
    "IN with a repeated item vs =": (
        "SELECT s_store_name FROM store WHERE s_state IN ('TN', 'TN')",
        "SELECT s_store_name FROM store WHERE s_state = 'TN'",
        {},
    ),
    # Near miss, changed constant: predicates {price > 50} vs {price > 60}: 0/2; constants
    # {50} vs {60}: 0/2; tables and columns (i_item_id, i_current_price) equal.
    "changed constant": (
        "SELECT i_item_id FROM item WHERE i_current_price > 50",
        "SELECT i_item_id FROM item WHERE i_current_price > 60",
        {"where_predicates": F(0), "constants": F(0)},
    ),
    # Near miss, dropped predicate: columns {i_item_id, i_current_price, i_category} vs the first
    # two: 2/3; predicates 1 shared of 2: 1/2; constants {50, Books} vs {50}: 1/2.
    "dropped predicate": (
        "SELECT i_item_id FROM item WHERE i_current_price > 50 AND i_category = 'Books'",
        "SELECT i_item_id FROM item WHERE i_current_price > 50",
        {"columns": F(2, 3), "where_predicates": F(1, 2), "constants": F(1, 2)},
    ),
    # Near miss, reversed comparison: > 50 vs < 50 are different tokens (0/2); the constant 50
    # and the columns agree.
    "reversed comparison": (
        "SELECT i_item_id FROM item WHERE i_current_price > 50",
        "SELECT i_item_id FROM item WHERE i_current_price < 50",
        {"where_predicates": F(0)},
    ),
    # Near miss, missing join: tables equal; columns {s_store_name, ss_store_sk, s_store_sk}
    # vs {s_store_name}: 1/3; joins {s_store_sk = ss_store_sk} vs {}: 0/1.
    "missing join": (
        "SELECT s_store_name FROM store_sales, store WHERE ss_store_sk = s_store_sk",
        "SELECT s_store_name FROM store_sales, store",
        {"columns": F(1, 3), "joins": F(0)},
    ),
    # LEFT JOIN's token carries its side: 'LEFT ca_address_sk = c_current_addr_sk' vs the
    # inner join's token without it: 0/2.
    "LEFT JOIN vs inner JOIN": (
        "SELECT c_customer_id FROM customer LEFT JOIN customer_address "
        "ON c_current_addr_sk = ca_address_sk",
        "SELECT c_customer_id FROM customer JOIN customer_address "
        "ON c_current_addr_sk = ca_address_sk",
        {"joins": F(0)},
    ),
    # Backticks: DuckDB does not read the prediction, Spark (a fallback) does; the names are
    # then the same tokens as gold's.
    "backticks read by the parse fallback": (
        "SELECT i_item_id FROM item WHERE i_category = 'Books'",
        "SELECT `i_item_id` FROM `item` WHERE `i_category` = 'Books'",
        {},
    ),
    # aggregation {SUM(ss_quantity)} vs {AVG(ss_quantity)}: 0/2; the column is the same.
    "SUM vs AVG": (
        "SELECT SUM(ss_quantity) FROM store_sales",
        "SELECT AVG(ss_quantity) FROM store_sales",
        {"aggregation": F(0)},
    ),
    # functions {} vs {UPPER}: 0/1; columns {i_brand} both.
    "an extra function call": (
        "SELECT i_brand FROM item",
        "SELECT UPPER(i_brand) FROM item",
        {"functions": F(0)},
    ),
    # GROUP BY alias expands to the select item: GROUP BY item.i_category on both sides.
    "GROUP BY expression vs GROUP BY alias": (
        "SELECT i_category AS cat, COUNT(*) FROM item GROUP BY i_category",
        "SELECT i_category AS c, COUNT(*) FROM item GROUP BY c",
        {},
    ),
    # HAVING n > 5 with n = COUNT(*) is HAVING COUNT(*) > 5: predicate and aggregate tokens equal.
    "HAVING aggregate vs HAVING alias": (
        "SELECT i_category, COUNT(*) FROM item GROUP BY i_category HAVING COUNT(*) > 5",
        "SELECT i_category, COUNT(*) AS n FROM item GROUP BY i_category HAVING n > 5",
        {},
    ),
    # A derived table's column renamed (k -> item) and its alias (x -> y): both are
    # store_sales.ss_item_sk, so the predicate is store_sales.ss_item_sk > 10 on both sides.
    "derived-table column renamed": (
        "SELECT x.k FROM (SELECT ss_item_sk AS k FROM store_sales) x WHERE x.k > 10",
        "SELECT y.item FROM (SELECT ss_item_sk AS item FROM store_sales) AS y WHERE y.item > 10",
        {},
    ),
    # A filter in ON is a predicate as in WHERE; the equality is a join either way.
    "filter in WHERE vs filter in ON": (
        "SELECT 1 FROM store_sales, item WHERE ss_item_sk = i_item_sk AND i_category = 'Books'",
        "SELECT 1 FROM store_sales JOIN item ON ss_item_sk = i_item_sk AND i_category = 'Books'",
        {},
    ),
    # NOT IN ('Books') is <> 'Books'.
    "one-item NOT IN vs <>": (
        "SELECT i_item_id FROM item WHERE i_category NOT IN ('Books')",
        "SELECT i_item_id FROM item WHERE i_category <> 'Books'",
        {},
    ),
    # tables {date_dim: 1} vs {date_dim: 2}: 1/2. columns {d_year} vs {d_year, d_date_sk: 2}:
    # 1/3. d1.d_date_sk = d2.d_date_sk joins two instances: joins {} vs {one token}: 0/1.
    "an extra self-join": (
        "SELECT d1.d_year FROM date_dim d1",
        "SELECT d1.d_year FROM date_dim d1, date_dim d2 WHERE d1.d_date_sk = d2.d_date_sk",
        {"tables": F(1, 2), "columns": F(1, 3), "joins": F(0)},
    ),
    # Numbers and strings share the constant space ('2000' is 2000: 1) but a predicate is
    # rendered with its literal's type (d_year = 2000 vs d_year = '2000': 0/2).
    "number vs string literal": (
        "SELECT d_date_sk FROM date_dim WHERE d_year = 2000",
        "SELECT d_date_sk FROM date_dim WHERE d_year = '2000'",
        {"where_predicates": F(0)},
    ),
    # LIMIT values are constants: {100} vs {10}: 0/2.
    "another LIMIT": (
        "SELECT i_item_id FROM item LIMIT 100",
        "SELECT i_item_id FROM item LIMIT 10",
        {"constants": F(0)},
    ),
    # Window functions are functions: {RANK} vs {ROW_NUMBER}: 0/2; columns {i_category: 2} both.
    "RANK vs ROW_NUMBER": (
        "SELECT i_category, RANK() OVER (ORDER BY i_category) FROM item",
        "SELECT i_category, ROW_NUMBER() OVER (ORDER BY i_category) FROM item",
        {"functions": F(0)},
    ),
    # The CTE and the derived table have the same body; neither is a table, and k and q are
    # their definitions on both sides.
    "CTE vs derived table": (
        "WITH t AS (SELECT ss_item_sk AS k, SUM(ss_quantity) AS q FROM store_sales "
        "GROUP BY ss_item_sk) SELECT k FROM t WHERE q > 5",
        "SELECT k FROM (SELECT ss_item_sk AS k, SUM(ss_quantity) AS q FROM store_sales "
        "GROUP BY ss_item_sk) AS t WHERE q > 5",
        {},
    ),
    # Snowflake's DATEADD(month, 1, '2000-01-31') and DuckDB's + INTERVAL 1 MONTH are both
    # '2000-02-29' (a leap year; the day clamps to the month's last); the amount 1 is no constant
    # on either side once folded.
    "DATEADD (Snowflake) vs + INTERVAL (DuckDB)": (
        "SELECT d_date_sk FROM date_dim WHERE d_date = DATE '2000-01-31' + INTERVAL 1 MONTH",
        (
            "SELECT d_date_sk FROM date_dim WHERE d_date = DATEADD(month, 1, '2000-01-31')",
            "snowflake",
        ),
        {},
    ),
    # tables {store_sales} vs {catalog_sales}: 0/2; COUNT(*) on both; no columns on either (1).
    "another table": (
        "SELECT COUNT(*) FROM store_sales",
        "SELECT COUNT(*) FROM catalog_sales",
        {"tables": F(0)},
    ),
    # A date one day off: the dates fold to '2000-09-06' and '2000-09-07', so predicates
    # {d_date = '2000-09-06'} vs {d_date = '2000-09-07'}: 0/2, constants likewise 0/2.
    "a date interval one day off": (
        "SELECT d_date_sk FROM date_dim WHERE d_date = DATE '2000-08-23' + INTERVAL 14 DAY",
        "SELECT d_date_sk FROM date_dim WHERE d_date = DATE '2000-08-23' + INTERVAL 15 DAY",
        {"where_predicates": F(0), "constants": F(0)},
    ),
}


@pytest.mark.parametrize("name", list(PAIRS), ids=list(PAIRS))
def test_pair_similarity_table(name, schema):
    gold_sql, prediction, expected = PAIRS[name]
    prediction_sql, dialect = (
        prediction if isinstance(prediction, tuple) else (prediction, "duckdb")
    )
    found = similarity(
        structure_of(prediction_sql, dialect, schema), structure_of(gold_sql, "duckdb", schema)
    )
    per_feature = {f: expected.get(f, F(1)) for f in FEATURES}
    for feature, value in per_feature.items():
        assert found[f"sim_{feature}"] == pytest.approx(float(value)), feature
    mean = sum(per_feature.values()) / len(FEATURES)
    assert found["structural_similarity"] == pytest.approx(float(mean))


def test_the_pair_table_holds_at_least_25_pairs():
    assert len(PAIRS) >= 25
