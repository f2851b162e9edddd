"""The typed reader of a score dict (``scoring.scored.ScoredItem``) on score dicts as this version
and older ones wrote them: single answers (LogicCat, TPC-DS), sampled items, items left out. Each
dict is written out here; what is expected follows from it."""

from __future__ import annotations

import math

import pytest

from sqlbench_lmeval.lmeval.hooks import process_results
from sqlbench_lmeval.scoring.data_dependence import DataDependence
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.verdicts import aggregate, item_verdict

#: A LogicCat answer of this version that ran but names no table (as ``Answer.to_json`` writes
#: it, previews and the sample's question left out).
LOGICCAT = {
    "id": 2,
    "category": "mathematical",
    "status": "ok",
    "ves": 1,
    "ex": 0,
    "ex_strict": 0,
    "ex_set": 0,
    "ex_reads_data": 0,
    "r_ves": 0.0,
    "extracted_sql": "SELECT 'not the answer' AS x, 42 AS y",
    "extraction": "fenced_sql",
    "prediction_dialect": "sqlite",
    "executed_sql": "SELECT 'not the answer' AS x, 42 AS y",
    "truncated": False,
    "repetition_loop": False,
    "reads_no_table": True,
    "data_dependence": "no_table",
    "error": None,
    "reason": "column_count",
    "gold_status": "ok",
    "gold_error": None,
    "flags": [],
    "ordered": False,
    "comparison_version": "4",
    "work": 6,
    "gold_work": 59,
    "tie_status": "none",
    "acceptable": None,
    "ex_on_healthy_gold": 0,
}

#: A TPC-DS answer of this version: structure, similarity and complexity numbers besides EX.
TPCDS = {
    "id": 1,
    "category": None,
    "status": "ok",
    "ves": 1,
    "ex": 1,
    "ex_strict": 1,
    "ex_set": 1,
    "ex_reads_data": 1,
    "r_ves": 1.0,
    "extracted_sql": "SELECT 1 FROM store",
    "extraction": "fenced_sql",
    "truncated": False,
    "repetition_loop": False,
    "reads_no_table": False,
    "data_dependence": "changed",
    "reason": "match",
    "gold_status": "ok",
    "flags": [],
    "comparison_version": "4",
    "work": 86912,
    "gold_work": 86912,
    "tie_status": "answers",
    "acceptable": "1",
    "ex_on_healthy_gold": 1,
    "parsed": 1.0,
    "parsed_dialect": "duckdb",
    "structural_similarity": 0.75,
    "sim_tables": 1.0,
    "join_count": 3.0,
    "gold_join_count": 2.0,
}

#: A sampled item (``scoring.sampled``): the first sample's verdict, the vote, the samples.
SAMPLED = {
    "id": 1,
    "category": "physical",
    "ves": 1,
    "ex": 1,
    "ex_maj": 0,
    "pass_at_1": 0.5,
    "ves_mean": 1.0,
    "ex_mean": 0.5,
    "status": "ok",
    "reason": "match",
    "truncated": False,
    "repetition_loop": False,
    "reads_no_table": False,
    "data_dependence": "changed",
    "gold_status": "ok",
    "flags": [],
    "comparison_version": "4",
    "work": 52,
    "gold_work": 52,
    "vote": {"n_samples": 2, "n_correct": 1, "winner": None},
    "samples": [
        {"sample": 0, "extracted_sql": "SELECT a FROM t", "status": "ok", "ex": 1},
        {"sample": 1, "extracted_sql": None, "status": "no_sql", "ex": 0},
    ],
}

#: An item left out because its gold timed out (``answer._exclude``): no metric numbers.
EXCLUDED = {
    "id": 9,
    "category": "physical",
    "status": "excluded",
    "extracted_sql": "SELECT a FROM t",
    "reason": "gold_timeout",
    "gold_status": "ok",
    "flags": [],
    "work": 40,
    "gold_work": None,
    "prediction_status": "ok",
}

#: As an older version wrote an answer cut off by the generation limit: no ``truncated``,
#: ``category``, ``ex_on_healthy_gold``, ``data_dependence`` or ``comparison_version``.
OLDER = {"id": 7, "status": "error", "ves": 0, "ex": 0, "reason": "truncated", "gold_status": "ok"}


def test_a_logiccat_answer_reads_as_its_fields():
    item = ScoredItem.from_score(LOGICCAT)
    assert (item.id, item.status, item.category, item.reason) == (
        2,
        "ok",
        "mathematical",
        "column_count",
    )
    assert (item.ves, item.ex, item.ex_strict, item.ex_set) == (1.0, 0.0, 0.0, 0.0)
    assert item.reads_no_table and item.data_dependence == DataDependence.NO_TABLE
    assert item.healthy_gold and not item.truncated and not item.excluded
    assert (item.work, item.gold_work, item.tie_status, item.acceptable) == (6, 59, "none", None)
    assert item.executed_sql == item.extracted_sql == "SELECT 'not the answer' AS x, 42 AS y"
    assert item.comparison_version == "4" and item.samples is None
    assert item.answers == ["SELECT 'not the answer' AS x, 42 AS y"]
    # Every number as written, in the dict's order, the id aside; ints stay ints.
    assert list(item.values.items()) == [
        ("ves", 1),
        ("ex", 0),
        ("ex_strict", 0),
        ("ex_set", 0),
        ("ex_reads_data", 0),
        ("r_ves", 0.0),
        ("work", 6),
        ("gold_work", 59),
        ("ex_on_healthy_gold", 0),
    ]
    assert all(type(item.values[name]) is int for name in ("ves", "ex", "work"))
    # The report's numbers: neither the named fields nor the work counts.
    assert dict(item.numbers) == {"ex_reads_data": 0.0, "r_ves": 0.0, "ex_on_healthy_gold": 0.0}
    assert item_verdict(item) == "wrong_result"


