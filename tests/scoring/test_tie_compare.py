"""Tie-aware EX as a specification: which predictions each tie structure accepts, and how many
answers it allows. Gold's tie structure is built by hand here; ``test_ties_engines`` builds it
from real gold queries on real engines."""

from __future__ import annotations

import itertools
import random
from math import comb, factorial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqlbench_lmeval.execution import Outcome, Status
from sqlbench_lmeval.scoring.compare import REL_TOL, Verdict, compare
from sqlbench_lmeval.scoring.gold_ties import ANSWERS, RESOLVABLE, GoldTies, tie_verdict
from sqlbench_lmeval.scoring.tie_compare import (
    GOLD_NOT_ACCEPTED,
    KEYS_NOT_SORTED,
    PROBE_COLUMNS,
    PROBE_FAILED,
    PROBE_TRUNCATED,
    TIE_EQUIVALENT,
    TieGold,
    TieGroup,
    acceptable_count,
    accepts,
    tie_gold,
)
from sqlbench_lmeval.scoring.tie_probe import ExtraKey, OutputKey, TiePlan


def ok(*rows, width=None) -> Outcome:
    width = width or (len(rows[0]) if rows else 1)
    return Outcome(Status.OK, columns=tuple(f"c{i}" for i in range(width)), rows=tuple(rows))


def plan(*keys, offset=0, limit=None, extra=0, probe=True) -> TiePlan:
    return TiePlan(
        handled=True,
        keys=tuple(keys),
        offset=offset,
        limit=limit,
        probe_sql="probe" if probe else None,
        extra_columns=extra,
    )


# Gold: SELECT name, score FROM t ORDER BY score DESC LIMIT 3, over scores 9, 8, 7, 7, 7, 5.
SCORES = ok(("a", 9), ("b", 8), ("c", 7), ("d", 7), ("e", 7), ("f", 5))
TOP3 = plan(OutputKey(1), limit=3)


def top3_answers() -> TieGold:
    answers = tie_gold(TOP3, ok(("a", 9), ("b", 8), ("c", 7)), SCORES)
    assert isinstance(answers, TieGold)
    return answers


class TestCutThroughTies:
    def test_groups_touched_by_the_window(self):
        answers = top3_answers()
        assert answers.groups == (
            TieGroup((("a", 9),), 1),
            TieGroup((("b", 8),), 1),
            TieGroup((("c", 7), ("d", 7), ("e", 7)), 1),
        )
        assert answers.ordered and answers.size == 3

    @pytest.mark.parametrize("pick", ["c", "d", "e"])
    def test_any_row_of_the_tied_group_at_the_cut(self, pick):
        assert accepts([("a", 9), ("b", 8), (pick, 7)], top3_answers())

    def test_a_row_beyond_the_tied_group_is_wrong(self):
        assert not accepts([("a", 9), ("b", 8), ("f", 5)], top3_answers())

    def test_rows_before_the_cut_are_required(self):
        assert not accepts([("a", 9), ("c", 7), ("d", 7)], top3_answers())

    def test_groups_in_gold_order(self):
        assert not accepts([("b", 8), ("a", 9), ("c", 7)], top3_answers())

    def test_right_number_of_rows(self):
        assert not accepts([("a", 9), ("b", 8), ("c", 7), ("d", 7)], top3_answers())
        assert not accepts([("a", 9), ("b", 8)], top3_answers())

    def test_three_answers(self):
        assert acceptable_count(top3_answers()) == 3


def test_ten_way_tie_at_the_cut():
    # ORDER BY score DESC LIMIT 5 over one 12 and ten 10s: the 12 then any 4 of the ten.
    rows = [("top", 12)] + [(f"r{i}", 10) for i in range(10)]
    answers = tie_gold(plan(OutputKey(1), limit=5), ok(*rows[:5]), ok(*rows))
    assert isinstance(answers, TieGold)
    assert answers.groups[1].need == 4 and len(answers.groups[1].rows) == 10
    # 10 choose 4 sets of rows, each in any of 4! orders (tied rows may come in any order).
    assert acceptable_count(answers) == comb(10, 4) * factorial(4) == 5040
    for chosen in itertools.combinations(rows[1:], 4):
        assert accepts([rows[0], *reversed(chosen)], answers)
    assert not accepts([rows[0], rows[1], rows[2], rows[3], ("other", 10)], answers)
    assert not accepts(rows[1:5] + [rows[0]], answers)  # the 12 must come first


