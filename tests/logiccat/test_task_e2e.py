"""LogicCat through the real ``lm_eval`` CLI, with a scripted model whose answers are known.

The completions run answers each question with its gold SQL, a wrong query, or prose, chosen
by the item's id (``support.logiccat_answers.answer_kind``). The chat run
(``--apply_chat_template``) adds the answers of issue 10 to those three (a query holding NUL,
reasoning cut off inside ``<think>``, gold after a closed ``<think>``; ``chat_kind``) and a
``--gen_kwargs`` budget, so the truncation checks and the check that a plain chat model
retries nothing read it too. The
expected VES and EX of each item follow from its answer and its gold health alone, so the tests
do not lean on the scoring code they check.

Each run also carries ``sqlbench_smoke`` (tests/support/smoke_task.py), a three-question task
of someone else's found through ``--include_path``: the smoke checks of the real CLI against the
scripted server read these runs instead of starting lm_eval for themselves (lm-eval's
``--limit`` counts per task, and the smoke task has fewer questions than either limit, so it
runs whole). A prompt that asks no LogicCat question is the smoke task's; the scripted model
records it.
"""

from __future__ import annotations

import pytest
from support import logiccat_answers as answers
from support.smoke_task import SMOKE_DOCS, SMOKE_TASK, smoke_answer, write_smoke_task

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.report.runs import parse_python_literal

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


# The chat run's plan, by ``id % 6`` (its first 12 items are ids 1-12, each kind twice): the
# known answers (as ``support.logiccat_answers``: gold, a wrong query, prose) and the answers
# of issue 10 (a query holding NUL, reasoning cut off inside ``<think>``, gold after a closed
# ``<think>``).
CHAT_KINDS = ("gold", "wrong", "prose", "nul", "cut_in_think", "think_gold")
CHAT_LIMIT = 12
BUDGET = 777  # passed as --gen_kwargs max_gen_toks=777; must reach the task's config


def chat_kind(item_id: int) -> str:
    return CHAT_KINDS[item_id % len(CHAT_KINDS)]


def chat_respond(record) -> str:
    kind = chat_kind(record.id)
    if kind == "gold":
        return f"Here is the query:\n```sql\n{record.gold_sql}\n```"
    if kind == "wrong":
        return f"```sql\n{answers.WRONG_SQL}\n```"
    if kind == "prose":
        return answers.PROSE
    if kind == "nul":
        # sqlite3 refuses any statement text holding NUL: an execution error.
        return f"```sql\nSELECT 'a\x00b' AS x FROM ({record.gold_sql})\n```"
    if kind == "cut_in_think":
        return "<think>\nThe question asks for the pump head. First I need the flow, so"
    return f"<think>easy</think>\n```sql\n{record.gold_sql}\n```"


def chat_scores(record) -> tuple[int, int]:
    """(VES, EX) of the chat plan's answer, from its kind and the gold health alone: both
    golds as ``gold_answer_scores`` says, the wrong query (1, 0), everything else (0, 0)."""
    kind = chat_kind(record.id)
    if kind in ("gold", "think_gold"):
        return answers.gold_answer_scores(record)
    return (1, 0) if kind == "wrong" else (0, 0)


@pytest.fixture(scope="module")
def chat_run(logiccat_cache, tmp_path_factory):
    """``lm_eval --model local-chat-completions --apply_chat_template --tasks
    logiccat_mini,sqlbench_smoke --limit 12 --gen_kwargs max_gen_toks=777``: the chat plan
    above, and the smoke task. Returns (results, samples, smoke prompts, output folder)."""
    workdir = tmp_path_factory.mktemp("chat")
    folder = workdir / "smoke_task"
    write_smoke_task(folder)
    records = load_bundle(logiccat_cache).records
    answer, seen = with_smoke(answers.scripted_model(records, chat_respond), chat_smoke_answer)
    results, samples = answers.run_logiccat(
        f"logiccat_mini,{SMOKE_TASK}",
        logiccat_cache,
        answer,
        workdir,
        "--limit",
        str(CHAT_LIMIT),
        "--gen_kwargs",
        f"max_gen_toks={BUDGET}",
        chat=True,
        include_path=folder,
    )
    return results, samples, seen, workdir / "lm_eval_output"


