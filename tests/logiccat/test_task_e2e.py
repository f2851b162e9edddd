"""LogicCat through the real ``lm_eval`` CLI, with scripted models whose answers are known.

Two runs serve every test here (lm-eval's start-up indexing is paid twice, not once per test):

- the completions run: the ``logiccat`` group, ``logiccat_mini_sc`` and a user's YAML that
  includes it with ``repeats: 4`` (``my_sc4``), ``--limit 6`` (lm-eval counts it per task).
  The group's greedy requests get the known answers: gold SQL, a wrong query, or prose, chosen
  by the item's id (``support.logiccat_answers.answer_kind``). The sampled tasks ask about the
  same items with ``temperature`` 0.7, which is how the scripted model tells them apart: their
  8 (or 4) answers per question are planned (see ``PLANS``) and their numbers worked out by
  hand; the user's YAML also sets a ``description`` that opens its prompts, so the model knows
  whose plan to follow.
- the chat run (``--apply_chat_template``): the known answers plus the answers of issue 10 (a
  query holding NUL, reasoning cut off inside ``<think>``, gold after a closed ``<think>``;
  ``chat_kind``) and a ``--gen_kwargs`` budget, so the truncation checks and the check that a
  plain chat model retries nothing read it too.

The expected numbers of each item follow from its answers and its gold health alone, so the
tests do not lean on the scoring code they check.

Each run also carries ``sqlbench_smoke`` (tests/support/smoke_task.py), a three-question task
of someone else's found through ``--include_path``: the smoke checks of the real CLI against the
scripted server read these runs instead of starting lm_eval for themselves (the smoke task has
fewer questions than either limit, so it runs whole). A prompt that asks no LogicCat question is
the smoke task's; the scripted model records it.
"""

from __future__ import annotations

import ast
from collections import defaultdict

import pytest
from support import logiccat_answers as answers
from support.logiccat_answers import (
    PROSE,
    WRONG_SQL,
    assert_same_scores,
    gold_answer_scores,
    score_offline,
    scripted_model,
    write_jsonl,
)
from support.openai_server import RequestAnswer
from support.smoke_task import SMOKE_DOCS, SMOKE_TASK, smoke_answer, write_smoke_task

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.report.runs import parse_python_literal

pytestmark = pytest.mark.slow

# The smoke question the chat run's model gets wrong on purpose.
WRONG_SMOKE_QUESTION = SMOKE_DOCS[0][0]


def with_smoke(logiccat_answer, smoke):
    """``(answer, seen)``: ``answer`` sends a LogicCat prompt and its request's body to
    ``logiccat_answer`` and every other prompt (the smoke task's) to ``smoke``, keeping those in
    ``seen``."""
    seen: list[str] = []

    def answer(prompt: str, body: dict) -> str:
        if answers.QUESTION.search(prompt) is not None:
            return logiccat_answer(prompt, body)
        seen.append(prompt)
        return smoke(prompt)

    return RequestAnswer(answer), seen


def chat_smoke_answer(prompt: str) -> str:
    return "no idea" if WRONG_SMOKE_QUESTION in prompt else smoke_answer(prompt)


ERROR_SQL = "SELECT no_such_column FROM no_such_table"

# The sampled tasks' plan is chosen by the item's id; no plan has a tied vote, so the expected
# numbers do not depend on the order lm-eval hands the 8 answers back in.
# Per plan: the 8 answers, and by hand, with c correct samples out of n=8 and
# pass@k = 1 - C(8-c, k) / C(8, k):
# - "gold wins": 3 gold (one with other whitespace), 2 wrong, 3 errors. Groups: gold 3 > wrong 2,
#   ex_maj 1; c=3: pass@1 3/8, pass@2 1-10/28, pass@4 1-5/70, pass@8 1; ves_mean 5/8.
# - "wrong wins": 2 gold, 3 wrong, 3 prose. Groups: wrong 3 > gold 2, ex_maj 0; c=2: pass@1
#   2/8, pass@2 1-15/28, pass@4 1-15/70, pass@8 1; ves_mean 5/8.
# - "lone gold": 1 gold, 7 errors. Only the gold group: ex_maj 1; c=1: pass@1 1/8,
#   pass@2 1-21/28, pass@4 1-35/70, pass@8 1; ves_mean 1/8.
PLANS = {
    "gold wins": (
        ["gold", "gold_ws", "gold", "wrong", "wrong", "error", "error", "error"],
        1,
        3,
        5,
    ),
    "wrong wins": (["wrong", "gold", "prose", "wrong", "gold", "prose", "wrong", "prose"], 0, 2, 5),
    "lone gold": (["error"] * 3 + ["gold"] + ["error"] * 4, 1, 1, 1),
}
PASS = {
    3: (3 / 8, 1 - 10 / 28, 1 - 5 / 70, 1.0),
    2: (2 / 8, 1 - 15 / 28, 1 - 15 / 70, 1.0),
    1: (1 / 8, 1 - 21 / 28, 1 - 35 / 70, 1.0),
}


