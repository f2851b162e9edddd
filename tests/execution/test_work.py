"""Deterministic work counters on real engines: the same count run after run, more for more
work, and the conditions that make them exact (``execution.work``)."""

from __future__ import annotations

import json
import sqlite3
import urllib.parse

import duckdb
import pytest

from sqlbench_lmeval.execution import work

SCAN = "SELECT a FROM t"
SORTED_SCAN = "SELECT a FROM t ORDER BY b DESC"
FEW = "SELECT a FROM t WHERE a < 10"
PAIRS = "SELECT count(*) FROM t AS x, t AS y WHERE x.c < y.c"  # 100 x 100 row pairs


def sqlite_reader(path, cached_statements: int = 0) -> sqlite3.Connection:
    """Read-only, and by default without Python's statement cache (as counting needs)."""
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    return sqlite3.connect(uri, uri=True, cached_statements=cached_statements)


class TestSQLite:
    def test_steps_are_identical_run_after_run(self, tiny_sqlite):
        conn = sqlite_reader(tiny_sqlite)
        work.load_schema(conn)
        for sql in (SCAN, SORTED_SCAN, FEW):
            counts = {work.sqlite_work(conn, sql, work.StepCounter())[1] for _ in range(3)}
            assert len(counts) == 1, sql

    def test_more_work_more_steps(self, tiny_sqlite):
        conn = sqlite_reader(tiny_sqlite)
        work.load_schema(conn)
        scan = work.sqlite_work(conn, SCAN, work.StepCounter(every=1))[1]
        pairs = work.sqlite_work(conn, PAIRS, work.StepCounter(every=1))[1]
        assert scan >= 100 and pairs >= 100 * scan  # a step per row at least; 100x the rows

    def test_rows_are_returned_unchanged(self, tiny_sqlite):
        conn = sqlite_reader(tiny_sqlite)
        rows, _ = work.sqlite_work(conn, FEW, work.StepCounter())
        assert rows == [(i,) for i in range(10)]

    def test_the_first_statement_also_pays_for_reading_the_schema(self, tiny_sqlite):
        cold = sqlite_reader(tiny_sqlite)
        first = work.sqlite_work(cold, SCAN, work.StepCounter(every=1))[1]
        again = work.sqlite_work(cold, SCAN, work.StepCounter(every=1))[1]
        assert first > again  # hence load_schema before counting

    def test_a_cached_statement_shifts_the_count(self, tiny_sqlite):
        # SQLite calls the handler when a statement's step count, since it was prepared,
        # crosses a multiple of ``every``: a statement reused from Python's cache starts
        # mid-way. Without the cache every run starts at 0.
        exact = work.sqlite_work(sqlite_reader(tiny_sqlite), FEW, work.StepCounter(every=1))[1]
        every = exact - 1  # one call per run when counting from 0, at most 2 when shifted
        fresh, cached = sqlite_reader(tiny_sqlite), sqlite_reader(tiny_sqlite, 128)
        counts = {name: [work.sqlite_work(conn, FEW, work.StepCounter(every=every))[1]
                         for _ in range(every + 1)]
                  for name, conn in (("fresh", fresh), ("cached", cached))}  # fmt: skip
        assert len(set(counts["fresh"])) == 1
        assert len(set(counts["cached"])) > 1

    def test_the_inner_handler_still_aborts(self, tiny_sqlite):
        conn = sqlite_reader(tiny_sqlite)
        asked = []

        def deadline() -> bool:
            asked.append(1)
            return True

        counter = work.StepCounter(inner=deadline, every=1, check=4)
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            work.sqlite_work(conn, PAIRS, counter)
        assert counter.calls == 4 and len(asked) == 1  # asked on the 4th call, which aborted


class TestDuckDB:
    def connect(self, path, threads: int = 1):
        conn = duckdb.connect(str(path), read_only=True, config={"threads": threads})
        for statement in work.DUCKDB_PROFILING:
            conn.execute(statement)
        return conn

    def test_a_scan_reads_every_row_of_the_table(self, tiny_duckdb):
        conn = self.connect(tiny_duckdb)
        conn.execute(SCAN).fetchall()
        profile = json.loads(conn.get_profiling_information(format="json"))
        assert profile["cumulative_rows_scanned"] == 100  # the table has 100 rows

    def test_identical_across_runs_and_threads(self, tiny_duckdb):
        counts = set()
        for threads in (1, 4):
            conn = self.connect(tiny_duckdb, threads)
            counts |= {work.duckdb_work(conn, SORTED_SCAN)[1] for _ in range(3)}
            conn.close()  # one file, one configuration at a time
        assert len(counts) == 1

    def test_more_rows_more_work(self, tiny_duckdb):
        conn = self.connect(tiny_duckdb)
        assert work.duckdb_work(conn, FEW)[1] < work.duckdb_work(conn, SCAN)[1]
        assert work.duckdb_work(conn, PAIRS)[1] >= 4950  # the join produced 100 * 99 / 2 pairs

    def test_profiled_work_reads_the_root_metrics(self):
        profile = {"cumulative_cardinality": 7, "cumulative_rows_scanned": 5, "children": []}
        assert work.profiled_work(profile) == 12


@pytest.mark.mysql
class TestMariaDB:
    def cursor(self, server):
        from sqlbench_lmeval.execution.mysql import open_connection, parse_url

        conn = open_connection(parse_url(server.reader_url), server.attacked)
        return conn, conn.cursor()

    def test_identical_across_runs_and_connections(self, mysql_attack_server):
        counts = set()
        for _ in range(2):
            conn, cursor = self.cursor(mysql_attack_server)
            overhead = work.mysql_status_overhead(cursor)
            counts |= {work.mysql_work(cursor, SORTED_SCAN, overhead)[1] for _ in range(3)}
            conn.close()
        assert len(counts) == 1

    def test_a_full_scan_reads_every_row(self, mysql_attack_server):
        conn, cursor = self.cursor(mysql_attack_server)
        rows, amount = work.mysql_work(cursor, SCAN, work.mysql_status_overhead(cursor))
        assert len(rows) == 100 and amount >= 100  # t has 100 rows and no index
        conn.close()
