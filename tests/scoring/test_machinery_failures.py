"""Failures of the evaluation itself are never a model's score.

Gold is the benchmark's: gold that did not finish within the answers' time limit runs again on a
fresh worker under its own, longer limit; gold that still does not finish stops scoring naming
the items, or, when the user asks, leaves them out of every mean (never scored 0). A gold
worker killed from outside reruns. A gold cache that cannot be written stops scoring. Real
SQLite files, real worker processes, real kills.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, Status
from sqlbench_lmeval.execution.unavailable import CacheUnwritable, EvaluationUnavailable
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore, process_results
from sqlbench_lmeval.scoring.item import EXCLUDED, Item
from sqlbench_lmeval.scoring.scorer import (
    EXCLUDE_UNFINISHED_GOLD_ENV,
    GOLD_TIMEOUT_ENV,
    TIMEOUT_ENV,
    Scorer,
)
from sqlbench_lmeval.scoring.verdicts import aggregate, verdict

# 2,000,000 recursion steps: most of a second here, far more than the answers' limit below.
SLOW_GOLD = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) "
    "SELECT count(*) FROM c"
)
NEVER_ENDS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)
ANSWERS_LIMIT = Limits(timeout_s=0.02)  # no machine runs SLOW_GOLD within it


def item(database, item_id: int, gold_sql: str, gold_status: str = "ok") -> Item:
    return Item(
        item_id, f"question {item_id}", database, gold_sql, "sqlite", "physical", gold_status
    )


def test_gold_past_the_answers_limit_gets_its_own_and_is_cached(pumps, tmp_path):
    cache = GoldCache(tmp_path / "gold")
    items = [item(pumps, 1, SLOW_GOLD), item(pumps, 2, "SELECT name FROM pump ORDER BY name")]
    answers = ["SELECT 2000000", "SELECT name FROM pump ORDER BY name"]
    scores = Scorer(limits=ANSWERS_LIMIT, gold_cache=cache, workers=1, progress=False).score(
        items, answers
    )
    assert [(s["status"], s["ex"], s["gold_status"], s["reason"]) for s in scores] == [
        ("ok", 1, "ok", "match"),
        ("ok", 1, "ok", "match"),
    ]
    assert [verdict(s["status"], s["ex"], s["truncated"], s["gold_status"]) for s in scores] == [
        "correct"
    ] * 2
    # Stored under the answers' limits: a later run reads it (run under those limits it
    # could only time out).
    (cached,) = cache.run([Job(pumps, SLOW_GOLD)], ANSWERS_LIMIT, workers=1)
    assert (cached.status, cached.rows) == (Status.OK, ((2000000,),))


def test_gold_that_never_finishes_stops_scoring_naming_the_item(pumps):
    items = [item(pumps, 7, NEVER_ENDS), item(pumps, 8, "SELECT 1")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5)
    with pytest.raises(EvaluationUnavailable) as raised:
        Scorer(limits=limits, workers=1, progress=False).score(items, ["SELECT 1", "SELECT 1"])
    message = str(raised.value)
    assert "gold of 1 item(s) did not finish" in message and "limit of 0.5 s" in message
    assert "(items 7; item 7: stopped after 0.5 s)" in message and "item 8" not in message
    assert "--gold-timeout" in message and "--exclude-unfinished-gold" in message


def test_gold_that_never_finishes_can_be_left_out_of_every_mean(pumps):
    items = [item(pumps, 7, NEVER_ENDS), item(pumps, 8, "SELECT 1"), item(pumps, 9, "SELECT 2")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5, exclude_unfinished_gold=True)
    scores = Scorer(limits=limits, workers=1, progress=False).score(
        items, ["SELECT 1", "SELECT 1", "SELECT 3"]
    )
    left_out = scores[0]
    assert (left_out["status"], left_out["prediction_status"], left_out["reason"]) == (
        EXCLUDED,
        "ok",
        "gold_timeout",
    )
    assert "ex" not in left_out and "ves" not in left_out  # never a 0
    assert verdict(left_out["status"], 0, False, left_out["gold_status"]) == EXCLUDED
    metrics = aggregate(scores)
    # Two items counted: one right, one wrong; the excluded one in no mean.
    assert (metrics["n"], metrics["ex"], metrics["n_excluded"]) == (2, 0.5, 1)
    assert metrics["excluded_ids"] == [7]
    assert metrics["verdict_counts"] == {"correct": 1, "wrong_result": 1, EXCLUDED: 1}


def test_gold_recorded_as_failing_at_build_time_is_not_run_again(pumps):
    # The benchmark's own broken gold (its build-time status says so) does not stop the run and
    # is not run again under gold's own limit; the answer that ran is not compared with it:
    # verdict broken_gold, never wrong_result.
    items = [item(pumps, 7, NEVER_ENDS, gold_status="error")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5)
    (score,) = Scorer(limits=limits, workers=1, progress=False).score(items, ["SELECT 1"])
    assert (score["gold_status"], score["reason"], score["ex"]) == ("error", "broken_gold", 0)
    assert score["gold_error"] == "stopped after 0.02 s"  # the answers' limit, not gold's
    assert aggregate([score])["verdict_counts"] == {"broken_gold": 1}


def test_the_lm_eval_knobs_exclude_and_lm_eval_leaves_the_item_out(
    pumps, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(TIMEOUT_ENV, "0.02")
    monkeypatch.setenv(GOLD_TIMEOUT_ENV, "0.5")
    docs = [item(pumps, 7, NEVER_ENDS).to_doc(), item(pumps, 8, "SELECT 1").to_doc()]
    with pytest.raises(EvaluationUnavailable, match="item 7: stopped after 0.5 s"):
        ExecuteAndScore("logiccat").apply([["SELECT 1"], ["SELECT 1"]], docs)
    monkeypatch.setenv(EXCLUDE_UNFINISHED_GOLD_ENV, "1")
    left_out, scored = ExecuteAndScore("logiccat").apply([["SELECT 1"], ["SELECT 1"]], docs)
    assert (left_out["status"], scored["status"], scored["ex"]) == (EXCLUDED, "ok", 1)
    assert "1 of 2 logiccat documents left out of every mean" in capsys.readouterr().err
    # No number for lm-eval to average: its means leave the document out.
    assert process_results(docs[0], [left_out]) == {}
    assert process_results(docs[1], [scored])["ex"] == 1


KILL_HOOKS = """
import os
import signal


