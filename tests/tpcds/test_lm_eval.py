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
# Documents per task: queries 1-4, two of whose gold results are empty at sf 0.01 (3 and 4),
# two not. Gold against itself and the PostgreSQL round trip of all 99 queries are checked
# in-process (tests/tpcds/test_benchmark.py, test_dialect.py); this run checks the lm_eval path.
LIMIT = 4
POSTGRES_ASK = "Write one PostgreSQL SQL query"


@pytest.fixture(scope="module")
def both_tasks_run(tpcds_cache, tpcds_items, postgres_gold, tmp_path_factory):
    """One ``lm_eval --tasks tpcds,tpcds_postgres`` run on the first ``LIMIT`` documents of
    each (lm-eval's start-up indexing is paid once for both tests). The scripted model answers
    each question with gold in a fenced block: DuckDB's gold when the prompt asks for DuckDB,
    gold as sqlglot's PostgreSQL writer writes it when the prompt asks for PostgreSQL (a wrong
    pick fails the SQL and dialect assertions below). Returns (results, samples, prompts)."""
    number_by_question = {item.question: item.id for item in tpcds_items}
    gold = {item.id: item.gold_sql for item in tpcds_items}
    prompts = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        written = postgres_gold if POSTGRES_ASK in prompt else gold
        for question, number in number_by_question.items():
            if f"Question: {question}\n" in prompt:
                return f"Here you go:\n```sql\n{written[number]}\n```"
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache)}
    results, samples = run_lm_eval(
        ["tpcds", "tpcds_postgres"],
        answer=answer,
        include_path=tasks_dir(),
        workdir=tmp_path_factory.mktemp("tpcds_lm_eval"),
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
    )
    return results, samples, prompts


def prompt_of(record: dict) -> str:
    """The prompt text lm-eval sent for a logged sample (completions: the first argument)."""
    return record["arguments"]["gen_args_0"]["arg_0"]


def test_gold_answers_score_ex_and_similarity_one(both_tasks_run):
    results, samples, _ = both_tasks_run
    metrics = results["results"]["tpcds"]
    assert metrics["ves,score"] == 1.0
    for name in SIMILARITY_METRICS:
        assert metrics[f"{name},score"] == 1.0, name
    records = samples["tpcds"]
    assert len(records) == LIMIT
    assert metrics["ex,score"] == 1.0  # gold's own result, even where it is empty at sf 0.01
    for record in records:
        assert POSTGRES_ASK not in prompt_of(record)
        assert record["doc"]["id"] == record["doc"]["query_nr"]
        assert record["ex"] == 1.0
        assert record["parsed"] == 1.0
        assert record["join_count"] == record["gold_join_count"]


def test_tpcds_postgres_prompts_and_translates(both_tasks_run, tpcds_cache, postgres_gold):
    """The paper's setting: the prompt asks for PostgreSQL, each answer (gold as sqlglot's
    PostgreSQL writer writes it) runs translated to DuckDB, and the log keeps both texts."""
    results, samples, prompts = both_tasks_run
    written = postgres_gold
    asked = {item.id: item for item in load_items(tpcds_cache, SF, dialect="postgres")}
    assert len(prompts) == 2 * LIMIT  # one request per document of each task
    assert sum(POSTGRES_ASK in prompt for prompt in prompts) == LIMIT
    assert results["results"]["tpcds_postgres"]["ex,score"] == 1.0
    records = samples["tpcds_postgres"]
    assert len(records) == LIMIT
    for record in records:
        assert POSTGRES_ASK in prompt_of(record)
        (logged,) = record["filtered_resps"]  # lm-eval logs our score dict as its repr
        logged = ast.literal_eval(logged)
        number = record["doc"]["id"]
        assert record["doc"]["prediction_dialect"] == "postgres"
        assert logged["prediction_dialect"] == "postgres" and logged["parsed_dialect"] == "postgres"
        assert logged["extracted_sql"] == written[number].strip()
        assert logged["executed_sql"] == transpile_prediction(asked[number], written[number])
        assert record["ex"] == 1.0