def test_a_tpcds_answer_keeps_its_structure_numbers():
    item = ScoredItem.from_score(TPCDS)
    assert item.category is None and item.tie_status == "answers" and item.acceptable == "1"
    assert item.numbers["structural_similarity"] == 0.75
    assert item.numbers["join_count"] == 3.0 and item.numbers["gold_join_count"] == 2.0
    assert "parsed_dialect" not in item.values  # a name, not a number
    assert item_verdict(item) == "correct"


def test_an_older_dict_reads_as_the_older_version_meant_it():
    item = ScoredItem.from_score(OLDER)
    assert item.truncated  # older versions said so by the reason alone
    assert item.category is None and item.data_dependence is None
    assert item.comparison_version is None and math.isnan(item.ex_strict)
    # Healthy gold and no ex_on_healthy_gold: the same number from EX.
    assert dict(item.numbers) == {"ex_on_healthy_gold": 0.0}
    assert dict(item.values) == {"ves": 0, "ex": 0}
    assert item_verdict(item) == "truncated"
    unhealthy = ScoredItem.from_score({**OLDER, "gold_status": "empty"})
    assert dict(unhealthy.numbers) == {}
    # Older still: no gold status at all reads as healthy gold, but EX on healthy gold is
    # made only from a gold status the dict records.
    without_gold = ScoredItem.from_score({"id": 3, "status": "ok", "ves": 1, "ex": 1})
    assert without_gold.gold_status == "ok" and dict(without_gold.numbers) == {}


def test_a_sampled_item_reads_its_samples_and_no_made_up_healthy_ex():
    item = ScoredItem.from_score(SAMPLED)
    assert [sample["sample"] for sample in item.samples] == [0, 1]
    # No answer of its own: its SQL is its samples' (sample 1 found none).
    assert item.extracted_sql is None and item.answers == ["SELECT a FROM t"]
    assert item.values["ex_maj"] == 0 and item.values["pass_at_1"] == 0.5
    # EX of a sampled item is the first sample's, not a vote: no ex_on_healthy_gold from it.
    assert "ex_on_healthy_gold" not in item.numbers


def test_an_item_left_out_has_no_numbers_but_its_work():
    item = ScoredItem.from_score(EXCLUDED)
    assert item.excluded and item.status == "excluded" and item.reason == "gold_timeout"
    assert math.isnan(item.ves) and math.isnan(item.ex)
    assert dict(item.values) == {"work": 40}
    assert item_verdict(item) == "excluded"


def test_a_dict_without_its_verdict_is_refused():
    with pytest.raises(KeyError):
        ScoredItem.from_score({"id": 1, "status": "ok", "ves": 1})  # no ex
    with pytest.raises(ValueError):
        ScoredItem.from_score({"id": "one", "status": "ok", "ves": 1, "ex": 1})


def test_aggregate_reads_dicts_and_read_items_alike_in_the_first_dicts_order():
    scores = [LOGICCAT, TPCDS, EXCLUDED]
    from_dicts = aggregate(scores)
    assert from_dicts == aggregate([ScoredItem.from_score(score) for score in scores])
    # The means follow LOGICCAT's numbers, in its order (the work counts are not averaged);
    # EXCLUDED is in none of them.
    means = ["ves", "ex", "ex_strict", "ex_set", "ex_reads_data", "r_ves", "ex_on_healthy_gold"]
    assert list(from_dicts)[: 1 + len(means)] == ["n", *means]
    assert from_dicts["n"] == 2 and from_dicts["ex"] == 0.5 and from_dicts["r_ves"] == 0.5
    assert from_dicts["excluded_ids"] == [9] and from_dicts["n_excluded"] == 1
    assert from_dicts["n_reads_no_table"] == 1
    assert from_dicts["verdict_counts"] == {"wrong_result": 1, "correct": 1, "excluded": 1}
    assert from_dicts["status_counts"] == {"ok": 2, "excluded": 1}


def test_process_results_passes_the_numbers_on_as_written():
    numbers = process_results({"engine": "sqlite"}, [LOGICCAT])
    # The execution metrics defined on SQLite, then the dict's other numbers lm-eval tables
    # (not the work counts): ints stay ints, as lm-eval's sample log writes them.
    assert numbers == {
        "ves": 1,
        "ex": 0,
        "ex_strict": 0,
        "ex_set": 0,
        "ex_reads_data": 0,
        "r_ves": 0.0,
        "ex_on_healthy_gold": 0,
    }
    assert type(numbers["ves"]) is int
    assert process_results({"engine": "sqlite"}, [EXCLUDED]) == {}
    # A dict the reader cannot read is no score: zeros, as for no dict at all.
    zeros = process_results({"engine": "sqlite"}, [])
    assert set(zeros.values()) == {0}
    assert process_results({"engine": "sqlite"}, [{"id": 1, "status": "ok"}]) == zeros
