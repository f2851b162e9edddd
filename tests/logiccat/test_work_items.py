"""r_ves of real LogicCat items whose gold and a correct answer lie on either side of 64 VM
steps, the unit SQLite's work was once counted in (issue 31): the bucket is now the queries'
(their exact steps), not the unit's (gold under 64 steps counted 0, taken as one unit)."""

from __future__ import annotations

import math
import sqlite3
import urllib.parse

import pytest

from sqlbench_lmeval.logiccat.benchmark import load_items
from sqlbench_lmeval.logiccat.mysql_functions import install
from sqlbench_lmeval.scoring.metrics import GOLD_WORK, R_VES, WORK
from sqlbench_lmeval.scoring.scorer import Scorer

pytestmark = pytest.mark.slow

OLD_UNIT = 64


def exact_steps(path: str, sql: str) -> int:
    """The VM steps of ``sql``, counted by a handler called on every step of a plain reader
    (schema read first, no statement cache, the items' MySQL functions installed)."""
    conn = sqlite3.connect(
        f"file:{urllib.parse.quote(path)}?mode=ro", uri=True, cached_statements=0
    )
    install(conn)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    calls = [0]

    def count() -> int:
        calls[0] += 1
        return 0

    conn.set_progress_handler(count, 1)
    conn.execute(sql).fetchall()
    conn.close()
    return calls[0]


@pytest.mark.parametrize(
    ("item_id", "answer", "bucket", "reward"),
    [
        # Gold computes the product for the one matching row; the answer compares lower() of
        # every row: more steps, less than twice as many -> ratio in [0.5, 1), reward 0.75.
        # In units of 64 gold took 0 (one step) and the answer 64: ratio 1/64, r_ves 0.5.
        (
            1,
            "SELECT Total_Disk_Area * Max_Disk_Loading AS Lift FROM aircraft "
            "WHERE lower(Aircraft) = lower('Robinson R-22')",
            (0.5, 1.0),
            0.75,
        ),
        # The answer folds the constant 17 in before subtracting Age: a step or two fewer than
        # gold -> ratio in [1, 2), reward 1. In units gold took 64 steps and the answer 0 (one
        # step): ratio 64, r_ves 1.118.
        (
            15,
            "SELECT YEAR(CURRENT_DATE) + 17 - Age AS Earliest_License_Year FROM pilot "
            "WHERE Age = 23",
            (1.0, 2.0),
            1.0,
        ),
    ],
)
def test_the_bucket_is_the_queries_not_the_units(logiccat_cache, item_id, answer, bucket, reward):
    item = next(i for i in load_items(cache_dir=logiccat_cache) if i.id == item_id)
    (score,) = Scorer(progress=False).score([item], [answer])
    assert score["ex"] == 1
    gold_steps = exact_steps(item.database.path, item.gold_sql)
    answer_steps = exact_steps(item.database.path, answer)
    assert (score[GOLD_WORK], score[WORK]) == (gold_steps, answer_steps)
    # The two straddle the old unit: counted in it, one of them would have been 0.
    assert min(gold_steps, answer_steps) < OLD_UNIT <= max(gold_steps, answer_steps)
    low, high = bucket
    assert low <= gold_steps / answer_steps < high
    assert score[R_VES] == math.sqrt(reward)
