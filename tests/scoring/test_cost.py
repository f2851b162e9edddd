"""Metered answers (``scoring.cost``) score exactly as the bare answers, with their cost added:
single answers, sampled ones (the item costs its samples' sum) and a run's numbers (sums and
medians apart from the means, which do not move)."""

from __future__ import annotations

import sqlite3

import pytest
from support.cost import COST_FIELDS

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.scoring.cost import USAGE, Cost, wrap
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate

ANSWERS = ["```sql\nSELECT name FROM pets\n```", "```sql\nSELECT 'Rex'\n```", "no SQL here"]
COSTS = [Cost(120, 7, 0.5, USAGE), Cost(80, 30, 1.5, USAGE), Cost(100, 3, 0.25, USAGE)]


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "pets.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE pets (name)")
        db.executemany("INSERT INTO pets VALUES (?)", [("Rex",), ("Tom",)])
    database = Database("sqlite", str(path))
    return [
        Item(i, "Name the pets.", database, "SELECT name FROM pets", "sqlite") for i in (1, 2, 3)
    ]


def bare(score: dict) -> dict:
    return {name: value for name, value in score.items() if name not in COST_FIELDS}


def test_metered_answers_score_as_the_bare_ones_with_their_cost(items):
    scorer = Scorer(workers=1, progress=False)
    plain = scorer.score(items, ANSWERS)
    metered = scorer.score(items, [wrap(a, c) for a, c in zip(ANSWERS, COSTS, strict=True)])
    assert [bare(s) for s in metered] == plain
    assert [s["ex"] for s in plain] == [1, 0, 0]  # the right answer, a wrong one, no SQL
    for score, cost in zip(metered, COSTS, strict=True):
        assert (score["prompt_tokens"], score["completion_tokens"]) == (
            cost.prompt_tokens, cost.completion_tokens
        )  # fmt: skip
        assert (score["latency_s"], score["tokens_from"], score["requests"]) == (
            cost.latency_s, USAGE, 1
        )  # fmt: skip

    assert [ScoredItem.from_score(s).cost for s in metered] == COSTS
    assert ScoredItem.from_score(plain[0]).cost is None

    run, plain_run = aggregate(metered), aggregate(plain)
    assert {k: v for k, v in run.items() if k != "cost"} == plain_run
    assert run["cost"]["prompt_tokens"] == 300 and run["cost"]["completion_tokens"] == 40
    assert run["cost"]["median_tokens"] == 110  # of 127, 110 and 103
    assert run["cost"]["latency_s"] == 2.25 and run["cost"]["median_latency_s"] == 0.5


def test_a_sampled_item_costs_the_sum_of_its_samples(items):
    scorer = Scorer(workers=1, progress=False)
    samples = [ANSWERS[:2], ANSWERS[1:]]
    plain = scorer.score_samples(items[:2], samples)
    metered = scorer.score_samples(
        items[:2],
        [[wrap(a, c) for a, c in zip(s, costs, strict=True)] for s, costs in
         zip(samples, [COSTS[:2], COSTS[1:]], strict=True)],
    )  # fmt: skip
    assert [bare(s) for s in metered] == plain
    assert [(s["prompt_tokens"], s["completion_tokens"], s["requests"]) for s in metered] == [
        (200, 37, 2),
        (180, 33, 2),
    ]
