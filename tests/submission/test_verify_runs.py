"""``verify`` on real lm-eval output folders of scripted TPC-DS models, untouched and edited.

A model answers all 99 ``tpcds`` items through the real ``lm_eval`` CLI and the loopback
server (``support.verify_runs``) with a query that reads ``store_sales`` and answers nothing
(``local-completions``, no chat template). A second model answers through
``local-chat-completions --apply_chat_template`` (lm-eval records ``"chat_template": ""``) with
another such query per item. Each test edits a copy of a folder to make one problem, and each
edited run must yield exactly its finding (findings of severity ``info`` are facts, not
problems) and its verdict, while the untouched runs verify clean. Some edits are consistent, as
a model's own answers would be (``answer_differently``: raw output, score dict, numbers and
aggregates all rewritten): item 5 answered ``SELECT 42 AS answer`` (it reads no table), item 7
answered with gold's SQL as the task logs it (its ``target``). One more real run, of 3 items,
uses a ``--include_path`` override of the task that appends gold to the prompt. The edited copies
hold the answers of the runs they were made from, so each answer is scored once in this module
(``support.verify_runs.scoring_once``).

Verdicts: ``verified``, ``verified with findings`` (a reader must know something about the
answers), ``rejected`` (the protocol is not the benchmark's, claims that do not stand, ids
duplicated or unknown) and ``unattested`` (a predictions file or score output: nothing records
how the outputs were made).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from support.browser import needs_chromium
from support.verify_runs import (
    SCALE_FACTOR,
    answer_differently,
    copy_run,
    edit_prompts,
    recompute_aggregates,
    results_json,
    run_tpcds,
    samples_lines,
    scoring_once,
    write_results_json,
    write_samples_lines,
)

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.runs import parse_python_literal
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.submission.cross_run import cross_run_findings
from sqlbench_lmeval.submission.leaderboard import build_leaderboard
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import (
    REJECTED,
    UNATTESTED,
    VERIFIED,
    WITH_FINDINGS,
    verify_submission,
)

pytestmark = pytest.mark.slow

CONSTANT_ITEM, GOLD_ITEM = 5, 7
#: The chat model's answer to item n: reads a table, answers nothing, differs per item.
CHAT_ANSWER = "```sql\nSELECT 'chat answer {}' AS answer FROM store_sales LIMIT 1\n```"
#: ChatML, as a chat template writes one user turn and opens the assistant's.
CHATML = "<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module", autouse=True)
def _each_answer_scored_once():
    """The edited copies hold the answers of the runs they were made from: each answer is
    scored once in this module (``support.verify_runs.scoring_once``)."""
    with scoring_once():
        yield


@pytest.fixture(scope="module")
def cache(tpcds_cache):
    return tpcds_cache


@pytest.fixture(scope="module")
def items(tpcds_items):
    return tpcds_items


@pytest.fixture(scope="module")
def runs(cache, items, tmp_path_factory):
    root = tmp_path_factory.mktemp("verify-runs")
    clean = run_tpcds(root / "clean", cache, items, {})
    constant = copy_run(clean, root / "constant")
    answer_differently(constant, "tpcds", CONSTANT_ITEM, "```sql\nSELECT 42 AS answer\n```")
    paster = copy_run(clean, root / "paster")
    (gold,) = [item.gold_sql for item in items if item.id == GOLD_ITEM]
    answer_differently(paster, "tpcds", GOLD_ITEM, f"```sql\n{gold}\n```")
    chat = run_tpcds(
        root / "chat",
        cache,
        items,
        {item.id: CHAT_ANSWER.format(item.id) for item in items},
        chat=True,
    )
    return {"clean": clean, "constant": constant, "paster": paster, "chat": chat}


def verified(folder, cache, name="run"):
    (submission,) = read_submissions(f"{name}={folder}")
    return verify_submission(submission, cache_dir=cache, workers=2)


def problems(verification) -> dict[str, tuple[int, ...]]:
    """Findings that are problems (not info), by code, with their items."""
    return {f.code: f.items for f in verification.all_findings if f.severity != "info"}


def edited(runs, tmp_path):
    return copy_run(runs["clean"], tmp_path / "edited")


def test_the_untouched_run_verifies_clean(runs, cache):
    verification = verified(runs["clean"], cache)
    assert problems(verification) == {}
    assert verification.verdict == VERIFIED
    (task,) = verification.tasks
    # WRONG reads store_sales: it runs on every item (VES 1) and answers none of them.
    assert task.metrics["n"] == 99 and task.metrics["ves"] == 1.0
    assert task.metrics["verdict_counts"] == {"wrong_result": 99}
    assert task.facts["chat_template"] == "off" and task.facts["num_fewshot"] == 0
    assert task.facts["lm_eval_version"] == results_json(runs["clean"])["lm_eval_version"]
    assert task.facts["config_source"] == "tasks/tpcds/tpcds.yaml"  # not this machine's path
    assert {item["prompt"] for item in task.items} == {"same"}


def test_lm_evals_table_gives_complexity_counts_no_direction(runs):
    # A count of joins or CTEs is no score (a model answering SELECT 1 would "win" a lower-is-
    # better count): lm-eval records no direction for it, so its table shows no arrow; the
    # scores keep theirs. Gold's counts are the same for every model: no row at all.
    data = results_json(runs["clean"])
    directions = data["higher_is_better"]["tpcds"]
    assert len(COMPLEXITY) == 6 and {directions[name] for name in COMPLEXITY} == {None}
    assert (directions["ex"], directions["ves"], directions["structural_similarity"]) == (
        True,
        True,
        True,
    )
    gold_counts = {f"gold_{count}" for count in COMPLEXITY}
    assert not gold_counts & set(directions)
    assert not gold_counts & {key.partition(",")[0] for key in data["results"]["tpcds"]}
    (line, *_) = samples_lines(runs["clean"])
    assert not gold_counts & set(line)
    assert gold_counts <= set(parse_python_literal(line["filtered_resps"][0]))


def as_made_before_gold_counts_left_the_table(folder) -> None:
    """Make ``folder`` what lm-eval wrote while the TPC-DS task listed gold's complexity counts
    (``gold_<count>``): each line carries its score dict's gold counts beside it, and the
    results file lists them, with their means over the lines (as lm-eval computes them)."""
    gold_counts = [f"gold_{count}" for count in COMPLEXITY]
    lines = samples_lines(folder)
    for line in lines:
        score = parse_python_literal(line["filtered_resps"][0])
        line.update((name, score[name]) for name in gold_counts)
    write_samples_lines(folder, lines)
    data = results_json(folder)
    for name in gold_counts:
        data["results"]["tpcds"][f"{name},score"] = None  # recompute_aggregates writes it
        data["results"]["tpcds"][f"{name}_stderr,score"] = "N/A"
        data["higher_is_better"]["tpcds"][name] = None
        data["configs"]["tpcds"]["metric_list"].append(
            {"metric": name, "aggregation": "mean", "higher_is_better": None}
        )
    write_results_json(folder, data)
    recompute_aggregates(folder, "tpcds")


def test_a_run_made_when_gold_counts_were_in_lm_evals_table_verifies(runs, cache, tmp_path):
    # Runs made before gold's counts left lm-eval's table claim them, per line and in
    # aggregate: the claims are checked against ours (the score dicts still carry them) and
    # stand; an edited one is found as any other claimed number is.
    folder = edited(runs, tmp_path)
    as_made_before_gold_counts_left_the_table(folder)
    verification = verified(folder, cache)
    assert problems(verification) == {} and verification.verdict == VERIFIED
    (task,) = verification.tasks
    lines = samples_lines(folder)
    for count in COMPLEXITY:
        name = f"gold_{count}"
        gold_mean = sum(line[name] for line in lines) / len(lines)
        assert task.claimed[name] == pytest.approx(gold_mean)
        assert task.metrics_logged[name] == pytest.approx(gold_mean)
    assert task.claimed["gold_join_count"] > 0  # TPC-DS's gold joins tables
    for line in lines:
        if line["doc"]["id"] == 9:
            line["gold_join_count"] += 1
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"item_mismatch": (9,)}
    assert verification.verdict == REJECTED


def test_an_api_chat_run_records_its_chat_template_on_and_verifies(runs, cache):
    # lm-eval logs "chat_template": "" for local-chat-completions --apply_chat_template.
    assert results_json(runs["chat"])["chat_template"] == ""
    verification = verified(runs["chat"], cache)
    assert problems(verification) == {} and verification.verdict == VERIFIED
    (task,) = verification.tasks
    assert task.facts["chat_template"] == "on (chat model local-chat-completions)"
    assert {item["prompt"] for item in task.items} == {"wrapped"}


def _gold(line) -> str:
    return line["target"]


def _hint(line, prompt):
    return f"{prompt}\nHint (from the reference solution): ```sql\n{_gold(line)}\n```\n"


def _prepended(line, prompt):
    return f"```sql\n{_gold(line)}\n```\n{prompt}"


def _few_shot(line, prompt):
    example = "Question: How many stores are there?\n```sql\nSELECT COUNT(*) FROM store\n```"
    return f"{example}\n\n{_gold(line)}\n\n{prompt}"


@pytest.mark.parametrize(
    "edit", [_hint, _prepended, _few_shot], ids=["hint", "prepended", "few-shot"]
)
def test_gold_around_the_prompt_rejects_the_run(runs, cache, tmp_path, edit):
    folder = edited(runs, tmp_path)
    edit_prompts(folder, edit)
    verification = verified(folder, cache)
    assert problems(verification) == {"added_prompt_text": tuple(range(1, 100))}
    assert verification.verdict == REJECTED
    (task,) = verification.tasks
    # No chat template was used, and the report says so.
    assert task.facts["chat_template"] == "off"
    assert {item["prompt"] for item in task.items} == {"added_text"}


def test_a_task_override_of_doc_to_text_rejects_the_run(runs, cache, tmp_path):
    # lm_eval --include_path with a YAML whose doc_to_text adds the hint: the results file
    # records the override's source and file; the logged prompts carry the hint.
    folder = edited(runs, tmp_path)
    edit_prompts(folder, _hint)
    data = results_json(folder)
    config = data["configs"]["tpcds"]
    config["doc_to_text"] = "{{question}}\nHint (from the reference solution): {{gold_sql}}"
    config["metadata"]["config_source"] = "/home/someone/override/tpcds_hint.yaml"
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"added_prompt_text", "task_definition"}
    assert verification.verdict == REJECTED
    (finding,) = [f for f in verification.all_findings if f.code == "task_definition"]
    assert "tpcds_hint.yaml" in finding.message and finding.severity == "reject"
    # Prompts edited back to ours in the samples log: the results file still tells.
    write_samples_lines(folder, samples_lines(runs["clean"]))
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"task_definition"}
    assert verification.verdict == REJECTED


#: A task override as a user would write it for ``lm_eval --include_path``: our task, its
#: prompt function replaced by one that appends the gold SQL as a hint.
OVERRIDE_YAML = (
    "include: {tasks}/tpcds/tpcds.yaml\ntask: tpcds\ndoc_to_text: !function hint.doc_to_text\n"
)
OVERRIDE_PROMPT = """from sqlbench_lmeval.tpcds.task import doc_to_text as benchmark_prompt


