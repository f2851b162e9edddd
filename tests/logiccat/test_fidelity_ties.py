"""Fidelity counts two gold results that are tie resolutions of each other as agreeing: gold's
right answers come from the tie probe on a real SQLite file (``fidelity.tie_answers``), the
other side's result is checked with fidelity's own value rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from support.ties import scores_database

from sqlbench_lmeval.execution import Database, Job, Limits, execute_many
from sqlbench_lmeval.logiccat import fidelity
from sqlbench_lmeval.scoring.tie_compare import TieGold, TieGroup

GOLD = "SELECT name FROM scores ORDER BY score DESC LIMIT 3"


@dataclass(frozen=True)
class Record:
    id: int
    db_id: str = "scores"
    flags: tuple[str, ...] = ()


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Database:
    return scores_database(tmp_path_factory.mktemp("fidelity") / "scores.sqlite")


def run(database: Database, sql: dict[int, str]) -> dict:
    outcomes = execute_many([Job(database, text) for text in sql.values()], Limits(), workers=1)
    return dict(zip(sql, outcomes, strict=True))


def test_the_other_engines_pick_from_the_tie_agrees_and_an_outsider_does_not(database):
    gold = run(database, {1: GOLD, 2: GOLD})
    answers = fidelity.tie_answers(
        {item_id: (GOLD, outcome) for item_id, outcome in gold.items()},
        "sqlite",
        lambda sql: run(database, sql),
    )
    assert set(answers) == {1, 2}
    ours = {item_id: (True, outcome.rows) for item_id, outcome in gold.items()}
    reference = {  # item 1: the server kept eve; item 2: fay, who is not tied with the 7s
        1: {"status": "ok", "rows": [["ann"], ["bob"], ["eve"]]},
        2: {"status": "ok", "rows": [["ann"], ["bob"], ["fay"]]},
    }
    records = [Record(1), Record(2)]
    literal = fidelity.measure(records, ours, reference)
    assert literal.agree == 0 and literal.tie_agree == ()
    ties = {item_id: (found, None) for item_id, found in answers.items()}
    aware = fidelity.measure(records, ours, reference, ties)
    assert (aware.agree, aware.tie_agree) == (1, (1,))
    assert aware.tie_items == (1, 2)  # both have ties; fay is no tie resolution
    assert "1 of 2 tie items as tie resolutions" in aware.summary()


def test_both_sides_answers_must_accept_the_other_result():
    lite = TieGold((TieGroup((("cid",), ("dan",)), 1),), ordered=True)
    server = TieGold((TieGroup((("dan",), ("eve",)), 1),), ordered=True)
    assert fidelity.agree_as_ties([("cid",)], [("dan",)], (lite, server)) is False
    assert fidelity.agree_as_ties([("dan",)], [("dan",)], (lite, server)) is True
    assert fidelity.agree_as_ties([("cid",)], [("dan",)], (lite, None)) is True
    assert fidelity.agree_as_ties([("cid",)], [("dan",)], (None, None)) is False


def test_tolerant_within_pairs_rows_by_fidelitys_value_rule():
    assert fidelity.tolerant_within([(1.00001,)], [(2.0,), (1.0,)])  # within 1e-4
    assert not fidelity.tolerant_within([(1.1,)], [(2.0,), (1.0,)])
    assert not fidelity.tolerant_within([(1.0,), (1.0,)], [(1.0,), (2.0,)])  # one 1.0 only


# Two rows tie on 1/15 and the cut keeps one; MySQL shows the DECIMAL quotient at scale 4.
DECIMAL_ANSWERS = TieGold(
    (TieGroup(((1, 0.06),), 1), TieGroup(((2, 1 / 15), (3, 1 / 15)), 1)), ordered=True
)


def test_a_tie_item_whose_values_differ_by_decimal_scale_is_decimal_scale_not_agreeing():
    records = [Record(1), Record(2)]
    ours = {1: (True, ((1, 0.06), (2, 1 / 15))), 2: (True, ((1, 0.06), (2, 1 / 15)))}
    reference = {  # item 1: the other row of the tie, at MySQL's scale; item 2: not in the tie
        1: {"status": "ok", "rows": [[1, {"decimal": "0.0600"}], [3, {"decimal": "0.0667"}]]},
        2: {"status": "ok", "rows": [[1, {"decimal": "0.0600"}], [4, {"decimal": "0.0667"}]]},
    }
    ties = {1: (DECIMAL_ANSWERS, None), 2: (DECIMAL_ANSWERS, None)}
    measured = fidelity.measure(records, ours, reference, ties)
    # 0.0667 is 5e-4 away from 1/15 (relative): beyond the tolerance, so neither agrees ...
    assert measured.agree == 0 and measured.tie_agree == ()
    # ... item 1 is the tie's other row at MySQL's scale; item 2's row 4 is no tie resolution.
    assert measured.disagreements[fidelity.DECIMAL_SCALE] == (1,)
    assert measured.disagreements["other"] == (2,)
    assert measured.tie_items == (1, 2)


def test_flagged_subquery_ties_are_their_own_class_and_tie_items():
    records = [Record(1, flags=("nondeterministic_order",)), Record(2)]
    ours = {1: (True, ((5.0,),)), 2: (True, ((5.0,),))}
    reference = {1: {"status": "ok", "rows": [[6.0]]}, 2: {"status": "ok", "rows": [[6.0]]}}
    measured = fidelity.measure(records, ours, reference, {})
    assert measured.disagreements[fidelity.SUBQUERY_TIES] == (1,)
    assert measured.disagreements["other"] == (2,)
    assert measured.tie_items == (1,)  # item 2 has no ties: not in the denominator
    assert "0 of 1 tie items as tie resolutions" in measured.summary()
