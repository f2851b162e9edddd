"""LogicCat through the real ``lm_eval`` CLI, with a scripted model whose answers are known.

The model answers each question with its gold SQL, a wrong query, or prose, chosen by the
item's id (``support.logiccat_answers.answer_kind``); the expected VES and EX of each item follow
from that choice and the item's gold health alone, so the test does not lean on the scoring code
it checks.

Each of the two runs (completions, and chat with a chat template) also carries
``sqlbench_smoke`` (tests/support/smoke_task.py), a three-question task of someone else's found
through ``--include_path``: the smoke checks of the real CLI against the scripted server read
these runs instead of starting lm_eval for themselves (lm-eval's ``--limit`` counts per task,
and the smoke task has fewer questions than either limit, so it runs whole). A prompt that asks
no LogicCat question is the smoke task's; the scripted model records it.
"""

from __future__ import annotations

import pytest
from support import logiccat_answers as answers
from support.smoke_task import SMOKE_DOCS, SMOKE_TASK, smoke_answer, write_smoke_task

from sqlbench_lmeval.logiccat.bundle import load_bundle

pytestmark = pytest.mark.slow

# The smoke question the chat run's model gets wrong on purpose.
WRONG_SMOKE_QUESTION = SMOKE_DOCS[0][0]


def with_smoke(logiccat_answer, smoke):
    """``(answer, seen)``: ``answer(prompt)`` sends a LogicCat prompt to ``logiccat_answer`` and
    every other prompt (the smoke task's) to ``smoke``, keeping those in ``seen``."""
    seen: list[str] = []

    def answer(prompt: str) -> str:
        if answers.QUESTION.search(prompt) is not None:
            return logiccat_answer(prompt)
        seen.append(prompt)
        return smoke(prompt)

    return answer, seen


def chat_smoke_answer(prompt: str) -> str:
    return "no idea" if WRONG_SMOKE_QUESTION in prompt else smoke_answer(prompt)


def run_with_smoke(cache, workdir, task, smoke, *extra_args, chat=False):
    """``run_logiccat`` on ``task`` and ``sqlbench_smoke``; (results, samples, smoke prompts)."""
    folder = workdir / "smoke_task"
    write_smoke_task(folder)
    model = answers.known_answers_model(load_bundle(cache).records)
    answer, seen = with_smoke(model, smoke)
    results, samples = answers.run_logiccat(
        f"{task},{SMOKE_TASK}", cache, answer, workdir, *extra_args, chat=chat, include_path=folder
    )
    return results, samples, seen


@pytest.fixture(scope="module")
def completions_run(logiccat_cache, tmp_path_factory):
    """``lm_eval --model local-completions --tasks logiccat,sqlbench_smoke --limit 6``."""
    workdir = tmp_path_factory.mktemp("completions")
    return run_with_smoke(logiccat_cache, workdir, "logiccat", smoke_answer, "--limit", "6")


def test_logiccat_group_scores_known_answers_exactly(completions_run, logiccat_cache):
    results, samples, _ = completions_run
    records_by_id = {record.id: record for record in load_bundle(logiccat_cache).records}
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


def test_local_completions_run_scores_the_scripted_answers(completions_run):
    """The smoke task of the completions run: each question asked once, in the task's prompt
    format, and every answer scored right."""
    results, samples, seen = completions_run
    assert sorted(seen) == sorted(f"Question: {q}\nAnswer:" for q, _ in SMOKE_DOCS)
    metrics = results["results"][SMOKE_TASK]
    assert metrics["exact_match,none"] == 1.0
    assert metrics["sample_len"] == len(SMOKE_DOCS)
    records = sorted(samples[SMOKE_TASK], key=lambda r: r["doc_id"])
    # The server cut each reply at the task's stop sequence "\n", as a real server does.
    assert [r["filtered_resps"] for r in records] == [[a] for _, a in SMOKE_DOCS]
    assert [r["exact_match"] for r in records] == [1.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def chat_run(logiccat_cache, tmp_path_factory):
    """``lm_eval --model local-chat-completions --apply_chat_template --tasks
    logiccat_mini,sqlbench_smoke --limit 9``."""
    workdir = tmp_path_factory.mktemp("chat")
    return run_with_smoke(
        logiccat_cache, workdir, "logiccat_mini", chat_smoke_answer, "--limit", "9", chat=True
    )


def test_logiccat_mini_with_a_chat_template_and_offline_scoring_agree(
    chat_run, logiccat_cache, tmp_path
):
    results, samples, _ = chat_run
    records_by_id = {record.id: record for record in load_bundle(logiccat_cache).records}
    mini = answers.check_known_answers(samples["logiccat_mini"], records_by_id)
    assert all(1 <= s["doc"]["id"] <= 500 for s in mini)

    # The same raw outputs scored offline give the same per-item numbers.
    answers.assert_offline_agrees(mini, logiccat_cache, tmp_path / "predictions.jsonl")
    assert results["results"]["logiccat_mini"]["ex,score"] == pytest.approx(
        sum(s["ex"] for s in mini) / len(mini)
    )


def test_local_chat_completions_with_chat_template(chat_run):
    """The smoke task of the chat run: one answer wrong on purpose, scored 0; the prompt went
    out as a chat message list."""
    results, samples, _ = chat_run
    assert results["results"][SMOKE_TASK]["exact_match,none"] == pytest.approx(2 / 3)
    assert results["config"]["model"] == "local-chat-completions"
    by_question = {r["doc"]["question"]: r for r in samples[SMOKE_TASK]}
    assert by_question[WRONG_SMOKE_QUESTION]["exact_match"] == 0.0
    assert by_question[WRONG_SMOKE_QUESTION]["filtered_resps"] == ["no idea"]
    # --apply_chat_template sent the prompt as a chat message list.
    arguments = by_question[WRONG_SMOKE_QUESTION]["arguments"]["gen_args_0"]["arg_0"][0]
    assert '"role": "user"' in arguments