def test_ties_in_the_middle_of_an_ordered_result():
    # ORDER BY score (no LIMIT): 1, then three 2s in any order, then 3.
    rows = [("a", 1), ("b", 2), ("c", 2), ("d", 2), ("e", 3)]
    answers = tie_gold(plan(OutputKey(1), probe=False), ok(*rows), None)
    assert isinstance(answers, TieGold)
    assert acceptable_count(answers) == factorial(3)
    for middle in itertools.permutations(rows[1:4]):
        assert accepts([rows[0], *middle, rows[4]], answers)
    assert not accepts([rows[1], rows[0], *rows[2:]], answers)  # 1 before the 2s
    assert not accepts([rows[0], rows[1], rows[2], rows[4], rows[3]], answers)


def test_order_by_a_constant_every_row_ties():
    # ORDER BY 'x' LIMIT 2 (no non-constant key): any 2 rows, in any order.
    rows = [(1,), (2,), (3,), (4,)]
    answers = tie_gold(plan(limit=2), ok((1,), (2,)), ok(*rows))
    assert isinstance(answers, TieGold)
    assert not answers.ordered and len(answers.groups) == 1
    assert acceptable_count(answers) == comb(4, 2)  # unordered: sets of rows
    for pair in itertools.permutations(rows, 2):
        assert accepts(list(pair), answers)
    assert not accepts([(1,), (1,)], answers)  # a row twice is not two rows of gold
    assert not accepts([(1,), (5,)], answers)


def test_limit_without_order_by_any_k_rows():
    rows = [("x",), ("y",), ("z",)]
    answers = tie_gold(plan(limit=1), ok(("z",)), ok(*rows))
    assert isinstance(answers, TieGold)
    assert [accepts([row], answers) for row in rows] == [True, True, True]
    assert acceptable_count(answers) == 3


def test_desc_with_nulls_groups_follow_the_engines_order():
    # ORDER BY v DESC LIMIT 3 on SQLite: NULLs sort last in DESC; the engine placed them, the
    # comparison only reads which adjacent keys are equal. Two NULL keys tie with each other.
    probe = ok(("a", 5), ("b", 4), ("c", None), ("d", None))
    answers = tie_gold(plan(OutputKey(1), limit=3), ok(("a", 5), ("b", 4), ("d", None)), probe)
    assert isinstance(answers, TieGold)
    assert accepts([("a", 5), ("b", 4), ("c", None)], answers)
    assert accepts([("a", 5), ("b", 4), ("d", None)], answers)
    assert not accepts([("c", None), ("a", 5), ("b", 4)], answers)  # NULLs are not first here
    assert acceptable_count(answers) == 2


def test_multi_key_order():
    # ORDER BY grade, age DESC LIMIT 3: ties only where both keys are equal.
    probe = ok(("a", 1, 30), ("b", 1, 20), ("c", 1, 20), ("d", 2, 50))
    answers = tie_gold(plan(OutputKey(1), OutputKey(2), limit=2), ok(*probe.rows[:2]), probe)
    assert isinstance(answers, TieGold)
    assert [len(g.rows) for g in answers.groups] == [1, 2]
    assert accepts([("a", 1, 30), ("c", 1, 20)], answers)
    assert not accepts([("b", 1, 20), ("a", 1, 30)], answers)
    assert not accepts([("a", 1, 30), ("d", 2, 50)], answers)


def test_extra_key_columns_are_not_part_of_the_answer():
    # ORDER BY price (not selected) LIMIT 1: the probe appends price; answers hold names only.
    probe = Outcome(Status.OK, columns=("name", "__tie_key_0"), rows=(("x", 1), ("y", 1)))
    answers = tie_gold(plan(ExtraKey(0), limit=1, extra=1), ok(("y",)), probe)
    assert isinstance(answers, TieGold)
    assert answers.groups == (TieGroup((("x",), ("y",)), 1),)


def test_offset_cuts_at_both_ends():
    # ORDER BY k LIMIT 2 OFFSET 1 over keys 1, 1, 1, 2: skip one of the 1s, keep two of the rest.
    probe = ok(("a", 1), ("b", 1), ("c", 1), ("d", 2))
    answers = tie_gold(plan(OutputKey(1), offset=1, limit=2), ok(("b", 1), ("c", 1)), probe)
    assert isinstance(answers, TieGold)
    assert answers.groups == (TieGroup(probe.rows[:3], 2),)
    assert accepts([("c", 1), ("a", 1)], answers)
    assert not accepts([("c", 1), ("d", 2)], answers)


