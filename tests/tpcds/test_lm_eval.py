"""The ``tpcds`` task through the real ``lm_eval`` CLI, a scripted model answering with gold."""

from __future__ import annotations

import json

import pytest
from support.lm_eval_run import run_lm_eval

from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.structure import SIMILARITY_METRICS

pytestmark = pytest.mark.slow  # lm_eval indexes its ~15k task configs at start-up


def test_gold_answers_score_ex_and_similarity_one(tpcds_cache, tpcds_items, tmp_path):
    gold_by_question = {item.question: item.gold_sql for item in tpcds_items}
    limit = 12

    def answer(prompt: str) -> str:
        for question, sql in gold_by_question.items():
            if f"Question: {question}\n" in prompt:
                return f"Here you go:\n```sql\n{sql}\n```"
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": 0.01, "cache_dir": str(tpcds_cache)}
    results, samples = run_lm_eval(
        "tpcds",
        answer=answer,
        include_path=tasks_dir(),
        workdir=tmp_path,
        extra_args=["--limit", str(limit), "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
    )
    metrics = results["results"]["tpcds"]
    assert metrics["ves,score"] == 1.0
    for name in SIMILARITY_METRICS:
        assert metrics[f"{name},score"] == 1.0, name
    records = samples["tpcds"]
    assert len(records) == limit
    assert metrics["ex,score"] == 1.0  # gold's own result, even where it is empty at sf 0.01
    for record in records:
        assert record["doc"]["id"] == record["doc"]["query_nr"]
        assert record["ex"] == 1.0
        assert record["parsed"] == 1.0
        assert record["join_count"] == record["gold_join_count"]
