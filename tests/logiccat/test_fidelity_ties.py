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
    assert "1 as tie resolutions" in aware.summary()


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
