"""The attack suite on the ``mysql`` engine: refusals, timeouts, capped results, no writes.

Like tests/execution/test_sandbox.py: all attacks run in one execute_many batch (worker
processes), each case then checks its own outcome. The account is the read-only one
(:func:`create_read_only_account`: SELECT on the attacked database only). CHECKSUM TABLE of
every table, the list of databases and the list of tables are the same afterwards.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

pymysql = pytest.importorskip("pymysql")

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute_many  # noqa: E402
from sqlbench_lmeval.execution.mysql import (  # noqa: E402
    database_url,
    first_keyword,
    open_connection,
    parse_url,
)
from sqlbench_lmeval.execution.mysql_admin import (  # noqa: E402
    create_read_only_account,
    quote_identifier,
    table_checksums,
)

pytestmark = pytest.mark.mysql

LIMITS = Limits(timeout_s=0.5, max_rows=1000, memory_mb=256)
ROWS = [(i, f"name{i}", i / 10) for i in range(100)]
SUFFIX = str(os.getpid())
ATTACKED = f"sqlbench_attack_{SUFFIX}"
SECRET = f"sqlbench_secret_{SUFFIX}"
TIMEOUT = Status.TIMEOUT
REFUSED = "only SELECT"

# (case id, sql, expected status, substring of the message or None)
MYSQL_ATTACKS = [
    ("insert", "INSERT INTO t VALUES (1, 'x', 1.0)", Status.ERROR, REFUSED),
    ("update", "UPDATE t SET a = 0", Status.ERROR, REFUSED),
    ("delete", "DELETE FROM t", Status.ERROR, REFUSED),
    ("drop", "DROP TABLE t", Status.ERROR, REFUSED),
    ("create", "CREATE TABLE u (x INT)", Status.ERROR, REFUSED),
    ("create_temp", "CREATE TEMPORARY TABLE u AS SELECT * FROM t", Status.ERROR, REFUSED),
    ("alter", "ALTER TABLE t ADD COLUMN z INT", Status.ERROR, REFUSED),
    ("replace", "REPLACE INTO t VALUES (1, 'x', 1.0)", Status.ERROR, REFUSED),
    ("truncate", "TRUNCATE TABLE t", Status.ERROR, REFUSED),
    ("set_read_write", "SET SESSION TRANSACTION READ WRITE", Status.ERROR, REFUSED),
    ("set_no_limit", "SET SESSION max_statement_time = 0", Status.ERROR, REFUSED),
    (
        "set_statement",
        "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(100)",
        Status.ERROR,
        REFUSED,
    ),
    ("do_sleep", "DO SLEEP(100)", Status.ERROR, REFUSED),
    ("kill", "KILL CONNECTION_ID()", Status.ERROR, REFUSED),
    ("lock_tables", "LOCK TABLES t WRITE", Status.ERROR, REFUSED),
    ("handler", "HANDLER t OPEN", Status.ERROR, REFUSED),
    ("grant", "GRANT ALL ON *.* TO CURRENT_USER", Status.ERROR, REFUSED),
    ("load_local", "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", Status.ERROR, REFUSED),
    ("shutdown", "SHUTDOWN", Status.ERROR, REFUSED),
    ("executable_comment", "/*! DROP TABLE t */", Status.ERROR, REFUSED),
    ("executable_comment_m", "/*M!100000 SET sql_select_limit = DEFAULT */", Status.ERROR, REFUSED),
    # Past the keyword filter: the server's walls (grants, read-only transaction, no FILE).
    ("with_delete", "WITH x AS (SELECT 1) DELETE FROM t", Status.ERROR, None),
    (
        "into_outfile",
        "SELECT * FROM t INTO OUTFILE '/tmp/sqlbench_attack_out'",
        Status.ERROR,
        "denied",
    ),
    ("into_dumpfile", "SELECT 1 INTO DUMPFILE '/tmp/sqlbench_attack_dump'", Status.ERROR, "denied"),
    ("other_database", f"SELECT * FROM {SECRET}.s", Status.ERROR, "denied"),
    ("grant_table", "SELECT * FROM mysql.user", Status.ERROR, "denied"),
    ("multi_statement", "SELECT 1; DROP TABLE t", Status.ERROR, "syntax"),
    ("multi_select", "SELECT 1; SELECT 2", Status.ERROR, "syntax"),
    # Row locks are refused in a READ ONLY transaction.
    ("for_update", "SELECT a FROM t WHERE a = 1 FOR UPDATE", Status.ERROR, "READ ONLY"),
    # The deadline: server-side limit plus client-side KILL QUERY.
    ("sleep", "SELECT SLEEP(100)", TIMEOUT, "stopped after"),
    ("benchmark", "SELECT BENCHMARK(100000000000, md5('x'))", TIMEOUT, "stopped after"),
    ("sleep_hint", "SELECT /*+ MAX_EXECUTION_TIME(100000) */ SLEEP(100)", TIMEOUT, "stopped after"),
    ("sleep_parenthesized", "(SELECT SLEEP(100))", TIMEOUT, "stopped after"),
    ("sleep_per_row", "SELECT SLEEP(1) FROM t", TIMEOUT, "stopped after"),
    ("cartesian_4", "SELECT count(*) FROM t a, t b, t c, t d, t e", TIMEOUT, "stopped after"),
    # An endless recursion is cut by the server at 1,000 iterations (MariaDB's
    # max_recursive_iterations: 1 + 1,000 rows; MySQL's cte_max_recursion_depth: an error).
    (
        "recursive_cte",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        (Status.OK, Status.ERROR),
        None,
    ),
    # The row cap (the byte budget: test_byte_budget_then_a_fresh_connection).
    (
        "recursive_cte_rows",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
        Status.TOO_MANY_ROWS,
        "more than 1000 rows",
    ),
    ("cartesian_rows", "SELECT * FROM t a, t b", Status.TOO_MANY_ROWS, "more than 1000 rows"),
    ("comment_only", "-- SELECT 1", Status.NO_SQL, None),
    ("blank", "  \n ", Status.NO_SQL, None),
    ("semicolons", " ; ; ", Status.NO_SQL, None),
    ("none", None, Status.NO_SQL, None),
    ("read_only_mode", "SELECT @@session.tx_read_only", Status.OK, None),
    ("control_ok", "SELECT count(*) FROM t;", Status.OK, None),
]

# Exact results of the OK cases, from the table's definition (ROWS: a = 0..99).
EXPECTED_ROWS = {
    "recursive_cte": ((1001,),),
    "read_only_mode": ((1,),),  # SET SESSION TRANSACTION READ ONLY is in force
    "control_ok": ((100,),),
}


def _admin(url: str):
    return open_connection(parse_url(url))


def _state(admin_url: str) -> dict:
    conn = _admin(admin_url)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SHOW DATABASES")
            databases = sorted(row[0] for row in cursor.fetchall())
    finally:
        conn.close()
    return {
        "databases": databases,
        "attacked": table_checksums(admin_url, ATTACKED),
        "secret": table_checksums(admin_url, SECRET),
    }


@pytest.fixture(scope="module")
def attack_server(mysql_admin_url):
    """The attacked database (t: 100 rows), a secret one, and the read-only account's URL."""
    conn = _admin(mysql_admin_url)
    with conn.cursor() as cursor:
        for name in (ATTACKED, SECRET):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_identifier(name)}")
            cursor.execute(f"CREATE DATABASE {quote_identifier(name)}")
        cursor.execute(f"CREATE TABLE {ATTACKED}.t (a INT, b VARCHAR(20), c DOUBLE)")
        cursor.executemany(f"INSERT INTO {ATTACKED}.t VALUES (%s, %s, %s)", ROWS)
        cursor.execute(f"CREATE TABLE {SECRET}.s (k VARCHAR(20))")
        cursor.execute(f"INSERT INTO {SECRET}.s VALUES ('secret')")
    reader_url = create_read_only_account(mysql_admin_url, [ATTACKED], user=f"reader_{SUFFIX}")
    yield mysql_admin_url, reader_url
    with conn.cursor() as cursor:
        for name in (ATTACKED, SECRET):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_identifier(name)}")
        cursor.execute("DROP USER IF EXISTS %s@'%%'", (f"reader_{SUFFIX}",))
    conn.close()


