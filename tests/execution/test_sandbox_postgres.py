"""The ``postgres`` engine's own sandbox behaviour, beyond the attack suite it shares with the
other engines (tests/execution/test_sandbox.py, the ``postgres-*`` cases): session state that
must not outlive its answer, the rights check that refuses an account with more than SELECT,
a dropped connection (the answer runs again), a server restarted mid-run (the run waits for
it), a login that fails (the run stops) and the byte budget (the first-keyword filter:
tests/sql/test_lexis.py). The server and the read-only role: ``postgres_attack_server``
(conftest.py); the restarted server is a cluster of the test's own (``restartable_postgres``).
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("psycopg")

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute_many  # noqa: E402
from sqlbench_lmeval.execution.postgres import (  # noqa: E402
    check_rights,
    open_connection,
    privileges_beyond_select,
    redact,
    with_database,
)
from sqlbench_lmeval.execution.unavailable import (  # noqa: E402
    ConnectionLost,
    EvaluationUnavailable,
)

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
    superuser would write the file); the run stops with the refusal."""
    server = postgres_attack_server
    target = tmp_path / "written"
    admin = Database("postgres", with_database(server.admin_url, server.name))
    sql = f"SELECT * FROM pg_read_file('/etc/hostname') AS x, pg_ls_dir('{tmp_path}') AS d"
    with pytest.raises(EvaluationUnavailable) as stopped:  # the run stops
        execute_many([Job(admin, sql)], LIMITS, workers=1)
    message = str(stopped.value)
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


def _terminate_answers(server, times: int, stop: threading.Event) -> None:
    """``pg_terminate_backend``, as the admin, of the reader's session while it runs an answer
    (an answer runs as the cursor's FETCH), ``times`` times."""
    terminated: set[int] = set()
    with server.admin() as conn:
        while not stop.is_set() and len(terminated) < times:
            pids = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE usename = %s AND state = 'active' "
                "AND query LIKE 'FETCH%%'",
                (server.role,),
            ).fetchall()
            for (pid,) in pids:
                if pid not in terminated:
                    conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
                    terminated.add(pid)
            time.sleep(0.05)


def _run_while_terminating(server, times: int):
    stop = threading.Event()
    killer = threading.Thread(target=_terminate_answers, args=(server, times, stop), daemon=True)
    killer.start()
    jobs = [
        Job(server.database(), "SELECT count(*) FROM t, pg_sleep(1)"),
        Job(server.database(), "SELECT count(*) FROM t"),
    ]
    try:
        return execute_many(jobs, Limits(timeout_s=20), workers=1)
    finally:
        stop.set()
        killer.join()


@pytest.mark.postgres
def test_dropped_connection_runs_the_query_again_on_a_fresh_connection(postgres_attack_server):
    """The admin terminates the session while the first answer runs: the evaluation lost its
    connection, not the model its answer, so the item runs again on a new connection; the
    next one (same worker) runs as usual."""
    dropped, after = _run_while_terminating(postgres_attack_server, times=1)
    assert dropped.status is Status.OK and dropped.rows == ((100,),), dropped
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.postgres
def test_a_query_whose_connection_drops_every_time_is_crashed(postgres_attack_server):
    """The session dies each of the LOSSES_ALLOWED times the query runs while the server stays
    up: taken as the query's own doing, the item is ``crashed`` and the run goes on."""
    from sqlbench_lmeval.execution.runner import LOSSES_ALLOWED

    dropped, after = _run_while_terminating(postgres_attack_server, times=LOSSES_ALLOWED)
    assert dropped.status is Status.CRASHED, dropped
    assert f"lost each of the {LOSSES_ALLOWED} times" in dropped.error
    assert "terminating connection" in dropped.error
    assert after.status is Status.OK and after.rows == ((100,),)


