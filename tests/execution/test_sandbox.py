"""Hostile SQL is harmless on every engine: each attack ends in a refusal, a timeout or a
capped result, and nothing is written.

One suite, four engines: ``sqlite`` and ``duckdb`` on the tiny database files, ``mysql`` on a
MySQL-protocol server under the read-only account (marked ``mysql``: a private MariaDB, or a
skip with the reason; see ``mysql_attack_server`` in conftest.py), ``postgres`` on a PostgreSQL
server under the read-only role (marked ``postgres``; ``postgres_attack_server``).
``ATTACKS_ON_EVERY_ENGINE`` says what each engine must make of the same query;
``SQLITE_ONLY_ATTACKS``, ``DUCKDB_ONLY_ATTACKS``, ``MYSQL_ONLY_ATTACKS`` and
``POSTGRES_ONLY_ATTACKS`` use features only that engine has.

All attacks of one engine run in one execute_many batch (the real path: worker processes); each
case then checks its own outcome. Afterwards the database is the same (file engines: the file's
bytes and the files beside it; MySQL: the list of databases and CHECKSUM TABLE of every table;
PostgreSQL: the lists of databases and roles, the large objects and a checksum of every table's
rows) and the folder that ATTACH, COPY, VACUUM INTO, INTO OUTFILE/DUMPFILE and COPY TO/lo_export
aim at is still empty. And no answer changes another: answers that try to change their
connection, then queries that would show it, which must end as on a fresh worker
(``STATE_CHANGES``, ``GOLD_AFTER``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, engines, execute_many

LIMITS = Limits(timeout_s=0.5, max_rows=1000, memory_mb=256)
#: Where no attack needs stopping, a time limit no loaded machine reaches: a test of what an
#: answer leaves behind must not fail because a gold query took 0.6 s beside other work.
UNHURRIED = Limits(timeout_s=30, max_rows=1000, memory_mb=256)
BIG_LITERAL = "SELECT '" + "x" * 10_000_000 + "'"
ENGINES = ("sqlite", "duckdb", "mysql", "postgres")
ERROR, TIMEOUT, NO_SQL, OK = Status.ERROR, Status.TIMEOUT, Status.NO_SQL, Status.OK
TOO_MANY_ROWS = Status.TOO_MANY_ROWS
STOPPED = "stopped after"  # the engine itself stopped the query at the deadline
CAPPED = "more than 1000 rows"
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
# Placeholders in the SQL, filled per run (run_attacks): {file} a path in a fresh, empty folder;
# {secret} the database beside the attacked one that the MySQL account may not read.

# What one engine must make of a query: a status (or the statuses allowed) and a substring of
# the message, or None.
Expect = tuple[Status | tuple[Status, ...], str | None]


@dataclass(frozen=True)
class Attack:
    """One query run on every engine, with what each engine must make of it."""

    case: str
    sql: str | None
    sqlite: Expect
    duckdb: Expect
    mysql: Expect
    postgres: Expect


def on_every_engine(status: Status, fragment: str | None = None) -> dict[str, Expect]:
    return dict.fromkeys(ENGINES, (status, fragment))


# A write: SQLite's authorizer refuses it; DuckDB's parser and the first-keyword filters of
# MySQL and PostgreSQL admit SELECT only.
REFUSED = {
    "sqlite": (ERROR, "not authorized"),
    "duckdb": (ERROR, "only SELECT"),
    "mysql": (ERROR, "only SELECT"),
    "postgres": (ERROR, "only SELECT"),
}
# Two statements in one: SQLite and DuckDB split the text and refuse; the MySQL client never
# turns multi-statements on, so the server parses one statement and finds a syntax error;
# PostgreSQL's extended query protocol takes one statement per message.
SEVERAL = {
    "sqlite": (ERROR, "several statements"),
    "duckdb": (ERROR, "several statements"),
    "mysql": (ERROR, "syntax"),
    "postgres": (ERROR, "multiple commands"),
}

ATTACKS_ON_EVERY_ENGINE = [
    Attack("insert", "INSERT INTO t VALUES (1, 'x', 1.0)", **REFUSED),
    Attack("update", "UPDATE t SET a = 0", **REFUSED),
    Attack("delete", "DELETE FROM t", **REFUSED),
    Attack("drop", "DROP TABLE t", **REFUSED),
    Attack("create", "CREATE TABLE u (x INT)", **REFUSED),
    Attack("create_as_select", "CREATE TABLE u AS SELECT 1", **REFUSED),
    Attack("create_temp", "CREATE TEMPORARY TABLE u AS SELECT * FROM t", **REFUSED),
    Attack("create_view", "CREATE TEMPORARY VIEW v AS SELECT 1", **REFUSED),
    Attack("alter", "ALTER TABLE t ADD COLUMN z INT", **REFUSED),
    # DuckDB has no REPLACE statement: its parser refuses it before any filter.
    Attack(
        "replace", "REPLACE INTO t VALUES (1, 'x', 1.0)", **{**REFUSED, "duckdb": (ERROR, None)}
    ),
    Attack("attach", "ATTACH '{file}' AS x", **REFUSED),
    Attack("attach_database", "ATTACH DATABASE '{file}' AS x", **REFUSED),
    # A write behind WITH: past the servers' keyword filters, MySQL's parser refuses it, and
    # PostgreSQL's DECLARE ... CURSOR FOR admits no DELETE.
    Attack(
        "with_delete",
        "WITH x AS (SELECT 1) DELETE FROM t",
        **{**REFUSED, "mysql": (ERROR, None), "postgres": (ERROR, "syntax")},
    ),
    Attack("multi_statement", "SELECT 1; DROP TABLE t", **SEVERAL),
    Attack("multi_select", "SELECT 1; SELECT 2", **SEVERAL),
    # An endless recursion: the deadline stops it, except on MySQL, which cuts it at 1,000
    # iterations (MariaDB's max_recursive_iterations: 1 + 1,000 rows; MySQL's
    # cte_max_recursion_depth: an error).
    Attack(
        "recursive_cte",
        ENDLESS + "SELECT count(*) FROM c",
        sqlite=(TIMEOUT, STOPPED),
        duckdb=(TIMEOUT, STOPPED),
        mysql=((OK, ERROR), None),
        postgres=(TIMEOUT, STOPPED),
    ),
    # Its rows: SQLite, MySQL and PostgreSQL (a cursor) stream them and hit the row cap; DuckDB
    # computes the whole recursion before the first row and meets the deadline.
    Attack(
        "recursive_cte_rows",
        ENDLESS + "SELECT x FROM c",
        sqlite=(TOO_MANY_ROWS, CAPPED),
        duckdb=(TIMEOUT, STOPPED),
        mysql=(TOO_MANY_ROWS, CAPPED),
        postgres=(TOO_MANY_ROWS, CAPPED),
    ),
    # 100^5 = 10^10 row combinations: far past 0.5 s on any engine.
    Attack(
        "cartesian",
        "SELECT count(*) FROM t a, t b, t c, t d, t e",
        **on_every_engine(TIMEOUT, STOPPED),
    ),
    Attack("cartesian_rows", "SELECT * FROM t a, t b", **on_every_engine(TOO_MANY_ROWS, CAPPED)),
    Attack("comment_only", "-- SELECT 1", **on_every_engine(NO_SQL)),
    Attack("block_comment_only", "/* nothing */ -- here", **on_every_engine(NO_SQL)),
    Attack("blank", "  \n ", **on_every_engine(NO_SQL)),
    Attack("semicolons", " ; ; ", **on_every_engine(NO_SQL)),
    Attack("none", None, **on_every_engine(NO_SQL)),
    Attack("control_ok", "SELECT count(*) FROM t;", **on_every_engine(OK)),
    Attack("control_ok_bare", "SELECT count(*) FROM t", **on_every_engine(OK)),
]

# (case id, sql, expected status, substring of the message or None)
SQLITE_ONLY_ATTACKS = [
    ("vacuum_into", "VACUUM INTO '{file}'", ERROR, None),
    ("writable_schema", "PRAGMA writable_schema = ON", ERROR, "not authorized"),
    ("query_only_off", "PRAGMA query_only = OFF", ERROR, "not authorized"),
    ("journal_mode", "PRAGMA journal_mode = WAL", ERROR, "not authorized"),
    ("heap_limit_off", "PRAGMA hard_heap_limit = 0", ERROR, "not authorized"),
    ("begin", "BEGIN IMMEDIATE", ERROR, "not authorized"),
    ("load_extension", "SELECT load_extension('/tmp/evil')", ERROR, "load_extension"),
    ("zeroblob_1gb", "SELECT zeroblob(1000000000)", ERROR, "too big"),
    ("randomblob_1gb", "SELECT randomblob(1000000000)", ERROR, "too big"),
    ("string_10mb", BIG_LITERAL, ERROR, "too large"),
    ("non_utf8_value", "SELECT CAST(x'fffe' AS TEXT)", ERROR, "UTF-8"),
    ("lone_surrogate", "SELECT '\udcff'", ERROR, None),
    ("nul_byte", "SELECT 1\x00; DROP TABLE t", ERROR, None),
]

NOT_ALLOWED = "is not allowed"
DUCKDB_ONLY_ATTACKS = [
    # Table functions outside the allow-list are refused before they run (external access
    # is off behind that: replacement_scan, external_access_off).
    ("read_csv", "SELECT * FROM read_csv('/etc/passwd')", ERROR, NOT_ALLOWED),
    ("read_text", "SELECT * FROM read_text('/etc/passwd')", ERROR, NOT_ALLOWED),
    ("replacement_scan", "SELECT * FROM '/etc/passwd'", ERROR, None),
    ("copy_to", "COPY t TO '{file}'", ERROR, "only SELECT"),
    ("copy_select", "COPY (SELECT 1) TO '{file}'", ERROR, "only SELECT"),
    ("install", "INSTALL httpfs", ERROR, "only SELECT"),
    ("load", "LOAD httpfs", ERROR, "only SELECT"),
    ("set", "SET threads = 8", ERROR, "only SELECT"),
    ("reset", "RESET lock_configuration", ERROR, "only SELECT"),
    ("pragma", "PRAGMA enable_external_access", ERROR, None),
    ("cartesian_range", "SELECT count(*) FROM range(100000) a, range(100000) b", TIMEOUT, None),
    ("too_many_rows_range", "SELECT * FROM range(100000)", TOO_MANY_ROWS, None),
    ("repeat_2gb", "SELECT length(repeat('x', 2000000000))", ERROR, "Out of Memory"),
    # 1 GB built a row at a time: the memory limit or the deadline stops it, whichever the
    # machine's load lets come first (repeat_2gb above holds the memory limit to its word).
    (
        "string_agg_bomb",
        "SELECT string_agg(repeat('x', 1000), ',') FROM range(1000000)",
        (ERROR, TIMEOUT),
        None,
    ),
    ("glob", "SELECT * FROM glob('/etc/*')", ERROR, NOT_ALLOWED),
    ("http", "SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')", ERROR, NOT_ALLOWED),
    # What lock_configuration does not stop: table functions that change the connection for
    # every later query (tests/tpcds/test_invariance.py runs them among gold answers).
    (
        "enable_logging",
        "SELECT * FROM enable_logging(storage = 'file', storage_path = '{file}')",
        ERROR,
        NOT_ALLOWED,
    ),
    ("disable_profiling", "SELECT * FROM disable_profiling()", ERROR, NOT_ALLOWED),
    (
        "enable_profiling",
        'SELECT 1 FROM t, LATERAL (SELECT * FROM main."Enable_Profiling"())',
        ERROR,
        NOT_ALLOWED,
    ),
    ("checkpoint", "SELECT * FROM checkpoint()", ERROR, NOT_ALLOWED),
    (
        "query_string",
        "SELECT * FROM query('SELECT * FROM disable_profiling()')",
        ERROR,
        NOT_ALLOWED,
    ),
    ("setseed", "WITH s AS (SELECT setseed(0.5)) SELECT * FROM s", ERROR, NOT_ALLOWED),
    ("machine_state", "SELECT * FROM duckdb_memory()", ERROR, NOT_ALLOWED),
    ("allowed_table_function", "SELECT count(*) FROM range(3), generate_series(1, 2)", OK, None),
    ("call", "CALL pragma_version()", ERROR, "only SELECT"),
    ("explain_analyze", "EXPLAIN ANALYZE SELECT 1", ERROR, "only SELECT"),
    ("external_access_off", "SELECT current_setting('enable_external_access')", OK, None),
    ("profiling_on", "SELECT current_setting('enable_profiling')", OK, None),
]

MYSQL_REFUSED = "only SELECT"  # the first-keyword filter
MYSQL_ONLY_ATTACKS = [
    ("truncate", "TRUNCATE TABLE t", ERROR, MYSQL_REFUSED),
    ("set_read_write", "SET SESSION TRANSACTION READ WRITE", ERROR, MYSQL_REFUSED),
    ("set_no_limit", "SET SESSION max_statement_time = 0", ERROR, MYSQL_REFUSED),
    (
        "set_statement",
        "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(100)",
        ERROR,
        MYSQL_REFUSED,
    ),
    ("do_sleep", "DO SLEEP(100)", ERROR, MYSQL_REFUSED),
    ("kill", "KILL CONNECTION_ID()", ERROR, MYSQL_REFUSED),
    ("lock_tables", "LOCK TABLES t WRITE", ERROR, MYSQL_REFUSED),
    ("handler", "HANDLER t OPEN", ERROR, MYSQL_REFUSED),
    ("grant", "GRANT ALL ON *.* TO CURRENT_USER", ERROR, MYSQL_REFUSED),
    ("load_local", "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", ERROR, MYSQL_REFUSED),
    ("shutdown", "SHUTDOWN", ERROR, MYSQL_REFUSED),
    ("executable_comment", "/*! DROP TABLE t */", ERROR, MYSQL_REFUSED),
    ("executable_comment_m", "/*M!100000 SET sql_select_limit = DEFAULT */", ERROR, MYSQL_REFUSED),
    # Past the keyword filter: the server's walls (grants, read-only transaction, no FILE).
    ("into_outfile", "SELECT * FROM t INTO OUTFILE '{file}'", ERROR, "denied"),
    ("into_dumpfile", "SELECT 1 INTO DUMPFILE '{file}'", ERROR, "denied"),
    ("other_database", "SELECT * FROM {secret}.s", ERROR, "denied"),
    ("grant_table", "SELECT * FROM mysql.user", ERROR, "denied"),
    # Row locks are refused in a READ ONLY transaction.
    ("for_update", "SELECT a FROM t WHERE a = 1 FOR UPDATE", ERROR, "READ ONLY"),
    # The deadline: server-side limit plus client-side KILL QUERY; a SLEEP or BENCHMARK cut
    # short returns a value, yet must still count as a timeout.
    ("sleep", "SELECT SLEEP(100)", TIMEOUT, STOPPED),
    ("benchmark", "SELECT BENCHMARK(100000000000, md5('x'))", TIMEOUT, STOPPED),
    ("sleep_hint", "SELECT /*+ MAX_EXECUTION_TIME(100000) */ SLEEP(100)", TIMEOUT, STOPPED),
    ("sleep_parenthesized", "(SELECT SLEEP(100))", TIMEOUT, STOPPED),
    ("sleep_per_row", "SELECT SLEEP(1) FROM t", TIMEOUT, STOPPED),
    ("read_only_mode", "SELECT @@session.tx_read_only", OK, None),
]

POSTGRES_REFUSED = "only SELECT"  # the first-keyword filter
DENIED = "permission denied"
READ_ONLY = "read-only transaction"
POSTGRES_ONLY_ATTACKS = [
    # Not queries: never sent.
    ("copy_program", "COPY t TO PROGRAM 'touch {file}'", ERROR, POSTGRES_REFUSED),
    ("copy_from_program", "COPY t FROM PROGRAM 'id'", ERROR, POSTGRES_REFUSED),
    ("copy_to_file", "COPY t TO '{file}'", ERROR, POSTGRES_REFUSED),
    ("create_extension", "CREATE EXTENSION IF NOT EXISTS dblink", ERROR, POSTGRES_REFUSED),
    ("set_timeout", "SET statement_timeout = 0", ERROR, POSTGRES_REFUSED),
    ("begin_read_write", "BEGIN READ WRITE", ERROR, POSTGRES_REFUSED),
    ("do_block", "DO $$BEGIN PERFORM pg_sleep(100); END$$", ERROR, POSTGRES_REFUSED),
    ("truncate", "TRUNCATE t", ERROR, POSTGRES_REFUSED),
    ("grant", "GRANT ALL ON t TO PUBLIC", ERROR, POSTGRES_REFUSED),
    ("explain_analyze", "EXPLAIN ANALYZE SELECT pg_sleep(100)", ERROR, POSTGRES_REFUSED),
    # Queries that reach files, programs, large objects or other sessions: the role may not.
    ("pg_read_file", "SELECT pg_read_file('/etc/passwd')", ERROR, DENIED),
    ("pg_read_binary_file", "SELECT pg_read_binary_file('/etc/passwd')", ERROR, DENIED),
    ("pg_ls_dir", "SELECT pg_ls_dir('.')", ERROR, DENIED),
    ("pg_stat_file", "SELECT pg_stat_file('/etc/passwd')", ERROR, DENIED),
    ("lo_import", "SELECT lo_import('/etc/passwd')", ERROR, DENIED),
    ("lo_export", "SELECT lo_export(0, '{file}')", ERROR, DENIED),
    ("terminate_self", "SELECT pg_terminate_backend(pg_backend_pid())", ERROR, DENIED),
    ("cancel_self", "SELECT pg_cancel_backend(pg_backend_pid())", ERROR, DENIED),
    ("other_schema", "SELECT * FROM {secret}.s", ERROR, DENIED),
    ("password_hashes", "SELECT rolpassword FROM pg_authid", ERROR, DENIED),
    ("dblink", "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS x(a int)", ERROR, None),
    # A data-modifying CTE inside a query: a cursor may not hold one.
    (
        "with_delete_returning",
        "WITH d AS (DELETE FROM t RETURNING a) SELECT count(*) FROM d",
        ERROR,
        "data-modifying",
    ),
    # Large objects are writes a read-only transaction lets through: the role may not.
    ("lo_from_bytea", "SELECT lo_from_bytea(0, 'x')", ERROR, DENIED),
    ("lo_create", "SELECT lo_create(0)", ERROR, DENIED),
    # Writes a query can make: the read-only transaction refuses them.
    ("for_update", "SELECT a FROM t WHERE a = 1 FOR UPDATE", ERROR, READ_ONLY),
    ("query_to_xml_delete", "SELECT query_to_xml('DELETE FROM t', true, false, '')", ERROR, None),
    (
        "read_write_again",
        "SELECT set_config('transaction_read_only', 'off', false)",
        ERROR,
        "read-write",
    ),
    # The deadline: the client's cancel request (statement_timeout behind it).
    ("pg_sleep", "SELECT pg_sleep(100)", TIMEOUT, STOPPED),
    ("pg_sleep_per_row", "SELECT pg_sleep(1) FROM t", TIMEOUT, STOPPED),
    (
        "timeout_off_then_sleep",
        "SELECT set_config('statement_timeout', '0', false), pg_sleep(100)",
        TIMEOUT,
        STOPPED,
    ),
    ("sleep_in_cte", "WITH s AS (SELECT pg_sleep(100)) SELECT * FROM s", TIMEOUT, STOPPED),
    ("sleep_parenthesized", "(SELECT pg_sleep(100))", TIMEOUT, STOPPED),
    # generate_series bombs: counted (deadline), streamed (row cap), materialised (deadline).
    ("series_count", "SELECT count(*) FROM generate_series(1, 1000000000000)", TIMEOUT, STOPPED),
    ("series_rows", "SELECT generate_series(1, 1000000000000)", TOO_MANY_ROWS, CAPPED),
    (
        "series_sorted",
        "SELECT x FROM generate_series(1, 1000000000000) AS x ORDER BY x DESC",
        TIMEOUT,
        STOPPED,
    ),
    # 100 rows of 10 MB: cut at the byte budget, or by the deadline while the rows are built
    # (test_sandbox_postgres.py checks the budget with time to spare).
    ("string_rows", "SELECT repeat('x', 10000000) FROM t", (TOO_MANY_ROWS, TIMEOUT), None),
    # libpq sends text up to a NUL: the rest would be dropped without a word.
    ("nul_byte", "SELECT 1\x00; DROP TABLE t", ERROR, "NUL"),
    ("lone_surrogate", "SELECT '\udcff'", ERROR, None),
    # What the session is: read-only.
    ("transaction_read_only", "SELECT current_setting('transaction_read_only')", OK, None),
]

ENGINE_ONLY_ATTACKS = {
    "sqlite": SQLITE_ONLY_ATTACKS,
    "duckdb": DUCKDB_ONLY_ATTACKS,
    "mysql": MYSQL_ONLY_ATTACKS,
    "postgres": POSTGRES_ONLY_ATTACKS,
}

# Exact results of the OK cases, from the table's definition (ROWS: 100 rows) and the
# engines' settings.
EXPECTED_ROWS = {
    "control_ok": ((100,),),
    "control_ok_bare": ((100,),),
    "recursive_cte": ((1001,),),  # MySQL only: 1 + 1,000 iterations
    "read_only_mode": ((1,),),  # SET SESSION TRANSACTION READ ONLY is in force
    "transaction_read_only": (("on",),),  # PostgreSQL: BEGIN TRANSACTION READ ONLY
    "external_access_off": ((False,),),  # DuckDB opened with enable_external_access = false
    "allowed_table_function": ((6,),),
    "profiling_on": (("no_output",),),  # after every attack above: none turned it off
}


def attacks_on(engine: str) -> list[tuple[str, str | None, Status | tuple, str | None]]:
    """Every attack run on ``engine``: (case, sql, expected status, message fragment)."""
    shared = [(a.case, a.sql, *getattr(a, engine)) for a in ATTACKS_ON_EVERY_ENGINE]
    return shared + ENGINE_ONLY_ATTACKS[engine]


def engine_param(engine: str, *values, id: str):
    """A pytest param of ``engine``'s tests: the server ones are marked with the engine's name
    (``mysql``, ``postgres``)."""
    marks = [getattr(pytest.mark, engine)] if engines.get(engine).server else []
    return pytest.param(engine, *values, id=id, marks=marks)


ENGINE_PARAMS = [engine_param(engine, id=engine) for engine in ENGINES]
ATTACK_PARAMS = [
    engine_param(engine, case, status, fragment, id=f"{engine}-{case}")
    for engine in ENGINES
    for case, _, status, fragment in attacks_on(engine)
]


@dataclass
class AttackRun:
    """One engine's batch: each case's outcome, the database state around the batch, and the
    folder ``{file}`` pointed into."""

    outcomes: dict
    before: object
    after: object
    target: Path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_state(path: Path) -> tuple[str, list[str]]:
    """A database file's bytes (as a digest) and the files beside it."""
    return sha256(path), sorted(os.listdir(path.parent))


