"""DuckDB, hardened: hostile SQL in, :class:`Outcome` out (the settings: docs/engines.md#duckdb;
the work it counts: docs/r-ves.md#how-each-engine-counts-work)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import duckdb

from sqlbench_lmeval.execution import perturbed
from sqlbench_lmeval.execution.deadline import Deadline, stopped
from sqlbench_lmeval.execution.engines import Engine, driver_version
from sqlbench_lmeval.execution.fetch import fetch_limited, out_of_memory
from sqlbench_lmeval.execution.job import Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

_DAMAGED_FILE = "Corrupt database file"

#: Statements that make a connection profile every query silently and count the same rows
#: every run (run before ``SET lock_configuration = true``; see the module docstring).
PROFILING = (
    "SET disabled_optimizers = 'join_filter_pushdown'",
    "PRAGMA enable_profiling = 'no_output'",
    "PRAGMA custom_profiling_settings = "
    '\'{"CUMULATIVE_CARDINALITY": "true", "CUMULATIVE_ROWS_SCANNED": "true"}\'',
)


def connect(
    path: str, limits: Limits, setup: Callable[[duckdb.DuckDBPyConnection], object] | None = None
) -> duckdb.DuckDBPyConnection:
    """Open ``path`` read-only and locked down; raises FileNotFoundError or duckdb.Error."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"database file not found: {path}")
    config = {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "memory_limit": f"{int(limits.memory_mb)}MB",
        "threads": 1,  # parallelism comes from worker processes
    }
    conn = duckdb.connect(str(resolved), read_only=True, config=config)
    try:
        if setup is not None:
            setup(conn)
        for statement in PROFILING:
            conn.execute(statement)
        conn.execute("SET lock_configuration = true")
    except BaseException:
        conn.close()
        raise
    return conn


def run(conn: duckdb.DuckDBPyConnection, sql: str, limits: Limits) -> Outcome:
    """Run one SELECT on a connection from :func:`connect`; never raises for bad SQL."""
    start = time.monotonic()
    try:
        statements = conn.extract_statements(sql)
    except Exception as error:
        return _error(error, start)
    if not statements:
        return Outcome(Status.NO_SQL, error="no statement to run")
    if len(statements) > 1:
        return Outcome(
            Status.ERROR,
            error="several statements: exactly one SQL statement per query is allowed",
            elapsed_s=time.monotonic() - start,
        )
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        return Outcome(
            Status.ERROR,
            error=f"only SELECT statements are allowed (got {name})",
            elapsed_s=time.monotonic() - start,
        )
    deadline = Deadline(limits.timeout_s, conn.interrupt)
    try:
        # Execute on the connection itself: interrupt() reaches only the connection it is
        # called on, not cursors derived from it.
        conn.execute(sql)
        columns = tuple(d[0] for d in conn.description or ())
        outcome = fetch_limited(conn.fetchmany, columns, limits, start)
        if outcome.ok and limits.count_work:
            work = _profiled_work(conn)
            outcome = replace(outcome, work=len(outcome.rows) if work is None else work)
    except duckdb.InterruptException:
        outcome = stopped(limits.timeout_s, start)
    except MemoryError:
        outcome = out_of_memory(limits, start)
    except Exception as error:
        if isinstance(error, duckdb.IOException) and _DAMAGED_FILE in str(error):
            raise EvaluationUnavailable(
                f"the DuckDB database file {_path(conn)} is damaged: {error} (rebuild the "
                "benchmark's data: `sqlbench-lmeval prepare`)"
            ) from error
        outcome = _error(error, start)
    finally:
        deadline.stop()
    if deadline.fired and outcome.status is not Status.TIMEOUT:
        # The interrupt may surface as another error type (or mid-fetch); the clock decides.
        outcome = stopped(limits.timeout_s, start)
    return outcome


def profiled_work(profile: Mapping) -> int | None:
    """Work from DuckDB's JSON profile of a query (its root's cumulative metrics); None when
    the profiler recorded no plan (a materialized scan returned without running)."""
    if "cumulative_cardinality" not in profile:
        return None
    return int(profile["cumulative_cardinality"]) + int(profile.get("cumulative_rows_scanned", 0))


def _profiled_work(conn: duckdb.DuckDBPyConnection) -> int:
    return profiled_work(json.loads(conn.get_profiling_information(format="json")))


def _path(conn: duckdb.DuckDBPyConnection) -> str:
    try:
        query = "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        return str(conn.execute(query).fetchone()[0])
    except Exception:
        return "(path unknown)"


def _error(error: BaseException, start: float) -> Outcome:
    message = str(error) or type(error).__name__
    return Outcome(Status.ERROR, error=message, elapsed_s=time.monotonic() - start)


ENGINE = Engine(
    name="duckdb",
    dialect="duckdb",
    server=False,
    connect=connect,
    run=run,
    version=lambda: driver_version("duckdb"),
    build_perturbed=perturbed.build_duckdb,
    error_modules=("_duckdb", "duckdb"),
    work_unit="rows (operators' output + rows scanned)",
)