def doc_to_text(doc):
    hint = "Hint (from the reference solution): ```sql\\n" + doc["gold_sql"] + "\\n```\\n"
    return benchmark_prompt(doc) + hint
"""


def test_a_real_include_path_override_that_adds_gold_rejects_the_run(cache, items, tmp_path):
    # lm_eval itself runs the override (3 items): its samples log holds the prompts the model
    # got, and its results file the override's prompt function and YAML file.
    from sqlbench_lmeval.paths import tasks_dir

    override = tmp_path / "override"
    override.mkdir()
    (override / "tpcds_hint.yaml").write_text(OVERRIDE_YAML.format(tasks=tasks_dir()))
    (override / "hint.py").write_text(OVERRIDE_PROMPT)
    folder = run_tpcds(
        tmp_path / "run",
        cache,
        items,
        {},
        extra_args=["--include_path", str(override), "--limit", "3"],
    )
    assert (
        "Hint (from the reference solution)"
        in samples_lines(folder)[0]["arguments"]["gen_args_0"]["arg_0"]
    )
    verification = verified(folder, cache)
    assert problems(verification) == {
        "added_prompt_text": (1, 2, 3),
        "task_definition": (),
        "missing_items": tuple(range(4, 100)),
    }
    assert verification.verdict == REJECTED
    (finding,) = [f for f in verification.all_findings if f.code == "task_definition"]
    assert "tpcds_hint.yaml" in finding.message and "Hint" in finding.message
    (missing,) = [f for f in verification.all_findings if f.code == "missing_items"]
    assert "--limit 3)" in missing.message
    (task,) = verification.tasks
    assert task.facts["chat_template"] == "off"
    assert task.facts["config_source"] == "override/tpcds_hint.yaml"  # not this machine's path


def _chatml(line, prompt):
    return CHATML.format(prompt)


def test_a_samples_log_without_prompts_is_unattested(runs, cache, tmp_path):
    # Deleting the prompts must not hide what was asked: nothing then records it.
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    for line in lines:
        del line["arguments"]
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"prompt_not_logged": tuple(range(1, 100))}
    assert verification.verdict == UNATTESTED


def test_a_chat_wrap_stands_only_inside_a_recorded_template(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    edit_prompts(folder, _chatml)
    # Without a recorded template, the markers are text the benchmark does not give.
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"added_prompt_text"}
    assert verification.verdict == REJECTED
    # With one (lm-eval records the template's name or text), its markers alone are allowed.
    data = results_json(folder)
    data["chat_template"] = "chatml"
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert problems(verification) == {} and verification.verdict == VERIFIED
    (task,) = verification.tasks
    assert task.facts["chat_template"].startswith("on (template")
    assert {item["prompt"] for item in task.items} == {"wrapped"}
    # Inside the template, a system turn or a hint after our prompt is still added text.
    edit_prompts(
        folder,
        lambda line, prompt: (
            "<|im_start|>system\nThe answer is "
            + _gold(line)
            + "<|im_end|>\n"
            + prompt.replace("<|im_end|>", "\nHint: " + _gold(line) + "<|im_end|>", 1)
        ),
    )
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"added_prompt_text"}
    assert verification.verdict == REJECTED


def _with_system_gold(line, prompt):
    (text,) = prompt
    messages = json.loads(text)
    system = {"role": "system", "content": f"The reference solution is: {_gold(line)}"}
    return [json.dumps([system, *messages])]


def _with_earlier_turn(line, prompt):
    (text,) = prompt
    messages = json.loads(text)
    earlier = [
        {"role": "user", "content": "Show me a query."},
        {"role": "assistant", "content": f"```sql\n{_gold(line)}\n```"},
    ]
    return [json.dumps([*earlier, *messages])]


@pytest.mark.parametrize("edit", [_with_system_gold, _with_earlier_turn], ids=["system", "turn"])
def test_gold_in_another_chat_turn_rejects_the_run(runs, cache, tmp_path, edit):
    folder = copy_run(runs["chat"], tmp_path / "chat")
    edit_prompts(folder, edit)
    verification = verified(folder, cache)
    assert problems(verification) == {"added_prompt_text": tuple(range(1, 100))}
    assert verification.verdict == REJECTED


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda data: data["configs"]["tpcds"].update(num_fewshot=3), "not_zero_shot"),
        (lambda data: data["versions"].update(tpcds=1.0), "task_version"),
        (lambda data: data.update(system_instruction="Use the hint."), "system_instruction"),
        (lambda data: data["configs"]["tpcds"].update(description="Hint: "), "task_description"),
    ],
    ids=["three-shot", "task-version", "system-instruction", "description"],
)
def test_a_protocol_change_rejects_the_run(runs, cache, tmp_path, edit, code):
    folder = edited(runs, tmp_path)
    data = results_json(folder)
    edit(data)
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert set(problems(verification)) == {code}
    assert verification.verdict == REJECTED


def test_facts_a_reader_needs_are_findings(runs, cache, tmp_path):
    # Another lm-eval version and an edited logged question: the run stands, with findings.
    folder = edited(runs, tmp_path)
    data = results_json(folder)
    data["lm_eval_version"] = "0.4.99"
    write_results_json(folder, data)
    lines = samples_lines(folder)
    lines[2]["doc"]["question"] = "Which store sold the most?"
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"lm_eval_version": (), "edited_documents": (3,)}
    assert verification.verdict == WITH_FINDINGS
    assert verification.tasks[0].facts["lm_eval_version"] == "0.4.99"


def test_a_missing_item_counts_zero_on_the_full_denominator(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    write_samples_lines(folder, [line for line in lines if line["doc"]["id"] != 3])
    verification = verified(folder, cache)
    assert problems(verification) == {"missing_items": (3,)}
    assert verification.verdict == WITH_FINDINGS
    (task,) = verification.tasks
    assert task.metrics["n"] == 99 and task.metrics["status_counts"]["missing"] == 1
    assert task.metrics["ves"] == pytest.approx(98 / 99)


def test_a_duplicated_item_rejects_the_run(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    write_samples_lines(folder, [*lines, next(line for line in lines if line["doc"]["id"] == 9)])
    verification = verified(folder, cache)
    assert problems(verification) == {"duplicate_items": (9,)}
    assert verification.verdict == REJECTED


def test_an_edited_prompt_is_found(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] == 4:
            prompt = line["arguments"]["gen_args_0"]["arg_0"]
            line["arguments"]["gen_args_0"]["arg_0"] = prompt.replace(
                "CREATE TABLE", "create table", 1
            )
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"edited_prompt": (4,)}
    assert verification.verdict == REJECTED
    row = next(item for item in verification.tasks[0].items if item["id"] == 4)
    assert row["prompt"] == "edited" and row["prompt_sha256"] != row["logged_prompt_sha256"]
    # Another instruction on every item (an oracle-CoT prompt under our task's name).
    edit_prompts(
        folder,
        lambda line, prompt: prompt.replace(
            "Write one DuckDB SQL query", "Think step by step with the reference, then write one"
        ),
    )
    verification = verified(folder, cache)
    assert problems(verification) == {"edited_prompt": tuple(range(1, 100))}
    assert verification.verdict == REJECTED


FORGED = tuple(range(6, 26))  # 20 items


def test_changed_claimed_metrics_reject_the_run(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] in FORGED:
            score = parse_python_literal(line["filtered_resps"][0])
            assert score["ex"] == 0
            score["ex"] = 1  # as if the run had been judged correct here
            line["filtered_resps"] = [str(score)]
            line["ex"] = 1
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"item_mismatch": FORGED}
    assert verification.verdict == REJECTED
    (finding,) = [f for f in verification.all_findings if f.code == "item_mismatch"]
    assert "edited" in finding.message or "another verdict" in finding.message
    # With the aggregates made to match the forged lines, both claims fall.
    recompute_aggregates(folder, "tpcds")
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"item_mismatch", "aggregate_mismatch"}
    assert verification.verdict == REJECTED


def judged_under_version_0(folder) -> int:
    """Item 6 of the run at ``folder`` as if judged correct under comparison version 0, and the
    results file's means made from the lines; the number of lines."""
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] == 6:
            score = parse_python_literal(line["filtered_resps"][0])
            score.update(ex=1, comparison_version="0")
            line["filtered_resps"] = [str(score)]
            line["ex"] = 1
    write_samples_lines(folder, lines)
    recompute_aggregates(folder, "tpcds")
    return len(lines)