def run_attacks(
    engine: str, database: Database, state: Callable[[], object], target: Path, **placeholders
) -> AttackRun:
    """Every attack on ``engine`` in one batch on ``database``, ``state()`` taken around it."""
    values = {"file": str(target / "created"), **placeholders}
    cases = attacks_on(engine)
    jobs = []
    for _, sql, _, _ in cases:
        for name, value in values.items():
            sql = None if sql is None else sql.replace("{" + name + "}", value)
        jobs.append(Job(database, sql))
    before = state()
    outcomes = execute_many(jobs, LIMITS, workers=2)
    return AttackRun(
        dict(zip([c[0] for c in cases], outcomes, strict=True)), before, state(), target
    )


@pytest.fixture(scope="module")
def sqlite_attack_run(tiny_sqlite, tmp_path_factory) -> AttackRun:
    database = Database("sqlite", str(tiny_sqlite))
    target = tmp_path_factory.mktemp("sqlite-target")
    return run_attacks("sqlite", database, lambda: file_state(tiny_sqlite), target)


@pytest.fixture(scope="module")
def duckdb_attack_run(tiny_duckdb, tmp_path_factory) -> AttackRun:
    database = Database("duckdb", str(tiny_duckdb))
    target = tmp_path_factory.mktemp("duckdb-target")
    return run_attacks("duckdb", database, lambda: file_state(tiny_duckdb), target)


