"""A real ``lm_eval`` run in which one answer holds a NUL character and another is cut off
inside ``<think>`` (issue 10): the run completes, those items score 0 (status ``error``,
reason ``truncated``), every other item scores what its answer deserves, and the report
counts the truncated output and says how to raise the budget. The same run shows that a plain
chat model retries nothing (no retry numbers, raw responses unwrapped).

The scripted model answers by item id: ``id % 3 == 0`` a query holding NUL, ``id % 3 == 1``
reasoning cut off inside ``<think>``, else the gold query in a fence. Expected numbers follow
from that choice and the item's gold health alone.
"""

from __future__ import annotations

import pytest
from support.logiccat_answers import gold_answer_scores, run_logiccat, scripted_model

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.report.runs import parse_python_literal

pytestmark = pytest.mark.slow

BUDGET = 777  # passed as --gen_kwargs max_gen_toks=777; must reach the task's config


def kind(item_id: int) -> str:
    return ("nul", "cut_in_think", "gold")[item_id % 3]


def respond(record) -> str:
    if kind(record.id) == "nul":
        # sqlite3 refuses any statement text holding NUL: an execution error.
        return f"```sql\nSELECT 'a\x00b' AS x FROM ({record.gold_sql})\n```"
    if kind(record.id) == "cut_in_think":
        return "<think>\nThe question asks for the pump head. First I need the flow, so"
    return f"<think>easy</think>\n```sql\n{record.gold_sql}\n```"


def test_a_run_with_a_nul_and_a_cut_off_answer_completes(logiccat_cache, tmp_path):
    records = {record.id: record for record in load_bundle(logiccat_cache).records}
    answer = scripted_model(records.values(), respond)
    budget = ("--gen_kwargs", f"max_gen_toks={BUDGET}")
    results, samples = run_logiccat(
        "logiccat_mini", logiccat_cache, answer, tmp_path, "--limit", "6", *budget, chat=True
    )
    assert results["configs"]["logiccat_mini"]["generation_kwargs"]["max_gen_toks"] == BUDGET
    mini = samples["logiccat_mini"]
    assert len(mini) == 6
    assert {kind(sample["doc"]["id"]) for sample in mini} == {"nul", "cut_in_think", "gold"}
    for sample in mini:
        record = records[sample["doc"]["id"]]
        (logged,) = sample["filtered_resps"]  # the score dict, as lm-eval writes it (repr)
        score = parse_python_literal(logged)
        if kind(record.id) == "nul":
            assert (sample["ves"], sample["ex"]) == (0, 0)
            assert score["status"] == "error" and "null character" in score["error"]
        elif kind(record.id) == "cut_in_think":
            assert (sample["ves"], sample["ex"]) == (0, 0)
            assert (score["reason"], score["truncated"]) == ("truncated", True)
        else:
            assert (sample["ves"], sample["ex"]) == gold_answer_scores(record)
    want_ex = sum(sample["ex"] for sample in mini) / len(mini)
    assert results["results"]["logiccat_mini"]["ex,score"] == pytest.approx(want_ex)

    # A plain chat model (not --model sqlbench-repair, tests/lmeval/test_repair_e2e.py) retries
    # nothing: no retry numbers, even for the answers that failed, and each raw response is the
    # model's own text, not a retry envelope.
    retry_numbers = ("ves@retry", "ex@retry", "retries_used")
    run_numbers = {key.split(",")[0] for key in results["results"]["logiccat_mini"]}
    assert run_numbers.isdisjoint(retry_numbers)
    for sample in mini:
        assert not any(name in sample for name in retry_numbers)
        assert "attempts" not in sample["filtered_resps"][0]
        assert not sample["resps"][0][0].startswith("{")

    # The report counts the truncated outputs of the run and says how to give them room.
    truncated = sum(1 for sample in mini if kind(sample["doc"]["id"]) == "cut_in_think")
    report = tmp_path / "report"
    assert main(["report", str(tmp_path / "lm_eval_output"), "-o", str(report)]) == 0
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"{truncated} of 6 outputs were truncated" in text
    assert "--gen_kwargs max_gen_toks=N" in text