def test_duplicate_rows_count_once_among_answers():
    # Two identical rows in the tied group give the same answer whichever is taken.
    probe = ok(("a", 1), ("a", 1), ("b", 1))
    answers = tie_gold(plan(OutputKey(1), limit=2), ok(("a", 1), ("a", 1)), probe)
    assert isinstance(answers, TieGold)
    # distinct ordered pairs from {a, a, b}: aa, ab, ba
    assert acceptable_count(answers) == 3


def test_values_compare_by_the_ex_rules():
    probe = ok(("a", 0.1 + 0.2), ("b", 0.3), ("c", 0.3))
    answers = tie_gold(plan(limit=2), ok(("a", 0.1 + 0.2), ("b", 0.3)), probe)
    assert isinstance(answers, TieGold)
    assert accepts([("a", 0.3), ("c", 0.3 * (1 + REL_TOL / 10))], answers)  # float noise
    assert not accepts([("a", 0.3), ("c", 0.31)], answers)
    assert not accepts([("a", 0.3), ("c", None)], answers)  # NULL equals only NULL


class TestUnusableProbes:
    def test_probe_failed(self):
        failed = Outcome(Status.TOO_MANY_ROWS, error="more than 10000 rows")
        assert tie_gold(TOP3, ok(("a", 9)), failed) == PROBE_FAILED

    def test_probe_columns(self):
        assert tie_gold(TOP3, ok(("a", 9), ("b", 8), ("c", 7)), ok((1, 2, 3))) == PROBE_COLUMNS

    def test_keys_not_sorted(self):
        probe = ok(("a", 1), ("b", 2), ("c", 1))
        assert tie_gold(plan(OutputKey(1), limit=2), ok(*probe.rows[:2]), probe) == KEYS_NOT_SORTED

    def test_probe_stopped_at_its_limit_inside_the_last_group(self):
        # The probe ends in LIMIT 4 and its last rows tie with the cut: more may follow.
        bounded = TiePlan(True, keys=(OutputKey(1),), limit=1, probe_sql="p", probe_limit=4)
        probe = ok(("a", 1), ("b", 1), ("c", 1), ("d", 1))
        assert tie_gold(bounded, ok(("a", 1)), probe) == PROBE_TRUNCATED
        # A group that ends before the probe's last row is complete.
        probe = ok(("a", 1), ("b", 1), ("c", 2), ("d", 3))
        assert isinstance(tie_gold(bounded, ok(("a", 1)), probe), TieGold)

    def test_gold_not_among_the_answers(self):
        assert tie_gold(TOP3, ok(("a", 9), ("b", 8), ("f", 5)), SCORES) == GOLD_NOT_ACCEPTED


def verdict_with_ties(pred: Outcome, gold: Outcome, answers: TieGold | None) -> Verdict:
    """Scoring's verdict of ``pred`` against the ordered ``gold`` with ``answers`` as gold's
    tie record (None: gold was not tie-probed)."""
    ties = None if answers is None else GoldTies(ANSWERS, str(acceptable_count(answers)), answers)
    return tie_verdict(compare(pred, gold, ordered=True), pred, gold, ties)


