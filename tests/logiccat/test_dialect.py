"""LogicCat asked in MySQL (the dialect of its gold): prompts name MySQL, predictions take the
gold's own path to SQLite before they run, and a prediction that cannot be translated is an
error outcome of that item.

The fast tests use the hand-written fixture bundle; the slow ones the real upstream data.
"""

from __future__ import annotations

import json
import shutil

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.logiccat import bundle
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle, load_items, transpile_prediction
from sqlbench_lmeval.logiccat.gold import SPIDER_DERIVED
from sqlbench_lmeval.logiccat.task import doc_to_text, doc_to_text_cot, load_dataset
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.translate import TRANSPILE_ERROR


def cached(fixture_bundle, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(cache))
    return cache


def test_items_carry_the_prompted_dialect(fixture_bundle):
    assert {item.prediction_dialect for item in items_from_bundle(fixture_bundle)} == {None}
    mysql = items_from_bundle(fixture_bundle, "mysql")
    assert {(item.dialect, item.prompted_dialect) for item in mysql} == {("sqlite", "mysql")}
    with pytest.raises(UserError, match="unknown SQL dialect 'mysq'"):
        items_from_bundle(fixture_bundle, "mysq")


def test_the_prompt_names_the_dialect_asked_for(fixture_bundle, tmp_path):
    cache = cached(fixture_bundle, tmp_path)
    default = load_dataset(cache_dir=str(cache))["test"][0]
    # lm-eval passes the model args and task metadata too; only `dialect` matters here.
    mysql = load_dataset(cache_dir=str(cache), dialect="mysql", version=1.0, model="m")["test"][0]
    assert (default["prediction_dialect"], mysql["prediction_dialect"]) == ("sqlite", "mysql")
    assert "Write one SQLite query" in doc_to_text(default) and "MySQL" not in doc_to_text(default)
    for prompt in (doc_to_text(mysql), doc_to_text_cot(mysql)):
        assert "You are given a MySQL database." in prompt
        assert "one MySQL query" in prompt and "SQLite" not in prompt


def test_a_mysql_only_answer_runs_after_translation(fixture_bundle):
    item = items_from_bundle(fixture_bundle, "mysql")[0]
    assert (
        item.gold_sql == "SELECT Efficiency * 14 AS Scaled FROM Stations WHERE Name = 'north hub'"
    )
    # The same question in MySQL-only spellings: backticks, IFNULL (the name is never NULL, so
    # it is the name) and DATE_ADD: North Hub opened 2024-01-05 08:00:00, and a day later is
    # after 2024-01-05, so the one row of gold (46.2 * 14) is all the answer returns too.
    answer = (
        "SELECT `Efficiency` * 14 AS `Scaled` FROM `Stations` WHERE IFNULL(`Name`, '') = "
        "'North Hub' AND DATE_ADD(`Opened_At`, INTERVAL 1 DAY) > '2024-01-05'"
    )
    (score,) = Scorer(progress=False, hooks=Hooks(transpile=transpile_prediction)).score(
        [item], [answer]
    )
    assert (score["status"], score["ves"], score["ex"]) == ("ok", 1, 1)
    assert score["extracted_sql"] == answer and "`" not in score["executed_sql"]
    assert score["prediction_dialect"] == "mysql"
    # The same text asked as SQLite runs untranslated, and SQLite cannot read INTERVAL.
    (plain,) = Scorer(progress=False).score(items_from_bundle(fixture_bundle)[:1], [answer])
    assert plain["status"] == "error" and plain["executed_sql"] == answer


def test_an_answer_that_is_not_mysql_is_a_transpile_error(fixture_bundle):
    item = items_from_bundle(fixture_bundle, "mysql")[0]
    (score,) = Scorer(progress=False, hooks=Hooks(transpile=transpile_prediction)).score(
        [item], ["SELECT (1"]
    )
    assert (score["status"], score["reason"], score["ves"]) == ("error", TRANSPILE_ERROR, 0)
    assert score["error"].startswith("cannot translate mysql to sqlite: sqlglot cannot parse")