@pytest.fixture(scope="module")
def mysql_attack_run(mysql_attack_server, tmp_path_factory) -> AttackRun:
    server = mysql_attack_server
    target = tmp_path_factory.mktemp("mysql-target")
    return run_attacks("mysql", server.database(), server.state, target, secret=server.secret)


@pytest.fixture(scope="module")
def postgres_attack_run(postgres_attack_server, tmp_path_factory) -> AttackRun:
    server = postgres_attack_server
    target = tmp_path_factory.mktemp("postgres-target")
    return run_attacks("postgres", server.database(), server.state, target, secret=server.secret)


def attack_run(request, engine: str) -> AttackRun:
    return request.getfixturevalue(f"{engine}_attack_run")


@pytest.mark.parametrize(("engine", "case", "status", "fragment"), ATTACK_PARAMS)
def test_attack(request, engine, case, status, fragment):
    outcome = attack_run(request, engine).outcomes[case]
    assert outcome.status in (status if isinstance(status, tuple) else (status,)), outcome
    if fragment is not None:
        assert fragment in (outcome.error or ""), outcome.error
    if case in EXPECTED_ROWS and outcome.ok:
        assert outcome.rows == EXPECTED_ROWS[case]


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_database_unchanged_and_no_file_written(request, engine):
    run = attack_run(request, engine)
    assert run.after == run.before, "the database changed, or a file appeared beside it"
    assert os.listdir(run.target) == [], "ATTACH/COPY/VACUUM/OUTFILE created a file"


