"""Deterministic work (``Outcome.work``) on the real engines: the same count run after run, in
one or several worker processes, on fresh and reused connections, through a cold and a warm gold
cache; more for more work; and the conditions that make the counts exact."""

from __future__ import annotations

import sqlite3
import urllib.parse
from dataclasses import replace

import pytest

from sqlbench_lmeval.execution import (
    Database,
    GoldCache,
    Job,
    Limits,
    Status,
    engines,
    execute_many,
)
from sqlbench_lmeval.execution import duckdb as duckdb_engine
from sqlbench_lmeval.execution import sqlite as sqlite_engine
from sqlbench_lmeval.execution.sqlite import StepCounter

SCAN = "SELECT a FROM t"
SORTED_SCAN = "SELECT a FROM t ORDER BY b DESC"
FEW = "SELECT a FROM t WHERE a < 10"
PAIRS = "SELECT count(*) FROM t AS x, t AS y WHERE x.c < y.c"  # 100 x 100 row pairs
GROUPED = "SELECT a % 7, count(*) FROM t GROUP BY 1 ORDER BY 1"
QUERIES = (SCAN, SORTED_SCAN, FEW, PAIRS, GROUPED)


def works(database: Database, workers: int, runs: int = 3) -> list[list[int | None]]:
    """Each query's work in each of ``runs`` batches (fresh worker processes per batch; each
    query appears twice per batch, so the second runs on a reused connection)."""
    jobs = [Job(database, sql) for sql in QUERIES * 2]
    found = []
    for _ in range(runs):
        outcomes = execute_many(jobs, workers=workers)
        assert all(o.status is Status.OK for o in outcomes), [o.error for o in outcomes]
        found.append([o.work for o in outcomes])
    return found


def assert_reproducible(database: Database) -> dict[str, int]:
    """Each query's work, asserted identical in every run, process and connection."""
    counts = works(database, workers=1) + works(database, workers=2, runs=1)
    assert all(count == counts[0] for count in counts)  # across runs, processes, connections
    first = counts[0][: len(QUERIES)]
    assert first == counts[0][len(QUERIES) :]
    assert all(isinstance(w, int) and w > 0 for w in first)
    return dict(zip(QUERIES, first, strict=True))


class TestSQLite:
    def test_identical_across_runs_workers_and_connections(self, tiny_sqlite):
        work = assert_reproducible(Database("sqlite", str(tiny_sqlite)))
        assert max(work[FEW], work[SCAN]) * 10 < work[PAIRS]  # 100 rows against 10,000 pairs

    def test_more_work_more_steps(self, tiny_sqlite):
        limits = Limits()
        conn = sqlite_engine.connect(str(tiny_sqlite), limits)
        scan = sqlite_engine.run(conn, SCAN, limits).work
        pairs = sqlite_engine.run(conn, PAIRS, limits).work
        assert scan >= 100 and pairs >= 100 * scan  # a step per row at least; 100x the rows

    @pytest.mark.parametrize("sql", ["SELECT 1", "SELECT 1, 'x' || 'y'", "SELECT abs(-2) + 3"])
    def test_a_query_without_loops_counts_each_of_its_instructions_once(self, tiny_sqlite, sql):
        # A program without loops runs each of its instructions once (OP_Init jumps to the
        # last, which jumps back to the first after it): its steps are its EXPLAIN listing,
        # a few, far under the old unit of 64, where they counted 0.
        limits = Limits()
        conn = sqlite_engine.connect(str(tiny_sqlite), limits)
        program = plain_reader(tiny_sqlite, 0).execute(f"EXPLAIN {sql}").fetchall()
        assert sqlite_engine.run(conn, sql, limits).work == len(program) > 0

    @pytest.mark.parametrize("sql", [FEW, SCAN, GROUPED, PAIRS])
    def test_exact_up_to_the_budget_then_within_a_unit(self, tiny_sqlite, sql):
        # The steps counted by an independent handler called on every step.
        exact = counted(settled_reader(tiny_sqlite), sql, 1)
        (outcome,) = execute_many([Job(Database("sqlite", str(tiny_sqlite)), sql)], workers=0)
        if exact <= sqlite_engine.EXACT_STEPS:
            assert outcome.work == exact
        else:  # 100 x 100 pairs: counted again in units, never more than a unit short
            assert sql == PAIRS
            assert outcome.work % sqlite_engine.STEP_UNIT == 0
            assert outcome.work <= exact < outcome.work + sqlite_engine.STEP_UNIT

    def test_the_connection_counts_in_units_again_after_a_query(self, tiny_sqlite):
        # run() lends the connection a handler of its own for the exact count, then gives
        # back the counter with the deadline (whatever a query did in between).
        limits = Limits()
        conn = sqlite_engine.connect(str(tiny_sqlite), limits)
        for sql in (FEW, "SELECT nope FROM t", PAIRS):
            sqlite_engine.run(conn, sql, limits)
            assert conn.counter.calls == 0
            conn.execute(PAIRS).fetchall()
            assert conn.counter.calls > 0

    def test_failed_and_cut_off_queries_carry_no_work(self, tiny_sqlite):
        database = Database("sqlite", str(tiny_sqlite))
        jobs = [Job(database, "SELECT nope FROM t"), Job(database, SCAN)]
        error, too_many = execute_many(jobs, Limits(max_rows=10), workers=0)
        assert error.status is Status.ERROR and error.work is None
        assert too_many.status is Status.TOO_MANY_ROWS and too_many.work is None

    def test_the_deadline_still_stops_a_query(self, tiny_sqlite):
        endless = (
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
        )
        (outcome,) = execute_many(
            [Job(Database("sqlite", str(tiny_sqlite)), endless)], Limits(timeout_s=0.3), workers=0
        )
        assert outcome.status is Status.TIMEOUT and outcome.work is None

    def test_a_run_that_counts_no_work_runs_once(self, tiny_sqlite):
        # A function in the query tells how often its rows were visited: 100 x 100 pairs take
        # more than EXACT_STEPS steps, so a counted run is stopped there and runs again.
        calls = []

        def tick(_value) -> int:
            calls.append(1)
            return 1

        limits = Limits()
        conn = sqlite_engine.connect(
            str(tiny_sqlite), limits, setup=lambda c: c.create_function("tick", 1, tick)
        )
        sql = "SELECT count(*) FROM t AS x, t AS y WHERE tick(x.a + y.a)"
        counted_run = sqlite_engine.run(conn, sql, limits)
        visits_counted, calls[:] = len(calls), []
        uncounted = sqlite_engine.run(conn, sql, replace(limits, count_work=False))
        assert uncounted.rows == counted_run.rows == ((10_000,),)
        assert len(calls) == 10_000 < visits_counted
        assert counted_run.work > sqlite_engine.EXACT_STEPS and uncounted.work is None

    def test_a_run_that_counts_no_work_still_stops_at_the_deadline(self, tiny_sqlite):
        endless = (
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
        )
        limits = Limits(timeout_s=0.3, count_work=False)
        (outcome,) = execute_many(
            [Job(Database("sqlite", str(tiny_sqlite)), endless)], limits, workers=0
        )
        assert outcome.status is Status.TIMEOUT


