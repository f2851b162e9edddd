"""Tie-aware EX on real engines, through the product's scoring path, for the tie tests of
several folders: one prediction's score (:func:`verdict`: ``Scorer.score``) and
the properties over a whole benchmark's gold (:func:`check_gold`: the tie records scoring
makes, ``gold_ties``, and the verdict it gives, ``gold_ties.tie_verdict``)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from sqlbench_lmeval.execution import Database, Job, Limits, Outcome, Status, execute_many
from sqlbench_lmeval.scoring.compare import compare, gold_order_matters
from sqlbench_lmeval.scoring.gold_ties import ANSWERS, plan_batch, tie_verdict
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import TIE_STATUS
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.tie_compare import TieGold

#: The sqlglot dialect of gold on each engine.
DIALECTS = {"sqlite": "sqlite", "duckdb": "duckdb", "mysql": "mysql", "postgres": "postgres"}


#: The README's worked example: ann 9, bob 8, cid 7, dan 7, eve 7, fay 5.
SCORES = (("ann", 9), ("bob", 8), ("cid", 7), ("dan", 7), ("eve", 7), ("fay", 5))


def scores_database(path: Path, more_sql: str = "") -> Database:
    """A SQLite file at ``path`` with table ``scores(name, score)`` holding :data:`SCORES`,
    then ``more_sql`` run on it."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE scores (name TEXT, score INTEGER)")
        conn.executemany("INSERT INTO scores VALUES (?, ?)", SCORES)
        conn.executescript(more_sql)
    conn.close()
    return Database("sqlite", str(path))


def verdict(database: Database, gold_sql: str, pred_sql: str, gold_cache=None) -> dict:
    """The score dict of ``pred_sql`` as the answer to ``gold_sql``, both run on ``database``
    by ``Scorer.score`` (through ``gold_cache`` when given)."""
    item = Item(1, "?", database, gold_sql, DIALECTS[database.engine])
    (score,) = Scorer(workers=1, progress=False, gold_cache=gold_cache).score([item], [pred_sql])
    assert score[TIE_STATUS] == ANSWERS, score[TIE_STATUS]
    return score


#: On a server's table t(a, b, c) holding a = 0..99 and c = a / 10 (the attack servers of
#: ``tests/execution/conftest.py``), gold ordered by FLOOR(c) ties in groups of ten rows.
CUT_GOLD = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 3"


def check_cut_through_ties(database: Database, offset_sql: str) -> None:
    """Tie-aware EX on a server engine, gold and its probe run there: ``CUT_GOLD`` cuts
    through the ten rows with c in [0, 1), and ``offset_sql`` (gold's ``LIMIT 3`` after 5 rows
    in the engine's own offset form) through the same group."""
    assert verdict(database, CUT_GOLD, "SELECT a FROM t WHERE a IN (9, 4, 7)")["ex"]
    assert not verdict(database, CUT_GOLD, "SELECT a FROM t WHERE a IN (9, 4, 17)")["ex"]
    assert verdict(database, offset_sql, "SELECT a FROM t WHERE a IN (0, 1, 2)")["ex"]
    assert not verdict(database, offset_sql, "SELECT a FROM t WHERE a IN (0, 1, 10)")["ex"]


def resolutions(answers: TieGold, rng: random.Random) -> list[list[tuple]]:
    """Other right answers: each group's rows reversed (the last ones of a cut group), then
    two random choices in random orders."""
    reversed_ = [row for g in answers.groups for row in list(g.rows)[::-1][: g.need]]
    chosen = [[row for g in answers.groups for row in rng.sample(g.rows, g.need)]
              for _ in range(2)]  # fmt: skip
    return [reversed_, *chosen]


def check_gold(items, workers: int = 2) -> dict[str, int]:
    """Make every item's tie record as scoring does (gold and probes run, no cache); check the
    two properties with scoring's verdict; count what was checked."""
    limits = Limits()
    gold_jobs = [Job(item.database, item.gold_sql) for item in items]
    batch = plan_batch(items, gold_jobs, limits, None)
    ran = execute_many(gold_jobs + batch.probe_jobs, limits, workers=workers)
    golds, probes = ran[: len(items)], ran[len(items) :]
    records = batch.finish(golds, probes)
    rng = random.Random(21)
    seen = {"with_ties": 0, "outsiders": 0}
    for k, (item, record, gold) in enumerate(zip(items, records, golds, strict=True)):
        answers = record.answers
        if not isinstance(answers, TieGold) or not gold.ok:
            continue
        ordered = gold_order_matters(item.gold_sql, item.dialect)

        def ex(rows, gold=gold, record=record, ordered=ordered) -> bool:
            pred = Outcome(Status.OK, columns=gold.columns, rows=tuple(rows))
            return tie_verdict(compare(pred, gold, ordered=ordered), pred, gold, record).ex

        assert ex(gold.rows), item.id
        if record.has_ties:
            seen["with_ties"] += 1
            for rows in resolutions(answers, rng):
                assert ex(rows), item.id
        slot = batch.probe_of.get(k)
        full = probes[slot].rows if slot is not None else gold.rows
        width = len(gold.columns)
        inside = {repr(row) for g in answers.groups for row in g.rows}
        outsiders = [row[:width] for row in full if repr(row[:width]) not in inside]
        if outsiders and gold.rows:
            swapped = list(gold.rows)
            swapped[rng.randrange(len(swapped))] = tuple(rng.choice(outsiders))
            assert not ex(swapped), item.id
            seen["outsiders"] += 1
    return seen
