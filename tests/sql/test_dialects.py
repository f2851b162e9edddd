"""Predictions asked in another dialect than the engine's: checked names, translation before
execution, and a failed translation as the item's outcome (never an exception).

Scoring runs on one tiny real SQLite file; the translator in these tests is sqlglot alone
(``dialects.sqlglot_transpile``), the one TPC-DS uses and LogicCat uses for non-MySQL dialects.
"""

import sqlite3

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.translate import TRANSPILE_ERROR, engine_sql
from sqlbench_lmeval.scoring.verdicts import aggregate
from sqlbench_lmeval.sql.dialects import (
    TranspileError,
    check_dialect,
    display_name,
    sqlglot_transpile,
)


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "visits.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE visit (name TEXT, day TEXT, minutes INTEGER);
            INSERT INTO visit VALUES ('Ann', '2000-08-20', 7), ('Bob', '2000-09-10', 30),
                                     ('ann', '2000-09-01', 12);
            """
        )
    conn.close()
    return Database(engine="sqlite", path=str(path))


def item(database, gold_sql, prediction_dialect=None, id=1):
    return Item(
        id=id,
        question="q",
        database=database,
        gold_sql=gold_sql,
        dialect="sqlite",
        prediction_dialect=prediction_dialect,
    )


def translate(item, sql):
    return sqlglot_transpile(sql, read=item.prompted_dialect, write=item.dialect)


def test_dialect_names_are_sqlglots_with_common_aliases():
    assert check_dialect(None, "duckdb") == "duckdb"
    assert check_dialect("", "sqlite") == "sqlite"
    assert check_dialect("PostgreSQL", "duckdb") == "postgres"
    assert check_dialect("mysql", "sqlite") == "mysql"
    with pytest.raises(UserError, match="unknown SQL dialect 'postgre'; choose one of .*postgres"):
        check_dialect("postgre", "duckdb")


def test_prompts_use_the_products_names():
    assert [display_name(d) for d in ("postgres", "mysql", "sqlite", "duckdb")] == [
        "PostgreSQL",
        "MySQL",
        "SQLite",
        "DuckDB",
    ]
    assert display_name("teradata") == "Teradata"  # sqlglot's name, capitalised


def test_the_engines_own_dialect_is_never_translated(database):
    same = item(database, "SELECT 1")

    def must_not_run(item, sql):
        raise AssertionError("translated although the dialects are the same")

    # Not even reformatted: what runs is what was extracted, byte for byte.
    assert engine_sql(same, "select  1", must_not_run).sql == "select  1"
    assert engine_sql(item(database, "SELECT 1", "postgres"), None, translate).sql is None


def test_a_failing_translator_names_both_dialects_and_never_raises(database):
    asked = item(database, "SELECT 1", "postgres")

    def broken(item, sql):
        raise RuntimeError("boom\nsecond line")

    run = engine_sql(asked, "SELECT 1", broken)
    assert run.sql is None
    assert run.error == "cannot translate postgres to sqlite: boom"
    assert engine_sql(asked, "SELECT 1", None).error.endswith("no translator")


def test_sqlglot_transpile_takes_exactly_one_statement():
    assert sqlglot_transpile("SELECT x::date FROM t", "postgres", "sqlite") == (
        "SELECT DATE(x) FROM t"
    )
    with pytest.raises(TranspileError, match="expected one statement, found 2"):
        sqlglot_transpile("SELECT 1; SELECT 2", "postgres", "duckdb")
    with pytest.raises(TranspileError, match="cannot parse it as postgres"):
        sqlglot_transpile("SELECT `a` FROM t", "postgres", "duckdb")  # backticks: not PostgreSQL


def test_integer_division_keeps_its_meaning_across_dialects():
    # PostgreSQL's 7 / 2 is 3 (both integers); DuckDB's / always divides exactly (3.5).
    duckdb_sql = sqlglot_transpile("SELECT 7 / 2", "postgres", "duckdb")
    import duckdb

    assert duckdb.sql(duckdb_sql).fetchall() == [(3,)]


GOLD = "SELECT name FROM visit WHERE day >= '2000-09-01' ORDER BY name"


def test_a_postgres_answer_runs_after_translation_and_scores_one(database):
    # Gold: visits from 2000-09-01 on -> Bob, ann (ORDER BY name: 'B' < 'a' in SQLite's binary
    # collation). The answer asks the same in PostgreSQL-only spellings: ``::date`` casts, and
    # ILIKE '%' matches every name. (sqlglot leaves ``+ INTERVAL`` as it is for SQLite, which
    # cannot run it; the TPC-DS tests translate interval arithmetic for DuckDB.)
    answer = (
        "```sql\nSELECT name FROM visit WHERE day::date >= '2000-09-01'::date "
        "AND name ILIKE '%' ORDER BY name\n```"
    )
    (score,) = Scorer(progress=False, hooks=Hooks(transpile=translate)).score(
        [item(database, GOLD, "postgres")], [answer]
    )
    assert (score["status"], score["ves"], score["ex"]) == ("ok", 1, 1)
    assert score["prediction_dialect"] == "postgres"
    assert score["extracted_sql"].startswith("SELECT name FROM visit WHERE day::date")
    assert "::" not in score["executed_sql"] and "ILIKE" not in score["executed_sql"]
    # Without the translation SQLite refuses the same text: the translation is what ran.
    (untranslated,) = Scorer(progress=False).score([item(database, GOLD)], [answer])
    assert untranslated["status"] == "error" and untranslated["ves"] == 0


def test_an_untranslatable_answer_is_an_error_outcome_not_a_crash(database):
    items = [item(database, GOLD, "postgres", id=1), item(database, GOLD, "postgres", id=2)]
    answers = ["SELECT `name` FROM visit", "SELECT name FROM visit WHERE day >= '2000-09-01'"]
    bad, good = Scorer(progress=False, hooks=Hooks(transpile=translate)).score(items, answers)
    assert (bad["status"], bad["reason"], bad["ves"], bad["ex"]) == ("error", TRANSPILE_ERROR, 0, 0)
    assert bad["error"].startswith("cannot translate postgres to sqlite: ")
    assert bad["extracted_sql"] == "SELECT `name` FROM visit" and bad["executed_sql"] is None
    # The next item is unaffected: it runs and returns gold's rows (Bob, ann); only the set is
    # asserted, since the answer has no ORDER BY while gold has one.
    assert (good["status"], good["ves"], good["ex_set"]) == ("ok", 1, 1)
    assert aggregate([bad, good])["reason_counts"][TRANSPILE_ERROR] == 1


def test_a_non_numeric_item_metric_is_logged_and_never_averaged(database):
    def metrics(item, sql):
        return {"length": len(sql or ""), "parsed_dialect": item.prompted_dialect}

    scores = Scorer(progress=False, hooks=Hooks(transpile=translate, item_metrics=metrics)).score(
        [item(database, GOLD, "postgres")], ["SELECT 1"]
    )
    assert scores[0]["length"] == 8.0 and scores[0]["parsed_dialect"] == "postgres"
    summary = aggregate(scores)
    assert summary["length"] == 8.0 and "parsed_dialect" not in summary


@pytest.mark.parametrize("prediction_dialect", [None, "postgres"])
def test_items_survive_the_document_round_trip(database, prediction_dialect):
    original = item(database, GOLD, prediction_dialect)
    doc = original.to_doc()
    assert doc["prediction_dialect"] == (prediction_dialect or "sqlite")
    assert Item.from_doc(doc) == original
    # Documents written before the option carry no prediction_dialect: the engine's own.
    del doc["prediction_dialect"]
    assert Item.from_doc(doc).prompted_dialect == "sqlite"
