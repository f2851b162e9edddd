"""The ``tpcds`` task through the real ``lm_eval`` CLI, a scripted model answering with gold."""

from __future__ import annotations

import ast
import json

import pytest
from support.lm_eval_run import run_lm_eval

from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.sql.structure import SIMILARITY_METRICS
from sqlbench_lmeval.tpcds.benchmark import load_items, transpile_prediction

pytestmark = pytest.mark.slow  # lm_eval indexes its ~15k task configs at start-up


SF = 0.01  # the session database (conftest.py)


def run_task(task, sql_by_number, items, cache, workdir, limit, prompts=None):
    """Run ``task`` through lm_eval on its first ``limit`` documents; the scripted model
    answers each question with ``sql_by_number[query number]`` in a fenced block (and keeps
    every prompt in ``prompts``). Returns lm_eval's (results, samples)."""
    number_by_question = {item.question: item.id for item in items}

    def answer(prompt: str) -> str:
        if prompts is not None:
            prompts.append(prompt)
        for question, number in number_by_question.items():
            if f"Question: {question}\n" in prompt:
                return f"Here you go:\n```sql\n{sql_by_number[number]}\n```"
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": SF, "cache_dir": str(cache)}
    return run_lm_eval(
        task,
        answer=answer,
        include_path=tasks_dir(),
        workdir=workdir,
        extra_args=["--limit", str(limit), "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(cache)},
    )


def test_gold_answers_score_ex_and_similarity_one(tpcds_cache, tpcds_items, tmp_path):
    limit = 12
    gold = {item.id: item.gold_sql for item in tpcds_items}
    results, samples = run_task("tpcds", gold, tpcds_items, tpcds_cache, tmp_path, limit)
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


def test_tpcds_postgres_prompts_and_translates(tpcds_cache, tpcds_items, postgres_gold, tmp_path):
    """The paper's setting: the prompt asks for PostgreSQL, each answer (gold as sqlglot's
    PostgreSQL writer writes it) runs translated to DuckDB, and the log keeps both texts."""
    written = postgres_gold
    asked = {item.id: item for item in load_items(tpcds_cache, SF, dialect="postgres")}
    limit, prompts = 3, []
    results, samples = run_task(
        "tpcds_postgres", written, tpcds_items, tpcds_cache, tmp_path, limit, prompts
    )
    assert len(prompts) == limit
    assert all("Write one PostgreSQL SQL query" in prompt for prompt in prompts)
    assert results["results"]["tpcds_postgres"]["ex,score"] == 1.0
    records = samples["tpcds_postgres"]
    assert len(records) == limit
    for record in records:
        (logged,) = record["filtered_resps"]  # lm-eval logs our score dict as its repr
        logged = ast.literal_eval(logged)
        number = record["doc"]["id"]
        assert record["doc"]["prediction_dialect"] == "postgres"
        assert logged["prediction_dialect"] == "postgres" and logged["parsed_dialect"] == "postgres"
        assert logged["extracted_sql"] == written[number].strip()
        assert logged["executed_sql"] == transpile_prediction(asked[number], written[number])
        assert record["ex"] == 1.0
