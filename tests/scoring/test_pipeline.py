"""The scoring path: raw output -> extracted SQL -> sandboxed execution -> verdict -> metrics.

One tiny real SQLite database; each row of CASES is a model answer with the numbers it must get.
"""

import re

import pytest

from sqlbench_lmeval.execution import GoldCache, Limits
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate


def item(database, id, gold_sql, category="physical", gold_status="ok"):
    return Item(
        id=id,
        question=f"question {id}",
        database=database,
        gold_sql=gold_sql,
        dialect="sqlite",
        category=category,
        gold_status=gold_status,
    )


FLOW_TIMES_HEAD = "SELECT name, flow * head FROM pump ORDER BY name"

# (raw model output, expected status, ves, ex, ex_strict, ex_set)
CASES = [
    pytest.param(f"```sql\n{FLOW_TIMES_HEAD};\n```", "ok", 1, 1, 1, 1, id="gold in a fence"),
    pytest.param(
        "SELECT name, head * flow FROM pump ORDER BY name DESC",
        "ok",
        1,
        0,
        0,
        1,
        id="right rows, wrong order under an ordered gold",
    ),
    pytest.param("SELECT name, flow FROM pump ORDER BY name", "ok", 1, 0, 0, 0, id="wrong values"),
    pytest.param("SELECT nme FROM pump", "error", 0, 0, 0, 0, id="unknown column"),
    pytest.param("I cannot answer that.", "no_sql", 0, 0, 0, 0, id="prose only"),
    pytest.param("", "no_sql", 0, 0, 0, 0, id="empty output"),
    pytest.param(None, "missing", 0, 0, 0, 0, id="never submitted"),
]


@pytest.mark.parametrize(("raw", "status", "ves", "ex", "ex_strict", "ex_set"), CASES)
def test_each_answer_gets_its_numbers(database, raw, status, ves, ex, ex_strict, ex_set):
    (score,) = Scorer(progress=False).score([item(database, 1, FLOW_TIMES_HEAD)], [raw])
    assert (score["status"], score["ves"], score["ex"], score["ex_strict"], score["ex_set"]) == (
        status,
        ves,
        ex,
        ex_strict,
        ex_set,
    )
    assert score["gold_status"] == "ok"
    assert score["ordered"] is True
    assert score["comparison_version"] == COMPARISON_VERSION


def test_the_sample_log_fields_explain_the_verdict(database):
    (score,) = Scorer(progress=False).score(
        [item(database, 7, FLOW_TIMES_HEAD)],
        ["Let me think.\n```sql\nSELECT nme FROM pump\n```\nThis lists names."],
    )
    assert score["id"] == 7
    assert score["extracted_sql"] == "SELECT nme FROM pump"
    assert score["extraction"] != "missing"
    assert "nme" in score["error"]
    assert score["reason"] == "pred_error"


def test_a_failing_gold_never_changes_ves_and_is_reported(database):
    # Recorded as failing when the data was built (gold recorded as running that fails now
    # stops the run instead: tests/scoring/test_unavailable_scoring.py).
    (score,) = Scorer(progress=False).score(
        [item(database, 2, "SELECT missing_column FROM pump", gold_status="error")],
        ["SELECT name FROM pump"],
    )
    assert score["ves"] == 1
    assert score["ex"] == 0
    assert score["gold_status"] == "error"
    assert "missing_column" in score["gold_error"]
    # The answer ran and was not compared: its verdict names the gold, never wrong_result.
    assert score["reason"] == "broken_gold"
    assert aggregate([score])["verdict_counts"] == {"broken_gold": 1}


@pytest.mark.parametrize(
    ("gold_sql", "health"),
    [
        ("SELECT name FROM pump WHERE flow > 100", "empty"),
        ("SELECT NULL, NULL FROM pump", "all_null"),
    ],
)
def test_gold_health_is_judged_from_its_result(database, gold_sql, health):
    (score,) = Scorer(progress=False).score([item(database, 3, gold_sql)], [gold_sql])
    assert score["gold_status"] == health
    # The same query on both sides still matches: gold health is reported beside EX.
    assert score["ex"] == 1


