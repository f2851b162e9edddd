"""The statement rule's table (``support.statement_rule``) on real LogicCat items on SQLite:
answers asked in SQLite (``logiccat``) and in MySQL (``logiccat_mysql``, translated to SQLite),
through the lm-eval filter and ``sqlbench-lmeval score``; nothing reaches stderr."""

from __future__ import annotations

import pytest
from support import statement_rule as rule

from sqlbench_lmeval.logiccat.benchmark import load_items
from sqlbench_lmeval.logiccat.bundle import load_bundle

pytestmark = pytest.mark.slow  # the real LogicCat bundle is built once per session

SETTINGS = {"sqlite": "sqlite", "sqlite_mysql": "mysql"}  # setting -> dialect asked for


@pytest.fixture(scope="module")
def records(logiccat_cache):
    return {record.id: record for record in load_bundle(logiccat_cache).records}


def simple_and_healthy(record) -> bool:
    """Gold that runs, returns rows, repeats, and has no ORDER BY or LIMIT (it matches itself
    however tied rows come out)."""
    text = (record.gold_sql + " " + record.gold_sql_mysql).upper()
    return (
        record.gold_status == "ok"
        and not record.flags
        and "ORDER BY" not in text
        and "LIMIT" not in text
    )


def cases(setting, logiccat_cache, records):
    dialect = SETTINGS[setting]
    items = load_items(cache_dir=logiccat_cache, dialect=dialect)
    field = "gold_sql_mysql" if dialect == "mysql" else "gold_sql"
    return rule.cases_for(
        setting,
        items,
        lambda item: getattr(records[item.id], field),
        lambda item: simple_and_healthy(records[item.id]),
    )


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_lm_eval_filter_follows_the_table(setting, logiccat_cache, records, monkeypatch, capfd):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(logiccat_cache))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "2")
    table = cases(setting, logiccat_cache, records)
    rule.check_all(setting, table, rule.score_with_filter("logiccat", table))
    rule.assert_quiet(capfd.readouterr().err)


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_score_command_follows_the_table(setting, logiccat_cache, records, tmp_path, capfd):
    table = cases(setting, logiccat_cache, records)
    options = ["--cache-dir", str(logiccat_cache), "--workers", "2"]
    options += ["--dialect", SETTINGS[setting]]
    scores = rule.score_with_command("logiccat", table, tmp_path, *options)
    rule.check_all(setting, table, scores)
    rule.assert_quiet(capfd.readouterr().err)
