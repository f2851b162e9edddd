"""LogicCat through the real ``lm_eval`` CLI, with a scripted model whose answers are known.

The model answers each question with its gold SQL, a wrong query, or prose, chosen by the
item's id; the expected VES and EX of each item follow from that choice and the item's gold
health alone, so the test does not lean on the scoring code it checks.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import logiccat_answers
from support.lm_eval_run import run_lm_eval
from support.logiccat_answers import gold_answer_scores

from sqlbench_lmeval.logiccat.bundle import load_bundle

pytestmark = pytest.mark.slow

# A query that runs on every LogicCat database and answers none of its questions.
WRONG_SQL = "SELECT 'not the answer' AS x, 42 AS y"


def choice(item_id: int) -> str:
    return ("gold", "wrong", "prose")[item_id % 3]


def respond(record) -> str:
    kind = choice(record.id)
    if kind == "gold":
        return f"Here is the query:\n```sql\n{record.gold_sql}\n```"
    if kind == "wrong":
        return f"```sql\n{WRONG_SQL}\n```"
    return "I would need to know more about the pumps before answering."


def scripted_model(records):
    return logiccat_answers.scripted_model(records, respond)


def expected(record) -> tuple[int, int]:
    """(VES, EX) the scripted answer must get, from the answer kind and gold health alone."""
    kind = choice(record.id)
    if kind == "prose":
        return 0, 0
    if kind == "wrong":
        return 1, 0
    return gold_answer_scores(record)


def check_samples(samples, records_by_id):
    assert samples, "no samples logged"
    for sample in samples:
        record = records_by_id[sample["doc"]["id"]]
        assert (sample["ves"], sample["ex"]) == expected(record), record.id
        # The sample log explains the verdict.
        logged = str(sample["filtered_resps"])
        assert "extracted_sql" in logged and "gold_status" in logged
    return samples


def test_logiccat_group_scores_known_answers_exactly(logiccat_cache, tmp_path):
    records = load_bundle(logiccat_cache).records
    records_by_id = {record.id: record for record in records}
    results, samples = run_lm_eval(
        "logiccat",
        answer=scripted_model(records),
        workdir=tmp_path,
        extra_args=["--limit", "6"],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    subtasks = ["physical", "mathematical", "commonsense", "hypothetical"]
    every = []
    for category in subtasks:
        task = f"logiccat_{category}"
        task_samples = check_samples(samples[task], records_by_id)
        assert len(task_samples) == 6
        assert {records_by_id[s["doc"]["id"]].category for s in task_samples} == {category}
        every += task_samples
        for metric in ("ves", "ex"):
            want = sum(
                expected(records_by_id[s["doc"]["id"]])[metric == "ex"] for s in task_samples
            )
            assert results["results"][task][f"{metric},score"] == pytest.approx(want / 6)
    # The group's number is the mean over all its items (weighted by size).
    for metric in ("ves", "ex"):
        want = sum(expected(records_by_id[s["doc"]["id"]])[metric == "ex"] for s in every)
        assert results["results"]["logiccat"][f"{metric},score"] == pytest.approx(want / 24)
    kinds = {choice(s["doc"]["id"]) for s in every}
    assert kinds == {"gold", "wrong", "prose"}, "the scripted answers must cover every case"


def test_logiccat_mini_with_a_chat_template_and_offline_scoring_agree(logiccat_cache, tmp_path):
    records = load_bundle(logiccat_cache).records
    records_by_id = {record.id: record for record in records}
    answer = scripted_model(records)
    results, samples = run_lm_eval(
        "logiccat_mini",
        answer=answer,
        chat=True,
        workdir=tmp_path,
        extra_args=["--limit", "9"],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    mini = check_samples(samples["logiccat_mini"], records_by_id)
    assert all(1 <= s["doc"]["id"] <= 500 for s in mini)

    # The same raw outputs scored offline give the same per-item numbers.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": s["doc"]["id"], "prediction": s["resps"][0][0]}) + "\n" for s in mini
        )
    )
    output = tmp_path / "scores.json"
    subprocess.run(
        [
            sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
            "--output", str(output), "--cache-dir", str(logiccat_cache), "--no-progress",
        ],
        check=True,
    )  # fmt: skip
    scored = {item["id"]: item for item in json.loads(output.read_text())["items"]}
    for sample in mini:
        item = scored[sample["doc"]["id"]]
        assert (item["ves"], item["ex"], item["ex_strict"], item["ex_set"]) == (
            sample["ves"],
            sample["ex"],
            sample["ex_strict"],
            sample["ex_set"],
        )
    assert results["results"]["logiccat_mini"]["ex,score"] == pytest.approx(
        sum(s["ex"] for s in mini) / len(mini)
    )
