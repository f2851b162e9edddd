"""The statement rule's table (``support.statement_rule``) on real LogicCat items on MariaDB:
answers asked in MySQL run natively on the server prepared by ``prepare logiccat --engine
mysql``, through the lm-eval filter and ``sqlbench-lmeval score``. Nothing reaches stderr, and
the server logs no aborted connection: every connection ends with its goodbye."""

from __future__ import annotations

import dataclasses

import pytest
from support import statement_rule as rule
from support.server_log import ServerLog

pytest.importorskip("pymysql")

from sqlbench_lmeval.logiccat.benchmark import load_items  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402

from .test_statement_rule import simple_and_healthy  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

SETTING = "mariadb"
ON_THE_SERVER = ("--engine", "mysql", "--dialect", "mysql")


@pytest.fixture(scope="module")
def prepared(mysql_prepared):
    """The session's prepared server (one prepare per session) and its error log from here on."""
    return ServerLog.open(mysql_prepared.admin_url)


@pytest.fixture(scope="module")
def table(prepared, mysql_prepared, logiccat_cache):
    statuses = mysql_prepared.document["gold_status"]
    records = {
        record.id: dataclasses.replace(record, gold_status=statuses[str(record.id)])
        for record in load_bundle(logiccat_cache).records
    }
    items = load_items(cache_dir=logiccat_cache, engine="mysql", dialect="mysql")
    return rule.cases_for(
        SETTING,
        items,
        lambda item: item.gold_sql,  # the upstream MySQL gold, verbatim
        lambda item: simple_and_healthy(records[item.id]),
    )


# One worker: a pool of several stops a worker that still holds a duplicate of a job another
# finished (pool.py, _steal) by killing it, and a killed process cannot say goodbye.
def test_the_lm_eval_filter_follows_the_table(table, logiccat_cache, monkeypatch, capfd):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(logiccat_cache))
    monkeypatch.setenv("SQLBENCH_LMEVAL_WORKERS", "1")
    rule.check_all(SETTING, table, rule.score_with_filter("logiccat", table))
    rule.assert_quiet(capfd.readouterr().err)


def test_the_score_command_follows_the_table(table, logiccat_cache, tmp_path, capfd):
    options = ["--cache-dir", str(logiccat_cache), "--workers", "1", *ON_THE_SERVER]
    scores = rule.score_with_command("logiccat", table, tmp_path, *options)
    rule.check_all(SETTING, table, scores)
    rule.assert_quiet(capfd.readouterr().err)


def test_the_server_logged_no_aborted_connection(prepared, table):
    # Runs after the two tests above (file order): the log from the end of prepare on.
    assert prepared.aborted() == []
