"""Tie-aware EX on real engines, for the tie tests of several folders: one prediction's verdict
(:func:`verdict`) and the properties over a whole benchmark's gold (:func:`check_gold`)."""

from __future__ import annotations

import random

from sqlbench_lmeval.execution import Database, Job, Limits, Outcome, Status, execute, execute_many
from sqlbench_lmeval.scoring.tie_compare import TieGold, TieVerdict, compare_with_ties, tie_gold
from sqlbench_lmeval.scoring.tie_probe import plan_ties


def verdict(database: Database, gold_sql: str, pred_sql: str) -> TieVerdict:
    """Tie-aware EX of ``pred_sql`` against ``gold_sql``, both run on ``database``."""
    limits = Limits()
    plan = plan_ties(gold_sql, database.engine)
    assert plan.handled, plan.reason
    gold = execute(Job(database, gold_sql), limits)
    probe = execute(Job(database, plan.probe_sql), limits) if plan.probe_sql else None
    answers = tie_gold(plan, gold, probe)
    assert isinstance(answers, TieGold), answers
    pred = execute(Job(database, pred_sql), limits)
    return compare_with_ties(pred, gold, answers, ordered=True)


def resolutions(answers: TieGold, rng: random.Random) -> list[list[tuple]]:
    """Other right answers: each group's rows reversed (the last ones of a cut group), then
    two random choices in random orders."""
    reversed_ = [row for g in answers.groups for row in list(g.rows)[::-1][: g.need]]
    chosen = [[row for g in answers.groups for row in rng.sample(g.rows, g.need)]
              for _ in range(2)]  # fmt: skip
    return [reversed_, *chosen]


def check_gold(items, workers: int = 2) -> dict[str, int]:
    """Run every item's gold and probe; check the two properties; count what was checked."""
    plans = [plan_ties(item.gold_sql, item.dialect) for item in items]
    limits = Limits()
    golds = execute_many([Job(i.database, i.gold_sql) for i in items], limits, workers=workers)
    probed = [k for k, p in enumerate(plans) if p.handled and p.probe_sql and golds[k].ok]
    probes = dict(
        zip(
            probed,
            execute_many(
                [Job(items[k].database, plans[k].probe_sql) for k in probed],
                limits,
                workers=workers,
            ),  # fmt: skip
            strict=True,
        )
    )
    rng = random.Random(21)
    seen = {"with_ties": 0, "outsiders": 0}
    for k, (item, plan, gold) in enumerate(zip(items, plans, golds, strict=True)):
        if not (plan.handled and plan.has_order_or_cut and gold.ok):
            continue
        answers = tie_gold(plan, gold, probes.get(k))
        if not isinstance(answers, TieGold):
            continue
        assert compare_with_ties(gold, gold, answers, ordered=True).verdict.ex
        if answers.has_ties:
            seen["with_ties"] += 1
            for rows in resolutions(answers, rng):
                pred = Outcome(Status.OK, columns=gold.columns, rows=tuple(rows))
                assert compare_with_ties(pred, gold, answers, ordered=True).verdict.ex, item.id
        full = probes[k].rows if k in probes else gold.rows
        width = len(gold.columns)
        inside = {repr(row) for g in answers.groups for row in g.rows}
        outsiders = [row[:width] for row in full if repr(row[:width]) not in inside]
        if outsiders and gold.rows:
            swapped = list(gold.rows)
            swapped[rng.randrange(len(swapped))] = tuple(rng.choice(outsiders))
            pred = Outcome(Status.OK, columns=gold.columns, rows=tuple(swapped))
            assert not compare_with_ties(pred, gold, answers, ordered=True).verdict.ex, item.id
            seen["outsiders"] += 1
    return seen
