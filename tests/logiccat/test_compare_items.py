"""The number rule and the tie-key rule on the real LogicCat items that motivated them.

Each answer is written from the item's own gold SQL and scored through the pipeline on the real
bundle: a wrong answer that one huge value in a column used to excuse scores 0 (items 1429 and
3681), and an algebraically identical rewrite whose float noise reorders mathematically tied
rows scores 1 (items 3086 and 2535).
"""

from __future__ import annotations

import pytest

from sqlbench_lmeval.execution import GoldCache
from sqlbench_lmeval.logiccat.benchmark import load_items
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.tie_compare import TIE_EQUIVALENT

pytestmark = pytest.mark.slow


def _rewrite(sql: str, old: str, new: str) -> str:
    assert sql.count(old) == 1, (old, sql)
    return sql.replace(old, new)


def _wrong_small_rates(gold: str) -> str:
    """Item 1429: every rate near -0.05 replaced by 0, the two rates near -3.3e29 kept."""
    inner = _rewrite(gold, "AS 平均温升速率", "AS rate")
    zeroed = "CASE WHEN ABS(rate) < 1 THEN 0.0 ELSE rate END"
    return f"SELECT material, {zeroed}, 热传导时间常数 FROM ({inner}) AS g"


def _wrong_small_values(gold: str) -> str:
    """Item 3681: 0.5 for every value below 1 (0.0125-0.043), the 1e12 kept, gold's order."""
    return (
        "SELECT Country, CASE WHEN energy_density < 1 THEN 0.5 ELSE energy_density END "
        f"FROM ({gold}) AS g ORDER BY energy_density DESC"
    )


def _correlation_by_two_roots(gold: str) -> str:
    """Item 3086: cov / sqrt(a) / sqrt(b) for cov / sqrt(a * b): exactly 1.0 on every row."""
    return _rewrite(
        gold,
        "/ (SQRT(SUM(POWER(Discount - avg_discount, 2)) * SUM(POWER(Tax - avg_tax, 2))))",
        "/ SQRT(SUM(POWER(Discount - avg_discount, 2))) / SQRT(SUM(POWER(Tax - avg_tax, 2)))",
    )


def _increase_as_ratio(gold: str) -> str:
    """Item 2535: max * 100 / base - 100 for (max - base) / base * 100: 50.0 where gold has
    50.000000000000014, which sorts that row after another 50.0."""
    return _rewrite(
        gold,
        "CAST((AVG(cpu_max_frequency_ghz) - AVG(cpu_base_frequency_ghz)) AS REAL) "
        "/ AVG(cpu_base_frequency_ghz) * 100",
        "AVG(cpu_max_frequency_ghz) * 100.0 / AVG(cpu_base_frequency_ghz) - 100",
    )


ANSWERS = {
    1429: (_wrong_small_rates, 0),
    3681: (_wrong_small_values, 0),
    3086: (_correlation_by_two_roots, 1),
    2535: (_increase_as_ratio, 1),
}


@pytest.fixture(scope="module")
def scored(logiccat_cache):
    items = [item for item in load_items(cache_dir=logiccat_cache) if item.id in ANSWERS]
    answers = [ANSWERS[item.id][0](item.gold_sql) for item in items]
    cache = GoldCache(gold_cache_dir(logiccat_cache))
    scores = Scorer(gold_cache=cache, progress=False).score(items, answers)
    golds = Scorer(gold_cache=cache, progress=False).score(items, [item.gold_sql for item in items])
    return {s["id"]: s for s in scores}, {s["id"]: s for s in golds}


@pytest.mark.parametrize("item_id", [1429, 3681])
def test_a_huge_value_in_the_column_excuses_no_wrong_small_value(scored, item_id):
    answers, golds = scored
    assert answers[item_id]["status"] == "ok"
    assert (answers[item_id]["ex"], answers[item_id]["reason"]) == (0, "values")
    assert golds[item_id]["ex"] == 1


def test_float_noise_in_sort_keys_ties_the_rows_item_3086(scored):
    answers, golds = scored
    # Gold's keys 1.0000000000000002, 1.0, 0.9999999999999999, 0.9999999999999998 are one
    # number: the rewrite lists the rows by Order_ID, gold does not.
    assert (answers[3086]["ex"], answers[3086]["ex_strict"]) == (1, 0)
    assert answers[3086]["reason"] == TIE_EQUIVALENT
    assert golds[3086]["ex"] == 1


def test_float_noise_in_sort_keys_ties_the_rows_item_2535(scored):
    answers, golds = scored
    assert (answers[2535]["ex"], answers[2535]["reason"]) == (1, TIE_EQUIVALENT)
    assert golds[2535]["ex"] == 1