@pytest.mark.mysql
def test_mysql_state_covers_every_table(mysql_attack_run):
    """The before/after comparison means something: CHECKSUM TABLE answered for table t."""
    assert mysql_attack_run.before["attacked"].keys() == {"t"}
    assert mysql_attack_run.before["attacked"]["t"] is not None


@pytest.mark.postgres
def test_postgres_state_covers_every_table(postgres_attack_run, postgres_attack_server):
    """The before/after comparison means something: both tables were checksummed (the admin
    reads the secret schema too), with their rows."""
    tables = postgres_attack_run.before["tables"]
    assert tables.keys() == {"public.t", f"{postgres_attack_server.secret}.s"}
    assert tables["public.t"].startswith("100:")


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_timeouts_stop_within_the_limit(request, engine):
    # The engine itself stops the query (DuckDB's interrupt, SQLite's progress handler, MySQL's
    # KILL QUERY or statement limit), never the watchdog that kills a worker at timeout + 2 s:
    # every timeout says "stopped after", none says "worker process killed".
    outcomes = attack_run(request, engine).outcomes.values()
    assert any(outcome.status is TIMEOUT for outcome in outcomes)
    for outcome in outcomes:
        if outcome.status is TIMEOUT:
            assert STOPPED in outcome.error, outcome


