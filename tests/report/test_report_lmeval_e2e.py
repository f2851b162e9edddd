"""End to end: two scripted models through the real ``lm_eval`` CLI, then ``sqlbench-lmeval
report`` on what lm-eval wrote. The task is a six-question YAML written here that uses our
scoring hooks over a SQLite file made here, so the expected numbers are known by hand."""

import sqlite3
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.report import read_runs
from sqlbench_lmeval.report.sections.outcomes import failure_rows
from sqlbench_lmeval.report.sections.pairs import pair_rows
from sqlbench_lmeval.report.sections.scores import score_rows
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION

try:
    from support.lm_eval_run import run_lm_eval
except ImportError:  # tests/ not yet on pythonpath: the helper lives in tests/support/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from support.lm_eval_run import run_lm_eval

GOLD = {
    1: "SELECT COUNT(*) FROM t",
    2: "SELECT MAX(x) FROM t",
    3: "SELECT SUM(x) FROM t",
    4: "SELECT MIN(x) FROM t",
    5: "SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k",
    6: "SELECT AVG(x) FROM t",
}
CATEGORY = {1: "physical", 2: "physical", 3: "physical", 4: "mathematical", 5: "mathematical"}

# "good" is right on 1-5; "weak" is right on 1 and 5 only (so good alone is right on 2, 3, 4:
# McNemar b=3, c=0, p = 2 / 2**3 = 0.25).
ANSWERS = {
    "good": {**GOLD, 6: "SELECT SUM(x) FROM t"},
    "weak": {
        1: GOLD[1],
        2: "SELECT MIN(x) FROM t",  # runs, wrong result
        3: "SELECT no_such_column FROM t",  # error
        4: "",  # nothing to run: no_sql
        5: GOLD[5],
        6: "SELECT SUM(x) FROM t",  # wrong result
    },
}

DATA_MODULE = """
import datasets

GOLD = {gold!r}
CATEGORY = {category!r}


def load(db_path=None, **_metadata):
    docs = [
        {{
            "id": i, "question": f"Question {{i}}?", "engine": "sqlite", "db_path": db_path,
            "db_setup": "", "gold_sql": sql, "dialect": "sqlite",
            "category": CATEGORY.get(i, "commonsense"), "gold_status": "ok", "flags": [],
            "dataset_version": "tiny-v1",
        }}
        for i, sql in GOLD.items()
    ]
    return {{"test": datasets.Dataset.from_list(docs)}}
"""

TASK_YAML = """
task: tiny_sql
custom_dataset: !function tiny_data.load
dataset_kwargs:
  db_path: {db_path}
output_type: generate_until
test_split: test
doc_to_text: "{{{{question}}}}\\nSQL:"
doc_to_target: "{{{{gold_sql}}}}"
generation_kwargs:
  until: ["\\nQuestion:"]
  do_sample: false
  temperature: 0.0
  max_gen_toks: 64
filter_list:
  - name: score
    filter:
      - function: !function sqlbench_lmeval.lmeval.hooks.ExecuteAndScore
        benchmark: logiccat
process_results: !function sqlbench_lmeval.lmeval.hooks.process_results
metric_list:
  - {{metric: ves, aggregation: mean, higher_is_better: true}}
  - {{metric: ex, aggregation: mean, higher_is_better: true}}
  - {{metric: ex_strict, aggregation: mean, higher_is_better: true}}
  - {{metric: ex_set, aggregation: mean, higher_is_better: true}}
metadata:
  version: 1.0
"""


def _task_folder(tmp_path: Path) -> Path:
    database = tmp_path / "tiny.sqlite"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE t (x INTEGER, k TEXT)")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?)", [(i, "a" if i % 2 else "b") for i in range(1, 6)]
        )
    connection.close()
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "tiny_data.py").write_text(DATA_MODULE.format(gold=GOLD, category=CATEGORY))
    (tasks / "tiny.yaml").write_text(textwrap.dedent(TASK_YAML.format(db_path=database)))
    return tasks


def _run(model: str, tasks: Path, tmp_path: Path) -> Path:
    workdir = tmp_path / model
    workdir.mkdir()
    answers = ANSWERS[model]

    def answer(prompt: str) -> str:
        question = prompt.split("\n", 1)[0]  # "Question <id>?"
        return answers[int(question.removeprefix("Question ").rstrip("?"))]

    run_lm_eval(
        "tiny_sql",
        answer=answer,
        include_path=tasks,
        workdir=workdir,
        env={
            "SQLBENCH_LMEVAL_CACHE": str(tmp_path / "cache"),
            "SQLBENCH_LMEVAL_WORKERS": "1",
        },
    )
    return workdir / "lm_eval_output"


@pytest.mark.slow
def test_report_on_two_real_lm_eval_runs(tmp_path, capsys):
    tasks = _task_folder(tmp_path)
    with ThreadPoolExecutor(max_workers=2) as pool:  # two lm_eval processes at once
        good, weak = pool.map(lambda model: _run(model, tasks, tmp_path), ["good", "weak"])
    specs = [f"good={good}", f"weak={weak}"]

    runs = read_runs(specs)
    scores = {(row.run, row.category): row for row in score_rows(runs, resamples=500)}
    assert scores["good", None].intervals["ex"].mean == pytest.approx(5 / 6)
    assert scores["weak", None].intervals["ex"].mean == pytest.approx(2 / 6)
    assert scores["weak", None].intervals["ves"].mean == pytest.approx(4 / 6)
    assert scores["good", "physical"].intervals["ex"].mean == 1.0
    assert scores["weak", "physical"].intervals["ex"].mean == pytest.approx(1 / 3)
    (pair,) = pair_rows(runs, resamples=500)
    assert (pair.n_common, pair.a_only_correct, pair.b_only_correct) == (6, 3, 0)
    assert pair.p_value == 0.25
    failures = {row.run: row for row in failure_rows(runs)}
    assert {k: v for k, v in failures["weak"].outcomes.items() if v} == {
        "correct": 2,
        "wrong_result": 2,
        "error": 1,
        "no_sql": 1,
    }

    out = tmp_path / "report"
    assert main(["report", *specs, "--output", str(out), "--resamples", "500"]) == 0
    assert "report on good, weak" in capsys.readouterr().out
    markdown = (out / "report.md").read_text()
    # Runs keep their given names; items carry the comparison version that judged them.
    assert f"| good | tiny_sql | 6 | {COMPARISON_VERSION} | tiny-v1 |" in markdown
    assert "| good | weak | 6 (A 6, B 6) | 0.833 | 0.333 | +0.500 [" in markdown
    for name in ("scores-tiny_sql.png", "paired-tiny_sql.png", "outcomes-tiny_sql.png"):
        assert (out / name).stat().st_size > 5_000

    # The explorer reads result previews, prompts and raw outputs from the same samples.
    from sqlbench_lmeval.report.explorer import explorer_data

    items = {item["id"]: item for item in explorer_data(read_runs(specs))["items"]}
    # t holds x = 1..5: gold MAX(x) is 5, weak's MIN(x) is 1; weak's item 3 names no column.
    assert items[2]["gold_preview"] == {"columns": ["MAX(x)"], "rows": [["5"]], "row_count": 1}
    assert items[2]["results"][1]["preview"]["rows"] == [["1"]]
    assert items[2]["prompt"].startswith("Question 2?")
    assert items[3]["results"][1]["error"] == "no such column: no_such_column"
    assert items[4]["results"][1]["raw_output"] == ""