@pytest.fixture(scope="module")
def mysql_results(attack_server):
    admin_url, reader_url = attack_server
    database = Database("mysql", database_url(reader_url, ATTACKED))
    before = _state(admin_url)
    jobs = [Job(database, sql) for _, sql, _, _ in MYSQL_ATTACKS]
    outcomes = execute_many(jobs, LIMITS, workers=2)
    return {
        "outcomes": dict(zip([c[0] for c in MYSQL_ATTACKS], outcomes, strict=True)),
        "before": before,
        "after": _state(admin_url),
    }


@pytest.mark.parametrize(
    ("case", "sql", "status", "fragment"), MYSQL_ATTACKS, ids=[c[0] for c in MYSQL_ATTACKS]
)
def test_mysql_attack(mysql_results, case, sql, status, fragment):
    outcome = mysql_results["outcomes"][case]
    assert outcome.status in (status if isinstance(status, tuple) else (status,)), outcome
    if fragment is not None:
        assert fragment in (outcome.error or ""), outcome.error
    if case in EXPECTED_ROWS and outcome.ok:
        assert outcome.rows == EXPECTED_ROWS[case]


def test_server_state_unchanged(mysql_results):
    before, after = mysql_results["before"], mysql_results["after"]
    assert before["attacked"].keys() == {"t"}
    assert before["attacked"]["t"] is not None
    assert after == before
    assert not os.path.exists("/tmp/sqlbench_attack_out")
    assert not os.path.exists("/tmp/sqlbench_attack_dump")