def register(conn):
    conn.create_function("killed_worker", 0, lambda: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_gold_whose_worker_is_always_killed_stops_scoring(pumps, tmp_path, monkeypatch):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "gold_kill_hooks.py").write_text(KILL_HOOKS)
    monkeypatch.setattr(sys, "path", [str(hooks), *sys.path])  # the workers get sys.path
    database = Database("sqlite", pumps.path, setup="gold_kill_hooks:register")
    items = [item(database, 3, "SELECT killed_worker()"), item(database, 4, "SELECT 1")]
    with pytest.raises(EvaluationUnavailable) as raised:
        Scorer(workers=1, progress=False).score(items, ["SELECT 1", "SELECT 1"])
    message = str(raised.value)
    assert "item 3: worker process died (signal SIGKILL)" in message and "item 4" not in message


@pytest.mark.parametrize("where", ["parent is a file", "folder is immutable"])
def test_a_gold_cache_that_cannot_be_written_stops_scoring(pumps, tmp_path, where):
    if where == "parent is a file":
        # As root too: no permission bit makes a regular file a folder.
        (tmp_path / "not-a-folder").write_text("")
        root = tmp_path / "not-a-folder" / "gold"
    else:
        root = immutable_folder(tmp_path / "gold")
    try:
        with pytest.raises(CacheUnwritable) as raised:
            Scorer(gold_cache=GoldCache(root), workers=1, progress=False).score(
                [item(pumps, 1, "SELECT 1")], ["SELECT 1"]
            )
    finally:
        release(root)
    message = str(raised.value)
    assert f"the cache file {root / 'gold-cache.sqlite'} cannot be used" in message
    assert "make its folder writable" in message and "--cache-dir" in message


def immutable_folder(path):
    """An empty folder nobody may create files in, root included (``chattr +i``)."""
    import shutil
    import subprocess

    path.mkdir()
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"this filesystem has no immutable flag: {done.stderr.strip()}")
    return path


