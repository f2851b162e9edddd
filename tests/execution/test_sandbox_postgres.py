"""The ``postgres`` engine's own sandbox behaviour, beyond the attack suite it shares with the
other engines (tests/execution/test_sandbox.py, the ``postgres-*`` cases): session state that
must not outlive its answer, the rights check that refuses an account with more than SELECT,
a dropped connection, the byte budget, and the first-keyword filter. The server and the
read-only role: ``postgres_attack_server`` (conftest.py).
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("psycopg")

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute_many  # noqa: E402
from sqlbench_lmeval.execution.postgres import (  # noqa: E402
    check_rights,
    first_keyword,
    open_connection,
    privileges_beyond_select,
    redact,
    with_database,
)
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable  # noqa: E402

LIMITS = Limits(timeout_s=0.5, max_rows=1000, memory_mb=256)


@pytest.mark.postgres
def test_session_settings_and_locks_do_not_reach_the_next_answer(postgres_attack_server):
    """One worker runs the answers in order on one connection; whatever an answer set or took
    (a setting through set_config, the search path, an advisory lock held by the session) is
    gone for the next one."""
    database = postgres_attack_server.database()
    secret = postgres_attack_server.secret
    jobs = [
        Job(database, "SELECT set_config('work_mem', '77MB', false)"),
        Job(database, "SELECT current_setting('work_mem') <> '77MB'"),
        Job(database, f"SELECT set_config('search_path', '{secret}', false)"),
        Job(database, "SELECT count(*) FROM t"),  # t is found: the search path is back
        Job(database, "SELECT pg_advisory_lock(4242)"),
        Job(database, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
        Job(database, "SELECT set_config('statement_timeout', '0', false)"),
        Job(database, "SELECT current_setting('statement_timeout') <> '0'"),
    ]
    outcomes = execute_many(jobs, LIMITS, workers=1)
    assert all(o.status is Status.OK for o in outcomes), outcomes
    assert [o.rows for o in outcomes[1::2]] == [((True,),), ((100,),), ((0,),), ((True,),)]


@pytest.mark.postgres
def test_the_readers_rights_pass_and_the_admins_are_refused(postgres_attack_server):
    server = postgres_attack_server
    with open_connection(server.reader_url) as conn:
        assert privileges_beyond_select(conn) == []
        check_rights(conn, server.reader_url)  # no exception
    admin_url = with_database(server.admin_url, server.name)
    with open_connection(admin_url) as conn:
        extra = privileges_beyond_select(conn)
        with pytest.raises(EvaluationUnavailable, match="more than SELECT") as refused:
            check_rights(conn, admin_url)
    assert "SUPERUSER" in extra and "member of pg_read_server_files" in extra
    assert "sqlbench_admin_pw" not in str(refused.value)  # the URL is shown without password


@pytest.mark.postgres
def test_an_admin_url_never_runs_a_prediction(postgres_attack_server, tmp_path):
    """Through the worker pool: the job on the admin's URL does not run (``COPY ... TO`` by a
    superuser would write the file); its outcome names the refusal."""
    server = postgres_attack_server
    target = tmp_path / "written"
    admin = Database("postgres", with_database(server.admin_url, server.name))
    sql = f"SELECT * FROM pg_read_file('/etc/hostname') AS x, pg_ls_dir('{tmp_path}') AS d"
    try:
        (outcome,) = execute_many([Job(admin, sql)], LIMITS, workers=1)
    except EvaluationUnavailable as stopped:  # the run stops (the shared contract)
        message = str(stopped)
    else:  # or, where the pool does not pass it on yet, the item says why
        assert outcome.status is not Status.OK
        message = outcome.error or ""
    assert "more than SELECT" in message and "sqlbench_admin_pw" not in message
    assert not target.exists()


@pytest.mark.postgres
def test_a_role_with_one_extra_right_is_refused(postgres_attack_server):
    """One grant beyond SELECT (INSERT on t) is enough to be refused, and the refusal names it."""
    server = postgres_attack_server
    role = server.reader_url.split("//", 1)[1].split("@", 1)[0]
    with server.admin() as conn:
        conn.execute(f"GRANT INSERT ON t TO {role}")
        try:
            with open_connection(server.reader_url) as reader:
                assert privileges_beyond_select(reader) == ["writes to public.t"]
        finally:
            conn.execute(f"REVOKE INSERT ON t FROM {role}")
    with open_connection(server.reader_url) as reader:
        assert privileges_beyond_select(reader) == []


@pytest.mark.postgres
def test_dropped_connection_is_crashed_then_a_fresh_connection(postgres_attack_server):
    """The admin terminates the session while the first answer sleeps: that item is
    ``crashed``, the next one (same worker) runs on a new connection."""
    database = postgres_attack_server.database()
    role = postgres_attack_server.reader_url.split("//", 1)[1].split("@", 1)[0]
    stop = threading.Event()

    def terminate_when_seen() -> None:
        # The answer runs as the cursor's FETCH, so look for the reader's busy session.
        with postgres_attack_server.admin() as conn:
            while not stop.is_set():
                rows = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE usename = %s AND state = 'active' AND query LIKE 'FETCH%%'",
                    (role,),
                ).fetchall()
                if rows:
                    return
                time.sleep(0.05)

    killer = threading.Thread(target=terminate_when_seen, daemon=True)
    killer.start()
    jobs = [Job(database, "SELECT pg_sleep(5)"), Job(database, "SELECT count(*) FROM t")]
    try:
        dropped, after = execute_many(jobs, Limits(timeout_s=20), workers=1)
    finally:
        stop.set()
        killer.join()
    assert dropped.status is Status.CRASHED, dropped
    assert "connection lost" in dropped.error
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.postgres
def test_byte_budget_then_the_next_answer(postgres_attack_server):
    """256 MiB / 4 = 64 MiB of text per result; 100 rows of 10 MB are 1 GB, so the cursor is
    left after a few rows (few are fetched at first: one FETCH arrives whole) and the next
    answer runs. A generous timeout: building the rows must not race the deadline."""
    database = postgres_attack_server.database()
    jobs = [
        Job(database, "SELECT repeat('x', 10000000) FROM t"),
        Job(database, "SELECT count(*) FROM t"),
    ]
    limits = Limits(timeout_s=60, max_rows=1000, memory_mb=256)
    capped, after = execute_many(jobs, limits, workers=1)
    assert capped.status is Status.TOO_MANY_ROWS and "larger than 64 MiB" in capped.error
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://admin:s3cret@127.0.0.1:5432/postgres",
        "postgresql://admin@127.0.0.1:5432/postgres?password=s3cret&sslmode=disable",
    ],
)
def test_redact_removes_the_password(url):
    shown = redact(url)
    assert "s3cret" not in shown and "admin" in shown and "127.0.0.1:5432" in shown


@pytest.mark.parametrize(
    ("sql", "keyword"),
    [
        ("select 1", "SELECT"),
        ("  -- note\n/* a /* nested */ comment */ ((select 1))", "SELECT"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "WITH"),
        ("VALUES (1)", "VALUES"),
        ("TABLE t", "TABLE"),
        ("/* unclosed", ""),
        ("# not a comment here\nSELECT 1", ""),
        ("'SELECT'", ""),
        ("", ""),
    ],
)
def test_first_keyword(sql, keyword):
    assert first_keyword(sql) == keyword


@pytest.mark.postgres
def test_a_login_that_fails_is_crashed_never_an_error(postgres_attack_server, tmp_path):
    """A wrong password in a worker: the item is ``crashed`` (never cached as a result), the
    message says why and shows no password."""
    server = postgres_attack_server
    wrong = tmp_path / "wrong.pgpass"
    wrong.write_text(f"*:*:{server.name}:*:not-the-password\n")
    wrong.chmod(0o600)
    url = server.reader_url.split("?", 1)[0] + f"?passfile={wrong}"
    (outcome,) = execute_many([Job(Database("postgres", url), "SELECT 1")], LIMITS, workers=1)
    assert outcome.status is Status.CRASHED
    assert "cannot log in" in outcome.error and "password authentication failed" in outcome.error
    assert "not-the-password" not in outcome.error


def test_the_default_time_limit_is_the_engines(monkeypatch):
    """60 s on PostgreSQL (gold itself needs more than the other engines' 10 s), unless the
    user sets one; a batch of items takes the longest of their engines' defaults."""
    from sqlbench_lmeval.execution.runner import default_timeout
    from sqlbench_lmeval.lmeval_hooks import TIMEOUT_ENV, limits_from_env
    from sqlbench_lmeval.scoring import Item

    assert (default_timeout("postgres"), default_timeout("duckdb"), default_timeout(None)) == (
        60.0,
        10.0,
        10.0,
    )
    on = {
        engine: Item(1, "q", Database(engine, "x"), "SELECT 1", dialect=engine)
        for engine in ("duckdb", "postgres")
    }
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    assert limits_from_env([on["duckdb"]]).timeout_s == 10.0
    assert limits_from_env([on["duckdb"], on["postgres"]]).timeout_s == 60.0
    monkeypatch.setenv(TIMEOUT_ENV, "3")
    assert limits_from_env([on["postgres"]]).timeout_s == 3.0
