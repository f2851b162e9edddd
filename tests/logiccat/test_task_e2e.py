"""LogicCat through the real ``lm_eval`` CLI, with a scripted model whose answers are known.

The model answers each question with its gold SQL, a wrong query, or prose, chosen by the
item's id (``support.logiccat_answers.answer_kind``); the expected VES and EX of each item follow
from that choice and the item's gold health alone, so the test does not lean on the scoring code
it checks.
"""

from __future__ import annotations

import pytest
from support import logiccat_answers as answers

from sqlbench_lmeval.logiccat.bundle import load_bundle

pytestmark = pytest.mark.slow


def test_logiccat_group_scores_known_answers_exactly(logiccat_cache, tmp_path):
    records = load_bundle(logiccat_cache).records
    records_by_id = {record.id: record for record in records}
    answer = answers.known_answers_model(records)
    results, samples = answers.run_logiccat(
        "logiccat", logiccat_cache, answer, tmp_path, "--limit", "6"
    )
    subtasks = ["physical", "mathematical", "commonsense", "hypothetical"]
    every = []
    for category in subtasks:
        task = f"logiccat_{category}"
        task_samples = answers.check_known_answers(samples[task], records_by_id)
        assert len(task_samples) == 6
        assert {records_by_id[s["doc"]["id"]].category for s in task_samples} == {category}
        every += task_samples
        # r_ves: a gold answer did gold's work (1.0 where it is correct), the others score 0.
        for metric in ("ves", "ex", "r_ves"):
            want = sum(
                answers.known_answer_scores(records_by_id[s["doc"]["id"]])[metric != "ves"]
                for s in task_samples
            )
            assert results["results"][task][f"{metric},score"] == pytest.approx(want / 6)
    # The group's number is the mean over all its items (weighted by size).
    for metric in ("ves", "ex", "r_ves"):
        want = sum(
            answers.known_answer_scores(records_by_id[s["doc"]["id"]])[metric != "ves"]
            for s in every
        )
        assert results["results"]["logiccat"][f"{metric},score"] == pytest.approx(want / 24)
    kinds = {answers.answer_kind(s["doc"]["id"]) for s in every}
    assert kinds == {"gold", "wrong", "prose"}, "the scripted answers must cover every case"


def test_logiccat_mini_with_a_chat_template_and_offline_scoring_agree(logiccat_cache, tmp_path):
    records = load_bundle(logiccat_cache).records
    records_by_id = {record.id: record for record in records}
    answer = answers.known_answers_model(records)
    results, samples = answers.run_logiccat(
        "logiccat_mini", logiccat_cache, answer, tmp_path, "--limit", "9", chat=True
    )
    mini = answers.check_known_answers(samples["logiccat_mini"], records_by_id)
    assert all(1 <= s["doc"]["id"] <= 500 for s in mini)

    # The same raw outputs scored offline give the same per-item numbers.
    answers.assert_offline_agrees(mini, logiccat_cache, tmp_path / "predictions.jsonl")
    assert results["results"]["logiccat_mini"]["ex,score"] == pytest.approx(
        sum(s["ex"] for s in mini) / len(mini)
    )