def plain_reader(path, cached_statements: int) -> sqlite3.Connection:
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    return sqlite3.connect(uri, uri=True, cached_statements=cached_statements)


def settled_reader(path) -> sqlite3.Connection:
    """A plain reader without statement cache whose schema is read (as the engine's)."""
    conn = plain_reader(path, 0)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return conn


def counted(conn: sqlite3.Connection, sql: str, every: int) -> int:
    counter = StepCounter(every=every)
    counter.install(conn)
    conn.execute(sql).fetchall()
    return counter.steps


class TestWhyTheSQLiteEngineIsSetUpSo:
    def test_the_first_statement_also_pays_for_reading_the_schema(self, tiny_sqlite):
        cold = plain_reader(tiny_sqlite, 0)
        first, again = counted(cold, SCAN, 1), counted(cold, SCAN, 1)
        assert first > again  # hence connect reads the schema before any query

    def test_a_cached_statement_shifts_the_count(self, tiny_sqlite):
        # SQLite calls the handler when a statement's step count, since it was prepared,
        # crosses a multiple of ``every``: a statement reused from Python's cache starts
        # mid-way. Without the cache every run starts at 0.
        warm = plain_reader(tiny_sqlite, 0)
        counted(warm, "SELECT 1", 1)  # schema loaded
        exact = counted(warm, FEW, 1)
        every = exact - 1  # one call per run when counting from 0, at most 2 when shifted
        fresh, cached = plain_reader(tiny_sqlite, 0), plain_reader(tiny_sqlite, 128)
        runs = {
            name: [counted(conn, FEW, every) for _ in range(every + 1)]
            for name, conn in (("fresh", fresh), ("cached", cached))
        }
        assert len(set(runs["fresh"][1:])) == 1
        assert len(set(runs["cached"][1:])) > 1

    def test_the_counter_asks_the_deadline_every_check_calls(self, tiny_sqlite):
        conn = plain_reader(tiny_sqlite, 0)
        asked = []

        def deadline() -> bool:
            asked.append(1)
            return True

        counter = StepCounter(inner=deadline, every=1, check=4)
        counter.install(conn)
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            conn.execute(PAIRS).fetchall()
        assert counter.calls == 4 and len(asked) == 1  # asked on the 4th call, which aborted


