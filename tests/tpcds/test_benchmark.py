"""TPC-DS items, dataset version, structure metrics per item, and gold scored against itself."""

from __future__ import annotations

import json
import math

import pytest

from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.offline import score_predictions
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.metrics import GOLD_WORK, R_VES, WORK
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.structure import SIMILARITY_METRICS
from sqlbench_lmeval.tpcds.benchmark import (
    aggregate_metrics,
    dataset_version,
    gold_complexity,
    item_metrics,
    load_items,
)
from sqlbench_lmeval.tpcds.data import empty_gold_queries, gold_queries
from sqlbench_lmeval.tpcds.questions import load_questions

SF = 0.01  # the session database (conftest.py)

METRIC_NAMES = {
    "parsed",
    "parsed_dialect",  # a name, logged beside the numbers
    *SIMILARITY_METRICS,
    *COMPLEXITY,
    *(f"gold_{name}" for name in COMPLEXITY),
}


def test_99_items_on_the_built_database(tpcds_items, tpcds_manifest):
    assert [item.id for item in tpcds_items] == list(range(1, 100))
    questions, gold = load_questions(), gold_queries()
    empty = set(empty_gold_queries(tpcds_manifest))
    for item in tpcds_items:
        assert item.question == questions[item.id]
        assert item.gold_sql == gold[item.id]
        assert item.dialect == "duckdb" and item.category is None
        assert item.database.engine == "duckdb" and item.database.setup is None
        assert item.database.path == tpcds_manifest["database"]
        assert item.gold_status == ("empty" if item.id in empty else "ok")


def test_a_questions_file_replaces_ours(tpcds_cache, tmp_path):
    path = tmp_path / "spec.jsonl"
    lines = [
        json.dumps({"query_nr": n, "question": f"Business question {n}."}) for n in range(1, 100)
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    items = load_items(cache_dir=tpcds_cache, scale_factor=SF, questions_file=str(path))
    assert items[6].question == "Business question 7."
    ours = dataset_version(scale_factor=SF)
    theirs = dataset_version(scale_factor=SF, questions_file=path)
    assert ours.startswith("tpcds-sf0.01-duckdb") and ours != theirs


def test_item_metrics_of_gold_against_itself(tpcds_items):
    for item in tpcds_items:
        metrics = item_metrics(item, item.gold_sql)
        assert set(metrics) == METRIC_NAMES
        numbers = METRIC_NAMES - {"parsed_dialect"}
        assert all(isinstance(metrics[name], float) for name in numbers)
        assert metrics["parsed"] == 1.0 and metrics["parsed_dialect"] == "duckdb"
        assert {metrics[name] for name in SIMILARITY_METRICS} == {1.0}, item.id
        for name in COMPLEXITY:
            assert metrics[name] == metrics[f"gold_{name}"]


@pytest.mark.parametrize("sql", [None, "", "SELEC oops", "SELECT 1; SELECT 2"])
def test_item_metrics_of_nothing_or_garbage_are_zeros_never_minus_one(tpcds_items, sql):
    metrics = item_metrics(tpcds_items[0], sql)
    assert set(metrics) == METRIC_NAMES
    assert metrics["parsed"] == 0.0 and metrics["parsed_dialect"] is None
    for name in (*SIMILARITY_METRICS, *COMPLEXITY):
        assert metrics[name] == 0.0
    assert metrics["gold_join_count"] > 0  # gold's counts are still reported


def test_item_metrics_of_a_partly_right_query(tpcds_items):
    item = tpcds_items[2]  # query 3: brand sales of manufacturer 128 in November
    sql = (
        "SELECT d_year, i_brand_id, i_brand, SUM(ss_ext_sales_price) AS s "
        "FROM store_sales JOIN date_dim ON ss_sold_date_sk = d_date_sk "
        "JOIN item ON ss_item_sk = i_item_sk WHERE i_manufact_id = 128 AND d_moy = 12 "
        "GROUP BY d_year, i_brand_id, i_brand ORDER BY d_year, s DESC, i_brand_id LIMIT 100"
    )
    metrics = item_metrics(item, sql)
    assert metrics["parsed"] == 1.0
    assert metrics["sim_tables"] == metrics["sim_joins"] == metrics["sim_aggregation"] == 1.0
    assert metrics["sim_where_predicates"] == pytest.approx(1 / 3)  # d_moy = 12 vs 11
    assert 0.5 < metrics["structural_similarity"] < 1.0


def test_aggregate_metrics_over_parseable_predictions_and_table_1_ratios():
    scores = [
        {"parsed": 1.0, **dict.fromkeys(SIMILARITY_METRICS, 0.5)}
        | {name: 4.0 for name in COMPLEXITY}
        | {f"gold_{name}": 2.0 for name in COMPLEXITY},
        {"parsed": 0.0, **dict.fromkeys(SIMILARITY_METRICS, 0.0)}
        | {name: 0.0 for name in COMPLEXITY}
        | {f"gold_{name}": 8.0 for name in COMPLEXITY},
    ]
    extras = aggregate_metrics(scores)
    assert extras["n_parsed"] == 1.0
    assert extras["structural_similarity_on_parsed"] == 0.5
    assert extras["join_count_ratio"] == 2.0  # 4 / 2 over the parseable item only
    assert aggregate_metrics([])["structural_similarity_on_parsed"] == 0.0


def test_gold_complexity_needs_no_database():
    workload = gold_complexity()
    assert workload.name == "tpcds" and len(workload.per_query) == 99
    assert workload.share_without_cte == pytest.approx(67 / 99)


def test_gold_scored_against_itself(tpcds_items):
    """Gold as the prediction: EX 1 wherever gold returns rows, every similarity 1."""
    scores = Scorer(
        limits=Limits(timeout_s=60),
        workers=2,
        progress=False,
        hooks=Hooks(item_metrics=item_metrics),
    ).score(tpcds_items, [f"```sql\n{item.gold_sql}\n```" for item in tpcds_items])
    for item, score in zip(tpcds_items, scores, strict=True):
        assert score["status"] == "ok", (item.id, score["error"])
        assert score["ves"] == 1 and score["ex"] == 1, (item.id, score["reason"])
        assert {score[name] for name in SIMILARITY_METRICS} == {1.0}, item.id
        # Gold did exactly gold's work, in another run and process: r_ves 1 (ratio 1).
        assert score[WORK] == score[GOLD_WORK] > 0 and score[R_VES] == 1.0, item.id


def test_offline_scoring_adds_the_structure_metrics(tpcds_cache, tmp_path):
    predictions = {3: "SELECT 1", 7: "not sql at all"}
    result = score_predictions(
        "tpcds",
        predictions,
        cache_dir=tpcds_cache,
        scale_factor=SF,
        workers=2,
        progress=False,
    )
    assert result["dataset_version"].startswith("tpcds-sf0.01-")
    assert len(result["missing_ids"]) == 97
    by_id = {score["id"]: score for score in result["items"]}
    assert by_id[3]["parsed"] == 1.0 and 0.0 < by_id[3]["structural_similarity"] < 0.5
    assert by_id[7]["parsed"] == 0.0 and by_id[7]["structural_similarity"] == 0.0
    metrics = result["metrics"]
    assert not math.isnan(metrics["structural_similarity"])
