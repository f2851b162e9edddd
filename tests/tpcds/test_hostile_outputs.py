"""Hostile model outputs on real TPC-DS items (DuckDB, sf 0.01): through ``Scorer.score``, the
lm-eval filter and ``process_results``, every output gets an outcome and nothing raises; and
answers with several statements or a non-query are refused (issue 10)."""

from __future__ import annotations

import pytest
from support.hostile_outputs import (
    check_every_output_scored,
    check_one_statement_cases,
    hostile_outputs,
)

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.execution import GoldCache
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore, process_results
from sqlbench_lmeval.scoring.metrics import EXECUTION_METRICS
from sqlbench_lmeval.scoring.scorer import Scorer

# TPC-DS query 3: one SELECT, ORDER BY, no randomness; its own result always matches itself.
GOLD_ID = 3


@pytest.fixture(scope="module")
def hooks():
    return benchmarks.get("tpcds").scoring_hooks()


def test_every_hostile_output_gets_an_outcome(tpcds_items, hooks, tmp_path):
    cases = hostile_outputs()
    items = [tpcds_items[i % len(tpcds_items)] for i in range(len(cases))]
    scores = Scorer(
        gold_cache=GoldCache(tmp_path / "gold"), workers=2, progress=False, hooks=hooks
    ).score(items, [output for _, output in cases])
    check_every_output_scored(cases, scores)
    # The structure metrics of every item are there too (0 when nothing parsed).
    assert all("structural_similarity" in score for score in scores)


def test_the_lm_eval_filter_and_process_results_never_raise(tpcds_items, monkeypatch, tmp_path):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "2")
    cases = hostile_outputs()
    docs = [tpcds_items[i % len(tpcds_items)].to_doc() for i in range(len(cases))]
    resps = [[output] for _, output in cases]
    # Responses of odd shapes, and a document that is not one of ours.
    odd = [[], [None], "a bare string", [42], None]
    docs += [tpcds_items[0].to_doc() for _ in odd] + [{"question": "no id, no database"}]
    resps += odd + [["SELECT 1"]]
    scores = ExecuteAndScore("tpcds").apply(resps, docs)
    assert len(scores) == len(docs)
    check_every_output_scored(cases, scores[: len(cases)])
    assert [s["status"] for s in scores[len(cases) : -1]] == ["no_sql"] * len(odd)
    broken = scores[-1]
    assert (broken["status"], broken["ves"], broken["ex"]) == ("error", 0, 0)
    assert broken["reason"].startswith("document: KeyError")
    for doc, score in zip(docs, scores, strict=True):
        numbers = process_results(doc, [score])
        assert set(EXECUTION_METRICS) <= set(numbers)
    for results in ([], [None], ["text"], [{"status": "ok"}], None):
        assert process_results(docs[0], results)["ex"] == 0


def test_one_read_only_statement_per_answer(tpcds_items, hooks, tmp_path):
    (item,) = [item for item in tpcds_items if item.id == GOLD_ID]
    check_one_statement_cases(item, tmp_path / "gold", hooks)
