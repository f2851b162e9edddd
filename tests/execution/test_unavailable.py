"""Failures of the evaluation itself stop the batch (EvaluationUnavailable); a query's own
failure stays its outcome. Real files, real worker processes; the MySQL cases on the private
server of ``mysql_attack_server`` (conftest.py)."""

from __future__ import annotations

import shutil
import socket
import sqlite3
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute, execute_many
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

HOOKS = "sqlbench_test_hooks"


def sqlite_with_a_big_table(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE big (a INTEGER, b TEXT)")
    conn.executemany("INSERT INTO big VALUES (?, ?)", [(i, "x" * 200) for i in range(2000)])
    conn.commit()
    conn.close()
    return path


def test_a_query_on_an_invented_table_is_the_models_error(tiny_sqlite, tiny_duckdb):
    jobs = [
        Job(Database("sqlite", str(tiny_sqlite)), "SELECT * FROM no_such_table"),
        Job(Database("duckdb", str(tiny_duckdb)), "SELECT * FROM no_such_table"),
    ]
    outcomes = execute_many(jobs, workers=1)
    assert [o.status for o in outcomes] == [Status.ERROR, Status.ERROR]


def test_a_file_that_is_not_a_sqlite_database_stops_the_batch(tmp_path, tiny_sqlite):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is no database at all\n" * 400)
    jobs = [
        Job(Database("sqlite", str(tiny_sqlite)), "SELECT 1"),
        Job(Database("sqlite", str(garbage)), "SELECT 1"),
    ]
    with pytest.raises(EvaluationUnavailable) as raised:
        execute_many(jobs, workers=1)
    assert str(garbage) in str(raised.value) and "file is not a database" in str(raised.value)


def test_a_damaged_page_stops_the_batch_at_the_query_that_reads_it(tmp_path):
    """The schema (page 1) is intact, so the file opens; a page of the table is garbage, which
    only the query that reads it finds: that is the file's failure, not the query's."""
    path = sqlite_with_a_big_table(tmp_path / "damaged.sqlite")
    with open(path, "r+b") as handle:
        handle.seek(4096 * 10)
        handle.write(b"\xff" * 4096)
    database = Database("sqlite", str(path))
    assert execute(Job(database, "SELECT count(*) FROM sqlite_master")).rows == ((1,),)
    jobs = [Job(database, "SELECT count(*), sum(length(b)) FROM big")]
    with pytest.raises(EvaluationUnavailable, match="damaged or gone: database disk image"):
        execute_many(jobs, workers=1)


def test_an_emptied_sqlite_file_is_no_engine_failure(tmp_path):
    """SQLite reads an empty file as a database without tables: the engine cannot tell this
    from an invented table name. Scoring can (tests/scoring/test_unavailable_scoring.py)."""
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    (outcome,) = execute_many([Job(Database("sqlite", str(path)), "SELECT * FROM t")], workers=1)
    assert outcome.status is Status.ERROR and "no such table" in outcome.error


def test_a_file_that_is_not_a_duckdb_database_stops_the_batch(tmp_path, tiny_duckdb):
    damaged = tmp_path / "damaged.duckdb"
    shutil.copyfile(tiny_duckdb, damaged)
    with open(damaged, "r+b") as handle:
        handle.seek(0)
        handle.write(b"\0" * 8192)  # the file header and the first database header
    jobs = [Job(Database("duckdb", str(damaged)), "SELECT count(*) FROM t")]
    with pytest.raises(EvaluationUnavailable) as raised:
        execute_many(jobs, workers=1)
    assert str(damaged) in str(raised.value) and "prepare" in str(raised.value)


def test_a_damaged_duckdb_block_stops_the_batch_at_the_query_that_reads_it(tmp_path):
    """The file opens (its headers are intact); a block of the table fails its checksum, which
    only the query that reads it finds."""
    import duckdb

    path = tmp_path / "blocks.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE big AS SELECT i AS a, repeat('x', 200) AS b FROM range(200000) t(i)")
    conn.execute("CHECKPOINT")
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek(81920)  # a data block of ``big`` (the metadata blocks come later)
        handle.write(b"\xff" * 100)
    database = Database("duckdb", str(path))
    assert execute(Job(database, "SELECT 1")).rows == ((1,),)
    jobs = [Job(database, "SELECT count(*), sum(length(b)), sum(a) FROM big")]
    with pytest.raises(EvaluationUnavailable, match=f"{path} is damaged: IO Error: Corrupt"):
        execute_many(jobs, workers=1)


