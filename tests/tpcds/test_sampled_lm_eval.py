"""``tpcds_sc``, the sampled variant (``sqlbench_lmeval/scoring/sampled.py``), through the real
``lm_eval`` CLI: the structural similarity of the voted answer and its mean over samples, with
planned answers, on the sf 0.01 database of ``tests/tpcds/conftest.py``."""

from __future__ import annotations

import ast
import json
from collections import defaultdict

import pytest
from support.lm_eval_run import run_lm_eval

pytestmark = pytest.mark.slow

SF = 0.01
WRONG_SQL = "SELECT 42 AS answer"
PROSE = "I cannot write this query."


def test_tpcds_sc_reports_voted_and_mean_similarity(tpcds_cache, tpcds_items, tmp_path):
    # Each question gets 5 gold answers, 1 wrong query and 2 prose answers (in that order per
    # question). Gold's group (5) outvotes the wrong one (1): ex_maj 1, and the voted answer is
    # gold, whose structural similarity to gold is 1. Prose has no SQL and scores 0 on every
    # similarity; the wrong query's similarity s is logged in its sample. So the mean over
    # samples is (5 * 1 + s + 2 * 0) / 8. c = 5 of 8: pass@1 5/8, pass@4 1 (8-5 < 4).
    gold = {item.question: item.gold_sql for item in tpcds_items}
    asked = defaultdict(int)

    def answer(prompt: str) -> str:
        for question, sql in gold.items():
            if f"Question: {question}\n" in prompt:
                index = asked[question] % 8
                asked[question] += 1
                return f"```sql\n{sql}\n```" if index < 5 else WRONG_SQL if index == 5 else PROSE
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache)}
    results, samples = run_lm_eval(
        "tpcds_sc",
        answer=answer,
        workdir=tmp_path,
        extra_args=["--limit", "2", "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
    )
    records = samples["tpcds_sc"]
    assert len(records) == 2
    for record in records:
        score = ast.literal_eval(record["filtered_resps"][0])
        wrong = [s for s in score["samples"] if s["extracted_sql"] == WRONG_SQL]
        assert len(wrong) == 1
        assert record["ex_maj"] == 1
        assert record["structural_similarity"] == 1.0
        assert record["structural_similarity_mean"] == pytest.approx(
            (5 + wrong[0]["structural_similarity"]) / 8
        )
        assert wrong[0]["structural_similarity"] < 1.0
        assert record["pass_at_1"] == pytest.approx(5 / 8) and record["pass_at_4"] == 1.0
        assert score["vote"]["n_distinct"] == 3  # gold, the wrong query, prose
    task = results["results"]["tpcds_sc"]
    assert task["structural_similarity,score"] == 1.0
    assert task["ex_maj,score"] == 1.0
