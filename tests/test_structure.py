"""SQL structure features and structural similarity (structure.py); the complexity counts are
in test_complexity_counts.py.

Feature cases and similarity pairs use the TPC-DS schema from the installed extension, so
aliases resolve to real table names as they do when scoring.
"""

from collections import Counter
from fractions import Fraction

import pytest

from sqlbench_lmeval.structure import (
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
