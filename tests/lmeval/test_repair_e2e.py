"""Retry with error feedback (``--model sqlbench-repair``) through the real ``lm_eval`` CLI.

A scripted loopback chat model answers each LogicCat item according to a plan chosen by its
id, and a smoke task of someone else's rides along in the same run:

- ``gold``: the gold SQL at once (one attempt);
- ``fixer``: a query on a column that does not exist, then, *only when the 2nd request shows it
  SQLite's error naming that column*, the gold SQL;
- ``never``: the broken query every time (1 + 3 retries, all errors);
- ``prose``: prose every time (1 + 3 retries, no SQL).

Expected numbers follow from the plan alone: a broken query or prose scores VES 0 and EX 0; the
gold query of a healthy, repeatable item scores 1 and 1 (checked as a precondition); the first
attempt gives ``ves``/``ex``, the last ``ves@retry``/``ex@retry``.

That a plain model run (``--model local-chat-completions``) has no retry numbers, even for a
failing answer, is checked on the chat run of tests/logiccat/test_task_e2e.py, whose
answers fail on purpose (one lm-eval start-up fewer).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter

import pytest
from support.logiccat_answers import MATCHABLE, QUESTION, score_offline, scores_path, write_jsonl
from support.openai_server import ScriptedOpenAIServer
from support.repair_run import run_repair
from support.smoke_task import SMOKE_TASK, smoke_answer, write_smoke_task

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.lmeval.repair import NO_SQL_FEEDBACK
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.report import read_runs
from sqlbench_lmeval.report.sections.retries import retry_rows

pytestmark = pytest.mark.slow

RETRIES = 3
PROSE = "I would need to know more about the pumps before answering."
PLANS = ("gold", "fixer", "never", "prose")


def plan(item_id: int) -> str:
    return PLANS[item_id % len(PLANS)]


def broken_sql(item_id: int) -> str:
    return f"SELECT missing_col_{item_id} FROM sqlite_master"


def sql_block(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def scripted(records):
    by_question = {}
    for record in records:
        by_question.setdefault(record.question.strip(), record)
    by_id = {r.id: r for r in records}

    def answer(prompt: str) -> str:
        asked = QUESTION.search(prompt)
        if asked is not None:  # a first request: the task's prompt
            record = by_question[asked.group(1).strip()]
            if plan(record.id) == "gold":
                return sql_block(record.gold_sql)
            return PROSE if plan(record.id) == "prose" else sql_block(broken_sql(record.id))
        if prompt.startswith("Question:"):  # the smoke task of another project
            return smoke_answer(prompt)
        # A feedback turn: only SQLite's error text says which item it is about.
        named = re.search(r"no such column: missing_col_(\d+)\b", prompt)
        if named is None:
            return PROSE
        item_id = int(named.group(1))
        return sql_block(
            by_id[item_id].gold_sql if plan(item_id) == "fixer" else broken_sql(item_id)
        )

    return answer


# (ves, ex, ves@retry, ex@retry, statuses of the attempts) per plan, for a healthy item.
EXPECTED = {
    "gold": (1, 1, 1, 1, ["ok"]),
    "fixer": (0, 0, 1, 1, ["error", "ok"]),
    "never": (0, 0, 0, 0, ["error"] * (RETRIES + 1)),
    "prose": (0, 0, 0, 0, ["no_sql"] * (RETRIES + 1)),
}


def test_repair_model_retries_our_items_with_the_error_and_passes_others_through(
    logiccat_cache, tmp_path
):
    records = load_bundle(logiccat_cache).records
    by_id = {r.id: r for r in records}
    smoke = tmp_path / "smoke"
    write_smoke_task(smoke)
    with ScriptedOpenAIServer(scripted(records)) as server:
        results, samples = run_repair(
            server,
            f"logiccat_mini,{SMOKE_TASK}",
            tmp_path,
            retries=RETRIES,
            extra_args=["--include_path", str(smoke), "--limit", "8"],
            env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
        )
        seen = list(server.requests)

    mini = samples["logiccat_mini"]
    assert len(mini) == 8
    assert {plan(s["doc"]["id"]) for s in mini} == set(PLANS)
    totals = dict.fromkeys(("ves", "ex", "ves@retry", "ex@retry", "retries_used"), 0)
    for sample in mini:
        item_id = sample["doc"]["id"]
        record = by_id[item_id]
        # Precondition of EXPECTED: gold runs, matches and is repeatable.
        assert record.gold_status in MATCHABLE and "random" not in record.flags, item_id
        ves, ex, ves_retry, ex_retry, statuses = EXPECTED[plan(item_id)]
        assert (sample["ves"], sample["ex"]) == (ves, ex), item_id
        assert (sample["ves@retry"], sample["ex@retry"]) == (ves_retry, ex_retry), item_id
        assert sample["retries_used"] == len(statuses) - 1
        score = ast.literal_eval(sample["filtered_resps"][0])  # lm-eval logs it as its repr
        assert [a["status"] for a in score["attempts"]] == statuses, item_id
        # The raw response is the envelope: every attempt's text is in the sample log.
        logged = json.loads(sample["resps"][0][0])["attempts"]
        assert [a["output"] for a in logged] == [a["output"] for a in score["attempts"]]
        planned = (ves, ex, ves_retry, ex_retry, len(statuses) - 1)
        for name, value in zip(totals, planned, strict=True):
            totals[name] += value

        marker = re.compile(rf"no such column: missing_col_{item_id}\b")
        feedback_turns = [r for r in seen if marker.search(r.prompt)]
        if plan(item_id) == "fixer":
            # The 2nd request carried the failed answer and SQLite's error, as chat turns.
            (second,) = feedback_turns
            messages = second.body["messages"]
            assert [m["role"] for m in messages[-3:]] == ["user", "assistant", "user"]
            assert messages[-2]["content"] == sql_block(broken_sql(item_id))
            assert f"no such column: missing_col_{item_id}" in messages[-1]["content"]
        if plan(item_id) == "never":
            assert len(feedback_turns) == RETRIES
            assert len(feedback_turns[-1].body["messages"]) == 1 + 2 * RETRIES
    for name, total in totals.items():
        assert results["results"]["logiccat_mini"][f"{name},score"] == pytest.approx(total / 8)
    # Every prose answer was followed by the no-SQL feedback, up to the retry limit.
    prose_items = sum(plan(s["doc"]["id"]) == "prose" for s in mini)
    assert sum(r.prompt == NO_SQL_FEEDBACK for r in seen) == prose_items * RETRIES

    # The other task went to the base model once per question and scored as usual.
    assert results["results"][SMOKE_TASK]["exact_match,none"] == 1.0
    smoke_samples = samples[SMOKE_TASK]
    assert [s["resps"][0][0] for s in smoke_samples] == [
        smoke_answer(s["doc"]["question"]).split("\n")[0] for s in smoke_samples
    ]
    assert sum(r.prompt.startswith("Question:") for r in seen) == len(smoke_samples)

    scores = offline_score_agrees_with_the_run(mini, logiccat_cache, tmp_path)
    report_counts_valid_after_retries(mini, tmp_path / "out", scores, tmp_path)


RETRY_NUMBERS = ("status", "ves", "ex", "ves@retry", "ex@retry", "retries_used", "final_status")


def offline_score_agrees_with_the_run(mini, logiccat_cache, tmp_path):
    """``sqlbench-lmeval score`` on the logged attempts: the same numbers, item by item.

    Half the items go in as the logged envelope (``prediction``), half as a bare ``attempts``
    list of the outputs; every other LogicCat item has no prediction (status ``missing``).
    """
    lines = []
    for number, sample in enumerate(mini):
        envelope = sample["resps"][0][0]
        if number % 2:
            outputs = [a["output"] for a in json.loads(envelope)["attempts"]]
            lines.append({"id": sample["doc"]["id"], "attempts": outputs})
        else:
            lines.append({"id": sample["doc"]["id"], "prediction": envelope})
    predictions = write_jsonl(tmp_path / "retried.jsonl", lines)
    scored = score_offline(predictions, logiccat_cache)
    by_id = {item["id"]: item for item in scored["items"]}
    for sample in mini:
        item = by_id[sample["doc"]["id"]]
        logged = ast.literal_eval(sample["filtered_resps"][0])
        assert {n: item[n] for n in RETRY_NUMBERS} == {n: logged[n] for n in RETRY_NUMBERS}
        assert [a["output"] for a in item["attempts"]] == [a["output"] for a in logged["attempts"]]
        # And the plan's numbers, derived by hand above, once more.
        ves, ex, ves_retry, ex_retry, statuses = EXPECTED[plan(sample["doc"]["id"])]
        assert (item["ves"], item["ex"], item["ves@retry"], item["ex@retry"]) == (
            ves, ex, ves_retry, ex_retry
        )  # fmt: skip
        assert item["retries_used"] == len(statuses) - 1
    # An item without a prediction is missing on every number, retried ones included.
    missing = set(by_id) - {s["doc"]["id"] for s in mini}
    assert sorted(missing) == scored["missing_ids"]
    absent = by_id[min(missing)]
    assert absent["status"] == "missing" and absent["final_status"] == "missing"
    assert (absent["ves@retry"], absent["ex@retry"], absent["retries_used"]) == (0, 0, 0)
    # Run-level means over all LogicCat items: only the 8 answered ones can score.
    n = scored["metrics"]["n"]
    planned = [EXPECTED[plan(s["doc"]["id"])] for s in mini]
    assert scored["metrics"]["ex@retry"] == pytest.approx(sum(p[3] for p in planned) / n)
    assert scored["metrics"]["retries_used"] == pytest.approx(
        sum(len(p[4]) - 1 for p in planned) / n
    )
    return scores_path(predictions)


def report_counts_valid_after_retries(mini, lm_eval_output, scores, tmp_path):
    """``report`` on the lm-eval run and on the offline scores: the "valid after r retries"
    table counts, from the plans alone. gold is valid at once, fixer after 1 retry, never and
    prose never (they use all 3 retries); every other item of the score file is missing."""
    plans = Counter(plan(s["doc"]["id"]) for s in mini)
    valid_after = (plans["gold"],) + (plans["gold"] + plans["fixer"],) * RETRIES
    used = (plans["gold"], plans["fixer"], 0, plans["never"] + plans["prose"])
    ex_after = (plans["gold"] + plans["fixer"]) / len(mini)
    run, offline = retry_rows(read_runs([f"run={lm_eval_output}", f"offline={scores}"]))
    assert (run.view, run.n, run.valid_after, run.retries_used) == (
        "logiccat_mini", 8, valid_after, used
    )  # fmt: skip
    assert (run.ex_first, run.ex_after) == (plans["gold"] / 8, ex_after)
    n = offline.n
    assert offline.view == "logiccat" and offline.valid_after == valid_after
    assert offline.retries_used == (n - 8 + plans["gold"], *used[1:])
    assert offline.ex_after == pytest.approx(ex_after * 8 / n)
    report = tmp_path / "report"
    assert main(["report", str(lm_eval_output), "-o", str(report), "--resamples", "200"]) == 0
    assert "valid after r retries" in (report / "report.md").read_text(encoding="utf-8")
    assert (report / "retries-logiccat_mini.png").is_file()