def test_client_never_asks_for_multi_statements_or_local_files(attack_server):
    from pymysql.constants import CLIENT

    conn = open_connection(parse_url(attack_server[1]))
    try:
        assert not conn.client_flag & CLIENT.MULTI_STATEMENTS
        assert not conn.client_flag & CLIENT.LOCAL_FILES
    finally:
        conn.close()


def test_dropped_connection_is_crashed_then_a_fresh_connection(attack_server):
    """KILL CONNECTION from the admin while the first item sleeps: that item is ``crashed``,
    the next one (same worker, same database) runs on a new connection."""
    admin_url, reader_url = attack_server
    database = Database("mysql", database_url(reader_url, ATTACKED))
    marker = "SELECT SLEEP(5) AS dropped_here"
    stop = threading.Event()

    def kill_when_seen() -> None:
        conn = _admin(admin_url)
        try:
            while not stop.is_set():
                with conn.cursor() as cursor:
                    cursor.execute(
                        "SELECT id FROM information_schema.processlist WHERE info = %s", (marker,)
                    )
                    ids = [row[0] for row in cursor.fetchall()]
                    for thread_id in ids:
                        cursor.execute(f"KILL CONNECTION {int(thread_id)}")
                if ids:
                    return
                time.sleep(0.05)
        finally:
            conn.close()

    killer = threading.Thread(target=kill_when_seen, daemon=True)
    killer.start()
    jobs = [Job(database, marker), Job(database, "SELECT count(*) FROM t")]
    try:
        dropped, after = execute_many(jobs, Limits(timeout_s=20), workers=1)
    finally:
        stop.set()
        killer.join()
    assert dropped.status is Status.CRASHED, dropped
    assert "connection lost" in dropped.error
    assert after.status is Status.OK and after.rows == ((100,),)


def test_byte_budget_then_a_fresh_connection(attack_server):
    """256 MiB / 4 = 64 MiB of text per result; 1,000 rows of 100 kB are 100 MB, so the stream
    is cut off (not drained) and the next job on the same worker runs on a new connection.
    A generous timeout: building 64 MB must not race the deadline on a busy machine."""
    database = Database("mysql", database_url(attack_server[1], ATTACKED))
    jobs = [
        Job(database, "SELECT repeat('x', 100000) FROM t a, t b"),
        Job(database, "SELECT count(*) FROM t"),
    ]
    limits = Limits(timeout_s=60, max_rows=1000, memory_mb=256)
    capped, after = execute_many(jobs, limits, workers=1)
    assert capped.status is Status.TOO_MANY_ROWS and "larger than 64 MiB" in capped.error
    assert after.status is Status.OK and after.rows == ((100,),)


def test_user_variables_and_locks_do_not_outlive_their_query(attack_server):
    """One worker runs the jobs in order on one connection, unless a job may leave session state
    behind: then the next job gets a fresh connection, where @leak is NULL and the lock free."""
    database = Database("mysql", database_url(attack_server[1], ATTACKED))
    jobs = [
        Job(database, "SELECT @leak := 42"),
        Job(database, "SELECT @leak"),
        Job(database, "SELECT GET_LOCK('sqlbench_leak', 0)"),
        Job(database, "SELECT IS_FREE_LOCK('sqlbench_leak')"),
    ]
    outcomes = execute_many(jobs, LIMITS, workers=1)
    assert [o.rows for o in outcomes] == [((42,),), ((None,),), ((1,),), ((1,),)]


@pytest.mark.parametrize(
    ("sql", "keyword"),
    [
        ("select 1", "SELECT"),
        ("  -- note\n# other\n/* c */ ((select 1))", "SELECT"),
        ("/*+ hint */ WITH x AS (SELECT 1) SELECT * FROM x", "WITH"),
        ("/*!SET x=1*/ SELECT 1", ""),  # executable comment: code, not a comment
        ("/*M!100000 DROP TABLE t */", ""),
        ("'SELECT'", ""),
        ("", ""),
    ],
)
def test_first_keyword(sql, keyword):
    assert first_keyword(sql) == keyword
