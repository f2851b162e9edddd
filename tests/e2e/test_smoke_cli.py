"""The real ``lm_eval`` CLI, end to end, against the scripted loopback server on a tiny task."""

from __future__ import annotations

import pytest
from support.lm_eval_run import run_lm_eval
from support.smoke_task import SMOKE_DOCS, SMOKE_TASK, smoke_answer, write_smoke_task

pytestmark = pytest.mark.slow  # each run starts lm_eval and indexes its ~15k task configs


def recording(answer):
    """``answer`` that also keeps every prompt it was asked."""
    seen: list[str] = []

    def wrapped(prompt: str) -> str:
        seen.append(prompt)
        return answer(prompt)

    return wrapped, seen


def test_local_completions_run_scores_the_scripted_answers(tmp_path):
    tasks = tmp_path / "tasks"
    write_smoke_task(tasks)
    answer, seen = recording(smoke_answer)

    results, samples = run_lm_eval(SMOKE_TASK, answer=answer, include_path=tasks, workdir=tmp_path)

    assert sorted(seen) == sorted(f"Question: {q}\nAnswer:" for q, _ in SMOKE_DOCS)
    metrics = results["results"][SMOKE_TASK]
    assert metrics["exact_match,none"] == 1.0
    assert metrics["sample_len"] == len(SMOKE_DOCS)
    records = sorted(samples[SMOKE_TASK], key=lambda r: r["doc_id"])
    # The server cut each reply at the task's stop sequence "\n", as a real server does.
    assert [r["filtered_resps"] for r in records] == [[a] for _, a in SMOKE_DOCS]
    assert [r["exact_match"] for r in records] == [1.0, 1.0, 1.0]


def test_local_chat_completions_with_chat_template(tmp_path):
    tasks = tmp_path / "tasks"
    write_smoke_task(tasks)
    wrong_question = SMOKE_DOCS[0][0]

    def answer(prompt: str) -> str:
        return "no idea" if wrong_question in prompt else smoke_answer(prompt)

    results, samples = run_lm_eval(
        SMOKE_TASK, answer=answer, include_path=tasks, chat=True, workdir=tmp_path
    )

    assert results["results"][SMOKE_TASK]["exact_match,none"] == pytest.approx(2 / 3)
    assert results["config"]["model"] == "local-chat-completions"
    by_question = {r["doc"]["question"]: r for r in samples[SMOKE_TASK]}
    assert by_question[wrong_question]["exact_match"] == 0.0
    assert by_question[wrong_question]["filtered_resps"] == ["no idea"]
    # --apply_chat_template sent the prompt as a chat message list.
    assert '"role": "user"' in by_question[wrong_question]["arguments"]["gen_args_0"]["arg_0"][0]
