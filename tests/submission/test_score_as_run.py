"""A task variant run with ``--limit`` is scored as it was run, and every view counts it alike.

A scripted model answers the first 6 items of ``tpcds_postgres`` (a variant: answers asked in
PostgreSQL) through the real ``lm_eval`` CLI with ``--limit 6``. What it wrote, and so each
item's verdict (by hand):

====  =====================================================  ========================
item  output                                                 verdict (reason)
====  =====================================================  ========================
1     a fence cut off after two statements                   truncated (truncated;
                                                             refused: two statements)
2     ``<think>`` never closed                               truncated (no SQL)
3     a fence cut off after ``SELECT i_item_id FROM item``   truncated (ran, wrong)
4, 5  a query over store_sales that answers nothing          wrong_result
6     prose                                                  no_sql
====  =====================================================  ========================

``score`` on the lm-eval folder scores exactly those 6 items under the task's own name and
dialect; ``report`` pairs that score file with the lm-eval run; ``report``, the explorer,
``score`` and ``verify`` count the same verdicts; ``verify`` puts the 93 items the run never
answered on the full denominator.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from support.verify_runs import SCALE_FACTOR, WRONG, run_tpcds

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.report import read_runs
from sqlbench_lmeval.report.analysis import check_comparable
from sqlbench_lmeval.report.explorer import explorer_data
from sqlbench_lmeval.report.sections.outcomes import failure_rows
from sqlbench_lmeval.report.sections.pairs import pair_rows
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission

pytestmark = pytest.mark.slow

TASK = "tpcds_postgres"
ANSWERS = {
    1: "```sql\nSELECT 1 AS a;\nSELECT 2 AS b;\nSELEC",
    2: "<think>\nFirst I need the stores in Tennessee, then",
    3: "```sql\nSELECT i_item_id FROM item",
    4: WRONG,
    5: WRONG,
    6: "I do not know which tables hold that.",
}
VERDICTS = {"truncated": 3, "wrong_result": 2, "no_sql": 1}


@pytest.fixture(scope="module")
def cache(tpcds_cache):
    return tpcds_cache


@pytest.fixture(scope="module")
def run(cache, tpcds_items, tmp_path_factory):
    items = tpcds_items
    root = tmp_path_factory.mktemp("score-as-run")
    return run_tpcds(root / "lm", cache, items, ANSWERS, task=TASK, extra_args=["--limit", "6"])


def test_score_verify_report_and_explorer_agree_on_a_limit_run(run, cache, tmp_path, capsys):
    scored = tmp_path / "scores.json"
    assert (
        main(
            [
                "score",
                "tpcds",
                str(run),
                "-o",
                str(scored),
                "--no-progress",
                "--cache-dir",
                str(cache),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    result = json.loads(scored.read_text(encoding="utf-8"))
    assert (result["task"], result["prediction_dialect"], result["missing_ids"]) == (
        TASK,
        "postgres",
        [],
    )
    assert [item["id"] for item in result["items"]] == [1, 2, 3, 4, 5, 6]
    assert result["metrics"]["verdict_counts"] == VERDICTS
    assert "verdicts: wrong_result 2, no_sql 1, truncated 3" in printed
    first = result["items"][0]
    assert (first["status"], first["reason"], first["truncated"]) == ("error", "truncated", True)
    assert "more than one statement" in first["error"]

    # report pairs the score file with the lm-eval run (same task name, same items) and counts
    # the same classes; the explorer too.
    runs = read_runs([f"lm={run}", f"score={scored}"])
    check_comparable(runs)
    (pair,) = pair_rows(runs, resamples=100)
    assert (pair.view, pair.n_common) == (TASK, 6)
    for row in failure_rows(runs):
        assert {k: v for k, v in row.outcomes.items() if v} == VERDICTS
    explored = explorer_data(runs)["items"]
    for index in range(2):
        assert Counter(item["results"][index]["verdict"] for item in explored) == VERDICTS

    # verify: the same counts over the logged items; the 93 others are missing, scored 0.
    (submission,) = read_submissions(str(run))
    verification = verify_submission(submission, cache_dir=cache, workers=2)
    (task,) = verification.tasks
    assert task.metrics_logged["verdict_counts"] == VERDICTS
    assert task.metrics["verdict_counts"] == {**VERDICTS, "missing": 93}
    found = {f.code: f.items for f in task.findings if f.severity != "info"}
    assert found["truncated_outputs"] == (1, 2, 3)
    assert len(found["missing_items"]) == 93
    assert "--limit 6" in next(f.message for f in task.findings if f.code == "missing_items")


def write_predictions(path):
    """The model's answers as a predictions file (``{"id", "prediction"}`` lines)."""
    lines = [json.dumps({"id": i, "prediction": ANSWERS[i]}) + "\n" for i in ANSWERS]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_score_names_a_task_variant_of_a_predictions_file(cache, tmp_path):
    predictions = write_predictions(tmp_path / "predictions.jsonl")
    scored = tmp_path / "scores.json"
    arguments = [
        "score",
        TASK,
        str(predictions),
        "-o",
        str(scored),
        "--no-progress",
        "--cache-dir",
        str(cache),
        "--scale-factor",
        str(SCALE_FACTOR),
    ]
    assert main(arguments) == 0
    result = json.loads(scored.read_text(encoding="utf-8"))
    # A predictions file says nothing about a limit: the task's 99 items, 93 of them missing.
    assert (result["task"], result["prediction_dialect"], len(result["missing_ids"])) == (
        TASK,
        "postgres",
        93,
    )
    assert result["metrics"]["verdict_counts"] == {**VERDICTS, "missing": 93}


def test_verify_reads_a_score_output_and_a_predictions_file(run, cache, tmp_path):
    scored = tmp_path / "scores.json"
    assert (
        main(
            ["score", TASK, str(run), "-o", str(scored), "--no-progress", "--cache-dir", str(cache)]
        )
        == 0
    )
    # The score output records the data it was scored on, so verify rebuilds the same items.
    assert json.loads(scored.read_text(encoding="utf-8"))["data_options"] == {
        "scale_factor": SCALE_FACTOR,
        "dialect": "postgres",
    }
    (submission,) = read_submissions(str(scored))
    verification = verify_submission(submission, cache_dir=cache, workers=2)
    (task,) = verification.tasks
    found = {f.code for f in task.findings if f.severity != "info"}
    # Its claims are ours (no mismatch); the 93 items it never answered are missing. A score
    # output records no prompt, model or settings: unattested, whatever its numbers.
    assert found == {"missing_items", "truncated_outputs", "unattested"}
    assert verification.verdict == "unattested"
    assert task.metrics["verdict_counts"] == {**VERDICTS, "missing": 93}

    predictions = write_predictions(tmp_path / "predictions.jsonl")
    out = tmp_path / "verified"
    arguments = [
        "verify",
        f"preds={predictions}",
        "--task",
        TASK,
        "--output",
        str(out),
        "--no-progress",
        "--cache-dir",
        str(cache),
        "--scale-factor",
        str(SCALE_FACTOR),
    ]
    assert main(arguments) == 5  # unattested
    (report,) = out.glob("preds-*.json")
    data = json.loads(report.read_text(encoding="utf-8"))
    (task,) = data["tasks"]
    assert data["verdict"] == "unattested"
    assert {f["code"] for f in task["findings"] if f["severity"] != "info"} == {
        "missing_items",
        "truncated_outputs",
        "unattested",
    }
    assert task["metrics"]["verdict_counts"] == {**VERDICTS, "missing": 93}
