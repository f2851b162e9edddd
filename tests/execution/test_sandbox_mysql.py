"""The ``mysql`` engine's own sandbox behaviour, beyond the attack suite it shares with SQLite
and DuckDB (tests/execution/test_sandbox.py, the ``mysql-*`` cases): the client's flags, a
dropped connection, the byte budget and session state that must not outlive its query (the
first-keyword filter: tests/sql/test_lexis.py). The server and the read-only account:
``mysql_attack_server`` (conftest.py).
"""

from __future__ import annotations

import threading
import time

import pytest

pymysql = pytest.importorskip("pymysql")

from sqlbench_lmeval.execution import Job, Limits, Status, execute_many  # noqa: E402
from sqlbench_lmeval.execution.mysql import open_connection, parse_url  # noqa: E402

LIMITS = Limits(timeout_s=0.5, max_rows=1000, memory_mb=256)


@pytest.mark.mysql
def test_client_never_asks_for_multi_statements_or_local_files(mysql_attack_server):
    from pymysql.constants import CLIENT

    conn = open_connection(parse_url(mysql_attack_server.reader_url))
    try:
        assert not conn.client_flag & CLIENT.MULTI_STATEMENTS
        assert not conn.client_flag & CLIENT.LOCAL_FILES
    finally:
        conn.close()


def _kill_connections_running(server, marker: str, times: int, stop: threading.Event) -> None:
    """KILL CONNECTION, as the admin, of the session running ``marker``, ``times`` times."""
    conn = server.admin()
    killed: set[int] = set()
    try:
        while not stop.is_set() and len(killed) < times:
            with conn.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM information_schema.processlist WHERE info = %s", (marker,)
                )
                for (thread_id,) in cursor.fetchall():
                    if thread_id not in killed:
                        cursor.execute(f"KILL CONNECTION {int(thread_id)}")
                        killed.add(thread_id)
            time.sleep(0.05)
    finally:
        conn.close()


def _run_while_killing(server, marker: str, times: int):
    stop = threading.Event()
    killer = threading.Thread(
        target=_kill_connections_running, args=(server, marker, times, stop), daemon=True
    )
    killer.start()
    jobs = [Job(server.database(), marker), Job(server.database(), "SELECT count(*) FROM t")]
    try:
        return execute_many(jobs, Limits(timeout_s=20), workers=1)
    finally:
        stop.set()
        killer.join()


@pytest.mark.mysql
def test_dropped_connection_runs_the_query_again_on_a_fresh_connection(mysql_attack_server):
    """KILL CONNECTION from the admin while the first item sleeps: the evaluation lost its
    connection, not the model its answer, so the item runs again on a new connection; the
    next one (same worker, same database) runs as usual."""
    marker = "SELECT SLEEP(1) AS dropped_once"
    dropped, after = _run_while_killing(mysql_attack_server, marker, times=1)
    assert dropped.status is Status.OK and dropped.rows == ((0,),), dropped
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.mysql
def test_a_query_whose_connection_drops_every_time_is_crashed(mysql_attack_server):
    """The connection dies each of the LOSSES_ALLOWED times the query runs while the server
    stays up: taken as the query's own doing (it brings its session down), the item is
    ``crashed``, and the run goes on."""
    from sqlbench_lmeval.execution.runner import LOSSES_ALLOWED

    marker = "SELECT SLEEP(1) AS dropped_every_time"
    dropped, after = _run_while_killing(mysql_attack_server, marker, times=LOSSES_ALLOWED)
    assert dropped.status is Status.CRASHED, dropped
    assert f"lost each of the {LOSSES_ALLOWED} times" in dropped.error
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.mysql
def test_byte_budget_then_a_fresh_connection(mysql_attack_server):
    """256 MiB / 32 = 8 MiB per result (fetch.result_budget); 1,000 rows of 100 kB are 100 MB,
    so the stream is cut off (not drained) and the next job on the same worker runs on a new
    connection. A generous timeout: building the rows must not race the deadline on a busy
    machine."""
    database = mysql_attack_server.database()
    jobs = [
        Job(database, "SELECT repeat('x', 100000) FROM t a, t b"),
        Job(database, "SELECT count(*) FROM t"),
    ]
    limits = Limits(timeout_s=60, max_rows=1000, memory_mb=256)
    capped, after = execute_many(jobs, limits, workers=1)
    assert capped.status is Status.TOO_MANY_ROWS and "larger than 8 MiB" in capped.error
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.mysql
def test_user_variables_and_locks_do_not_outlive_their_query(mysql_attack_server):
    """One worker runs the jobs in order on one connection, unless a job may leave session state
    behind: then the next job gets a fresh connection, where @leak is NULL and the lock free."""
    database = mysql_attack_server.database()
    jobs = [
        Job(database, "SELECT @leak := 42"),
        Job(database, "SELECT @leak"),
        Job(database, "SELECT GET_LOCK('sqlbench_leak', 0)"),
        Job(database, "SELECT IS_FREE_LOCK('sqlbench_leak')"),
    ]
    outcomes = execute_many(jobs, LIMITS, workers=1)
    assert [o.rows for o in outcomes] == [((42,),), ((None,),), ((1,),), ((1,),)]
