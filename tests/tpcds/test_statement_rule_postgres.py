"""The statement rule's table (``support.statement_rule``) on real TPC-DS items on PostgreSQL:
answers asked in PostgreSQL run natively on the session's server (``tpcds_postgres``: one
``prepare tpcds --engine postgres`` at sf 0.01), through the lm-eval filter and
``sqlbench-lmeval score``; nothing reaches stderr."""

from __future__ import annotations

import pytest
from support import statement_rule as rule

from .conftest import TEST_SCALE_FACTOR

pytest.importorskip("psycopg")

pytestmark = pytest.mark.postgres

SETTING = "postgres"


@pytest.fixture(scope="module")
def table(tpcds_postgres, tpcds_cache):
    from sqlbench_lmeval.tpcds.benchmark import load_items

    items = load_items(tpcds_cache, TEST_SCALE_FACTOR, engine="postgres")
    # Gold that returns rows at this scale (prepare's verdict on the server) matches itself.
    return rule.cases_for(
        SETTING, items, lambda item: item.gold_sql, lambda item: item.gold_status == "ok"
    )


def test_the_lm_eval_filter_follows_the_table(table, tpcds_cache, monkeypatch, capfd):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tpcds_cache))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "2")
    rule.check_all(SETTING, table, rule.score_with_filter("tpcds", table))
    rule.assert_quiet(capfd.readouterr().err)


def test_the_score_command_follows_the_table(table, tpcds_cache, tmp_path, capfd):
    options = ["--cache-dir", str(tpcds_cache), "--workers", "2", "--engine", "postgres"]
    options += ["--scale-factor", str(TEST_SCALE_FACTOR)]
    scores = rule.score_with_command("tpcds", table, tmp_path, *options)
    rule.check_all(SETTING, table, scores)
    rule.assert_quiet(capfd.readouterr().err)
