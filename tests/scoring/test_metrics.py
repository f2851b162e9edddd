"""The metric registry: every number a score carries is declared there, and scoring, sampled
scoring, the retry envelope and TPC-DS's structure numbers make exactly the declared ones.

Real scoring on a real SQLite file (the ``database`` fixture of conftest.py: pumps A (flow 10,
head 2.5), B (20, 1.0), C (5, 4.0)) and a real DuckDB file.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import duckdb
import pytest

import sqlbench_lmeval
from sqlbench_lmeval.execution import Database, Status
from sqlbench_lmeval.lmeval.hooks import process_results
from sqlbench_lmeval.scoring import metrics as registry
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import (
    EX_ON_HEALTHY_GOLD,
    EXECUTION,
    FAMILIES,
    METRICS,
    SAMPLED,
    SINGLE,
    Executed,
    Metric,
    metric,
    task_metrics,
)
from sqlbench_lmeval.scoring.retry_envelope import score_with_retries, wrap
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.tpcds.benchmark import item_metrics as tpcds_item_metrics


def numbers(score: dict) -> set[str]:
    """The names of the numbers of a score dict (what lm-eval averages; the logged work
    counts are not averaged)."""
    return {
        name
        for name, value in score.items()
        if name != "id"
        and name not in registry.LOGGED_NUMBERS
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    }


def names_of(metrics) -> set[str]:
    return {m.name for m in metrics}


def item(database, id=1, gold_sql="SELECT name FROM pump WHERE flow > 6", dialect="sqlite"):
    return Item(id, f"question {id}", database, gold_sql, dialect, category="physical")


ANSWERS = [
    "SELECT name FROM pump WHERE flow > 6",  # correct
    "SELECT name FROM pump",  # wrong rows
    "SELECT nme FROM pump",  # an error
    "SELECT 'A' UNION ALL SELECT 'B'",  # right rows, reads no table
    "I do not know.",  # no SQL
    None,  # never submitted
]


def test_names_are_unique_and_every_metric_says_what_it_is():
    assert len({m.name for m in METRICS}) == len(METRICS)
    for entry in METRICS:
        assert entry.label and entry.description and entry.defined_on, entry.name
        assert entry.family in FAMILIES, entry.name
        assert entry.kinds <= {SINGLE, SAMPLED} and entry.kinds, entry.name
        assert entry.aggregation == "mean", entry.name  # lm-eval's mean: all we use
        # Computed per answer by scoring, or made by a named producer.
        assert (entry.compute is not None) == (entry.made_by == "scoring.stages.measure"), (
            entry.name
        )
        # lm-eval's group averages rows of its tasks' tables.
        assert entry.in_lm_eval_table or not entry.in_group, entry.name
    with pytest.raises(KeyError, match="not registered"):
        metric("bird_ves")


def test_single_answers_carry_exactly_the_registered_execution_metrics(database):
    scores = Scorer(progress=False).score([item(database)] * len(ANSWERS), ANSWERS)
    expected = names_of(task_metrics("logiccat", SINGLE)) - names_of(
        m for m in METRICS if m.made_by == "scoring.retry_envelope"
    )
    for score in scores:
        assert numbers(score) == expected, score["status"]
    # The per-answer metrics come first among the numbers, in registry order, then EX on
    # healthy gold (this gold returns rows: every item has it, equal to its EX).
    carried = [n for n in scores[0] if n in expected]
    assert carried == [m.name for m in registry.COMPUTED] + [EX_ON_HEALTHY_GOLD]
    assert all(score[EX_ON_HEALTHY_GOLD] == score["ex"] for score in scores)
    right, wrong, failed = scores[:3]
    assert (right["ves"], right["ex"], wrong["ves"], wrong["ex"]) == (1, 1, 1, 0)
    assert (failed["status"], failed["ves"], failed["ex"]) == ("error", 0, 0)
    constant = scores[3]
    assert (constant["ex"], constant["ex_reads_data"], constant["reads_no_table"]) == (1, 0, True)
    assert process_results({}, [scores[0]]).keys() == expected


def test_only_items_with_healthy_gold_carry_ex_on_healthy_gold(database):
    golds = {
        "ok": "SELECT name FROM pump WHERE flow > 6",
        "empty": "SELECT name FROM pump WHERE 0",
        "all_null": "SELECT NULL AS n FROM pump",
    }
    items = [item(database, i, sql) for i, sql in enumerate(golds.values(), 1)]
    # An empty answer of gold's width: right on the empty gold only.
    empty = "SELECT name FROM pump WHERE 0"
    scores = Scorer(progress=False).score(items, [empty] * 3)
    assert [s["gold_status"] for s in scores] == list(golds)
    assert [s["ex"] for s in scores] == [0, 1, 0]
    assert [s.get(EX_ON_HEALTHY_GOLD) for s in scores] == [0, None, None]
    assert [process_results({}, [s]).get(EX_ON_HEALTHY_GOLD) for s in scores] == [0, None, None]
    # An empty answer of another width matches no mode of the empty gold.
    (other,) = Scorer(progress=False).score(items[1:2], ["SELECT name, flow FROM pump WHERE 0"])
    assert (other["ex"], other["ex_strict"], other["ex_set"]) == (0, 0, 0)


def test_retried_answers_carry_the_retry_metrics(database):
    retried = wrap([{"output": "SELECT nme FROM pump"}, {"output": ANSWERS[0]}])
    (score,) = score_with_retries(
        [item(database)], [retried], lambda items, texts: Scorer(progress=False).score(items, texts)
    )
    assert numbers(score) == names_of(task_metrics("logiccat", SINGLE))
    # The registry derives ``<metric>@retry`` from the metric it repeats.
    for entry in METRICS:
        if entry.after_retries_of is not None:
            assert score[entry.after_retries_of] == 0 and score[entry.name] == 1


def test_sampled_items_carry_exactly_the_registered_sampled_metrics(database):
    # 8 samples: every pass_at_<k> the registry declares with k <= 8 is reported.
    (score,) = Scorer(progress=False).score_samples([item(database)], [ANSWERS + ANSWERS[:2]])
    expected = {
        m.name
        for m in task_metrics("logiccat", SAMPLED)
        if not m.name.startswith("pass_at_") or int(m.name.removeprefix("pass_at_")) <= 8
    }
    assert numbers(score) == expected


@pytest.fixture(scope="module")
def duckdb_database(tmp_path_factory):
    path = tmp_path_factory.mktemp("duck") / "sales.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE sales (item INTEGER, price DOUBLE)")
        conn.execute("INSERT INTO sales VALUES (1, 2.5), (2, 4.0), (3, 1.0)")
    return Database(engine="duckdb", path=str(path))


GOLD = "SELECT item, SUM(price) AS total FROM sales WHERE price > 1 GROUP BY item ORDER BY item"


def test_tpcds_structure_numbers_are_the_registered_ones(duckdb_database):
    items = [item(duckdb_database, gold_sql=GOLD, dialect="duckdb")] * 3
    outputs = [GOLD, "SELECT item FROM sales", "not sql at all"]
    scores = Scorer(progress=False, hooks=Hooks(item_metrics=tpcds_item_metrics)).score(
        items, outputs
    )
    retry = names_of(m for m in METRICS if m.made_by == "scoring.retry_envelope")
    in_table = names_of(task_metrics("tpcds", SINGLE)) - retry
    # Gold's own complexity counts are logged in every score dict but are no row of lm-eval's
    # table: the task lists them not, process_results leaves them out.
    gold_counts = {f"gold_{count}" for count in COMPLEXITY}
    assert gold_counts <= registry.NOT_IN_LM_EVAL_TABLE and not gold_counts & in_table
    for score in scores:
        assert numbers(score) == in_table | gold_counts
        assert process_results({}, [score]).keys() == in_table
    assert scores[0]["structural_similarity"] == 1.0 and scores[2]["parsed"] == 0.0
    (sampled,) = Scorer(progress=False, hooks=Hooks(item_metrics=tpcds_item_metrics)).score_samples(
        items[:1], [outputs]
    )
    expected = {
        m.name
        for m in task_metrics("tpcds", SAMPLED)
        if not m.name.startswith("pass_at_") or int(m.name.removeprefix("pass_at_")) <= 3
    }
    assert numbers(sampled) == expected


def rows_returned(executed: Executed) -> int:
    """A metric that reads the executed results: how many rows the prediction returned,
    and nothing unless it is right (so it must run after ``ex``)."""
    return len(executed.predicted.rows) if executed.values["ex"] else 0


def gold_rows(executed: Executed) -> int:
    return len(executed.gold.rows) if executed.gold.status is Status.OK else -1


def test_a_metric_that_reads_results_plugs_in_with_one_entry(database, monkeypatch):
    entries = [
        Metric("rows_if_right", "Rows if right", "rows", "every item", EXECUTION),
        Metric("gold_rows", "Gold rows", "gold rows", "every item", EXECUTION),
    ]
    entries = [
        dataclasses.replace(entries[0], compute=rows_returned),
        dataclasses.replace(entries[1], compute=gold_rows),
    ]
    computed = (*registry.COMPUTED, *entries)
    monkeypatch.setattr(registry, "COMPUTED", computed)
    monkeypatch.setattr(registry, "METRICS", (*METRICS, *entries))
    # The names every score dict starts from are read from COMPUTED once per engine and
    # remembered (``execution_metrics``): forget them now, and once the patch is undone.
    registry.execution_metrics.cache_clear()
    try:
        right, wrong, failed = Scorer(progress=False).score(
            [item(database)] * 3, [ANSWERS[0], ANSWERS[1], ANSWERS[2]]
        )
        rows_if_right = (right["rows_if_right"], wrong["rows_if_right"], failed["rows_if_right"])
        assert rows_if_right == (2, 0, 0)
        # Computed for every compared answer (an error is compared too: gold ran).
        assert (right["gold_rows"], wrong["gold_rows"], failed["gold_rows"]) == (2, 2, 2)
        (missing,) = Scorer(progress=False).score([item(database)], [None])
        assert missing["rows_if_right"] == 0 and missing["gold_rows"] == 0
    finally:
        monkeypatch.undo()
        registry.execution_metrics.cache_clear()


# The readers that must take every metric name from the registry (the producers write the names
# they make and are checked above by what they make).
READERS = ("report", "submission", "cli.py", "lmeval/hooks.py", "lmeval/metric_lists.py")


def test_the_report_the_submission_code_and_the_cli_type_no_metric_name():
    package = Path(sqlbench_lmeval.__file__).parent
    files = [
        path
        for reader in READERS
        for path in (
            [package / reader] if reader.endswith(".py") else (package / reader).rglob("*.py")
        )
    ]
    assert len(files) > 10
    registered = {m.name for m in METRICS}
    typed = [
        f"{path.relative_to(package)}:{node.lineno}: {node.value!r}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in registered
    ]
    assert not typed, f"metric names typed outside the registry (import them): {typed}"