def test_sqlite_memory_limit_is_an_error_not_a_crash(tiny_sqlite):
    sql = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000000) "
        "SELECT x, randomblob(200) AS r FROM c ORDER BY r"
    )
    limits = Limits(timeout_s=20, memory_mb=32)
    (outcome,) = execute_many([Job(Database("sqlite", str(tiny_sqlite)), sql)], limits, workers=1)
    assert outcome.status is Status.ERROR
    assert "memory" in outcome.error


# -- No answer changes another (docs/engines.md#no-answer-changes-another) --------------------
# Held out like a benchmark's answers: answers that try to change their connection, then "gold"
# queries whose results would show it (each reads what one of them changes). On one worker the
# gold queries run right after them on the same connection; they must end exactly as they do on
# a fresh worker (status, columns, rows, message and counted work).
STATE_CHANGES = {
    "sqlite": [
        "PRAGMA reverse_unordered_selects = 1",
        "SELECT * FROM pragma_reverse_unordered_selects(1)",
        "SELECT * FROM pragma_automatic_index(0)",
        "PRAGMA case_sensitive_like = 1",
        "SELECT * FROM pragma_cache_size(1)",
    ],
    "duckdb": [
        "SELECT * FROM enable_logging(storage = 'file', storage_path = '{file}')",
        "SELECT * FROM disable_profiling()",
        "SELECT * FROM enable_profiling()",
        "SELECT setseed(0.5)",
    ],
    "mysql": [
        "SELECT @r := 100",
        "SELECT a INTO @x FROM t WHERE a = 7",
        "SELECT GET_LOCK('sqlbench_state', 0)",
        "SELECT LAST_INSERT_ID(42)",  # last: the answers above end their sessions
    ],
    "postgres": [
        "SELECT set_config('search_path', 'pg_catalog', false)",
        "SELECT set_config('TimeZone', 'Asia/Tokyo', false)",
        "SELECT set_config('extra_float_digits', '-10', false)",
        "SELECT set_config('DateStyle', 'SQL, DMY', false)",
        "SELECT pg_advisory_lock(7)",
    ],
}
GOLD_AFTER = {
    "sqlite": [
        "SELECT a FROM t",
        "SELECT count(*) FROM t WHERE b LIKE 'NAME1%'",
        "SELECT t1.a FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 5",
    ],
    "duckdb": [
        "SELECT count(*), sum(a) FROM t",
        "SELECT b FROM t WHERE a < 5 ORDER BY a",
        "SELECT t1.a FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 5 ORDER BY 1",
    ],
    "mysql": [
        "SELECT LAST_INSERT_ID()",
        # Whether this session holds the lock (a closed session's may outlive it briefly).
        "SELECT IS_USED_LOCK('sqlbench_state') <=> CONNECTION_ID()",
        "SELECT count(*) FROM t",
        "SELECT @r, @x",
    ],
    "postgres": [
        "SELECT count(*) FROM t",
        "SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00'::text",
        "SELECT 1.0::float8 / 3",
        "SELECT DATE '2024-01-31'::text",
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
    ],
}