def test_a_claim_made_under_another_comparison_version_stands_with_a_finding(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    judged_under_version_0(folder)
    verification = verified(folder, cache)
    assert problems(verification) == {
        "comparison_version": (),
        "item_mismatch": (6,),
        "aggregate_mismatch": (),
    }
    assert verification.verdict == WITH_FINDINGS
    (finding,) = [f for f in verification.all_findings if f.code == "item_mismatch"]
    assert "comparison version 0" in finding.message


def test_a_benign_item_never_excuses_an_aggregate_edited_otherwise(runs, cache, tmp_path):
    # Item 6 judged under another comparison version (benign), and then the results file's EX
    # set to 0.5: the mean of the run's own claims (EX 1 on item 6 alone, 0 elsewhere) is not
    # 0.5, so item 6 does not explain it.
    folder = edited(runs, tmp_path)
    count = judged_under_version_0(folder)
    data = results_json(folder)
    assert data["results"]["tpcds"]["ex,score"] == 1 / count  # the claims add up before the edit
    data["results"]["tpcds"]["ex,score"] = 0.5
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert problems(verification)["item_mismatch"] == (6,)
    assert verification.verdict == REJECTED
    (finding,) = [f for f in verification.all_findings if f.code == "aggregate_mismatch"]
    assert finding.severity == "reject" and "no item explains it" in finding.message


def test_a_claim_that_timed_out_in_the_run_stands_with_a_finding(runs, cache, tmp_path):
    # Item 8 hit the time limit on the submitter's machine (status timeout, VES 0) and runs here
    # (VES 1: WRONG reads store_sales in milliseconds): a benign, named cause; our numbers stand.
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] == 8:
            score = parse_python_literal(line["filtered_resps"][0])
            assert (score["status"], score["ves"]) == ("ok", 1)
            score.update(status="timeout", ves=0)
            line["filtered_resps"] = [str(score)]
            line["ves"] = 0
    write_samples_lines(folder, lines)
    recompute_aggregates(folder, "tpcds")
    verification = verified(folder, cache)
    assert problems(verification) == {"item_mismatch": (8,), "aggregate_mismatch": ()}
    assert verification.verdict == WITH_FINDINGS
    (finding,) = [f for f in verification.all_findings if f.code == "item_mismatch"]
    assert "execution limits or machine speed: status timeout in the run, ok here" in (
        finding.message
    )
    assert verification.tasks[0].metrics["ves"] == 1.0  # ours, not the claim