def test_workers_that_cannot_start_stop_the_batch(tiny_sqlite, monkeypatch):
    # A Python home that does not exist: a fresh interpreter dies before running any code;
    # this process, already running, does not care.
    monkeypatch.setenv("PYTHONHOME", "/nonexistent-python-home")
    jobs = [Job(Database("sqlite", str(tiny_sqlite)), "SELECT 1")] * 3
    with pytest.raises(EvaluationUnavailable, match="fail to start"):
        execute_many(jobs, workers=1)


def test_a_worker_that_dies_opening_a_database_stops_the_batch(tiny_sqlite, hooks_dir):
    """The setup hook kills the worker while the database opens: no query ran, so no job is
    marked crashed; the job is tried once more on a fresh worker, then the batch stops."""
    dying = Database("sqlite", str(tiny_sqlite), setup=f"{HOOKS}:die_on_open")
    fine = Database("sqlite", str(tiny_sqlite))
    jobs = [Job(fine, "SELECT 1"), Job(dying, "SELECT 2"), Job(fine, "SELECT 3")]
    with pytest.raises(EvaluationUnavailable, match="die while opening the sqlite database"):
        execute_many(jobs, workers=1)


def test_a_failure_to_open_is_retried_once_on_a_fresh_connection(
    tiny_sqlite, hooks_dir, no_retry_pause
):
    database = Database("sqlite", str(tiny_sqlite), setup=f"{HOOKS}:fails_once")
    outcome = execute(Job(database, "SELECT count(*) FROM t"))
    assert outcome.status is Status.OK and outcome.rows == ((100,),)


def test_a_failure_that_persists_is_raised_after_one_retry(tmp_path, tiny_sqlite, no_retry_pause):
    path = Path(shutil.copyfile(tiny_sqlite, tmp_path / "gone.sqlite"))
    database = Database("sqlite", str(path))
    assert execute(Job(database, "SELECT count(*) FROM t")).rows == ((100,),)
    path.unlink()
    with pytest.raises(EvaluationUnavailable, match="no such file"):
        execute(Job(database, "SELECT count(*) FROM t"))


def test_a_file_back_in_place_after_a_failure_is_opened(tmp_path, tiny_duckdb, no_retry_pause):
    path = tmp_path / "later.duckdb"
    database = Database("duckdb", str(path))
    with pytest.raises(EvaluationUnavailable):
        execute(Job(database, "SELECT count(*) FROM t"))
    shutil.copyfile(tiny_duckdb, path)
    assert execute(Job(database, "SELECT count(*) FROM t")).rows == ((100,),)


# -- MySQL: login, reachability, database ------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.mysql
def test_mysql_wrong_password_stops_the_batch(mysql_attack_server, no_retry_pause):
    from sqlbench_lmeval.execution.mysql import database_url, parse_url
    from sqlbench_lmeval.execution.mysql_admin import with_account

    reader = parse_url(mysql_attack_server.reader_url)
    wrong = with_account(mysql_attack_server.reader_url, reader.user, "not-the-password")
    database = Database("mysql", database_url(wrong, mysql_attack_server.attacked))
    with pytest.raises(EvaluationUnavailable) as raised:
        execute_many([Job(database, "SELECT count(*) FROM t")], workers=1)
    message = str(raised.value)
    assert "cannot log in" in message and "(1045)" in message and reader.user in message
    assert "not-the-password" not in message


@pytest.mark.mysql
def test_mysql_server_that_cannot_be_reached_stops_the_batch(mysql_attack_server, no_retry_pause):
    # A port nobody listens on: the connection is refused before any login.
    database = Database("mysql", f"mysql://nobody@127.0.0.1:{_free_port()}/anything")
    with pytest.raises(EvaluationUnavailable, match="cannot reach the MySQL server.*2003"):
        execute_many([Job(database, "SELECT 1")], workers=1)


@pytest.mark.mysql
def test_mysql_missing_database_stops_the_batch(mysql_attack_server, no_retry_pause):
    from sqlbench_lmeval.execution.mysql import database_url

    database = Database("mysql", database_url(mysql_attack_server.reader_url, "no_such_db"))
    with pytest.raises(EvaluationUnavailable, match="cannot open the database 'no_such_db'"):
        execute_many([Job(database, "SELECT 1")], workers=1)


@pytest.mark.mysql
def test_mysql_query_on_an_invented_table_is_the_models_error(mysql_attack_server):
    jobs = [Job(mysql_attack_server.database(), "SELECT * FROM no_such_table")]
    (outcome,) = execute_many(jobs, Limits(timeout_s=5), workers=1)
    assert outcome.status is Status.ERROR and "(1146)" in outcome.error
