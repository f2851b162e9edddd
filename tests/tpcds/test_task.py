"""The ``tpcds`` lm-eval task: documents, prompt and the YAML as lm-eval reads it."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.retry_envelope import RETRY_METRICS
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.structure import SIMILARITY_METRICS
from sqlbench_lmeval.tpcds.data import gold_queries
from sqlbench_lmeval.tpcds.task import doc_to_target, doc_to_text, load_dataset

SF = 0.01  # the session database (conftest.py)


@pytest.fixture(scope="module")
def dataset(tpcds_cache):
    # lm-eval passes the task metadata, the model args and --metadata as keyword arguments.
    return load_dataset(
        cache_dir=str(tpcds_cache), scale_factor=SF, version=1.0, pretrained="some/model"
    )["test"]


def test_99_documents_with_id_equal_to_the_query_number(dataset, tpcds_items):
    assert len(dataset) == 99
    docs = list(dataset)
    assert [doc["id"] for doc in docs] == list(range(1, 100))
    assert all(doc["query_nr"] == doc["id"] for doc in docs)
    first = docs[0]
    assert first["question"] == tpcds_items[0].question
    assert first["engine"] == "duckdb" and first["dialect"] == "duckdb"
    assert first["schema"].count("CREATE TABLE") == 24
    assert first["dataset_version"].startswith("tpcds-sf0.01-")
    assert doc_to_target(first) == gold_queries()[1]


def test_the_prompt_has_schema_question_and_names_duckdb(dataset):
    doc = dataset[41]
    prompt = doc_to_text(doc)
    assert "DuckDB" in prompt and "```sql" in prompt
    assert "CREATE TABLE store_sales (" in prompt
    assert f"Question: {doc['question']}\n" in prompt
    assert doc["gold_sql"] not in prompt
    assert prompt.endswith("\n")


def test_questions_file_through_metadata(tpcds_cache, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"query_nr": n, "question": f"My question {n}"}) for n in range(1, 100)
        ),
        encoding="utf-8",
    )
    docs = load_dataset(cache_dir=str(tpcds_cache), scale_factor=SF, questions_file=str(path))
    assert docs["test"][0]["question"] == "My question 1"


def test_the_yaml_as_lm_eval_reads_it():
    from lm_eval.tasks._yaml_loader import load_yaml

    config = load_yaml(tasks_dir() / "tpcds" / "tpcds.yaml")
    assert config["task"] == "tpcds"
    assert config["output_type"] == "generate_until"
    generation = config["generation_kwargs"]
    assert generation["do_sample"] is False and generation["temperature"] == 0.0
    assert "\nQuestion:" in generation["until"] and generation["max_gen_toks"] >= 2048
    assert "num_fewshot" not in config  # --num_fewshot stays usable
    (step,) = config["filter_list"][0]["filter"]
    assert step["benchmark"] == "tpcds"
    assert step["function"].__name__ == "ExecuteAndScore"
    assert config["process_results"].__name__ == "process_results"
    assert config["custom_dataset"] is load_dataset
    metrics = {entry["metric"] for entry in config["metric_list"]}
    expected = {
        "ves",
        "ex",
        "ex_strict",
        "ex_set",
        "ex_reads_data",
        "ex_on_healthy_gold",
        "r_ves",
        "parsed",
    }
    expected |= {*SIMILARITY_METRICS, *COMPLEXITY}
    # The sqlbench-repair model's numbers (absent from runs of any other model).
    retry = {*RETRY_METRICS.values(), "retries_used"}
    # Gold's own counts (gold_<count>) are the same for every model: logged per item, no row
    # of lm-eval's table.
    assert metrics == expected | retry
    assert all(entry["aggregation"] == "mean" for entry in config["metric_list"])
