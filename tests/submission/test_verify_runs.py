"""``verify`` on a real lm-eval output folder of a scripted TPC-DS model, untouched and edited.

A model answers all 99 ``tpcds`` items through the real ``lm_eval`` CLI and the loopback
server (``support.verify_runs``) with a query that reads ``store_sales`` and answers nothing.
Each test edits a copy of that folder to make one problem, and each edited run must yield
exactly its finding (findings of severity ``info`` are facts, not problems), while the
untouched run verifies clean. Two edits are consistent, as a model's own answers would be
(``answer_differently``: raw output, score dict, numbers and aggregates all rewritten): item 5
answered ``SELECT 42 AS answer`` (it reads no table), item 7 answered with gold's SQL as the
task logs it (its ``target``).
"""

from __future__ import annotations

import json

import pytest
from support.verify_runs import (
    answer_differently,
    copy_run,
    results_json,
    run_tpcds,
    samples_lines,
    write_results_json,
    write_samples_lines,
)

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.report.runs import parse_python_literal
from sqlbench_lmeval.submission.leaderboard import build_leaderboard
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import (
    REJECTED,
    VERIFIED,
    WITH_FINDINGS,
    cross_run_findings,
    verify_submission,
)

pytestmark = pytest.mark.slow

CONSTANT_ITEM, GOLD_ITEM = 5, 7


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
    return {"clean": clean, "constant": constant, "paster": paster}


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
    assert {item["prompt"] for item in task.items} == {"same"}


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
    row = next(item for item in verification.tasks[0].items if item["id"] == 4)
    assert row["prompt"] == "edited" and row["prompt_sha256"] != row["logged_prompt_sha256"]


def test_a_changed_claimed_metric_is_found_with_its_item(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] == 6:
            score = parse_python_literal(line["filtered_resps"][0])
            assert score["ex"] == 0
            score["ex"] = 1  # as if the run had been judged correct here
            line["filtered_resps"] = [str(score)]
            line["ex"] = 1
    write_samples_lines(folder, lines)
    verification = verified(folder, cache)
    assert problems(verification) == {"item_mismatch": (6,)}
    (finding,) = [f for f in verification.all_findings if f.code == "item_mismatch"]
    assert "edited" in finding.message or "another verdict" in finding.message


def test_a_changed_aggregate_is_found(runs, cache, tmp_path):
    folder = edited(runs, tmp_path)
    data = results_json(folder)
    data["results"]["tpcds"]["ex,score"] = 0.5
    write_results_json(folder, data)
    verification = verified(folder, cache)
    assert set(problems(verification)) == {"aggregate_mismatch"}
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


def test_two_identical_runs_are_found(runs, cache, tmp_path):
    twin = copy_run(runs["clean"], tmp_path / "twin")
    first, second = cross_run_findings(
        [verified(runs["clean"], cache, "a"), verified(twin, cache, "b")]
    )
    assert problems(first) == {"identical_outputs": ()} == problems(second)
    assert "b" in first.all_findings[-1].message and "a" in second.all_findings[-1].message
    # A run alone, or beside a different one, has no such finding.
    alone = cross_run_findings(
        [verified(runs["clean"], cache, "a"), verified(runs["constant"], cache, "c")]
    )
    assert "identical_outputs" not in problems(alone[0])


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
    # A rejected run makes the command fail.
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
        == 1
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
    assert main([*base, f"clean={runs['clean']}", f"constant={runs['constant']}"]) == 0
    data = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    (board,) = data["tasks"]
    models = {m["name"]: m for m in board["models"]}
    # Neither answers any item (EX 0): they tie at rank 1, one group; the constant answer
    # shows in its verdict.
    assert {(m["rank"], m["groups"], m["ex"]) for m in models.values()} == {(1, "a", 0.0)}
    assert (models["clean"]["verdict"], models["constant"]["verdict"]) == (
        "verified",
        "verified with findings",
    )
    cached = sorted((out / "verifications").glob("cache-*.json"))
    stamps = [path.stat().st_mtime_ns for path in cached]
    assert len(cached) == 2
    # Adding a run verifies that run only; the paster's one correct item puts it first.
    files = build_leaderboard(
        [f"clean={runs['clean']}", f"constant={runs['constant']}", f"paster={runs['paster']}"],
        out,
        cache_dir=cache,
        resamples=200,
    )
    assert files.verified == ("paster",) and files.cached == ("clean", "constant")
    assert [path.stat().st_mtime_ns for path in cached] == stamps
    data = json.loads(files.json.read_text(encoding="utf-8"))
    first = data["tasks"][0]["models"][0]
    assert (first["name"], first["rank"], first["ex"]) == ("paster", 1, pytest.approx(1 / 99))
    page = files.html.read_text(encoding="utf-8")
    assert "leaderboard-data" in page and "verifications/" in page
