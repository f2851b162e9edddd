"""Result comparison: a verdict table that reads as the rules, plus hypothesis properties."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench_lmeval.compare import (
    ABS_TOL,
    REL_TOL,
    Verdict,
    compare,
    gold_order_matters,
    values_close,
    ves,
)
from sqlbench_lmeval.execution import Outcome, Status


def ok(*rows, columns=None) -> Outcome:
    width = len(rows[0]) if rows else 1
    return Outcome(Status.OK, columns=columns or tuple(f"c{i}" for i in range(width)), rows=rows)


# (case id, pred, gold, ordered, expected (ex, ex_strict, ex_set, reason))
VERDICTS = [
    ("identical", ok((1, "a")), ok((1, "a")), False, (True, True, True, "match")),
    ("float_noise", ok((0.1 + 0.2,)), ok((0.3,)), False, (True, False, False, "match")),
    ("int_vs_float", ok((1,)), ok((1.0,)), False, (True, True, True, "match")),
    ("int_vs_near_float", ok((3,)), ok((3.0000000001,)), False, (True, False, False, "match")),
    ("decimal_vs_float", ok((Decimal("0.1"),)), ok((0.1,)), False, (True, False, False, "match")),
    ("decimal_vs_int", ok((Decimal("2.00"),)), ok((2,)), False, (True, True, True, "match")),
    ("rounded_differs", ok((0.33,)), ok((1 / 3,)), False, (False, False, False, "values")),
    ("big_ints_exact", ok((2**62,)), ok((2**62 + 1,)), False, (False, False, False, "values")),
    ("tiny_vs_zero", ok((1e-17,)), ok((0,)), False, (True, False, False, "match")),
    ("nan_vs_nan", ok((float("nan"),)), ok((float("nan"),)), False, (True, False, False, "match")),
    ("null_vs_zero", ok((None,)), ok((0,)), False, (False, False, False, "values")),
    ("null_vs_empty_str", ok((None,)), ok(("",)), False, (False, False, False, "values")),
    ("null_vs_null", ok((None,)), ok((None,)), False, (True, True, True, "match")),
    ("str_vs_number", ok(("1",)), ok((1,)), False, (False, False, False, "values")),
    ("str_case", ok(("Paris",)), ok(("paris",)), False, (False, False, False, "values")),
    ("bool_as_int", ok((True,)), ok((1,)), False, (True, True, True, "match")),
    ("bytes", ok((b"\x00",)), ok((b"\x00",)), False, (True, True, True, "match")),
    (
        "missing_duplicate",
        ok((1,), (2,)),
        ok((1,), (1,), (2,)),
        False,
        (False, False, True, "row_count"),
    ),
    (
        "duplicates_swapped",
        ok((1,), (1,), (2,)),
        ok((1,), (2,), (2,)),
        False,
        (False, False, True, "values"),
    ),
    (
        "permuted_unordered",
        ok((1,), (2,), (3,)),
        ok((3,), (1,), (2,)),
        False,
        (True, False, True, "match"),
    ),
    (
        "permuted_ordered",
        ok((1,), (2,), (3,)),
        ok((3,), (1,), (2,)),
        True,
        (False, False, True, "order"),
    ),
    (
        "ordered_with_noise",
        ok((0.1 + 0.2,), (1,)),
        ok((0.3,), (1,)),
        True,
        (True, False, False, "match"),
    ),
    ("columns_swapped", ok((1, "a")), ok(("a", 1)), False, (False, False, False, "values")),
    (
        "column_count",
        ok((1, "a"), columns=("x", "y")),
        ok((1,), columns=("x",)),
        False,
        (False, False, False, "column_count"),
    ),
    (
        "names_ignored",
        ok((1,), columns=("n",)),
        ok((1,), columns=("m",)),
        False,
        (True,) * 3 + ("match",),
    ),
    ("empty_vs_empty", ok(), ok(), False, (True, True, True, "match")),
    (
        "empty_vs_null_row",
        ok(),
        ok((None,)),
        False,
        (False, False, False, "row_count"),
    ),
    (
        "scrambled_columns",  # Spider 2.0 sorts each column alone and accepts this
        ok((1, 4), (2, 3)),
        ok((1, 3), (2, 4)),
        False,
        (False, False, False, "values"),
    ),
    (
        "tolerance_ambiguous",  # only the cross pairing works: needs real matching
        ok((1.0 + 2e-12, 5), (1.0, 3)),
        ok((1.0, 5), (1.0 + 1e-12, 3)),
        False,
        (True, False, False, "match"),
    ),
    (
        "tolerance_chain",  # g'~g, g~p', g'~p but not g'~p': the greedy exact pairing fails
        ok((1.0,), (1.0 - 0.9e-6,)),
        ok((1.0,), (1.0 + 0.9e-6,)),
        False,
        (True, False, False, "match"),
    ),
    (
        "list_values",  # DuckDB lists compare element-wise with tolerance
        ok(([0.1 + 0.2, 1],)),
        ok(([0.3, 1],)),
        False,
        (True, False, False, "match"),
    ),
]


@pytest.mark.parametrize(
    ("pred", "gold", "ordered", "expected"),
    [case[1:] for case in VERDICTS],
    ids=[case[0] for case in VERDICTS],
)
def test_verdict_table(pred, gold, ordered, expected):
    assert compare(pred, gold, ordered=ordered) == Verdict(*expected)


# (case id, pred status, gold status, reason)
FAILURES = [
    ("pred_error", Status.ERROR, Status.OK, "pred_error"),
    ("pred_timeout", Status.TIMEOUT, Status.OK, "pred_timeout"),
    ("pred_no_sql_vs_empty_gold", Status.NO_SQL, Status.OK, "pred_no_sql"),
    ("pred_too_many_rows", Status.TOO_MANY_ROWS, Status.OK, "pred_too_many_rows"),
    ("gold_error", Status.OK, Status.ERROR, "gold_error"),
    ("both_error", Status.ERROR, Status.ERROR, "gold_error"),
    ("gold_crashed", Status.OK, Status.CRASHED, "gold_crashed"),
]


@pytest.mark.parametrize(
    ("pred_status", "gold_status", "reason"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
def test_anything_but_two_ok_results_is_wrong(pred_status, gold_status, reason):
    # An empty result on one side must never "match" a failure or missing SQL on the other.
    pred = Outcome(pred_status) if pred_status is not Status.OK else ok()
    gold = Outcome(gold_status) if gold_status is not Status.OK else ok()
    assert compare(pred, gold, ordered=False) == Verdict(False, False, False, reason)


@pytest.mark.parametrize(
    ("status", "expected"),
    [(Status.OK, 1)] + [(s, 0) for s in Status if s is not Status.OK],
)
def test_ves_is_one_iff_prediction_ran_ok(status, expected):
    assert ves(Outcome(status)) == expected


# (case id, gold sql, dialect, ordered?)
ORDERS = [
    ("outer_order", "SELECT a FROM t ORDER BY a", "sqlite", True),
    ("order_limit", "SELECT a FROM t ORDER BY a DESC LIMIT 3", "sqlite", True),
    ("no_order", "SELECT a FROM t", "sqlite", False),
    ("subquery_only", "SELECT * FROM (SELECT a FROM t ORDER BY a) AS s", "sqlite", False),
    (
        "in_subquery",
        "SELECT a FROM t WHERE a IN (SELECT a FROM t ORDER BY a LIMIT 2)",
        "sqlite",
        False,
    ),
    ("cte_order_only", "WITH s AS (SELECT a FROM t ORDER BY a) SELECT a FROM s", "sqlite", False),
    ("cte_outer_order", "WITH s AS (SELECT a FROM t) SELECT a FROM s ORDER BY a", "sqlite", True),
    ("window_order", "SELECT rank() OVER (ORDER BY a) FROM t", "sqlite", False),
    ("union_order", "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", "sqlite", True),
    ("parenthesized", "(SELECT a FROM t ORDER BY a)", "sqlite", True),
    ("string_literal", "SELECT 'order by' FROM t", "sqlite", False),
    ("comment", "SELECT a FROM t -- ORDER BY a", "sqlite", False),
    ("duckdb", "SELECT a FROM t ORDER BY ALL", "duckdb", True),
    ("mysql", "SELECT `a` FROM t ORDER BY `a`", "mysql", True),
    ("unparseable", "SELECT FROM WHERE ORDER BY (", "sqlite", False),
]


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"), [c[1:] for c in ORDERS], ids=[c[0] for c in ORDERS]
)
def test_gold_order_matters(sql, dialect, expected):
    assert gold_order_matters(sql, dialect) is expected


def test_tolerance_constants_are_what_the_docs_say():
    assert (REL_TOL, ABS_TOL) == (1e-6, 1e-9)
    assert values_close(1_000_000.0, 1_000_000.5)
    assert not values_close(1_000.0, 1_000.01)


def test_large_unordered_results_are_fast_enough_to_be_exact():
    # 10k rows with float noise in a shuffled order: decided by clustering, not O(n^2).
    rng = random.Random(1)
    gold = [(i, i * 0.1, f"s{i % 7}") for i in range(10_000)]
    pred = [(a, b * (1 + 1e-12), c) for a, b, c in gold]
    rng.shuffle(pred)
    assert compare(ok(*pred), ok(*gold), ordered=False).ex
    pred[123] = (pred[123][0], pred[123][1] + 1, pred[123][2])
    assert compare(ok(*pred), ok(*gold), ordered=False).reason == "values"


# -- properties ----------------------------------------------------------------------------

values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.booleans(),
)
results = st.integers(min_value=0, max_value=3).flatmap(
    lambda width: st.lists(st.tuples(*[values] * width), max_size=12)
)


@settings(max_examples=300, deadline=None)
@given(results, st.booleans())
def test_a_result_equals_itself(rows, ordered):
    result = ok(*rows) if rows else Outcome(Status.OK, columns=("c",))
    assert compare(result, result, ordered=ordered).ex


@settings(max_examples=300, deadline=None)
@given(results, st.randoms(use_true_random=False))
def test_permuting_rows_keeps_multiset_equality(rows, rng):
    if not rows:
        return
    shuffled = list(rows)
    rng.shuffle(shuffled)
    assert compare(ok(*shuffled), ok(*rows), ordered=False).ex


@settings(max_examples=300, deadline=None)
@given(results, results, st.booleans())
def test_no_input_raises_and_ex_is_symmetric(a, b, ordered):
    pred = ok(*a) if a else ok()
    gold = ok(*b) if b else ok()
    verdict = compare(pred, gold, ordered=ordered)
    assert verdict.ex == compare(gold, pred, ordered=ordered).ex


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.integers(0, 3)), min_size=1, max_size=30))
def test_multiset_match_agrees_with_brute_force(rows):
    # Perturb by up to ~2 tolerances so some pairings work and others do not; the answer
    # must equal an exhaustive search over matchings (small sizes only).
    rng = random.Random(len(rows))
    pred = [(x * (1 + rng.choice([0, 0.5e-6, -0.5e-6, 2e-6])), k) for x, k in rows]
    rng.shuffle(pred)
    expected = _brute_force(pred[:7], rows[:7])
    assert compare(ok(*pred[:7]), ok(*rows[:7]), ordered=False).ex == expected


def _brute_force(pred, gold) -> bool:
    if len(pred) != len(gold):
        return False
    if not pred:
        return True
    first, rest = pred[0], pred[1:]
    for i, g in enumerate(gold):
        if all(values_close(x, y) for x, y in zip(first, g, strict=True)):
            if _brute_force(rest, gold[:i] + gold[i + 1 :]):
                return True
    return False
