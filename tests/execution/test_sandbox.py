"""Hostile SQL is harmless: every attack ends in a refusal, a timeout or a capped result.

All attacks of one engine run in one execute_many batch (the real path: worker processes);
each case then checks its own outcome. The database files are byte-identical afterwards and no
file appears next to them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute_many

LIMITS = Limits(timeout_s=0.5, max_rows=1000, memory_mb=256)
BIG_LITERAL = "SELECT '" + "x" * 10_000_000 + "'"

# (case id, sql, expected status, substring of the message or None)
SQLITE_ATTACKS = [
    ("insert", "INSERT INTO t VALUES (1, 'x', 1.0)", Status.ERROR, "not authorized"),
    ("update", "UPDATE t SET a = 0", Status.ERROR, "not authorized"),
    ("delete", "DELETE FROM t", Status.ERROR, "not authorized"),
    ("drop", "DROP TABLE t", Status.ERROR, "not authorized"),
    ("create", "CREATE TABLE u (x)", Status.ERROR, "not authorized"),
    ("create_temp", "CREATE TEMP TABLE u AS SELECT * FROM t", Status.ERROR, "not authorized"),
    ("create_view", "CREATE TEMP VIEW v AS SELECT 1", Status.ERROR, "not authorized"),
    ("alter", "ALTER TABLE t ADD COLUMN z", Status.ERROR, "not authorized"),
    ("replace", "REPLACE INTO t VALUES (1, 'x', 1.0)", Status.ERROR, "not authorized"),
    ("attach", "ATTACH DATABASE '{attach}' AS x", Status.ERROR, "not authorized"),
    ("vacuum_into", "VACUUM INTO '{attach}'", Status.ERROR, None),
    ("writable_schema", "PRAGMA writable_schema = ON", Status.ERROR, "not authorized"),
    ("query_only_off", "PRAGMA query_only = OFF", Status.ERROR, "not authorized"),
    ("journal_mode", "PRAGMA journal_mode = WAL", Status.ERROR, "not authorized"),
    ("heap_limit_off", "PRAGMA hard_heap_limit = 0", Status.ERROR, "not authorized"),
    ("begin", "BEGIN IMMEDIATE", Status.ERROR, "not authorized"),
    ("load_extension", "SELECT load_extension('/tmp/evil')", Status.ERROR, "load_extension"),
    (
        "recursive_cte",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        Status.TIMEOUT,
        None,
    ),
    (
        "recursive_cte_rows",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
        Status.TOO_MANY_ROWS,
        "more than 1000 rows",
    ),
    ("cartesian_4", "SELECT count(*) FROM t a, t b, t c, t d", Status.TIMEOUT, None),
    ("cartesian_rows", "SELECT * FROM t a, t b", Status.TOO_MANY_ROWS, None),
    ("zeroblob_1gb", "SELECT zeroblob(1000000000)", Status.ERROR, "too big"),
    ("randomblob_1gb", "SELECT randomblob(1000000000)", Status.ERROR, "too big"),
    ("string_10mb", BIG_LITERAL, Status.ERROR, "too large"),
    ("multi_statement", "SELECT 1; DROP TABLE t", Status.ERROR, "several statements"),
    ("multi_select", "SELECT 1; SELECT 2", Status.ERROR, "several statements"),
    ("non_utf8_value", "SELECT CAST(x'fffe' AS TEXT)", Status.ERROR, "UTF-8"),
    ("lone_surrogate", "SELECT '\udcff'", Status.ERROR, None),
    ("nul_byte", "SELECT 1\x00; DROP TABLE t", Status.ERROR, None),
    ("comment_only", "-- SELECT 1", Status.NO_SQL, None),
    ("blank", "  \n ", Status.NO_SQL, None),
    ("semicolons", " ; ; ", Status.NO_SQL, None),
    ("none", None, Status.NO_SQL, None),
    ("control_ok", "SELECT count(*) FROM t;", Status.OK, None),
]

DUCKDB_ATTACKS = [
    ("insert", "INSERT INTO t VALUES (1, 'x', 1.0)", Status.ERROR, "only SELECT"),
    ("update", "UPDATE t SET a = 0", Status.ERROR, "only SELECT"),
    ("delete", "DELETE FROM t", Status.ERROR, "only SELECT"),
    ("drop", "DROP TABLE t", Status.ERROR, "only SELECT"),
    ("create", "CREATE TABLE u AS SELECT 1", Status.ERROR, "only SELECT"),
    ("read_csv", "SELECT * FROM read_csv('/etc/passwd')", Status.ERROR, "disabled"),
    ("read_text", "SELECT * FROM read_text('/etc/passwd')", Status.ERROR, "disabled"),
    ("replacement_scan", "SELECT * FROM '/etc/passwd'", Status.ERROR, None),
    ("copy_to", "COPY t TO '{attach}'", Status.ERROR, "only SELECT"),
    ("copy_select", "COPY (SELECT 1) TO '{attach}'", Status.ERROR, "only SELECT"),
    ("install", "INSTALL httpfs", Status.ERROR, "only SELECT"),
    ("load", "LOAD httpfs", Status.ERROR, "only SELECT"),
    ("set", "SET threads = 8", Status.ERROR, "only SELECT"),
    ("reset", "RESET lock_configuration", Status.ERROR, "only SELECT"),
    ("pragma", "PRAGMA enable_external_access", Status.ERROR, None),
    ("attach", "ATTACH '{attach}' AS x", Status.ERROR, "only SELECT"),
    ("multi_statement", "SELECT 1; DROP TABLE t", Status.ERROR, "several statements"),
    ("cartesian", "SELECT count(*) FROM range(100000) a, range(100000) b", Status.TIMEOUT, None),
    (
        "recursive_cte",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        Status.TIMEOUT,
        None,
    ),
    ("too_many_rows", "SELECT * FROM range(100000)", Status.TOO_MANY_ROWS, None),
    ("repeat_2gb", "SELECT length(repeat('x', 2000000000))", Status.ERROR, "Out of Memory"),
    (
        "string_agg_bomb",
        "SELECT string_agg(repeat('x', 1000), ',') FROM range(1000000)",
        Status.ERROR,
        "Out of Memory",
    ),
    ("glob", "SELECT * FROM glob('/etc/*')", Status.ERROR, "disabled"),
    ("http", "SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')", Status.ERROR, None),
    ("call", "CALL pragma_version()", Status.ERROR, "only SELECT"),
    ("explain_analyze", "EXPLAIN ANALYZE SELECT 1", Status.ERROR, "only SELECT"),
    ("comment_only", "/* nothing */ -- here", Status.NO_SQL, None),
    ("external_access_off", "SELECT current_setting('enable_external_access')", Status.OK, None),
    ("control_ok", "SELECT count(*) FROM t", Status.OK, None),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(engine: str, path: Path, cases, attach_target: Path):
    database = Database(engine, str(path))
    jobs = [
        Job(database, None if sql is None else sql.replace("{attach}", str(attach_target)))
        for _, sql, _, _ in cases
    ]
    before = sorted(os.listdir(path.parent))
    digest = sha256(path)
    outcomes = execute_many(jobs, LIMITS, workers=2)
    return {
        "outcomes": dict(zip([c[0] for c in cases], outcomes, strict=True)),
        "unchanged": sha256(path) == digest,
        "same_files": sorted(os.listdir(path.parent)) == before,
    }


@pytest.fixture(scope="module")
def sqlite_results(tiny_sqlite, tmp_path_factory):
    target = tmp_path_factory.mktemp("attach") / "created.db"
    results = _run("sqlite", tiny_sqlite, SQLITE_ATTACKS, target)
    results["target"] = target
    return results


@pytest.fixture(scope="module")
def duckdb_results(tiny_duckdb, tmp_path_factory):
    target = tmp_path_factory.mktemp("attach") / "created.duckdb"
    results = _run("duckdb", tiny_duckdb, DUCKDB_ATTACKS, target)
    results["target"] = target
    return results


def _check(outcome, status, fragment):
    assert outcome.status is status, outcome
    if fragment is not None:
        assert fragment in (outcome.error or ""), outcome.error


@pytest.mark.parametrize(
    ("case", "sql", "status", "fragment"), SQLITE_ATTACKS, ids=[c[0] for c in SQLITE_ATTACKS]
)
def test_sqlite_attack(sqlite_results, case, sql, status, fragment):
    _check(sqlite_results["outcomes"][case], status, fragment)


@pytest.mark.parametrize(
    ("case", "sql", "status", "fragment"), DUCKDB_ATTACKS, ids=[c[0] for c in DUCKDB_ATTACKS]
)
def test_duckdb_attack(duckdb_results, case, sql, status, fragment):
    _check(duckdb_results["outcomes"][case], status, fragment)


@pytest.mark.parametrize("results", ["sqlite_results", "duckdb_results"])
def test_database_files_untouched(request, results):
    data = request.getfixturevalue(results)
    assert data["unchanged"], "database file changed"
    assert data["same_files"], "a file appeared or vanished next to the database"
    assert not data["target"].exists(), "ATTACH/COPY/VACUUM created a file"


def test_timeouts_stop_within_the_limit(sqlite_results, duckdb_results):
    # The engine itself stops the query (no worker kill): elapsed is the timeout, not the grace.
    for results in (sqlite_results, duckdb_results):
        for outcome in results["outcomes"].values():
            if outcome.status is Status.TIMEOUT:
                assert "stopped after" in outcome.error


def test_sqlite_memory_limit_is_an_error_not_a_crash(tiny_sqlite):
    sql = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 2000000) "
        "SELECT x, randomblob(200) AS r FROM c ORDER BY r"
    )
    limits = Limits(timeout_s=20, memory_mb=32)
    (outcome,) = execute_many([Job(Database("sqlite", str(tiny_sqlite)), sql)], limits, workers=1)
    assert outcome.status is Status.ERROR
    assert "memory" in outcome.error