def plan_of(item_id: int) -> str:
    return ("gold wins", "wrong wins", "lone gold")[item_id % 3]


def answer_text(kind: str, record) -> str:
    if kind == "gold":
        return f"```sql\n{record.gold_sql}\n```"
    if kind == "gold_ws":
        return (
            "  \n".join(record.gold_sql.split(" ", 1))
            if " " in record.gold_sql
            else record.gold_sql
        )
    if kind == "wrong":
        return f"```sql\n{WRONG_SQL}\n```"
    if kind == "error":
        return ERROR_SQL
    return PROSE


def planned_model(records):
    """The scripted model: the i-th request about an item gets answer i of its plan."""
    asked = defaultdict(int)

    def respond(record):
        kinds = PLANS[plan_of(record.id)][0]
        index = asked[record.id] % len(kinds)
        asked[record.id] += 1
        return answer_text(kinds[index], record)

    return scripted_model(records, respond)


def by_logged_id(logged) -> set[int]:
    return {sample["doc"]["id"] for sample in logged}


def logged_score(sample) -> dict:
    """The score dict of a logged sample (lm-eval writes a filter's output as its repr)."""
    return ast.literal_eval(sample["filtered_resps"][0])


def four_samples_model(records):
    """The user's task's model: answers in order gold, wrong, wrong, error. c = 1 of n = 4:
    pass@1 = 1/4, pass@2 = 1 - C(3, 2) / C(4, 2) = 1 - 3/6, pass@4 = 1; the wrong pair
    outvotes gold."""
    asked = defaultdict(int)

    def respond(record):
        index = asked[record.id] % 4
        asked[record.id] += 1
        if index == 0:
            return f"```sql\n{record.gold_sql}\n```"
        return "SELECT 'not the answer' AS x" if index < 3 else "SELECT nope FROM nowhere"

    return scripted_model(records, respond)


USER_TASK = "my_sc4"
USER_DESCRIPTION = "A user's own variant."


@pytest.fixture(scope="module")
def completions_run(logiccat_cache, tmp_path_factory):
    """``lm_eval --model local-completions --tasks
    logiccat,logiccat_mini_sc,my_sc4,sqlbench_smoke --limit 6``; ``my_sc4`` and the smoke task
    are in the ``--include_path`` folder. Returns (results, samples, smoke prompts, workdir)."""
    workdir = tmp_path_factory.mktemp("completions")
    folder = workdir / "include"
    write_smoke_task(folder)
    base = tasks_dir() / "logiccat" / "logiccat_mini_sc.yaml"
    # The description opens every prompt of the user's task: how the model tells them apart.
    user_yaml = f"include: {base}\ntask: {USER_TASK}\nrepeats: 4\n"
    user_yaml += f'description: "{USER_DESCRIPTION}\\n\\n"\n'
    (folder / "my_sc4.yaml").write_text(user_yaml)
    records = load_bundle(logiccat_cache).records
    known = answers.known_answers_model(records)
    planned, four_samples = planned_model(records), four_samples_model(records)

    def logiccat_answer(prompt: str, body: dict) -> str:
        if body["temperature"] == 0:  # the group's greedy requests
            return known(prompt)
        return four_samples(prompt) if prompt.startswith(USER_DESCRIPTION) else planned(prompt)

    answer, seen = with_smoke(logiccat_answer, smoke_answer)
    tasks = f"logiccat,logiccat_mini_sc,{USER_TASK},{SMOKE_TASK}"
    results, samples = answers.run_logiccat(
        tasks, logiccat_cache, answer, workdir, "--limit", "6", include_path=folder
    )
    return results, samples, seen, workdir


@pytest.fixture(scope="module")
def sampled_run(completions_run):
    """(results, samples, workdir) of the completions run, for the sampled tasks' tests."""
    results, samples, _, workdir = completions_run
    return results, samples, workdir


