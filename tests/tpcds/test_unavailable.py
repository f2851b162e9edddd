"""TPC-DS when the evaluation itself cannot run: a damaged DuckDB file, worker processes that
cannot start. ``score`` and ``gold`` exit 3 naming the cause and write no file, the lm-eval
filter raises instead of scoring, and the real ``lm_eval`` CLI fails with the message and
writes no results file. Never a score of 0 for the model."""

from __future__ import annotations

import json
import shutil

import pytest
from support.lm_eval_run import run_lm_eval_failing

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.tpcds.benchmark import load_items
from sqlbench_lmeval.tpcds.data import database_dir

SF = 0.01  # the session database (conftest.py)
UNAVAILABLE = 3  # exit code of a command stopped because the evaluation cannot run
ANSWER = "```sql\nSELECT 1\n```"


@pytest.fixture
def damaged_cache(tpcds_cache, tmp_path):
    """A cache holding a copy of the session database whose first 8 KiB (file and database
    headers) are zeros: DuckDB refuses to open it."""
    cache = tmp_path / "cache"
    shutil.copytree(database_dir(tpcds_cache, SF), database_dir(cache, SF))
    with open(database_dir(cache, SF) / "tpcds.duckdb", "r+b") as handle:
        handle.write(b"\0" * 8192)
    return cache


def predictions_file(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps({"id": n, "prediction": ANSWER}) + "\n" for n in (1, 2)))
    return path


def assert_commands_stop(cache, tmp_path, capsys, cause: str) -> None:
    common = ["--cache-dir", str(cache), "--scale-factor", str(SF), "--no-progress"]
    scores, gold = tmp_path / "scores.json", tmp_path / "gold.jsonl"
    for command, output in (
        (["score", "tpcds", str(predictions_file(tmp_path))], scores),
        (["gold", "tpcds"], gold),
    ):
        assert main([*command, *common, "--output", str(output), "--workers", "2"]) == UNAVAILABLE
        err = capsys.readouterr().err
        assert f"sqlbench-lmeval {command[0]}: the evaluation cannot run" in err and cause in err
        assert not output.exists()
        assert list(tmp_path.glob(f".{output.name}*")) == []  # no temporary file left either


def test_a_damaged_database_file_stops_score_and_gold(damaged_cache, tmp_path, capsys):
    cause = str(database_dir(damaged_cache, SF) / "tpcds.duckdb")
    assert_commands_stop(damaged_cache, tmp_path, capsys, cause)


def test_workers_that_cannot_start_stop_score_and_gold(tpcds_cache, tmp_path, capsys, monkeypatch):
    # A cache of its own without gold results: with the session's gold cached by earlier tests
    # `gold` would need no worker at all.
    cache = tmp_path / "cache"
    shutil.copytree(database_dir(tpcds_cache, SF), database_dir(cache, SF))
    # The workers are fresh interpreters; with a Python home that does not exist they die
    # before running any code (this process, already running, is not affected).
    monkeypatch.setenv("PYTHONHOME", "/nonexistent-python-home")
    assert_commands_stop(cache, tmp_path, capsys, "SQL worker processes fail to start")


def test_the_filter_raises_and_keeps_the_answers_for_later(
    damaged_cache, tpcds_cache, tmp_path, monkeypatch
):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(damaged_cache))
    docs = [item.to_doc() for item in load_items(cache_dir=damaged_cache, scale_factor=SF)[:3]]
    answers = [[f"```sql\nSELECT {n}\n```"] for n in range(len(docs))]
    with pytest.raises(EvaluationUnavailable, match="cannot open the duckdb database") as raised:
        ExecuteAndScore("tpcds").apply(answers, docs)
    (saved,) = (damaged_cache / "unscored").glob("tpcds-*.jsonl")
    assert f"saved in {saved}" in str(raised.value)
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert lines == [  # documents that name no task: the benchmark's name stands for it
        {"id": d["id"], "prediction": a[0], "task": "tpcds"}
        for d, a in zip(docs, answers, strict=True)
    ]
    # The cause fixed (the database file back), the saved answers score as usual.
    shutil.copyfile(database_dir(tpcds_cache, SF) / "tpcds.duckdb", docs[0]["db_path"])
    output = tmp_path / "later.json"
    later = ["score", "tpcds", str(saved), "--cache-dir", str(damaged_cache), "--no-progress"]
    assert main([*later, "--scale-factor", str(SF), "--output", str(output)]) == 0
    scored = json.loads(output.read_text())
    assert [i["status"] for i in scored["items"] if i["id"] in {d["id"] for d in docs}] == [
        "ok"
    ] * len(docs)


@pytest.mark.slow  # lm_eval indexes its ~15k task configs at start-up
def test_lm_eval_fails_with_the_cause_and_writes_no_results(damaged_cache, tmp_path):
    metadata = {"scale_factor": SF, "cache_dir": str(damaged_cache)}
    output = run_lm_eval_failing(
        "tpcds",
        answer=ANSWER,
        include_path=tasks_dir(),
        workdir=tmp_path,
        extra_args=["--limit", "3", "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(damaged_cache)},
    )
    assert "EvaluationUnavailable: cannot open the duckdb database" in output, output[-3000:]
    assert "answers are not scored; they are saved in" in output