def release(path):
    import subprocess

    if path.is_dir():
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def test_sampled_scoring_leaves_an_item_with_unfinished_gold_out(pumps):

    items = [item(pumps, 7, NEVER_ENDS), item(pumps, 8, "SELECT 1")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5, exclude_unfinished_gold=True)
    outputs = [["SELECT 1", "SELECT 2"], ["SELECT 1", "SELECT 2"]]
    left_out, scored = Scorer(limits=limits, workers=1, progress=False).score_samples(
        items, outputs
    )
    assert (left_out["status"], "ex" in left_out) == (EXCLUDED, False)
    assert (scored["status"], scored["ex"], scored["ex_maj"]) == ("ok", 1, 1)
    metrics = aggregate([left_out, scored])
    assert (metrics["n"], metrics["ex"], metrics["excluded_ids"]) == (1, 1.0, [7])


def test_a_retried_answer_to_an_item_with_unfinished_gold_gets_no_retry_numbers(pumps):
    from sqlbench_lmeval.scoring.retry_envelope import from_attempts, score_with_retries

    items = [item(pumps, 7, NEVER_ENDS), item(pumps, 8, "SELECT 1")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5, exclude_unfinished_gold=True)
    outputs = [from_attempts(["SELECT 2", "SELECT 1"])] * 2
    left_out, scored = score_with_retries(
        items,
        outputs,
        lambda some, texts: Scorer(limits=limits, workers=1, progress=False).score(some, texts),
    )
    assert (left_out["status"], "ex@retry" in left_out, "ex" in left_out) == (
        EXCLUDED,
        False,
        False,
    )
    assert (scored["ex"], scored["ex@retry"], scored["retries_used"]) == (0, 1, 1)


def test_the_report_counts_excluded_items_apart_and_in_no_mean(pumps, tmp_path):
    import json

    from sqlbench_lmeval.cli import main
    from sqlbench_lmeval.report.runs import read_runs

    items = [item(pumps, 7, NEVER_ENDS), item(pumps, 8, "SELECT 1"), item(pumps, 9, "SELECT 2")]
    limits = Limits(timeout_s=0.02, gold_timeout_s=0.5, exclude_unfinished_gold=True)
    scores = Scorer(limits=limits, workers=1, progress=False).score(
        items, ["SELECT 1", "SELECT 1", "SELECT 3"]
    )
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"task": "logiccat", "items": scores}), encoding="utf-8")
    ((task,),) = [run.tasks for run in read_runs([f"model={path}"])]
    assert ([i.id for i in task.items], task.excluded) == ([8, 9], (7,))
    assert main(["report", f"model={path}", "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| model | logiccat | 2 (+1 excluded) |" in text


@pytest.mark.parametrize("case", ["gold never finishes", "gold's worker always killed"])
def test_score_stops_with_exit_3_and_writes_nothing(pumps, tmp_path, monkeypatch, capsys, case):
    # The real `score` command, its real workers and SQLite file; only the items come from
    # here (a benchmark's own gold finishes and is never killed), and so does their dataset
    # version: LogicCat's own would build the real bundle from the upstream files into this
    # test's empty cache (~30 s of CPU per case) before scoring, which these items never read.
    from sqlbench_lmeval import cli
    from sqlbench_lmeval.logiccat import benchmark

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "gold_kill_hooks.py").write_text(KILL_HOOKS)
    monkeypatch.setattr(sys, "path", [str(hooks), *sys.path])  # the workers get sys.path
    if case == "gold never finishes":
        gold, expected = NEVER_ENDS, "gold of 1 item(s) did not finish"
    else:
        pumps = Database("sqlite", pumps.path, setup="gold_kill_hooks:register")
        gold, expected = "SELECT killed_worker()", "worker process died (signal SIGKILL)"
    items = [item(pumps, 3, gold), item(pumps, 4, "SELECT 1")]
    monkeypatch.setattr(
        benchmark,
        "BENCHMARK",
        replace(
            benchmark.BENCHMARK,
            load_items=lambda **options: items,
            dataset_version=lambda **options: "test items",
        ),
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        '{"id": 3, "prediction": "SELECT 1"}\n{"id": 4, "prediction": "SELECT 1"}\n'
    )
    out = tmp_path / "out"
    out.mkdir()
    argv = ["score", "logiccat", str(predictions), "-o", str(out / "scores.json")]
    argv += ["--timeout", "0.02", "--gold-timeout", "0.5", "--workers", "1", "--no-progress"]
    assert cli.main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 3
    err = capsys.readouterr().err
    assert "sqlbench-lmeval score: the evaluation cannot run: " in err and expected in err
    assert "item 3" in err and "item 4" not in err
    assert list(out.iterdir()) == []  # no output, no temporary file