def test_logiccat_mini_with_a_chat_template_and_offline_scoring_agree(
    chat_run, logiccat_cache, tmp_path
):
    results, samples, _, _ = chat_run
    records_by_id = {record.id: record for record in load_bundle(logiccat_cache).records}
    mini = samples["logiccat_mini"]
    assert len(mini) == CHAT_LIMIT
    assert {chat_kind(s["doc"]["id"]) for s in mini} == set(CHAT_KINDS)
    assert all(1 <= s["doc"]["id"] <= 500 for s in mini)
    for sample in mini:
        record = records_by_id[sample["doc"]["id"]]
        assert (sample["ves"], sample["ex"]) == chat_scores(record), record.id
        # The log explains the verdict: the extracted SQL and the gold health are in it.
        logged = str(sample["filtered_resps"])
        assert "extracted_sql" in logged and "gold_status" in logged, record.id

    # The same raw outputs scored offline give the same per-item numbers.
    answers.assert_offline_agrees(mini, logiccat_cache, tmp_path / "predictions.jsonl")
    assert results["results"]["logiccat_mini"]["ex,score"] == pytest.approx(
        sum(s["ex"] for s in mini) / len(mini)
    )


def test_a_run_with_a_nul_and_a_cut_off_answer_completes(chat_run, logiccat_cache, tmp_path):
    """Issue 10: one answer holds a NUL character and another is cut off inside ``<think>``:
    the run completes, those items score 0 (status ``error``, reason ``truncated``), and the
    report counts the truncated outputs and says how to raise the budget."""
    results, samples, _, output = chat_run
    assert results["configs"]["logiccat_mini"]["generation_kwargs"]["max_gen_toks"] == BUDGET
    mini = samples["logiccat_mini"]
    assert {chat_kind(s["doc"]["id"]) for s in mini} >= {"nul", "cut_in_think"}
    for sample in mini:
        (logged,) = sample["filtered_resps"]  # the score dict, as lm-eval writes it (repr)
        score = parse_python_literal(logged)
        if chat_kind(sample["doc"]["id"]) == "nul":
            assert (sample["ves"], sample["ex"]) == (0, 0)
            assert score["status"] == "error" and "null character" in score["error"]
        elif chat_kind(sample["doc"]["id"]) == "cut_in_think":
            assert (sample["ves"], sample["ex"]) == (0, 0)
            assert (score["reason"], score["truncated"]) == ("truncated", True)

    # The report counts the truncated outputs of the run and says how to give them room.
    truncated = sum(1 for sample in mini if chat_kind(sample["doc"]["id"]) == "cut_in_think")
    report = tmp_path / "report"
    assert main(["report", str(output), "-o", str(report)]) == 0
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"{truncated} of {CHAT_LIMIT} outputs were truncated" in text
    assert "--gen_kwargs max_gen_toks=N" in text


def test_a_plain_chat_model_retries_nothing(chat_run):
    """A plain chat model (not ``--model sqlbench-repair``, tests/lmeval/test_repair_e2e.py)
    retries nothing: no retry numbers, even for the answers that failed, and each raw response
    is the model's own text, not a retry envelope."""
    results, samples, _, _ = chat_run
    retry_numbers = ("ves@retry", "ex@retry", "retries_used")
    run_numbers = {key.split(",")[0] for key in results["results"]["logiccat_mini"]}
    assert run_numbers.isdisjoint(retry_numbers)
    for sample in samples["logiccat_mini"]:
        assert not any(name in sample for name in retry_numbers)
        assert "attempts" not in sample["filtered_resps"][0]
        assert not sample["resps"][0][0].startswith("{")


def test_local_chat_completions_with_chat_template(chat_run):
    """The smoke task of the chat run: one answer wrong on purpose, scored 0; the prompt went
    out as a chat message list."""
    results, samples, _, _ = chat_run
    assert results["results"][SMOKE_TASK]["exact_match,none"] == pytest.approx(2 / 3)
    assert results["config"]["model"] == "local-chat-completions"
    by_question = {r["doc"]["question"]: r for r in samples[SMOKE_TASK]}
    assert by_question[WRONG_SMOKE_QUESTION]["exact_match"] == 0.0
    assert by_question[WRONG_SMOKE_QUESTION]["filtered_resps"] == ["no idea"]
    # --apply_chat_template sent the prompt as a chat message list.
    arguments = by_question[WRONG_SMOKE_QUESTION]["arguments"]["gen_args_0"]["arg_0"][0]
    assert '"role": "user"' in arguments