class TestDuckDB:
    def test_identical_across_runs_workers_and_connections(self, tiny_duckdb):
        work = assert_reproducible(Database("duckdb", str(tiny_duckdb)))
        assert work[FEW] < work[SCAN]
        assert work[PAIRS] >= 4950  # the join produced 100 * 99 / 2 pairs

    def test_a_scan_counts_every_row_read_and_returned(self, tiny_duckdb):
        (outcome,) = execute_many([Job(Database("duckdb", str(tiny_duckdb)), SCAN)], workers=0)
        assert outcome.work >= 200  # 100 rows scanned, 100 produced by the scan

    @pytest.mark.parametrize(
        ("sql", "rows"),
        [
            ("SELECT count(*) FROM t", 1),  # answered from the table's statistics
            ("SELECT max(a) FROM t", 1),
            ("SELECT * FROM (VALUES (1), (2), (3)) AS v(x)", 3),
        ],
    )
    def test_a_plan_returned_without_running_counts_the_rows_it_holds(self, tiny_duckdb, sql, rows):
        # DuckDB returns a plan that is one materialized scan without running it, and its
        # profiler records no plan: such a scan counts the rows it holds, as it does when it
        # feeds a projection (which counts as many again). Before, such a plan counted 0.
        database = Database("duckdb", str(tiny_duckdb))
        projected = f"SELECT *, 1 AS one FROM ({sql}) AS s"
        plain, with_projection = execute_many(
            [Job(database, sql), Job(database, projected)], workers=0
        )
        assert plain.work == rows == len(plain.rows)
        assert with_projection.work == 2 * rows

    def test_a_run_that_counts_no_work_reads_no_profile(self, tiny_duckdb):
        database = Database("duckdb", str(tiny_duckdb))
        counted_run, uncounted = (
            execute_many([Job(database, SCAN)], Limits(count_work=count), workers=0)[0]
            for count in (True, False)
        )
        assert uncounted.rows == counted_run.rows and len(uncounted.rows) == 100
        assert counted_run.work >= 200 and uncounted.work is None

    def test_profiled_work_reads_the_root_metrics(self):
        profile = {"cumulative_cardinality": 7, "cumulative_rows_scanned": 5, "children": []}
        assert duckdb_engine.profiled_work(profile) == 12
        assert duckdb_engine.profiled_work({"result": "error"}) is None  # no plan recorded

    def test_work_is_read_only_from_the_querys_own_profile(self, tiny_duckdb, tmp_path):
        # Profiling turned off by a way the allow-list did not foresee (here: our own raw
        # call): the next query's work cannot be read, so the evaluation stops rather than
        # counting another query's profile (the runner runs it again on a fresh connection
        # first: test_unavailable.py's retries).
        import shutil

        from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

        # A copy: connections to one file in one process share its (locked) configuration.
        path = shutil.copy(tiny_duckdb, tmp_path / "copy.duckdb")
        conn = duckdb_engine.connect(str(path), Limits())
        try:
            assert duckdb_engine.run(conn, SCAN, Limits()).work >= 200
            conn.execute("SELECT * FROM disable_profiling()").fetchall()
            with pytest.raises(EvaluationUnavailable, match="not that query's"):
                duckdb_engine.run(conn, SCAN, Limits())
        finally:
            conn.close()

    def test_queries_cannot_turn_profiling_off(self, tiny_duckdb):
        database = Database("duckdb", str(tiny_duckdb))
        (outcome,) = execute_many([Job(database, "PRAGMA disable_profiling")], workers=0)
        assert outcome.status is Status.ERROR


def test_a_cold_and_a_warm_gold_cache_give_the_same_work(tiny_sqlite, tiny_duckdb, tmp_path):
    jobs = [
        Job(Database(engine, str(path)), sql)
        for engine, path in (("sqlite", tiny_sqlite), ("duckdb", tiny_duckdb))
        for sql in QUERIES
    ]
    cache = GoldCache(tmp_path / "gold")
    cold = cache.run(jobs, Limits(), workers=2)
    warm = GoldCache(tmp_path / "gold").run(jobs, Limits(), workers=2)
    fresh = execute_many(jobs, workers=1)
    assert [o.work for o in cold] == [o.work for o in warm] == [o.work for o in fresh]
    assert all(o.work for o in cold)


def test_the_registry_says_which_engines_count():
    assert engines.get("sqlite").work_unit and engines.get("duckdb").work_unit
    assert engines.get("postgres").work_unit is None  # see execution/postgres.py


@pytest.mark.mysql
class TestMariaDB:
    def test_identical_across_runs_workers_and_connections(self, mysql_attack_server):
        work = assert_reproducible(mysql_attack_server.database())
        assert work[SCAN] >= 100  # t has 100 rows and no index
        assert work[PAIRS] > work[SCAN]  # a join buffer reads each side once: not 100x

    def test_the_registry_says_it_counts(self):
        assert engines.get("mysql").work_unit
