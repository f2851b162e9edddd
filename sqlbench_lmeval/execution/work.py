"""How much work an engine did for a query, counted so that every machine and run agree.

Efficiency metrics (``efficiency``) compare a prediction's work with gold's. Time differs by
machine, load and cache state; these counters depend only on the engine's version, the data and
the plan, so a score computed from them can be reproduced anywhere. Prototypes on raw
connections (not yet wired into the sandboxed engines; see each function for what wiring needs):

- SQLite: virtual-machine steps, counted by a progress handler every ``every`` steps
  (:class:`StepCounter`). SQLite keeps one progress handler per connection and the sandbox's
  deadline check is one, so the counter wraps it. Two conditions make the count exact and
  repeatable: the statement must be freshly prepared (SQLite offsets the handler by the steps
  a cached statement ran before: open connections with ``cached_statements=0``), and the
  schema must already be loaded (the first statement of a connection also runs the schema
  parse, :func:`load_schema`). The count is ``floor(steps / every)`` units of ``every``.
- DuckDB: the rows every operator produced plus the rows scans read (profiling's
  ``CUMULATIVE_CARDINALITY`` + ``CUMULATIVE_ROWS_SCANNED``; :func:`duckdb_work`), with one
  thread (the sandbox's setting; more threads change the operators' counts) and without the
  ``join_filter_pushdown`` optimizer, whose runtime filters let a scan pass one or two rows more
  or less from run to run (TPC-DS queries 88 and 96) - enough to put gold against itself below a
  ratio of 1. :data:`DUCKDB_PROFILING` sets this up before the sandbox locks the configuration.
- MariaDB: the growth of the session's counters of rows read by the storage engines
  (``Handler_read%``), written to and updated in internal temporary tables (``Handler_tmp%``:
  GROUP BY, DISTINCT, UNION, derived tables) and sorted (``Sort_rows``) across the query, less
  what reading the counters itself adds (:func:`mysql_work`); needs no privilege beyond the
  reader's. Plans, and so counts, follow the tables' statistics: a server must have settled or
  analysed them (InnoDB recomputes them in the background after a load).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from sqlbench_lmeval.execution.sqlite import PROGRESS_EVERY_OPS

#: SQLite virtual-machine steps per progress-handler call when counting work. Each call costs
#: ~1 us (SQLite -> Python), a step ~0.04-0.2 us: at 16 a VM-bound query (LogicCat 1440,
#: 70M steps) ran 1.3-1.6x as long, at 64 within 5%; the price of 64 is resolution (a median
#: LogicCat gold is ~300 steps, 4-5 units; 42% of them are under 4 units).
SQLITE_STEP_UNIT = 64

#: Statements that make a DuckDB connection profile every query silently and count the same
#: rows every run (run them before ``SET lock_configuration = true``).
DUCKDB_PROFILING = (
    "SET disabled_optimizers = 'join_filter_pushdown'",
    "PRAGMA enable_profiling = 'no_output'",
    "PRAGMA custom_profiling_settings = "
    '\'{"CUMULATIVE_CARDINALITY": "true", "CUMULATIVE_ROWS_SCANNED": "true"}\'',
)

#: The MariaDB session counters summed as work (``LIKE`` patterns).
MYSQL_WORK_STATUS = ("Handler_read%", "Handler_tmp%", "Sort_rows")


class StepCounter:
    """A SQLite progress handler that counts its calls (``steps`` = calls x ``every``) and, on
    every ``check``-th call, returns ``inner()``'s verdict (the sandbox's deadline: non-zero
    aborts the statement). Asking the deadline on every call would double the handler's cost
    (a second Python call and a clock read); every 64th call at 64 steps is every 4,096 steps,
    still finer than the sandbox's 10,000 today."""

    __slots__ = ("calls", "check", "every", "inner")

    def __init__(
        self,
        inner: Callable[[], object] | None = None,
        every: int = SQLITE_STEP_UNIT,
        check: int = 64,
    ):
        self.calls = 0
        self.every = every
        self.check = check
        self.inner = inner

    def __call__(self) -> int:
        self.calls += 1
        if self.inner is None or self.calls % self.check:
            return 0
        return int(bool(self.inner()))

    @property
    def steps(self) -> int:
        return self.calls * self.every


def load_schema(conn) -> None:
    """Make SQLite read the schema now, so that no query's count includes that work."""
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()


def sqlite_work(conn, sql: str, counter: StepCounter) -> tuple[list[tuple], int]:
    """Run ``sql`` on a SQLite connection with ``counter`` as its progress handler (restored
    to ``counter.inner`` afterwards): its rows and the VM steps it took."""
    counter.calls = 0
    conn.set_progress_handler(counter, counter.every)
    try:
        rows = conn.execute(sql).fetchall()
    finally:
        conn.set_progress_handler(counter.inner, PROGRESS_EVERY_OPS if counter.inner else 0)
    return rows, counter.steps


def duckdb_work(conn, sql: str) -> tuple[list[tuple], int]:
    """Run ``sql`` on a DuckDB connection that profiles (:data:`DUCKDB_PROFILING`): its rows
    and the rows its operators produced and scanned."""
    rows = conn.execute(sql).fetchall()
    return rows, profiled_work(json.loads(conn.get_profiling_information(format="json")))


def profiled_work(profile: Mapping) -> int:
    """Work from DuckDB's JSON profile of a query (its root node's cumulative metrics)."""
    return int(profile.get("cumulative_cardinality", 0)) + int(
        profile.get("cumulative_rows_scanned", 0)
    )


def mysql_status(cursor) -> dict[str, int]:
    """The session's :data:`MYSQL_WORK_STATUS` counters."""
    where = " OR ".join(f"Variable_name LIKE '{pattern}'" for pattern in MYSQL_WORK_STATUS)
    cursor.execute(f"SHOW SESSION STATUS WHERE {where}")
    return {name: int(value) for name, value in cursor.fetchall()}


def mysql_status_overhead(cursor) -> dict[str, int]:
    """What reading the counters adds to them (the difference of two reads in a row)."""
    first = mysql_status(cursor)
    second = mysql_status(cursor)
    return {name: second[name] - first[name] for name in second}


def mysql_work(cursor, sql: str, overhead: Mapping[str, int]) -> tuple[list[tuple], int]:
    """Run ``sql`` on a MariaDB cursor: its rows and the growth of the work counters, less
    ``overhead`` (:func:`mysql_status_overhead`, measured once per connection)."""
    before = mysql_status(cursor)
    cursor.execute(sql)
    rows = list(cursor.fetchall())
    after = mysql_status(cursor)
    return rows, sum(after[name] - before[name] - overhead.get(name, 0) for name in after)