def test_a_changed_aggregate_is_found(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    data = results_json(folder)
    data["results"]["tpcds"]["ex,score"] = 0.5
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"aggregate_mismatch"}
    assert verification.verdict == REJECTED
    (finding,) = [f for f in verification.all_findings if f.code == "aggregate_mismatch"]
    assert "ex claimed 0.5000, re-scored 0.0000" in finding.message


def test_sampling_settings_on_a_greedy_task_are_found(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    data = results_json(folder)
    data["configs"]["tpcds"]["generation_kwargs"].update(do_sample=True, temperature=0.7)
    write_results_json(folder, data)
    lines = samples_lines(folder)
    for line in lines:
        line["arguments"]["gen_args_0"]["arg_1"].update(do_sample=True, temperature=0.7)
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    found = problems(verification)
    assert set(found) == {"sampling_on_greedy_task"}
    assert len(found["sampling_on_greedy_task"]) == 99
    assert verification.verdict == REJECTED


def test_a_constant_answer_is_flagged_and_keeps_its_status(runs, cache):
    verification = verified(runs["constant"], cache)
    assert problems(verification) == {"reads_no_table": (CONSTANT_ITEM,)}
    row = next(item for item in verification.tasks[0].items if item["id"] == CONSTANT_ITEM)
    # SELECT 42 runs (status ok), reads nothing, and is not TPC-DS's answer.
    assert (row["status"], row["reads_no_table"], row["ex"], row["ex_reads_data"]) == (
        "ok",
        True,
        0,
        0,
    )


def test_gold_pasted_as_an_answer_is_found(runs, cache):
    verification = verified(runs["paster"], cache)
    assert problems(verification) == {"gold_verbatim": (GOLD_ITEM,)}
    row = next(item for item in verification.tasks[0].items if item["id"] == GOLD_ITEM)
    assert row["ex"] == 1  # gold matches itself; the finding says how it got there


def test_gold_with_a_comment_and_other_alias_names_is_still_gold(runs, cache, items, tmp_path):
    folder = edited(runs, tmp_path)
    (gold,) = [item.gold_sql for item in items if item.id == GOLD_ITEM]
    assert " ss_customer_sk" in gold.lower() or "store_sales" in gold.lower()
    answer_differently(folder, "tpcds", GOLD_ITEM, f"```sql\n{gold}\n-- done\n```")
    verification = verified(folder, cache)
    assert problems(verification) == {"gold_verbatim": (GOLD_ITEM,)}
    assert verification.verdict == WITH_FINDINGS


def test_two_identical_runs_are_found(runs, cache, tmp_path):
    twin = copy_run(runs["clean"], tmp_path / "twin")
    first, second = cross_run_findings(
        [verified(runs["clean"], cache, "a"), verified(twin, cache, "b")]
    )
    assert problems(first) == {"identical_outputs": ()} == problems(second)
    assert "b" in first.all_findings[-1].message and "a" in second.all_findings[-1].message
    # A run alone, or beside a different one, has no such finding.
    alone = cross_run_findings(
        [verified(runs["clean"], cache, "a"), verified(runs["chat"], cache, "c")]
    )
    assert problems(alone[0]) == {} == problems(alone[1])


def test_a_run_assembled_from_two_runs_is_found_naming_both(runs, cache, tmp_path):
    # Items 1-50 from the completions run, 51-99 from the chat run (its raw outputs, score
    # dicts and numbers; the prompts stay this run's): every claim holds, item by item.
    folder = edited(runs, tmp_path)
    chat = {line["doc"]["id"]: line for line in samples_lines(runs["chat"])}
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] > 50:
            donor = chat[line["doc"]["id"]]
            for key in ("resps", "filtered_resps", *(k for k in donor if k not in line)):
                line[key] = donor[key]
    write_samples_lines(folder, lines)
    recompute_aggregates(folder, "tpcds")
    clean, chat_run, mixed = cross_run_findings(
        [
            verified(runs["clean"], cache, "clean"),
            verified(runs["chat"], cache, "chat"),
            verified(folder, cache, "mixed"),
        ]
    )
    assert {f.code for f in mixed.all_findings if f.severity != "info"} == {"shared_outputs"}
    shared = [f for f in mixed.all_findings if f.code == "shared_outputs"]
    assert sorted(f.items for f in shared) == [tuple(range(1, 51)), tuple(range(51, 100))]
    assert all(f.message.startswith("run mixed shares") for f in shared)
    assert any("with run clean" in f.message for f in shared)
    assert any("with run chat" in f.message for f in shared)
    assert mixed.verdict == WITH_FINDINGS
    # Each source shares half its answers with the assembled run: a finding naming it too.
    assert {f.code for f in clean.all_findings if f.severity != "info"} == {"shared_outputs"}
    (theirs,) = [f for f in chat_run.all_findings if f.code == "shared_outputs"]
    assert "run chat shares 49 of its 99" in theirs.message and "with run mixed" in theirs.message