def engine_database(request, engine: str) -> Database:
    if engine in ("sqlite", "duckdb"):
        return Database(engine, str(request.getfixturevalue(f"tiny_{engine}")))
    return request.getfixturevalue(f"{engine}_attack_server").database()


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_state_changing_answers_change_no_later_answer(request, engine, tmp_path):
    database = engine_database(request, engine)
    changes = [sql.replace("{file}", str(tmp_path / "log")) for sql in STATE_CHANGES[engine]]
    gold = [Job(database, sql) for sql in GOLD_AFTER[engine]]
    alone = execute_many(gold, UNHURRIED, workers=1)
    after = execute_many([Job(database, sql) for sql in changes] + gold, UNHURRIED, workers=1)

    def ended(outcome):
        return outcome.status, outcome.columns, outcome.rows, outcome.error, outcome.work

    assert all(outcome.ok for outcome in alone), alone
    assert [ended(o) for o in after[len(changes) :]] == [ended(o) for o in alone]
    assert not (tmp_path / "log").exists()


# An answer drawing random numbers, and another that draws some first on the same connection.
RANDOM_ANSWERS = {
    "sqlite": (
        "SELECT a, random(), hex(randomblob(4)) FROM t ORDER BY random() LIMIT 5",
        "SELECT random(), randomblob(8) FROM t",
    ),
    "duckdb": ("SELECT a, random(), uuid() FROM t ORDER BY random() LIMIT 5", "SELECT random()"),
    "mysql": ("SELECT a, RAND() FROM t ORDER BY RAND() LIMIT 5", "SELECT RAND() FROM t"),
    "postgres": ("SELECT a, random() FROM t ORDER BY random() LIMIT 5", "SELECT random()"),
}


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_random_answers_repeat_on_any_worker_after_any_answer(request, engine):
    """Every statement's random generator starts from one seed
    (docs/engines.md#one-seed-for-every-statement): the same answer gets the same rows alone on
    one worker, on two workers and after another random answer on the same connection."""
    database = engine_database(request, engine)
    answer, other = RANDOM_ANSWERS[engine]
    (alone,) = execute_many([Job(database, answer)], UNHURRIED, workers=1)
    assert alone.ok, alone
    assert len({row[1] for row in alone.rows}) == len(alone.rows) == 5  # random, row by row
    mixed = [Job(database, sql) for sql in (other, answer, other, other, answer, answer)]
    for workers in (1, 2):
        outcomes = execute_many(mixed, UNHURRIED, workers=workers)
        assert all(outcome.ok for outcome in outcomes), outcomes
        answered = [o.rows for o, job in zip(outcomes, mixed, strict=True) if job.sql == answer]
        assert answered == [alone.rows] * 3
