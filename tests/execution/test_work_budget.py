"""The work budget (``Limits.work_budget``): SQLite stops a statement once it has taken more VM
steps than the budget, with an error that names the budget and no time, counted as ``work``
counts them; a statement within the budget gives what it gives without one; gold's limits have
no budget, and an engine that does not count work as it runs ignores it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, engines, execute_many
from sqlbench_lmeval.execution import sqlite as sqlite_engine
from sqlbench_lmeval.execution.deadline import stopped_at_budget
from sqlbench_lmeval.execution.limits import WORK_BUDGET

LOOP = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
PAIRS = "SELECT count(*) FROM t AS x, t AS y WHERE x.c < y.c"  # 100 x 100 row pairs
BUDGET = 1 << 20  # a few milliseconds of the loop


@pytest.mark.parametrize("count_work", [True, False])
def test_a_loop_stops_at_the_budget_naming_it(tiny_sqlite, count_work):
    # A time limit far beyond the budget: only the budget can stop the loop.
    limits = Limits(timeout_s=300, work_budget=BUDGET, count_work=count_work)
    conn = sqlite_engine.connect(str(tiny_sqlite), limits)
    outcome = sqlite_engine.run(conn, LOOP, limits)
    assert outcome.status is Status.TIMEOUT and stopped_at_budget(outcome)
    assert outcome.error == "stopped at its work budget of 1,048,576 VM steps"
    assert outcome.elapsed_s < 60


def test_the_budget_is_what_work_counts(tiny_sqlite):
    # PAIRS takes thousands of units of 64 steps: a budget of its own count lets it finish with
    # the same outcome as no budget; a budget two units less stops it.
    unlimited = Limits(work_budget=None)
    conn = sqlite_engine.connect(str(tiny_sqlite), unlimited)
    free = sqlite_engine.run(conn, PAIRS, unlimited)
    assert free.ok and free.work > 100 * sqlite_engine.STEP_UNIT
    within = sqlite_engine.run(conn, PAIRS, Limits(work_budget=free.work))
    assert within.ok and (within.rows, within.work) == (free.rows, free.work)
    short = sqlite_engine.run(conn, PAIRS, Limits(work_budget=free.work - 2 * 64))
    assert stopped_at_budget(short)
    # The connection is as before: the next statement runs under its own limits.
    assert sqlite_engine.run(conn, PAIRS, unlimited).work == free.work


def test_without_a_budget_the_clock_stops_a_loop(tiny_sqlite):
    limits = Limits(timeout_s=0.3, work_budget=None)
    conn = sqlite_engine.connect(str(tiny_sqlite), limits)
    outcome = sqlite_engine.run(conn, LOOP, limits)
    assert outcome.status is Status.TIMEOUT and outcome.error == "stopped after 0.3 s"


def test_answers_have_the_budget_and_gold_none():
    assert Limits().work_budget == WORK_BUDGET == 1 << 28
    assert Limits(timeout_s=5).for_gold().work_budget is None
    assert engines.get("sqlite").stops_at_work_budget
    assert not any(engines.get(name).stops_at_work_budget for name in engines.NAMES[1:])


def test_through_workers_and_an_engine_that_ignores_it(tiny_sqlite, tiny_duckdb):
    limits = Limits(timeout_s=300, work_budget=BUDGET)
    sqlite_db = Database("sqlite", str(tiny_sqlite))
    outcomes = execute_many(
        [Job(sqlite_db, LOOP), Job(sqlite_db, "SELECT count(*) FROM t")], limits, workers=1
    )
    assert stopped_at_budget(outcomes[0]) and outcomes[1].rows == ((100,),)
    # DuckDB does not count work as it runs: a budget of one unit stops nothing. (In a worker:
    # this process may hold the file open under another configuration, which DuckDB refuses.)
    duck = Database("duckdb", str(tiny_duckdb))
    (outcome,) = execute_many([Job(duck, PAIRS)], replace(limits, work_budget=1), workers=1)
    assert outcome.ok and outcome.work > 1