def test_a_build_time_gold_verdict_outranks_a_clean_run(database):
    # Gold recorded as broken is not compared even when it happens to run now: the same query
    # as the answer is no match (EX 0 for every model alike).
    (score,) = Scorer(progress=False).score(
        [item(database, 4, "SELECT 1", gold_status="non_select")], ["SELECT 1"]
    )
    assert score["gold_status"] == "non_select"
    assert (score["ves"], score["ex"], score["ex_strict"], score["ex_set"]) == (1, 0, 0, 0)
    assert score["reason"] == "broken_gold"


def test_an_empty_prediction_never_matches_an_empty_gold(database):
    (score,) = Scorer(progress=False).score(
        [item(database, 5, "SELECT name FROM pump WHERE flow > 100")], ["-- nothing to see here"]
    )
    assert (score["status"], score["ex"], score["ex_set"]) == ("no_sql", 0, 0)


def test_scores_come_back_in_input_order_through_the_gold_cache(database, tmp_path):
    items = [item(database, i, f"SELECT {i}") for i in range(1, 41)]
    outputs = [f"SELECT {i if i % 4 else i + 1}" for i in range(1, 41)]
    cache = GoldCache(tmp_path / "gold")
    cold = Scorer(gold_cache=cache, workers=2, progress=False).score(items, outputs)
    warm = Scorer(gold_cache=cache, workers=2, progress=False).score(items, outputs)
    assert [s["id"] for s in cold] == list(range(1, 41))
    assert [s["ex"] for s in cold] == [0 if i % 4 == 0 else 1 for i in range(1, 41)]
    assert cold == warm


def test_item_metrics_are_added_per_item(database):
    def lengths(item, sql):
        return {"sql_length": len(sql or "")}

    (score,) = Scorer(progress=False, hooks=Hooks(item_metrics=lengths)).score(
        [item(database, 1, "SELECT 1")], ["SELECT 1"]
    )
    assert score["sql_length"] == 8.0


def test_aggregate_gives_means_per_category_and_counts(database):
    items = [
        item(database, 1, "SELECT 1", category="physical"),
        item(database, 2, "SELECT 2", category="physical"),
        item(database, 3, "SELECT 3", category="mathematical"),
        item(database, 4, "SELECT 1 WHERE 0", category="mathematical"),
    ]
    scores = Scorer(progress=False).score(
        items, ["SELECT 1", "SELECT 9", "SELECT nope", "SELECT 1 WHERE 0"]
    )
    metrics = aggregate(scores)
    assert metrics["n"] == 4
    assert metrics["ves"] == 0.75
    assert metrics["ex"] == 0.5
    assert metrics["ex_physical"] == 0.5
    assert metrics["ex_mathematical"] == 0.5
    assert metrics["n_healthy_gold"] == 3
    assert metrics["ex_on_healthy_gold"] == pytest.approx(1 / 3)
    assert metrics["status_counts"] == {"ok": 3, "error": 1}
    assert metrics["gold_status_counts"] == {"ok": 3, "empty": 1}


def test_limits_reach_the_engine(database):
    (score,) = Scorer(limits=Limits(max_rows=2), progress=False).score(
        [item(database, 1, "SELECT 1")], ["SELECT * FROM pump"]
    )
    assert (score["status"], score["ves"]) == ("too_many_rows", 0)


# -- total scoring: a failure at any stage is the item's outcome, the others are untouched ----


def _boom(*args, **kwargs):
    raise ValueError("embedded null character")


def _second_answer(args) -> bool:
    """Is this call about the second item's answer (text "SELECT 2", or its result row 2)?"""
    return any("SELECT 2" in str(arg) or getattr(arg, "rows", None) == ((2,),) for arg in args)