def test_verify_command_writes_reports_with_a_stable_digest(runs, cache, tmp_path, capsys):
    out = tmp_path / "out"
    arguments = [
        "verify",
        f"clean={runs['clean']}",
        "--output",
        str(out),
        "--no-progress",
        "--cache-dir",
        str(cache),
    ]
    assert main(arguments) == 0
    first = capsys.readouterr().out
    assert "clean: verified" in first
    (report,) = out.glob("*.json")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"] == "verified" and len(data["digest"]) == 64
    assert {entry["file"] for entry in data["inputs"]} == {
        path.name for path in runs["clean"].iterdir()
    }
    markdown = report.with_suffix(".md").read_text(encoding="utf-8")
    assert data["digest"] in markdown and "tpcds (tpcds)" in markdown
    assert main(arguments) == 0
    assert json.loads(report.read_text(encoding="utf-8"))["digest"] == data["digest"]
    # A rejected run makes the command fail, with rejection's own code (not a crash's 1).
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    write_samples_lines(folder, [*lines, lines[0]])
    assert (
        main(
            [
                "verify",
                str(folder),
                "--output",
                str(out),
                "--no-progress",
                "--cache-dir",
                str(cache),
            ]
        )
        == 6
    )


def test_leaderboard_ranks_verified_runs_and_rescores_only_a_new_one(runs, cache, tmp_path):
    out = tmp_path / "board"
    base = [
        "leaderboard",
        "--output",
        str(out),
        "--no-progress",
        "--cache-dir",
        str(cache),
        "--resamples",
        "200",
    ]
    assert main([*base, f"chat={runs['chat']}", f"constant={runs['constant']}"]) == 0
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    (board,) = data["tasks"]
    models = {m["name"]: m for m in board["models"]}
    # Neither answers any item (EX 0): they tie at rank 1, one group; each wrote its own.
    assert {(m["rank"], m["groups"], m["ex"]) for m in models.values()} == {(1, "a", 0.0)}
    assert {m["name"]: m["shared_output_share"] for m in models.values()} == {
        "chat": 0.0,
        "constant": 0.0,
    }
    assert board["not_ranked"] == []
    cached = sorted((out / "verifications").glob("cache-*.json"))
    stamps = [path.stat().st_mtime_ns for path in cached]
    assert len(cached) == 2
    # Adding a run verifies that run only. The paster is the constant run's scripted model
    # with another answer on two items: the two share 97 of 99 answers, a copy one cannot tell
    # from its source, so both leave the ranking, listed apart with that share.
    files = build_leaderboard(
        [f"chat={runs['chat']}", f"constant={runs['constant']}", f"paster={runs['paster']}"],
        out,
        cache_dir=cache,
        resamples=200,
    )
    assert files.verified == ("paster",) and files.cached == ("chat", "constant")
    assert [path.stat().st_mtime_ns for path in cached] == stamps
    (board,) = json.loads(files.json.read_text(encoding="utf-8"))["tasks"]
    assert [(m["name"], m["rank"]) for m in board["models"]] == [("chat", 1)]
    apart = {m["name"]: m for m in board["not_ranked"]}
    assert board["set_apart"] == ["constant", "paster"] == sorted(apart)
    assert [m["shared_output_share"] for m in apart.values()] == [pytest.approx(97 / 99)] * 2
    assert apart["paster"]["ex"] == pytest.approx(1 / 99) and apart["paster"]["rank"] is None
    page = files.html.read_text(encoding="utf-8")
    assert "leaderboard-data" in page and "verifications/" in page