def test_logiccat_group_scores_known_answers_exactly(completions_run, logiccat_cache):
    results, samples, _, _ = completions_run
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
        # EX on healthy gold: lm-eval's mean over the samples of items with healthy gold only
        # (they alone carry it), from the build's gold health.
        healthy = [
            s
            for s in task_samples
            if records_by_id[s["doc"]["id"]].gold_status == "ok"
            and "random" not in records_by_id[s["doc"]["id"]].flags
        ]
        assert all(("ex_on_healthy_gold" in s) == (s in healthy) for s in task_samples)
        if healthy:
            want = sum(
                answers.known_answer_scores(records_by_id[s["doc"]["id"]])[1] for s in healthy
            )
            got = results["results"][task]["ex_on_healthy_gold,score"]
            assert got == pytest.approx(want / len(healthy))
    # The group's number is the mean over all its items (weighted by size).
    for metric in ("ves", "ex", "r_ves"):
        want = sum(
            answers.known_answer_scores(records_by_id[s["doc"]["id"]])[metric != "ves"]
            for s in every
        )
        assert results["results"]["logiccat"][f"{metric},score"] == pytest.approx(want / 24)
    kinds = {answers.answer_kind(s["doc"]["id"]) for s in every}
    assert kinds == {"gold", "wrong", "prose"}, "the scripted answers must cover every case"


GROUP_TASKS = [f"logiccat_{c}" for c in ("physical", "mathematical", "commonsense", "hypothetical")]


def test_score_of_the_group_run_writes_the_group_and_its_categories_as_lm_eval_does(
    completions_run, logiccat_cache, tmp_path, capsys
):
    """``score logiccat RUN`` of a ``--tasks logiccat`` run: one file, lm-eval's table."""
    import json

    from sqlbench_lmeval.scoring.metrics import group_metrics

    results, samples, _, workdir = completions_run
    output = tmp_path / "group.json"
    command = ["score", "logiccat", str(workdir / "lm_eval_output")]
    command += ["--cache-dir", str(logiccat_cache), "--no-progress", "-o", str(output)]
    assert main(command) == 0
    scored = json.loads(output.read_text("utf-8"))
    assert scored["task"] == "logiccat"
    assert list(scored["tasks"]) == GROUP_TASKS  # not the run's other tasks of LogicCat
    shown = [metric.name for metric in group_metrics("logiccat")]
    assert {"ves", "ex", "r_ves"} <= set(shown)
    for task in GROUP_TASKS:
        assert scored["tasks"][task]["n"] == 6
        for metric in shown:
            logged = results["results"][task][f"{metric},score"]
            assert scored["tasks"][task][metric] == pytest.approx(logged), (task, metric)
    assert scored["metrics"]["n"] == 24
    for metric in shown:
        logged = results["results"]["logiccat"][f"{metric},score"]
        assert scored["metrics"][metric] == pytest.approx(logged), metric
    logged_ids = sorted(s["doc"]["id"] for task in GROUP_TASKS for s in samples[task])
    assert sorted(item["id"] for item in scored["items"]) == logged_ids
    assert scored["missing_ids"] == []
    out = capsys.readouterr().out
    # The run used --limit 6 (per task): said beside the count, and kept in the file.
    assert out.startswith(
        f"logiccat (sqlite): 24 items (the run used --limit 6), ves={scored['metrics']['ves']:.4f}"
    )
    assert scored["limit"] == "--limit 6"
    # A report of the score file marks the run as one of the lm-eval folder would be.
    from sqlbench_lmeval.report import read_runs
    from sqlbench_lmeval.report.metadata import run_metadata

    (run,) = read_runs([str(output)])
    assert run_metadata(run).limit == "--limit 6"
    for task in GROUP_TASKS:
        assert f"\n  {task}: 6 items, ves={scored['tasks'][task]['ves']:.4f}, ex=" in out
    # One task of the same run is still scored by its name.
    assert main([*command[:1], "logiccat_physical", *command[2:]]) == 0
    alone = json.loads(output.read_text("utf-8"))
    assert alone["task"] == "logiccat_physical" and "tasks" not in alone
    assert alone["metrics"] == scored["tasks"]["logiccat_physical"]


def test_local_completions_run_scores_the_scripted_answers(completions_run):
    """The smoke task of the completions run: each question asked once, in the task's prompt
    format, and every answer scored right."""
    results, samples, seen, _ = completions_run
    assert sorted(seen) == sorted(f"Question: {q}\nAnswer:" for q, _ in SMOKE_DOCS)
    metrics = results["results"][SMOKE_TASK]
    assert metrics["exact_match,none"] == 1.0
    assert metrics["sample_len"] == len(SMOKE_DOCS)
    records = sorted(samples[SMOKE_TASK], key=lambda r: r["doc_id"])
    # The server cut each reply at the task's stop sequence "\n", as a real server does.
    assert [r["filtered_resps"] for r in records] == [[a] for _, a in SMOKE_DOCS]
    assert [r["exact_match"] for r in records] == [1.0, 1.0, 1.0]


