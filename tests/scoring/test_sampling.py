"""Pure sampling functions: the pass@k estimator, voting, SQL normalisation."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench_lmeval.scoring.sampling import normalized_sql, pass_at_k, reported_ks, vote


def enumerated_pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k by its definition: the share of the C(n, k) draws of k samples (without
    replacement) that hold at least one of the c correct ones (samples 0..c-1 here)."""
    draws = list(combinations(range(n), k))
    return sum(any(s < c for s in draw) for draw in draws) / len(draws)


@pytest.mark.parametrize(
    ("n", "c", "k", "want"),
    [
        # Hand-computed from 1 - C(n-c, k) / C(n, k):
        (8, 0, 1, 0.0),
        (8, 8, 8, 1.0),
        (8, 1, 1, 1 / 8),
        (8, 2, 1, 2 / 8),
        (8, 2, 2, 1 - 15 / 28),  # C(6,2)=15, C(8,2)=28
        (8, 2, 4, 1 - 15 / 70),  # C(6,4)=15, C(8,4)=70
        (8, 3, 4, 1 - 5 / 70),  # C(5,4)=5
        (8, 4, 8, 1.0),  # n - c = 4 < k: every draw has a correct sample
        (4, 1, 2, 1 - 3 / 6),  # C(3,2)=3, C(4,2)=6
        (5, 2, 3, 1 - 1 / 10),  # C(3,3)=1, C(5,3)=10
    ],
)
def test_pass_at_k_matches_the_closed_form(n, c, k, want):
    assert pass_at_k(n, c, k) == pytest.approx(want, abs=1e-12)
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k), abs=1e-12)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.data())
def test_pass_at_k_equals_the_share_of_draws_with_a_correct_sample(data):
    n = data.draw(st.integers(1, 9))
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    assert pass_at_k(n, c, k) == pytest.approx(enumerated_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_1_is_the_share_correct():
    assert [pass_at_k(8, c, 1) for c in range(9)] == pytest.approx([c / 8 for c in range(9)])


@pytest.mark.parametrize(("n", "c", "k"), [(8, 9, 1), (8, -1, 1), (8, 2, 0), (8, 2, 9)])
def test_pass_at_k_refuses_impossible_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_reported_ks_are_the_powers_of_two_up_to_n():
    assert reported_ks(1) == (1,)
    assert reported_ks(5) == (1, 2, 4)
    assert reported_ks(8) == (1, 2, 4, 8)


def same_by_label(labels):
    """same_result for samples whose results are named by ``labels`` (equal label, same result)."""
    return lambda i, j: labels[i] == labels[j]


def test_the_largest_group_wins():
    labels = ["a", "b", "b", "c", "b"]
    result = vote([True] * 5, [False] * 5, same_by_label(labels))
    assert result.groups == [0, 1, 1, 2, 1]
    assert result.sizes == [1, 3, 1]
    assert result.winner == 1  # first sample of group "b"


def test_a_tie_goes_to_the_group_whose_first_sample_came_earliest():
    # Groups "x" (samples 1, 2) and "y" (samples 0, 3) both have 2: "y" started first.
    labels = ["y", "x", "x", "y"]
    assert vote([True] * 4, [False] * 4, same_by_label(labels)).winner == 0
    # All distinct: every group has 1, the first sample wins.
    assert vote([True] * 3, [False] * 3, same_by_label(["p", "q", "r"])).winner == 0


def test_samples_that_did_not_run_neither_vote_nor_win():
    # Samples 0-2 failed (same "error" label, but they did not run); 3 and 4 differ.
    labels = ["err", "err", "err", "u", "v"]
    result = vote([False, False, False, True, True], [False] * 5, same_by_label(labels))
    assert result.groups == [None, None, None, 0, 1]
    assert result.winner == 3
    assert vote([False, False], [False, False], same_by_label(["e", "e"])).winner is None


def test_correct_samples_form_one_group_without_being_compared():
    def never_called(i, j):
        raise AssertionError(f"compared {i} with {j}")

    # Two correct samples (e.g. results within tolerance of gold but not of each other) join
    # the gold group; a lone wrong sample is its own group; the gold group wins 2 to 1.
    result = vote([True, True, True], [False, True, True], lambda i, j: False)
    assert result.groups == [0, 1, 1] and result.winner == 1
    assert vote([True, True], [True, True], never_called).groups == [0, 0]


def test_a_wrong_sample_is_never_put_in_the_gold_group():
    # Sample 1 "matches" sample 0 by same_result, but 0 is correct and 1 is not.
    result = vote([True, True], [True, False], lambda i, j: True)
    assert result.groups == [0, 1]


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("SELECT  a,\n\tb FROM t ", "SELECT a, b FROM t"),
        ("SELECT 'a  b' FROM t", "SELECT 'a  b' FROM t"),  # literal kept
        ('SELECT "my  col"  FROM t', 'SELECT "my  col" FROM t'),
        ("SELECT 'it''s  x'   ,  1", "SELECT 'it''s  x' , 1"),
        # The newline ending a line comment is part of the query: without it FROM is comment.
        ("SELECT a -- note\n  FROM t", "SELECT a -- note\n FROM t"),
    ],
)
def test_normalized_sql_collapses_whitespace_outside_quotes_only(sql, want):
    assert normalized_sql(sql) == want


def test_a_line_comment_swallowing_the_rest_is_another_query():
    assert normalized_sql("SELECT a -- note\nFROM t") != normalized_sql("SELECT a -- note FROM t")