def _gold_predictions(items, path):
    """A hand-written predictions file: gold's SQL with a comment for every item."""
    lines = [{"id": item.id, "prediction": f"{item.gold_sql}\n-- done"} for item in items]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_predictions_file_and_its_score_output_are_unattested(cache, items, tmp_path):
    predictions = _gold_predictions(items, tmp_path / "gold.jsonl")
    (submission,) = read_submissions(f"gold={predictions}", task="tpcds")
    # A predictions file records no data: the scale factor is given, as to `verify`.
    verification = verify_submission(
        submission, cache_dir=cache, workers=2, options={"scale_factor": SCALE_FACTOR}
    )
    assert verification.verdict == UNATTESTED
    found = problems(verification)
    assert set(found) == {"unattested", "gold_verbatim"} and len(found["gold_verbatim"]) == 99
    (task,) = verification.tasks
    # The task's defaults are not shown as if the file had recorded them.
    assert (task.facts["max_gen_toks"], task.facts["chat_template"]) == (
        "not recorded",
        "not recorded",
    )
    assert task.facts["num_fewshot"] == "not recorded"
    # Its score output (the same answers, scored by `score`) is no better attested.
    scored = tmp_path / "gold-score.json"
    arguments = ["score", "tpcds", str(predictions), "--output", str(scored)]
    options = ["--cache-dir", str(cache), "--scale-factor", str(SCALE_FACTOR), "--no-progress"]
    assert main([*arguments, *options]) == 0
    (submission,) = read_submissions(str(scored))
    verification = verify_submission(submission, cache_dir=cache, workers=2)
    assert verification.verdict == UNATTESTED and "unattested" in problems(verification)