def test_sampled_logiccat_mini_scores_planned_answers_exactly(sampled_run, logiccat_cache):
    results, samples, workdir = sampled_run
    records = load_bundle(logiccat_cache).records
    by_id = {record.id: record for record in records}
    logged = samples["logiccat_mini_sc"]
    assert len(logged) == 6
    checked = []
    for sample in logged:
        record = by_id[sample["doc"]["id"]]
        assert len(sample["resps"][0]) == 8  # one request, 8 responses
        if gold_answer_scores(record) != (1, 1):
            continue  # gold that cannot be matched: the plan's arithmetic does not apply
        kinds, ex_maj, c, ran = PLANS[plan_of(record.id)]
        score = logged_score(sample)
        assert sample["ex_maj"] == ex_maj, record.id
        got = [sample[f"pass_at_{k}"] for k in (1, 2, 4, 8)]
        assert got == pytest.approx(PASS[c]), record.id
        assert sample["ves_mean"] == pytest.approx(ran / 8)
        assert sample["ex_mean"] == pytest.approx(c / 8)
        # The log shows every sample: its SQL, status, group, and the winner.
        assert len(score["samples"]) == 8
        statuses = sorted(s["status"] for s in score["samples"])
        want = sorted(
            {"gold": "ok", "gold_ws": "ok", "wrong": "ok", "error": "error", "prose": "no_sql"}[k]
            for k in kinds
        )
        assert statuses == want
        # Distinct queries run: gold (fenced twice, once bare with other whitespace), wrong,
        # error -> 3; gold, wrong, prose -> 3; gold, error -> 2.
        assert score["vote"]["n_distinct"] == len({k.removesuffix("_ws") for k in kinds})
        winner = score["vote"]["winner"]
        assert score["samples"][winner]["ex"] == ex_maj
        checked.append(record.id)
    assert {plan_of(i) for i in checked} == set(PLANS), "every plan must be checked"
    # The run's numbers are the means of the logged ones.
    task = results["results"]["logiccat_mini_sc"]
    for metric in ("ex_maj", "pass_at_1", "pass_at_8", "ves_mean", "ex"):
        assert task[f"{metric},score"] == pytest.approx(sum(s[metric] for s in logged) / 6)
    assert "pass_at_16,score" not in task  # 8 samples allow k <= 8 only

    # The same outputs scored offline give the same numbers, item by item.
    lines = []
    for sample in logged:
        outputs = sample["resps"][0]
        # Half as one line with a list, half as repeated lines: both forms are read.
        if sample["doc"]["id"] % 2:
            lines.append({"id": sample["doc"]["id"], "prediction": outputs})
        else:
            lines += [{"id": sample["doc"]["id"], "prediction": o} for o in outputs]
    predictions = write_jsonl(workdir / "predictions.jsonl", lines)
    scored = score_offline(predictions, logiccat_cache, "--samples")
    names = ("ves", "ex", "ex_maj", "ves_mean", "ex_mean", *(f"pass_at_{k}" for k in (1, 2, 4, 8)))
    items = assert_same_scores(logged, scored, names)
    for sample in logged:
        assert items[sample["doc"]["id"]]["vote"] == logged_score(sample)["vote"]
        assert items[sample["doc"]["id"]]["samples"] == logged_score(sample)["samples"]
    # An id without predictions is 8 missing samples: every number 0, nothing run.
    absent = next(item for item_id, item in items.items() if item_id not in by_logged_id(logged))
    assert absent["status"] == "missing" and absent["ex_maj"] == 0 and absent["pass_at_8"] == 0
    assert [s["status"] for s in absent["samples"]] == ["missing"] * 8


def test_a_yaml_including_ours_sets_the_number_of_samples(sampled_run, logiccat_cache):
    results, samples, _ = sampled_run
    by_id = {record.id: record for record in load_bundle(logiccat_cache).records}
    logged = samples[USER_TASK]
    assert len(logged) == 6
    assert all(len(sample["resps"][0]) == 4 for sample in logged)
    assert all(sample["arguments"]["gen_args_0"]["arg_0"].startswith(USER_DESCRIPTION)
               for sample in logged)  # fmt: skip
    matchable = [s for s in logged if gold_answer_scores(by_id[s["doc"]["id"]]) == (1, 1)]
    assert matchable, "at least one item must have gold an answer can match"
    for sample in matchable:
        assert [sample[f"pass_at_{k}"] for k in (1, 2, 4)] == pytest.approx([0.25, 0.5, 1.0])
        assert sample["ex_maj"] == 0
    assert "pass_at_8" not in logged[0]
    assert "pass_at_8,score" not in results["results"][USER_TASK]


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
    model = scripted_model(records, chat_respond)
    answer, seen = with_smoke(lambda prompt, _body: model(prompt), chat_smoke_answer)
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
