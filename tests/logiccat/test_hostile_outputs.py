"""Hostile model outputs on real LogicCat items (SQLite): through ``Scorer.score``, the lm-eval
filter and ``sqlbench-lmeval score``, every output gets an outcome and nothing raises; answers
with several statements or a non-query are refused (issue 10)."""

from __future__ import annotations

import json

import pytest
from support.hostile_outputs import (
    check_every_output_scored,
    check_one_statement_cases,
    hostile_outputs,
    looping_names,
    named_outputs,
    truncated_names,
)

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.execution import GoldCache
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore
from sqlbench_lmeval.logiccat.benchmark import load_items
from sqlbench_lmeval.scoring.scorer import Scorer

pytestmark = pytest.mark.slow  # the real LogicCat bundle is built once per session


@pytest.fixture(scope="module")
def items(logiccat_cache):
    return load_items(cache_dir=logiccat_cache)


@pytest.fixture(scope="module")
def healthy(items):
    """An item whose gold runs, returns rows and is repeatable: gold matches itself."""
    return next(item for item in items if item.gold_status == "ok" and not item.flags)


def test_every_hostile_output_gets_an_outcome(items, tmp_path):
    cases = hostile_outputs()
    scores = Scorer(gold_cache=GoldCache(tmp_path / "gold"), workers=2, progress=False).score(
        [items[i % len(items)] for i in range(len(cases))], [output for _, output in cases]
    )
    check_every_output_scored(cases, scores)
    by_name = {name: score for (name, _), score in zip(cases, scores, strict=True)}
    # Python's sqlite3 refuses a statement holding NUL, and text it cannot encode as UTF-8:
    # such answers are execution errors (VES 0), as in the seed's db_engine.execute.
    assert by_name["nul_in_string"]["status"] == "error"
    assert "null character" in by_name["nul_in_string"]["error"]
    assert by_name["lone_surrogates"]["status"] == "error"
    assert "surrogates not allowed" in by_name["lone_surrogates"]["error"]
    assert by_name["think_unclosed"]["reason"] == "truncated"


def test_the_lm_eval_filter_scores_every_document(items, monkeypatch, tmp_path):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "2")
    cases = hostile_outputs()
    docs = [items[i % len(items)].to_doc() for i in range(len(cases))]
    scores = ExecuteAndScore("logiccat").apply([[output] for _, output in cases], docs)
    check_every_output_scored(cases, scores)


def test_score_command_counts_truncated_outputs_and_keeps_the_raw_text(
    items, logiccat_cache, tmp_path, capsys
):
    cases = named_outputs()
    predictions = tmp_path / "predictions.jsonl"
    # json.dumps writes NUL and lone surrogates as \\u escapes; json.loads gives them back.
    predictions.write_text(
        "".join(
            json.dumps({"id": item.id, "prediction": output}) + "\n"
            for item, (_, output) in zip(items[: len(cases)], cases, strict=True)
        ),
        encoding="utf-8",
    )
    output = tmp_path / "scores.json"
    code = main(
        [
            "score", "logiccat", str(predictions), "--output", str(output),
            "--cache-dir", str(logiccat_cache), "--workers", "2", "--no-progress",
        ]
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    # Cut off at the limit: raise it; cut off while repeating itself: a larger limit won't help.
    budget, loops = truncated_names() - looping_names(), looping_names()
    assert f"{len(budget)} item(s) were truncated" in printed
    assert "--gen_kwargs max_gen_toks=" in printed
    assert f"{len(loops)} truncated item(s) end in a repetition loop" in printed
    result = json.loads(output.read_text(encoding="utf-8"))
    scored = {item["id"]: item for item in result["items"]}
    for item, (name, text) in zip(items[: len(cases)], cases, strict=True):
        assert scored[item.id]["raw_output"] == text, name  # lone surrogates survive the file
    assert result["metrics"]["n_truncated"] == len(truncated_names())
    assert result["metrics"]["n_truncated_loops"] == len(loops)


def test_one_read_only_statement_per_answer(healthy, tmp_path):
    check_one_statement_cases(healthy, tmp_path / "gold")