@pytest.mark.parametrize(
    ("target", "stage"),
    [
        ("sqlbench_lmeval.scoring.stages.extract.extract_sql", "extract"),
        ("sqlbench_lmeval.scoring.stages.translate.engine_sql", "transpile"),
        ("sqlbench_lmeval.scoring.stages.judge.compare", "compare"),
    ],
)
def test_a_stage_that_raises_fails_only_its_item(database, monkeypatch, target, stage):
    import importlib

    module, name = target.rsplit(".", 1)
    real = getattr(importlib.import_module(module), name)

    def flaky(*args, **kwargs):
        if _second_answer(args):  # fails for the second item only
            _boom()
        return real(*args, **kwargs)

    monkeypatch.setattr(target, flaky)
    items = [item(database, i, f"SELECT {i}") for i in (1, 2, 3)]
    scores = Scorer(progress=False).score(items, ["SELECT 1", "SELECT 2", "SELECT 3"])
    assert [(s["status"], s["ex"]) for s in scores] == [("ok", 1), ("error", 0), ("ok", 1)]
    failed = scores[1]
    assert failed["reason"] == f"{stage}: ValueError: embedded null character"
    assert failed["error"] == failed["reason"]
    assert (failed["ves"], failed["ex_strict"], failed["ex_set"]) == (0, 0, 0)


def test_item_metrics_that_raise_fail_the_item_with_no_sql_numbers(database):
    def metrics(item, sql):
        if sql == "SELECT 2":
            _boom()
        return {"length": len(sql or "")}

    items = [item(database, i, f"SELECT {i}") for i in (1, 2)]
    first, second = Scorer(progress=False, hooks=Hooks(item_metrics=metrics)).score(
        items, ["SELECT 1", "SELECT 2"]
    )
    assert (first["status"], first["ex"], first["length"]) == ("ok", 1, 8.0)
    # The failed item keeps the metric (its value for "no SQL"), so every item has the same keys.
    assert (second["status"], second["ex"], second["length"]) == ("error", 0, 0.0)
    assert second["reason"] == "structure: ValueError: embedded null character"


def test_an_execution_batch_that_raises_stops_scoring(database, monkeypatch):
    # The evaluation's own fault, not an answer's: no item may be scored 0 for it.
    monkeypatch.setattr("sqlbench_lmeval.scoring.stages.execute.execute_many", _boom)
    with pytest.raises(EvaluationUnavailable) as raised:
        Scorer(progress=False).score([item(database, 1, "SELECT 1")], ["SELECT 1"])
    message = str(raised.value)
    assert "executing the SQL failed inside the evaluation" in message
    assert "ValueError: embedded null character" in message and "not of the model" in message


@pytest.mark.parametrize(
    ("raw", "status", "reason", "truncated"),
    [
        # sqlite3 refuses a statement holding NUL: an execution error, as in the seed's recipe.
        ("SELECT name FROM pump WHERE name = '\x00'", "error", "pred_error", False),
        ("SELECT 1; SELECT 2", "error", "multiple_statements", False),
        ("```sql\nUPDATE pump SET flow = 0\n```", "error", "not_read_only", False),
        ("<think>\nThe flows are", "no_sql", "truncated", True),
        ("```sql\nSELECT name, flow * head FROM", "error", "truncated", True),
        # Refused, but cut off first: the generation limit is the reason (the error says why
        # it was refused).
        ("```sql\nSELECT 1; SELECT 2;\nSELECT", "error", "truncated", True),
        # Cut off inside the fence after a complete query: it runs and matches; only marked.
        (f"```sql\n{FLOW_TIMES_HEAD}", "ok", "match", True),
    ],
)
def test_refused_failed_and_truncated_answers(database, raw, status, reason, truncated):
    (score,) = Scorer(progress=False).score([item(database, 1, FLOW_TIMES_HEAD)], [raw])
    assert (score["status"], score["reason"], score["truncated"]) == (status, reason, truncated)
    assert score["ex"] == int(reason == "match")
    assert aggregate([score])["n_truncated"] == int(truncated)


