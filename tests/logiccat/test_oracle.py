"""Oracle run on the real LogicCat data: the gold SQL as every prediction.

Every query really runs twice (as gold and as prediction) through the same path as the lm-eval
task. Each item with healthy gold must score EX = 1 in all three modes; anything else is a
defect in execution or comparison, not in a model.
"""

from __future__ import annotations

import pytest

from sqlbench_lmeval.execution import GoldCache
from sqlbench_lmeval.logiccat.benchmark import load_items
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
from sqlbench_lmeval.scoring.metrics import GOLD_WORK, R_VES, WORK
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate

pytestmark = pytest.mark.slow


def test_gold_as_predictions_scores_one_on_every_healthy_item(logiccat_cache):
    items = load_items(cache_dir=logiccat_cache)
    assert len(items) == 4036
    scores = Scorer(gold_cache=GoldCache(gold_cache_dir(logiccat_cache)), progress=False).score(
        items, [item.gold_sql for item in items]
    )
    healthy = [
        score
        for score in scores
        if score["gold_status"] == "ok" and not UNREPEATABLE_FLAGS & set(score["flags"])
    ]
    assert len(healthy) > 3300
    failed = [
        (s["id"], s["reason"])
        for s in healthy
        if (s["ex"], s["ex_strict"], s["ex_set"]) != (1, 1, 1)
    ]
    assert failed == []
    assert aggregate(scores)["ex_on_healthy_gold"] == 1.0
    # Exactly the healthy items carry EX on healthy gold, each with its EX.
    assert [s["id"] for s in scores if "ex_on_healthy_gold" in s] == [s["id"] for s in healthy]
    assert all(s["ex_on_healthy_gold"] == 1 for s in healthy)
    # Gold as its own answer did exactly gold's work (counted in another run, gold's from the
    # cache): r_ves 1.0 on every healthy item (issue 21).
    off = [(s["id"], s[WORK], s[GOLD_WORK]) for s in healthy if s[R_VES] != 1.0]
    assert off == []
    assert all(s[WORK] == s[GOLD_WORK] is not None for s in healthy)
    # Gold reads the data (issues 31, 41): no answer is flagged, ex_reads_data is 1 on every
    # healthy item, and on the perturbed copies it gave gold's result wherever gold's changed,
    # or nothing could tell (gold whose result the perturbations leave, e.g. a count of 0).
    assert [s["id"] for s in scores if s["reads_no_table"]] == []
    assert [s["id"] for s in healthy if s["ex_reads_data"] != 1] == []
    assert {s["data_dependence"] for s in scores if s["ex"]} <= {"changed", "undecidable", None}
    decided = [s for s in healthy if s["data_dependence"] == "changed"]
    # Values and row counts change on the copies: gold that names a table moves with them,
    # bar a few results such as counts of 0.
    named = [s for s in healthy if s["data_dependence"] is not None]
    assert len(decided) > 0.95 * len(named)
    # Gold that runs but returns nothing or only NULLs still matches itself...
    for status in ("empty", "all_null"):
        assert all(s["ex"] == 1 for s in scores if s["gold_status"] == status), status
    # ...and gold that fails never does: EX counts 0 there, VES says whether the query ran.
    assert all(s["ex"] == 0 for s in scores if s["gold_status"] in ("error", "non_select"))
    # Gold as the answer to broken gold fails as gold did (when the data was prepared, 138
    # error and 12 non_select): each such answer keeps its own failure (docs/scoring.md,
    # "Verdicts"), and no item is a wrong result but where gold draws random numbers (RAND():
    # its result differs from run to run, so gold as the answer can differ from gold).
    broken = [s for s in scores if s["gold_status"] in ("error", "non_select")]
    assert len(broken) == 150 and all(s["status"] != "ok" for s in broken)
    repeatable = [s for s in scores if "random" not in s["flags"]]
    assert "wrong_result" not in aggregate(repeatable)["verdict_counts"]
