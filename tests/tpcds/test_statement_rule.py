"""The statement rule's table (``support.statement_rule``) on real TPC-DS items on DuckDB
(sf 0.01), through the lm-eval filter and ``sqlbench-lmeval score``; nothing reaches stderr."""

from __future__ import annotations

from support import statement_rule as rule

from .conftest import TEST_SCALE_FACTOR

SETTING = "duckdb"


def cases(tpcds_items):
    # Gold that returns rows at this scale matches itself: DuckDB runs it on one thread.
    return rule.cases_for(
        SETTING, tpcds_items, lambda item: item.gold_sql, lambda item: item.gold_status == "ok"
    )


def test_the_lm_eval_filter_follows_the_table(tpcds_items, tpcds_cache, monkeypatch, capfd):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tpcds_cache))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "2")
    table = cases(tpcds_items)
    rule.check_all(SETTING, table, rule.score_with_filter("tpcds", table))
    rule.assert_quiet(capfd.readouterr().err)


def test_the_score_command_follows_the_table(tpcds_items, tpcds_cache, tmp_path, capfd):
    table = cases(tpcds_items)
    options = ["--cache-dir", str(tpcds_cache), "--workers", "2"]
    options += ["--scale-factor", str(TEST_SCALE_FACTOR)]
    scores = rule.score_with_command("tpcds", table, tmp_path, *options)
    rule.check_all(SETTING, table, scores)
    rule.assert_quiet(capfd.readouterr().err)