class TestVerdict:
    """Production's tie verdict (``gold_ties.tie_verdict``) on hand-built tie records."""

    def test_literal_match_stays_match(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        verdict = verdict_with_ties(gold, gold, top3_answers())
        assert verdict.reason == "match" and verdict.ex and acceptable_count(top3_answers()) == 3

    def test_other_tie_resolution_is_tie_equivalent(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = ok(("a", 9), ("b", 8), ("e", 7))
        verdict = verdict_with_ties(pred, gold, top3_answers())
        assert verdict.ex and verdict.reason == TIE_EQUIVALENT
        assert not verdict.ex_strict and not verdict.ex_set  # these stay literal

    def test_wrong_answer_keeps_its_reason(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = ok(("a", 9), ("b", 8), ("f", 5))
        verdict = verdict_with_ties(pred, gold, top3_answers())
        assert not verdict.ex and verdict.reason == "values"

    def test_column_count_is_checked(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = ok(("a", 9, 0), ("b", 8, 0), ("e", 7, 0))
        assert verdict_with_ties(pred, gold, top3_answers()).reason == "column_count"

    def test_only_a_resolvable_reason_is_resolved(self):
        # The rows are a right answer, but a literal verdict tie resolution cannot explain
        # (here one made by hand) stands: only order, values and row count are resolvable.
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = ok(("a", 9), ("b", 8), ("e", 7))
        ties = GoldTies(ANSWERS, "3", top3_answers())
        for reason in ("column_count", "types", *sorted(RESOLVABLE)):
            literal = Verdict(False, False, False, reason)
            verdict = tie_verdict(literal, pred, gold, ties)
            assert verdict.ex is (reason in RESOLVABLE), reason

    def test_without_a_probe_the_literal_verdict_stands(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = ok(("a", 9), ("b", 8), ("e", 7))
        verdict = verdict_with_ties(pred, gold, None)
        assert not verdict.ex and verdict.reason == "values"

    def test_failed_prediction(self):
        gold = ok(("a", 9), ("b", 8), ("c", 7))
        pred = Outcome(Status.ERROR, error="no such column")
        assert verdict_with_ties(pred, gold, top3_answers()).reason == "pred_error"


def test_round_trip_through_json():
    answers = top3_answers()
    assert TieGold.from_json(answers.to_json()) == answers


# -- properties ---------------------------------------------------------------------------


def _brute_force_count(answers: TieGold) -> int:
    """Distinct accepted results by enumeration (small cases only)."""
    results = set()
    per_group = []
    for group in answers.groups:
        choices = set()
        for chosen in itertools.permutations(group.rows, group.need):
            choices.add(chosen if answers.ordered else tuple(sorted(chosen)))
        per_group.append(choices)
    for combination in itertools.product(*per_group):
        results.add(tuple(row for part in combination for row in part))
    return len(results)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    keys=st.lists(st.integers(0, 3), min_size=1, max_size=7),
    values=st.lists(st.integers(0, 2), min_size=7, max_size=7),
    offset=st.integers(0, 3),
    limit=st.one_of(st.none(), st.integers(0, 5)),
    ordered=st.booleans(),
)
def test_count_matches_enumeration(keys, values, offset, limit, ordered):
    keys = sorted(keys)
    rows = tuple((values[i], k) for i, k in enumerate(keys))
    the_plan = (
        plan(OutputKey(1), offset=offset, limit=limit)
        if ordered
        else plan(offset=offset, limit=limit)
    )
    stop = len(rows) if limit is None else min(len(rows), offset + limit)
    answers = tie_gold(the_plan, ok(*rows[offset:stop], width=2), ok(*rows))
    assert isinstance(answers, TieGold)
    assert acceptable_count(answers) == _brute_force_count(answers)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    keys=st.lists(st.integers(0, 4), min_size=1, max_size=9),
    offset=st.integers(0, 3),
    limit=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_every_tie_resolution_is_accepted_and_an_outsider_is_not(keys, offset, limit, seed):
    keys = sorted(keys)
    rows = tuple((f"r{i}", k) for i, k in enumerate(keys))
    answers = tie_gold(plan(OutputKey(1), offset=offset, limit=limit),
                       ok(*rows[offset:offset + limit], width=2), ok(*rows))  # fmt: skip
    assert isinstance(answers, TieGold)
    rng = random.Random(seed)
    resolution = []
    for group in answers.groups:
        resolution += rng.sample(group.rows, group.need)
    assert accepts(resolution, answers)
    touched = {row for group in answers.groups for row in group.rows}
    outsiders = [row for row in rows if row not in touched]
    if resolution and outsiders:  # a row from outside the groups the answer draws from
        swapped = list(resolution)
        swapped[rng.randrange(len(swapped))] = rng.choice(outsiders)
        assert not accepts(swapped, answers)
    if len(resolution) >= 2:  # rows are distinct: one taken twice is not a subset of gold's
        assert not accepts(resolution[:-1] + [resolution[0]], answers)


def test_column_scales_come_from_the_two_results_compared():
    # LIMIT 2 without ORDER BY over six huge values and two small ones: any two rows are right.
    # Gold kept the small ones; the answer gives them as 0. Rows in neither result (the six
    # 1e20s) must not make 0.05 and 0.04 look like residues next to them.
    rows = tuple((f"x{i}", 1e20) for i in range(6)) + (("a", 0.05), ("b", 0.04))
    answers = TieGold((TieGroup(rows, 2),), ordered=False)
    gold = [("a", 0.05), ("b", 0.04)]
    assert accepts(gold, answers, gold_rows=gold)
    assert accepts([("x3", 1e20), ("b", 0.04)], answers, gold_rows=gold)
    assert not accepts([("a", 0.0), ("b", 0.0)], answers, gold_rows=gold)