@pytest.mark.postgres
def test_a_server_restarted_mid_run_changes_no_item(restartable_postgres, capfd):
    """The server stops at once (as in a crash) and starts again while an answer runs: the
    worker waits for it, runs the interrupted answer again, and every item ends as in an
    undisturbed run."""
    private, server = restartable_postgres
    answers = [f"SELECT a, b FROM t WHERE a % 8 = {k} ORDER BY a" for k in range(8)]
    marker = "SELECT count(*) FROM t, pg_sleep(2)"  # the one answer that runs for seconds
    jobs = [Job(server.database(), sql) for sql in [*answers[:4], marker, *answers[4:]]]
    undisturbed = execute_many(jobs, Limits(timeout_s=20), workers=2)

    errors: list[Exception] = []

    def restart_while_the_marker_runs() -> None:
        try:
            with server.admin() as conn:
                while not conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE usename = %s AND state = 'active' "
                    "AND query LIKE 'FETCH%%' AND clock_timestamp() - query_start > '0.5 s'",
                    (server.role,),
                ).fetchall():
                    time.sleep(0.02)
            private.restart()
        except Exception as error:  # reported by the test
            errors.append(error)

    restarter = threading.Thread(target=restart_while_the_marker_runs, daemon=True)
    restarter.start()
    disturbed = execute_many(jobs, Limits(timeout_s=20), workers=2)
    restarter.join(timeout=60)
    assert not restarter.is_alive() and not errors, errors
    assert all(o.status is Status.OK for o in undisturbed), undisturbed
    assert [(o.status, o.rows) for o in disturbed] == [(o.status, o.rows) for o in undisturbed]
    assert "waiting up to" in capfd.readouterr().err  # the operator is told


@pytest.mark.postgres
def test_byte_budget_then_the_next_answer(postgres_attack_server):
    """256 MiB / 32 = 8 MiB per result (fetch.result_budget); 100 rows of 10 MB are 1 GB, so
    the cursor is left after a few rows (few are fetched at first: one FETCH arrives whole) and
    the next answer runs. A generous timeout: building the rows must not race the deadline."""
    database = postgres_attack_server.database()
    jobs = [
        Job(database, "SELECT repeat('x', 10000000) FROM t"),
        Job(database, "SELECT count(*) FROM t"),
    ]
    limits = Limits(timeout_s=60, max_rows=1000, memory_mb=256)
    capped, after = execute_many(jobs, limits, workers=1)
    assert capped.status is Status.TOO_MANY_ROWS and "larger than 8 MiB" in capped.error
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


@pytest.mark.postgres
def test_a_login_that_fails_stops_the_run(postgres_attack_server, tmp_path, no_retry_pause):
    """A wrong password in a worker is the evaluation's failure, never the model's: no item
    gets an outcome, the run stops (after one retry on a fresh connection) with the cause,
    and the message shows no password."""
    server = postgres_attack_server
    wrong = tmp_path / "wrong.pgpass"
    wrong.write_text(f"*:*:{server.name}:*:not-the-password\n")
    wrong.chmod(0o600)
    url = server.reader_url.split("?", 1)[0] + f"?passfile={wrong}"
    jobs = [Job(Database("postgres", url), "SELECT 1"), Job(Database("postgres", url), "SELECT 2")]
    with pytest.raises(EvaluationUnavailable) as stopped:
        execute_many(jobs, LIMITS, workers=1)
    assert not isinstance(stopped.value, ConnectionLost)
    message = str(stopped.value)
    assert "cannot log in" in message and "password authentication failed" in message
    assert "not-the-password" not in message


def test_the_default_time_limit_is_the_engines(monkeypatch):
    """60 s on PostgreSQL (gold itself needs more than the other engines' 10 s), unless the
    user sets one; a batch of items takes the longest of their engines' defaults."""
    from sqlbench_lmeval.execution.runner import default_timeout
    from sqlbench_lmeval.scoring.item import Item
    from sqlbench_lmeval.scoring.scorer import TIMEOUT_ENV, Scorer

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
    assert Scorer.from_env([on["duckdb"]]).limits.timeout_s == 10.0
    assert Scorer.from_env([on["duckdb"], on["postgres"]]).limits.timeout_s == 60.0
    monkeypatch.setenv(TIMEOUT_ENV, "3")
    assert Scorer.from_env([on["postgres"]]).limits.timeout_s == 3.0