def _cli(command: str, *arguments: str) -> subprocess.CompletedProcess:
    """``python -m sqlbench_lmeval COMMAND ARGUMENTS --no-progress`` in a process of its own:
    the exit status a script sees."""
    return subprocess.run(
        [sys.executable, "-m", "sqlbench_lmeval", command, *arguments, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _verify_cli(*arguments: str) -> subprocess.CompletedProcess:
    return _cli("verify", *arguments)


def test_verify_exit_codes_say_the_verdict(runs, cache, items, tmp_path):
    """Through the real CLI: 0 for a verified run, with findings or without (so ``verify ... &&
    next`` goes on), 5 for unattested inputs, 6 for a rejected run (a crash's 1 is not a
    verdict), 2 for input it cannot read; with several runs, the worst decides."""
    predictions = _gold_predictions(items, tmp_path / "gold.jsonl")
    base = ["--output", str(tmp_path / "out"), "--cache-dir", str(cache)]
    clean = _verify_cli(*base, str(runs["clean"]))
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert ": verified (tpcds verified)" in clean.stdout
    # The constant answer on item 5: a finding (reads_no_table), still verified.
    constant = _verify_cli(*base, str(runs["constant"]))
    assert constant.returncode == 0, constant.stderr[-2000:]
    assert "verified with findings" in constant.stdout and "reads_no_table" in constant.stdout
    unattested = _verify_cli(
        *base, str(predictions), "--task", "tpcds", "--scale-factor", str(SCALE_FACTOR)
    )
    assert unattested.returncode == 5, unattested.stderr[-2000:]
    assert ": unattested (" in unattested.stdout
    three_shot = edited(runs, tmp_path)
    data = results_json(three_shot)
    data["configs"]["tpcds"]["num_fewshot"] = 3
    write_results_json(three_shot, data)
    rejected = _verify_cli(*base, str(three_shot))
    assert rejected.returncode == 6 and ": rejected (" in rejected.stdout, rejected.stderr[-2000:]
    # The worst run decides: rejected over unattested over verified.
    mixed = [str(runs["constant"]), f"three={three_shot}", str(predictions), "--task", "tpcds"]
    worst = _verify_cli(*base, *mixed, "--scale-factor", str(SCALE_FACTOR))
    assert worst.returncode == 6, worst.stderr[-2000:]
    # Input it cannot read: one line, exit 2, not a verdict.
    missing = _verify_cli(*base, str(tmp_path / "no-such-run"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("sqlbench-lmeval verify: error: ")
    assert len(missing.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def limited(cache, items, tmp_path_factory):
    """A real ``lm_eval --limit 30`` run of ``tpcds`` whose model answers two of its items with
    gold (items 3 and 7) and the others with an answer of its own that reads a table: under the
    leaderboard's gold-copy share (2 of 30), so only its being partial sets it apart."""
    answers = {item.id: CHAT_ANSWER.format(f"limited {item.id}") for item in items}
    gold = {item.id: f"```sql\n{item.gold_sql}\n```" for item in items if item.id in (3, 7)}
    answers.update(gold)
    root = tmp_path_factory.mktemp("limited")
    return run_tpcds(root, cache, items, answers, extra_args=["--limit", "30"])


def test_a_limit_run_is_named_partial_by_verify_and_ranked_apart(runs, limited, cache, tmp_path):
    """Through the real CLI: ``verify`` gives the gold copies of a ``--limit 30`` run as a share
    of its 30 answered items, saying how many of the 99 it answered; ``leaderboard`` ranks the
    two full runs beside each other and lists the partial one apart, with how much it answered."""
    logged = sorted(line["doc"]["id"] for line in samples_lines(limited))
    assert len(logged) == 30 and {3, 7} <= set(logged)
    done = _verify_cli(str(limited), "--output", str(tmp_path / "out"), "--cache-dir", str(cache))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        "gold_verbatim: the answers to 2 of the 30 answered items (6.7%; the run answered 30 of "
        "the task's 99 items) are gold"
    ) in done.stdout
    assert "missing_items: 69 of 99 items have no answer (the run used --limit 30)" in done.stdout
    board = tmp_path / "board"
    arguments = [f"clean={runs['clean']}", f"chat={runs['chat']}", f"limited={limited}"]
    options = ["--cache-dir", str(cache), "--resamples", "200"]
    built = _cli("leaderboard", *arguments, "--output", str(board), *options)
    assert built.returncode == 0, built.stderr[-2000:]
    (task,) = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))["tasks"]
    assert sorted(m["name"] for m in task["models"]) == ["chat", "clean"]
    assert {m["answered"] for m in task["models"]} == {99}
    (apart,) = task["not_ranked"]
    assert (apart["name"], apart["verdict"], apart["rank"]) == (
        "limited",
        "verified with findings",
        None,
    )
    assert (apart["answered"], apart["n"]) == (30, 99) and task["set_apart"] == ["limited"]
    assert apart["reasons"] == [
        "partial run: answered 30 of the task's 99 items; the ranked runs answered all 99 (a "
        "run is ranked only beside runs that answered the same items)"
    ]
    assert (task["n_items"], task["ranked_items"]) == (99, 99)
    markdown = (board / "leaderboard.md").read_text(encoding="utf-8")
    ranked_part, _, apart_part = markdown.partition("Not ranked:")
    assert "| limited |" not in ranked_part and "| clean |" in ranked_part
    assert "| limited | verified with findings |" in apart_part
    assert "partial run: answered 30 of the task's 99 items" in apart_part
    assert "99 items. Ranked: 2 verified" in ranked_part
    assert "1 verified but set apart (gold copies, partial runs," in ranked_part
    # Alone, the --limit run is ranked (beside no run of other items), its board saying that
    # the ranked runs answered 30 of the 99 items.
    alone = tmp_path / "alone"
    built = _cli("leaderboard", f"limited={limited}", "--output", str(alone), *options)
    assert built.returncode == 0, built.stderr[-2000:]
    (task,) = json.loads((alone / "leaderboard.json").read_text(encoding="utf-8"))["tasks"]
    assert [m["name"] for m in task["models"]] == ["limited"] and task["not_ranked"] == []
    assert (task["n_items"], task["ranked_items"]) == (99, 30)
    markdown = (alone / "leaderboard.md").read_text(encoding="utf-8")
    assert "99 items; the ranked runs answered 30 of them, the same ones (partial runs" in markdown


def test_two_runs_of_one_name_get_their_own_reports(runs, cache, tmp_path, capsys):
    out = tmp_path / "out"
    arguments = ["verify", f"m={runs['clean']}", f"m={runs['constant']}", "--output", str(out)]
    assert main([*arguments, "--no-progress", "--cache-dir", str(cache)]) == 0
    reports = sorted(out.glob("m-*.json"))
    assert len(reports) == 2
    verdicts = {json.loads(path.read_text(encoding="utf-8"))["verdict"] for path in reports}
    assert verdicts == {"verified with findings"}  # each shares its outputs with the other
    sources = {json.loads(path.read_text(encoding="utf-8"))["source"] for path in reports}
    assert sources == {str(runs["clean"]), str(runs["constant"])}
    # A byte-identical copy in another folder, under the same name: two reports still.
    twin = copy_run(runs["clean"], tmp_path / "twin")
    out = tmp_path / "twins"
    arguments = ["verify", f"m={runs['clean']}", f"m={twin}", "--output", str(out)]
    assert main([*arguments, "--no-progress", "--cache-dir", str(cache)]) == 0
    reports = sorted(out.glob("m-*.json"))
    sources = {json.loads(path.read_text(encoding="utf-8"))["source"] for path in reports}
    assert len(reports) == 2 and sources == {str(runs["clean"]), str(twin)}
    # One folder given twice under one name would be one report written twice: refused before
    # any scoring, and nothing written.
    out = tmp_path / "again"
    arguments = ["verify", f"m={runs['clean']}", f"m={runs['clean']}", "--output", str(out)]
    assert main([*arguments, "--no-progress", "--cache-dir", str(cache)]) == 2
    assert "given twice under one name" in capsys.readouterr().err
    assert not out.exists() or list(out.iterdir()) == []


def test_the_leaderboard_refuses_one_name_twice_before_scoring(runs, cache, tmp_path):
    out = tmp_path / "board"
    with pytest.raises(UserError, match="same name"):
        build_leaderboard([f"m={runs['clean']}", f"m={runs['constant']}"], out, cache_dir=cache)
    assert list((out / "verifications").glob("cache-*.json")) == []
    # A renamed run is the same content: its verification comes from the cache.
    first = build_leaderboard([f"A={runs['clean']}"], out, cache_dir=cache, resamples=200)
    again = build_leaderboard([f"modelA={runs['clean']}"], out, cache_dir=cache, resamples=200)
    assert (first.verified, again.verified, again.cached) == (("A",), (), ("modelA",))
    data = json.loads(again.json.read_text(encoding="utf-8"))
    assert [m["name"] for m in data["tasks"][0]["models"]] == ["modelA"]


@pytest.fixture(scope="module")
def board_of_every_verdict(runs, cache, items, tmp_path_factory):
    """An honest run (the chat model), one with findings (the constant answer), a rejected
    one (3-shot) and an unattested predictions file, on one leaderboard.

    Findings by construction: "constant" is the clean run with item 5 answered by a constant,
    and "three-shot" the clean run with its results file edited, so the two share 98 of 99
    answers; "constant" has one answer that reads no table; the pasted gold is gold verbatim
    on all 99 items; the chat model's answers are its own."""
    root = tmp_path_factory.mktemp("board-of-every-verdict")
    three_shot = copy_run(runs["clean"], root / "three-shot")
    data = results_json(three_shot)
    data["configs"]["tpcds"]["num_fewshot"] = 3
    write_results_json(three_shot, data)
    predictions = _gold_predictions(items, root / "gold.jsonl")
    return build_leaderboard(
        [
            f"honest={runs['chat']}",
            f"constant={runs['constant']}",
            f"three-shot={three_shot}",
            f"pasted={predictions}",
        ],
        root / "board",
        cache_dir=cache,
        resamples=200,
        task="tpcds",
        options={"scale_factor": SCALE_FACTOR},
    )


def test_a_board_of_every_verdict_ranks_two_and_lists_two_apart(board_of_every_verdict):
    """The first two ranked, the others apart with their reasons, in the JSON, the CSV and the
    Markdown."""
    import csv

    files = board_of_every_verdict
    (board,) = json.loads(files.json.read_text(encoding="utf-8"))["tasks"]
    assert [(m["name"], m["rank"], m["verdict"]) for m in board["models"]] == [
        ("constant", 1, "verified with findings"),
        ("honest", 1, "verified"),
    ]
    apart = {m["name"]: m for m in board["not_ranked"]}
    assert (apart["three-shot"]["verdict"], apart["pasted"]["verdict"]) == ("rejected", UNATTESTED)
    assert apart["three-shot"]["reasons"][0].startswith("not_zero_shot: 3-shot")
    assert apart["pasted"]["reasons"][0].startswith("unattested: a predictions file")
    # The pasted gold scores (nearly) every item, and still has no rank.
    assert apart["pasted"]["ex"] > 0.9 and apart["pasted"]["rank"] is None
    assert board["verdicts"] == {
        "verified": ["honest"],
        "verified with findings": ["constant"],
        "rejected": ["three-shot"],
        "unattested": ["pasted"],
    }
    summaries = {
        m["name"]: [s["text"] for s in m["findings_summary"]]
        for m in [*board["models"], *board["not_ranked"]]
    }
    assert summaries == {
        "honest": [],
        "constant": [
            "outputs shared with another run (98 items)",
            "answers that do not read the data (1 item)",
        ],
        "three-shot": [
            "few-shot examples in the prompts",
            "outputs shared with another run (98 items)",
        ],
        "pasted": [
            "nothing records how the outputs were made",
            "answers that are gold (99 items)",
        ],
    }
    rows = [r for r in csv.DictReader(files.csv.open(encoding="utf-8")) if not r["category"]]
    assert {(r["model"], r["standing"], r["rank"], r["verdict"]) for r in rows} == {
        ("constant", "ranked", "1", "verified with findings"),
        ("honest", "ranked", "1", "verified"),
        ("three-shot", "not ranked", "", "rejected"),
        ("pasted", "not ranked", "", "unattested"),
    }
    assert "not_zero_shot" in next(r for r in rows if r["model"] == "three-shot")["reasons"]
    markdown = files.markdown.read_text(encoding="utf-8")
    ranked_part, _, apart_part = markdown.partition("Not ranked:")
    assert "| honest |" in ranked_part and "| constant |" in ranked_part
    assert "| three-shot | rejected |" in apart_part and "| pasted | unattested |" in apart_part
    assert "three-shot" not in ranked_part and "pasted" not in ranked_part


@needs_chromium
def test_a_board_of_every_verdict_in_the_browser(board_of_every_verdict, tmp_path):
    """The same board as Chromium shows it: the first two ranked, the others apart, with the
    forest plot of the ranked two, each run's findings in words, no console error and nothing
    fetched."""
    from support.browser import chromium, page_problems

    files = board_of_every_verdict
    with chromium(tmp_path / "chromium-profile") as driver:
        driver.get(files.html.as_uri())
        for _ in range(200):
            if driver.execute_script("return window.leaderboardReady === true"):
                break
            time.sleep(0.05)
        ranked = driver.find_elements("css selector", ".board-table tbody tr")
        assert sorted(row.get_attribute("data-model") for row in ranked) == ["constant", "honest"]
        listed = driver.find_elements("css selector", ".apart-table tbody tr")
        shown = {
            row.get_attribute("data-model"): (
                row.find_element("css selector", "td[data-col='verdict']").text,
                row.find_element("css selector", "td[data-col='reasons']").text,
            )
            for row in listed
        }
        assert set(shown) == {"three-shot", "pasted"}
        assert shown["three-shot"][0] == "rejected" and "3-shot" in shown["three-shot"][1]
        assert shown["pasted"][0] == "unattested" and "predictions file" in shown["pasted"][1]
        counts = [span.text for span in driver.find_elements("css selector", "p.verdicts span")]
        assert counts == ["1 verified", "1 verified with findings", "1 rejected", "1 unattested"]
        findings = driver.find_element(
            "css selector", ".board-table tr[data-model='constant'] td[data-col='findings']"
        )
        assert findings.text.splitlines() == [
            "outputs shared with another run (98 items)",
            "answers that do not read the data (1 item)",
        ]
        # The forest plot of the two ranked runs: an image from the page itself, decoded.
        for _ in range(100):
            plots = driver.execute_script(
                "return Array.from(document.querySelectorAll('figure.forest img'))"
                ".map((i) => [i.complete ? i.naturalWidth : -1, i.src.slice(0, 26)])"
            )
            if plots and all(width >= 0 for width, _ in plots):
                break
            time.sleep(0.05)
        assert len(plots) == 1 and plots[0][0] > 400
        assert plots[0][1] == "data:image/svg+xml;base64,"
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        screenshot = tmp_path / "leaderboard-every-verdict.png"
        assert driver.save_screenshot(str(screenshot))
        print(f"screenshot: {screenshot}")


def test_a_verification_whose_scoring_failed_is_never_cached(runs, cache, tmp_path):
    """A damaged database (its first 8 KiB zeroed: DuckDB refuses it) stops the leaderboard
    naming the cause, and leaves no cached verification: the next build scores the run."""
    import shutil

    from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
    from sqlbench_lmeval.tpcds.data import database_dir

    damaged = tmp_path / "damaged-cache"
    shutil.copytree(database_dir(cache, SCALE_FACTOR), database_dir(damaged, SCALE_FACTOR))
    with open(database_dir(damaged, SCALE_FACTOR) / "tpcds.duckdb", "r+b") as handle:
        handle.write(b"\0" * 8192)
    out = tmp_path / "board"
    with pytest.raises(EvaluationUnavailable, match="tpcds.duckdb"):
        build_leaderboard([f"clean={runs['clean']}"], out, cache_dir=damaged, resamples=200)
    assert list((out / "verifications").glob("cache-*")) == []
    files = build_leaderboard([f"clean={runs['clean']}"], out, cache_dir=cache, resamples=200)
    assert (files.verified, files.cached) == (("clean",), ())