def test_the_logiccat_mysql_yaml_as_lm_eval_reads_it():
    from lm_eval.tasks._yaml_loader import load_yaml

    config = load_yaml(tasks_dir() / "logiccat" / "logiccat_mysql.yaml")
    assert config["task"] == "logiccat_mysql"
    # In metadata, not dataset_kwargs: lm-eval passes both to custom_dataset, and a
    # --metadata dialect must override the variant's instead of clashing with it.
    assert config["metadata"]["dialect"] == "mysql" and "dialect" not in config["dataset_kwargs"]
    assert config["dataset_kwargs"] == {"subset": "all"}
    assert config["custom_dataset"] is load_dataset


@pytest.mark.slow
def test_hand_written_mysql_scores_on_its_own_item_only(logiccat_cache):
    items = {item.id: item for item in load_items(cache_dir=logiccat_cache, dialect="mysql")}
    # Item 1577 asks for the warranty end of pumps bought 2023-01-15 with 24 months of
    # warranty; item 1603 the same for 2020-01-01. One pump matches 1577 (2023-01-15, 24), so
    # gold is 2025-01-15; the answer writes the 24 months as a constant and hides the
    # Warranty_Period test in IFNULL (never NULL on that row): the same one row.
    answer = (
        "```mysql\nSELECT DATE_ADD(`Purchase_date`, INTERVAL 24 MONTH) AS `end_date`\n"
        "FROM `pumps`\nWHERE `Purchase_date` = '2023-01-15' AND IFNULL(`Warranty_Period`, 0) = 24"
        "\n```"
    )
    right, wrong = Scorer(progress=False, hooks=Hooks(transpile=transpile_prediction)).score(
        [items[1577], items[1603]], [answer, answer]
    )
    assert (right["status"], right["ex"], right["reason"]) == ("ok", 1, "match")
    assert (wrong["status"], wrong["ex"], wrong["reason"]) == ("ok", 0, "values")
    assert right["executed_sql"].startswith('SELECT DATE_ADD("Purchase_date", ')


@pytest.mark.slow
def test_score_dialect_mysql_with_the_upstream_mysql_gold(logiccat_cache, tmp_path, capsys):
    """`score --dialect mysql` with each item's upstream MySQL gold as its prediction.

    The prediction takes the path the gold took, so every healthy item matches - except on the
    six Spider-derived databases, whose upstream "MySQL" gold is really SQLite (``||`` there
    is concatenation, in MySQL a logical OR): those are not asserted.
    """
    records = bundle.load_bundle(logiccat_cache).records
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": r.id, "prediction": r.gold_sql_mysql}) + "\n" for r in records),
        encoding="utf-8",
    )
    output = tmp_path / "scores.json"
    argv = ["score", "logiccat", str(predictions), "-o", str(output), "--dialect", "mysql"]
    assert cli.main([*argv, "--cache-dir", str(logiccat_cache), "--no-progress"]) == 0
    assert "logiccat (mysql): 4036 items" in capsys.readouterr().out
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["prediction_dialect"] == "mysql"
    db_of = {r.id: r.db_id for r in records}
    healthy = [
        s
        for s in result["items"]
        if s["gold_status"] == "ok"
        and not UNREPEATABLE_FLAGS & set(s["flags"])
        and db_of[s["id"]] not in SPIDER_DERIVED
    ]
    assert len(healthy) > 3000
    assert [(s["id"], s["reason"]) for s in healthy if s["ex"] != 1] == []
    # Each item keeps what was submitted, what was extracted from it and what ran.
    submitted = {r.id: r.gold_sql_mysql for r in records}
    for score in result["items"]:
        assert score["raw_output"] == submitted[score["id"]]
        assert score["prediction_dialect"] == "mysql"
        if score["status"] == "ok":
            assert score["extracted_sql"] and score["executed_sql"]
    # Gold that sqlglot cannot read as MySQL cannot be read as a prediction either.
    untranslated = [s for s in result["items"] if s["reason"] == TRANSPILE_ERROR]
    assert untranslated and {s["gold_status"] for s in untranslated} <= {"error", "non_select"}
