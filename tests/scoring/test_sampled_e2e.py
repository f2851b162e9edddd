"""``logiccat_mini_sc`` through the real ``lm_eval`` CLI and ``score --samples``, with a
scripted model whose 8 answers per question are planned; numbers worked out by hand. In the
same run, a user's YAML that includes ``logiccat_mini_sc`` with ``repeats: 4``: pass@k stops at
k = 4 (one lm-eval start-up for both tests).

The plan is chosen by the item's id; no plan has a tied vote, so the expected numbers do not
depend on the order lm-eval hands the 8 answers back in. Both tasks ask about the same items,
so the user's YAML also sets a ``description`` that tells the scripted model whose request it
answers.
"""

from __future__ import annotations

import ast
from collections import defaultdict

import pytest
from support.lm_eval_run import run_lm_eval
from support.logiccat_answers import (
    PROSE,
    WRONG_SQL,
    assert_same_scores,
    gold_answer_scores,
    score_offline,
    scripted_model,
    write_jsonl,
)

from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.paths import tasks_dir

pytestmark = pytest.mark.slow

ERROR_SQL = "SELECT no_such_column FROM no_such_table"

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
def sampled_run(logiccat_cache, tmp_path_factory):
    """``lm_eval --tasks logiccat_mini_sc,my_sc4 --limit 6``; ``my_sc4`` is a user's YAML in
    its own folder that includes ours with ``repeats: 4``. Returns (results, samples, workdir).
    """
    workdir = tmp_path_factory.mktemp("sampled")
    folder = workdir / "my_tasks"
    folder.mkdir()
    base = tasks_dir() / "logiccat" / "logiccat_mini_sc.yaml"
    # The description opens every prompt of the user's task: how the model tells them apart.
    user_yaml = f"include: {base}\ntask: {USER_TASK}\nrepeats: 4\n"
    user_yaml += f'description: "{USER_DESCRIPTION}\\n\\n"\n'
    (folder / "my_sc4.yaml").write_text(user_yaml)
    records = load_bundle(logiccat_cache).records
    planned, four_samples = planned_model(records), four_samples_model(records)

    def answer(prompt: str) -> str:
        return four_samples(prompt) if prompt.startswith(USER_DESCRIPTION) else planned(prompt)

    results, samples = run_lm_eval(
        ["logiccat_mini_sc", USER_TASK],
        answer=answer,
        include_path=folder,
        workdir=workdir,
        extra_args=["--limit", "6"],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    return results, samples, workdir


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