@pytest.mark.parametrize("cached", [False, True])
def test_the_progress_bar_total_never_changes(database, tmp_path, capsys, cached):
    # 12 items, 4 answers refused and 2 without SQL: they never run, yet the bar counts them,
    # so its total is 12 gold queries + 12 answers from the first line to the last.
    answers = [FLOW_TIMES_HEAD] * 6 + ["SHOW TABLES", "SELECT 1; SELECT 2"] * 2 + ["no idea"] * 2
    items = [item(database, i, FLOW_TIMES_HEAD) for i in range(len(answers))]
    gold_cache = GoldCache(tmp_path / "gold") if cached else None
    scores = Scorer(gold_cache=gold_cache, workers=1, progress=True).score(items, answers)
    assert [s["ex"] for s in scores] == [1] * 6 + [0] * 6
    totals = set(re.findall(r"\b\d+/(\d+)\b", capsys.readouterr().err))
    # With the cache, the 12 gold queries are one query run once (same SQL, same database).
    assert totals == ({"13"} if cached else {"24"})


@pytest.mark.parametrize(
    ("raw", "constant"),
    [
        # Numbers worked out from the question: they match gold, and read no table.
        (
            "```sql\nSELECT 'A', 25.0 UNION ALL SELECT 'B', 20.0 UNION ALL SELECT 'C', 20.0\n```",
            True,
        ),
        ("WITH t(name, v) AS (VALUES ('A', 25.0), ('B', 20.0), ('C', 20.0)) SELECT * FROM t", True),
        (FLOW_TIMES_HEAD, False),
        ("SELECT name, flow * head FROM main.pump ORDER BY name", False),
    ],
)
def test_an_answer_that_reads_no_table_keeps_its_status_and_ex_but_not_ex_reads_data(
    database, raw, constant
):
    (score,) = Scorer(progress=False).score([item(database, 1, FLOW_TIMES_HEAD)], [raw])
    # pump holds (A, 10 * 2.5), (B, 20 * 1), (C, 5 * 4): every answer above returns those rows.
    assert (score["status"], score["ex"], score["reads_no_table"]) == ("ok", 1, constant)
    assert score["ex_reads_data"] == int(not constant)
    metrics = aggregate([score])
    assert (metrics["n_reads_no_table"], metrics["ex_reads_data"]) == (int(constant), 1 - constant)


def test_a_constant_answer_to_a_constant_gold_is_not_flagged(database):
    # Gold is a calculation on the question's numbers (as 116 LogicCat gold queries are).
    gold = "SELECT 600000 * 9.8 / 0.01 / 101325 AS multiples"
    (score,) = Scorer(progress=False).score([item(database, 1, gold)], [f"```sql\n{gold}\n```"])
    assert (score["ex"], score["reads_no_table"], score["ex_reads_data"]) == (1, False, 1)


def test_answers_that_did_not_run_are_not_flagged(database):
    scores = Scorer(progress=False).score(
        [item(database, 1, FLOW_TIMES_HEAD)] * 3, ["SELECT nope", "prose", None]
    )
    assert [s["reads_no_table"] for s in scores] == [False, False, False]
    assert [s["ex_reads_data"] for s in scores] == [0, 0, 0]


def test_verdict_counts_put_each_item_in_one_class(database):
    scores = Scorer(progress=False).score(
        [item(database, 1, FLOW_TIMES_HEAD)] * 5,
        [FLOW_TIMES_HEAD, "SELECT 1", "SELECT nope", "<think>cut", f"```sql\n{FLOW_TIMES_HEAD}"],
    )
    # correct; wrong result; error; truncated (no SQL, cut inside <think>); truncated but
    # matching: correct.
    assert aggregate(scores)["verdict_counts"] == {
        "correct": 2,
        "wrong_result": 1,
        "error": 1,
        "truncated": 1,
    }


def test_a_scoring_run_starts_its_workers_once_and_leaves_none(database, monkeypatch):
    from sqlbench_lmeval.execution import pool as pool_module

    started = []
    real = pool_module._Worker

    def counted():
        started.append(real())
        return started[-1]

    monkeypatch.setattr(pool_module, "_Worker", counted)
    # Three batches: gold and the answer; gold on the perturbed copy (its numbers shift, so its
    # result changes); the answer there (it matched gold). One worker process runs them all.
    (score,) = Scorer(progress=False, workers=1).score(
        [item(database, 1, FLOW_TIMES_HEAD)], [FLOW_TIMES_HEAD]
    )
    assert score["data_dependence"] == "changed"
    assert len(started) == 1
    assert started[0].proc.poll() is not None  # stopped once scoring returned
