"""``tpcds_sc``, the sampled variant (``sqlbench_lmeval/scoring/sampled.py``), through the real
``lm_eval`` CLI: the structural similarity of the voted answer and its mean over samples, with
planned answers, on the sf 0.01 database of ``tests/tpcds/conftest.py``; then ``verify`` on what
that run wrote (its own sampling settings are not a finding, every sample is re-scored, the
voted numbers the run claims agree with ours). One run serves both tests (lm-eval's start-up
is paid once)."""

from __future__ import annotations

import ast
import glob
import json
from collections import defaultdict
from pathlib import Path

import pytest
from support.lm_eval_run import run_lm_eval

from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission

pytestmark = pytest.mark.slow

SF = 0.01
LIMIT = 2
WRONG_SQL = "SELECT 42 AS answer"
PROSE = "I cannot write this query."


@pytest.fixture(scope="module")
def sampled_run(tpcds_cache, tpcds_items, tmp_path_factory):
    """``lm_eval --tasks tpcds_sc --limit 2``: each question gets 5 gold answers, 1 wrong query
    and 2 prose answers (in that order per question). Returns (results, samples, the model
    folder lm-eval wrote)."""
    gold = {item.question: item.gold_sql for item in tpcds_items}
    asked = defaultdict(int)

    def answer(prompt: str) -> str:
        for question, sql in gold.items():
            if f"Question: {question}\n" in prompt:
                index = asked[question] % 8
                asked[question] += 1
                return f"```sql\n{sql}\n```" if index < 5 else WRONG_SQL if index == 5 else PROSE
        raise AssertionError("prompt without a known question")

    workdir = tmp_path_factory.mktemp("tpcds_sc")
    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache)}
    results, samples = run_lm_eval(
        "tpcds_sc",
        answer=answer,
        workdir=workdir,
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
    )
    (folder,) = [
        Path(p).parent for p in glob.glob(str(workdir / "lm_eval_output" / "*" / "results_*.json"))
    ]
    return results, samples, folder


def test_tpcds_sc_reports_voted_and_mean_similarity(sampled_run):
    # Gold's group (5) outvotes the wrong one (1): ex_maj 1, and the voted answer is
    # gold, whose structural similarity to gold is 1. Prose has no SQL and scores 0 on every
    # similarity; the wrong query's similarity s is logged in its sample. So the mean over
    # samples is (5 * 1 + s + 2 * 0) / 8. c = 5 of 8: pass@1 5/8, pass@4 1 (8-5 < 4).
    results, samples, _ = sampled_run
    records = samples["tpcds_sc"]
    assert len(records) == LIMIT
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


def test_a_sampled_run_verifies_with_its_own_settings(sampled_run, tpcds_cache):
    """``verify`` on the run above (8 answers per item at temperature 0.7): no finding about
    its sampling settings or its numbers; the 97 items it did not run are missing, and the two
    it ran are found pasting gold (5 of each item's 8 samples are gold's own text)."""
    _, samples, folder = sampled_run
    (submission,) = read_submissions(str(folder))
    (logged,) = submission.tasks
    assert [len(answer.outputs) for answer in logged.answers] == [8, 8]
    verification = verify_submission(submission, cache_dir=tpcds_cache, workers=2)
    (task,) = verification.tasks
    problems = {f.code: f.items for f in task.findings if f.severity != "info"}
    ran = {record["doc"]["id"] for record in samples["tpcds_sc"]}
    assert set(problems) == {"missing_items", "gold_verbatim"}
    assert len(problems["missing_items"]) == 99 - LIMIT
    assert ran.isdisjoint(problems["missing_items"])
    assert set(problems["gold_verbatim"]) == ran
    # The numbers the run claims, which verify re-computed without a finding, by hand: gold
    # wins the vote on both items (ex_maj 1); c = 5 correct samples of 8 (pass@1 5/8,
    # pass@8 1).
    assert task.metrics_logged["ex_maj"] == 1 and task.metrics_logged["pass_at_8"] == 1
    assert task.metrics_logged["pass_at_1"] == pytest.approx(5 / 8)
    assert task.metrics_logged["n"] == LIMIT and task.facts["repeats"] == 8
