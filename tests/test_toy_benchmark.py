"""The guide's proof: the toy benchmark of tests/support/toybench, added by following
docs/adding-a-benchmark.md alone and registered from outside the package
(``$SQLBENCH_LMEVAL_BENCHMARKS``), runs through the real ``lm_eval`` CLI against the loopback
model, then ``score``, ``verify`` and ``report``; a file of its build damaged after ``prepare``
stops ``score`` naming it and the rebuild, as the shipped benchmarks' do."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from support.lm_eval_run import run_lm_eval
from support.toybench import benchmark as toy

from sqlbench_lmeval import cli
from sqlbench_lmeval.benchmarks import PLUGINS_ENV, names
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.lmeval import task_specs
from sqlbench_lmeval.paths import CACHE_ENV

TESTS = Path(__file__).resolve().parent
TASKS = TESTS / "support" / "toybench" / "tasks"
#: The model's answer to each question: right (3 with another column name), wrong, prose.
ANSWERS = {
    1: "```sql\nSELECT COUNT(*) FROM customer\n```",
    2: "```sql\nSELECT name FROM customer WHERE city = 'Oslo'\n```",
    3: "```sql\nSELECT SUM(amount) AS total FROM orders\n```",
    4: "```sql\nSELECT name FROM customer\n```",
    5: "There were no orders in 2025.",
}


def _clear_task_caches() -> None:
    for cached in (task_specs._configs, task_specs.task_specs, task_specs.task_groups):
        cached.cache_clear()


@pytest.fixture
def toy_env(monkeypatch, tmp_path):
    """The toy registered and a fresh cache, here and in every process the test starts."""
    cache = tmp_path / "cache"
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    env = {PLUGINS_ENV: "toy=support.toybench", CACHE_ENV: str(cache), "PYTHONPATH": path}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _clear_task_caches()
    yield env
    _clear_task_caches()


def answer(prompt: str) -> str:
    (number,) = [n for n, question, _ in toy.QUESTIONS if f"Question: {question}" in prompt]
    return ANSWERS[number]


@pytest.mark.slow
def test_the_toy_runs_through_lm_eval_score_verify_and_report(toy_env, tmp_path, capsys):
    assert "toy" in names()
    results, samples = run_lm_eval(
        "toy", answer=answer, include_path=TASKS, workdir=tmp_path, env=toy_env
    )
    assert results["results"]["toy"]["ex,score"] == pytest.approx(3 / 5)
    # lm-eval logs our score dict as its repr
    logged = {s["doc"]["id"]: ast.literal_eval(s["filtered_resps"][0]) for s in samples["toy"]}
    assert {n: logged[n]["reason"] for n in logged} == {
        1: "match",
        2: "match",
        3: "match",  # another column name: ex compares the values
        4: "column_count",
        5: "pred_no_sql",
    }
    assert logged[5]["gold_status"] == "empty" and logged[4]["gold_preview"]["row_count"] == 3
    run = tmp_path / "lm_eval_output"

    scores = tmp_path / "scores.json"
    assert cli.main(["score", "toy", str(run), "-o", str(scores), "--no-progress"]) == 0
    scored = json.loads(scores.read_text("utf-8"))
    assert scored["metrics"]["ex"] == pytest.approx(3 / 5)

    capsys.readouterr()
    verification = tmp_path / "verify"
    # Re-scored to the run's numbers under the toy task's definition; the one finding: the
    # right answers are gold's text (exit 0: verified, with findings).
    assert cli.main(["verify", str(run), "-o", str(verification), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "toy verified with findings" in said
    assert "toy: gold_verbatim: the answers to 2 of the 5 answered items (40.0%) are gold" in said

    report = tmp_path / "report"
    assert cli.main(["report", f"toy={run}", "-o", str(report)]) == 0
    page = (report / "report.md").read_text("utf-8")
    assert "| toy | toy | 5 | 0.600 [0.200, 1.000] |" in page  # EX of the run, and its interval
    assert "| toy | toy | 5 | 5 | toy-builder1 |" in page  # the dataset version it recorded
    capsys.readouterr()

    database = toy.folder() / toy.DATABASE
    database.write_bytes(database.read_bytes()[:100])
    assert cli.main(["score", "toy", str(run), "-o", str(scores), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{database} is changed (its checksum differs)" in err
    assert "rebuild it with `sqlbench-lmeval prepare toy`" in err
    assert cli.main(["prepare", "toy"]) == 0
    assert cli.main(["score", "toy", str(run), "-o", str(scores), "--no-progress"]) == 0
    assert json.loads(scores.read_text("utf-8"))["metrics"]["ex"] == pytest.approx(3 / 5)


def test_the_guide_lists_every_file_the_toy_needed_with_its_lines():
    guide = (TESTS.parent / "docs" / "adding-a-benchmark.md").read_text("utf-8")
    listed = dict(re.findall(r"^\| `(tests/[^`]+)`[^|]*\| (\d+) \|$", guide, re.M))
    package = TESTS / "support" / "toybench"
    files = [TESTS / "test_toy_benchmark.py"] + [
        path for path in package.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    ]
    lines = {
        path.relative_to(TESTS.parent).as_posix(): len(path.read_text("utf-8").splitlines())
        for path in files
    }
    assert {name: int(count) for name, count in listed.items()} == lines


@pytest.mark.parametrize("value", ["tpcds=support.toybench", "toy", "toy=", "=support.toybench"])
def test_a_registration_that_is_not_a_new_name_and_a_package_is_refused(monkeypatch, value):
    monkeypatch.setenv(PLUGINS_ENV, value)
    with pytest.raises(UserError, match=f"{PLUGINS_ENV}: .* is not name=package"):
        names()
