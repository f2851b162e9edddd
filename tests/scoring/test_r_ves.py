"""r_ves, BIRD's R-VES buckets on deterministic work, as scoring reports it: the worked example
of the README by hand, then real scoring on real SQLite and DuckDB files (the ``database``
fixture of conftest.py: pumps A (flow 10), B (20), C (5))."""

from __future__ import annotations

import math

import duckdb
import pytest

from sqlbench_lmeval.execution import Database, Outcome, Status, engines
from sqlbench_lmeval.lmeval.hooks import process_results
from sqlbench_lmeval.scoring.answer import Answer, Failure
from sqlbench_lmeval.scoring.compare import compare
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import (
    EX,
    EXECUTION_METRICS,
    GOLD_WORK,
    R_VES,
    WORK,
    Executed,
    compute_metrics,
    execution_metrics,
    metric,
    not_defined,
)
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate

ROWS = (("A",), ("B",))


def executed(gold_work, pred_work, pred_rows=ROWS) -> Executed:
    gold = Outcome(Status.OK, ("name",), ROWS, work=gold_work)
    predicted = Outcome(Status.OK, ("name",), pred_rows, work=pred_work)
    return Executed(
        item=Item(1, "q", Database("sqlite", "x.sqlite"), "SELECT 1", "sqlite"),
        sql="SELECT 1",
        predicted=predicted,
        gold=gold,
        ordered=False,
        verdict=compare(predicted, gold, ordered=False),
        reads_no_table=False,
    )


@pytest.mark.parametrize(
    ("gold_work", "pred_work", "expected"),
    [
        # The README's worked example: gold 1,200 VM steps.
        (1200, 500, math.sqrt(1.25)),  # ratio 2.4 -> reward 1.25 -> 1.118
        (1200, 600, math.sqrt(1.25)),  # ratio exactly 2: the upper bucket
        (1200, 1200, 1.0),  # ratio 1 (gold as its own answer)
        (1200, 1500, math.sqrt(0.75)),  # ratio 0.8
        (1200, 3000, math.sqrt(0.5)),  # ratio 0.4 -> 0.707
        (1200, 4800, math.sqrt(0.5)),  # ratio exactly 0.25: still 0.5
        (1200, 4801, 0.5),  # below 0.25: the floor 0.25, sqrt 0.5
        (0, 0, 1.0),  # no counted work on either side counts as one unit each
        (None, None, 0.0),  # an engine that counts no work
    ],
)
def test_r_ves_of_a_correct_answer_by_hand(gold_work, pred_work, expected):
    assert compute_metrics(executed(gold_work, pred_work))[R_VES] == expected


def test_a_wrong_answer_scores_zero_however_little_it_works():
    values = compute_metrics(executed(1200, 1, pred_rows=(("A",),)))
    assert (values["ex"], values[R_VES]) == (0, 0.0)


def item(database, gold_sql, id=1, dialect="sqlite"):
    return Item(id, f"question {id}", database, gold_sql, dialect)


GOLD = "SELECT name FROM pump WHERE flow > 6"
SAME = GOLD
# The same rows after a cross join of 3 x 3 x 3 x 3 rows: many times gold's work.
SLOWER = (
    "SELECT DISTINCT p.name FROM pump AS p, pump AS q, pump AS r, pump AS s, pump AS t "
    "WHERE p.flow > 6 AND q.flow + r.flow + s.flow + t.flow > 0"
)
WRONG = "SELECT name FROM pump"


def test_real_scores_log_the_work_and_divide_it(database):
    scores = Scorer(progress=False).score([item(database, GOLD)] * 4, [SAME, SLOWER, WRONG, None])
    same, slower, wrong, missing = scores
    assert same[WORK] == same[GOLD_WORK] is not None and same[R_VES] == 1.0
    assert slower["ex"] == 1 and slower[WORK] > 2 * slower[GOLD_WORK]
    assert slower[R_VES] < 1.0
    assert wrong["ex"] == 0 and wrong[R_VES] == 0 and wrong[WORK] is not None
    assert missing[R_VES] == 0 and missing[WORK] is None
    # Logged, never averaged: neither lm-eval nor aggregate sees the counts as metrics.
    assert {WORK, GOLD_WORK}.isdisjoint(process_results({}, [same]))
    summary = aggregate(scores)
    assert WORK not in summary and summary[R_VES] == pytest.approx((1.0 + slower[R_VES]) / 4)


def test_real_duckdb_scores(tmp_path):
    path = tmp_path / "pumps.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE pump (name VARCHAR, flow DOUBLE, head DOUBLE)")
        conn.execute("INSERT INTO pump VALUES ('A', 10, 2.5), ('B', 20, 1), ('C', 5, 4)")
    database = Database("duckdb", str(path))
    same, slower = Scorer(progress=False).score(
        [item(database, GOLD, dialect="duckdb")] * 2, [SAME, SLOWER]
    )
    assert same[WORK] == same[GOLD_WORK] > 0 and same[R_VES] == 1.0
    assert slower["ex"] == 1 and slower[WORK] > 2 * slower[GOLD_WORK]
    assert slower[R_VES] < 1.0


def test_bird_timed_r_ves_on_request(database):
    from sqlbench_lmeval.scoring.timed_efficiency import timed_r_ves

    items = [item(database, GOLD)] * 3
    scores = Scorer(progress=False).score(items, [SAME, WRONG, SLOWER])
    same, wrong, slower = timed_r_ves(items, scores, iterations=5, workers=1)
    # Times vary by machine and load; only the reward's possible values are certain.
    rewards = {math.sqrt(r) for r in (1.25, 1.0, 0.75, 0.5, 0.25)}
    assert same in rewards and slower in rewards
    assert wrong == 0.0  # not correct: never timed
    with pytest.raises(ValueError):
        timed_r_ves(items, scores, iterations=0)


def test_r_ves_is_not_defined_where_the_engine_counts_no_work(database):
    """PostgreSQL counts no work (``execution/postgres.py`` says why): its items carry no r_ves
    at all, so no table shows a 0 that was never measured; every other metric is unchanged,
    and an engine that counts work still gives a wrong answer r_ves 0 (as BIRD does)."""
    assert engines.get("postgres").work_unit is None and engines.get("sqlite").work_unit
    assert EXECUTION_METRICS == execution_metrics("sqlite") == execution_metrics("duckdb")
    assert execution_metrics("postgres") == tuple(n for n in EXECUTION_METRICS if n != R_VES)
    assert not_defined(R_VES, "postgres") == "not defined on postgres: it counts no work"
    assert not_defined(R_VES, "sqlite") is None and not_defined(EX, "postgres") is None
    assert "absent from items on an engine that counts none" in metric(R_VES).defined_on
    # lm-eval's process_results: no r_ves key for a PostgreSQL document, score dict or not.
    failed = Answer.unreadable(7, Failure("document", "unreadable"), "postgres").to_json()
    assert R_VES not in failed and failed[EX] == 0
    assert R_VES not in process_results({"engine": "postgres"}, [failed])
    assert R_VES not in process_results({"engine": "postgres"}, [])
    assert process_results({"engine": "sqlite"}, [])[R_VES] == 0
    assert R_VES not in aggregate([failed])
    (wrong,) = Scorer(progress=False).score([item(database, GOLD)], [WRONG])
    assert wrong[EX] == 0 and wrong[R_VES] == 0 and process_results({}, [wrong])[R_VES] == 0
