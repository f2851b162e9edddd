"""DuckDB, hardened: hostile SQL in, :class:`Outcome` out (the settings: docs/engines.md#duckdb;
the work it counts: docs/r-ves.md#how-each-engine-counts-work)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import duckdb

from sqlbench_lmeval.execution import perturbed, random_seed
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
    '\'{"CUMULATIVE_CARDINALITY": "true", "CUMULATIVE_ROWS_SCANNED": "true", '
    '"QUERY_NAME": "true"}\'',
)

#: The table functions an answer may call: each computes its rows from its arguments alone or
#: reads the database's own catalog. Any other is refused before the query runs: some change
#: the connection for every later query, and ``lock_configuration`` does not stop them
#: (``enable_logging``, ``enable_profiling``, ``disable_profiling``, ``checkpoint``), some run
#: SQL hidden in a string (``query``, ``json_execute_serialized_sql``), the rest read files or
#: the machine (``read_csv``, ``duckdb_memory``). Why refused rather than a connection renewed
#: after them: docs/engines.md#no-answer-changes-another.
ALLOWED_TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "duckdb_columns",
        "duckdb_constraints",
        "duckdb_indexes",
        "duckdb_schemas",
        "duckdb_tables",
        "duckdb_views",
        "pragma_table_info",
        "pragma_show",
    }
)
#: Scalar functions that change the connection for later queries (the random generator's
#: seed, a sequence, the log): refused like a table function outside the allow-list.
CONNECTION_CHANGING_FUNCTIONS = frozenset({"setseed", "nextval", "write_log"})
_SET_SEED = f"SELECT setseed({random_seed.SEED})"


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
        # Checked under the deadline: the check's cost grows with the statement's nesting.
        refused = _refused_function(conn, sql)
        if refused is not None:
            return Outcome(Status.ERROR, error=refused, elapsed_s=time.monotonic() - start)
        # random() and uuid() start from the one seed (with threads = 1 they then repeat:
        # threads share no generator); setseed is refused in answers, so only this sets it.
        conn.execute(_SET_SEED)
        # Execute on the connection itself: interrupt() reaches only the connection it is
        # called on, not cursors derived from it.
        conn.execute(sql)
        columns = tuple(d[0] for d in conn.description or ())
        outcome = fetch_limited(conn.fetchmany, columns, limits, start)
        if outcome.ok and limits.count_work:
            work = _profiled_work(conn, sql)
            outcome = replace(outcome, work=len(outcome.rows) if work is None else work)
    except EvaluationUnavailable:
        raise
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


#: The profile of a query whose plan DuckDB returned without running it (see profiled_work).
_NO_PLAN = {"result": "error"}


def _profiled_work(conn: duckdb.DuckDBPyConnection, sql: str) -> int | None:
    """The work of ``sql``, the query that just ran, read only from its own profile; raises
    :class:`EvaluationUnavailable` when the profile is another's or none (profiling was turned
    off or changed on this connection: the runner runs the query again on a fresh one)."""
    profile = json.loads(conn.get_profiling_information(format="json"))
    if profile == _NO_PLAN:
        return None
    if profile.get("query_name") != sql:
        raise EvaluationUnavailable(
            "DuckDB's profile after a query is not that query's (profiling on the worker's "
            f"connection was changed: {str(profile)[:200]}), so its work cannot be read"
        )
    return profiled_work(profile)


#: Every function a statement calls, from DuckDB's own parse of it (``json_serialize_sql``)
#: walked by ``json_tree``: a name whose node sits under a ``function`` key is a table
#: function's. Walked in DuckDB, not in Python: ``json.loads`` of a deeply nested statement
#: raises RecursionError at a depth that depends on the caller's stack. The statement is a
#: string literal, not a parameter: DuckDB imports pandas to look at a parameter's type
#: (seconds of a worker's first query).
_FUNCTIONS_CALLED = (
    "SELECT key, path, atom ->> '$' FROM json_tree(json_serialize_sql({})) "
    "WHERE key = 'function_name' OR (key = 'error_message' AND path = '$')"
)


def _refused_function(conn: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """Why ``sql`` (one SELECT) may not run, or None: it calls a table function outside
    :data:`ALLOWED_TABLE_FUNCTIONS` or a function of :data:`CONNECTION_CHANGING_FUNCTIONS`.
    Read from DuckDB's own parse of the statement, so every place a function can hide
    (subqueries, CTEs, LATERAL, lambdas, quoted or qualified names) is seen as DuckDB runs it."""
    table_functions: set[str] = set()
    functions: set[str] = set()
    literal = "'" + sql.replace("'", "''") + "'"
    for key, path, value in conn.execute(_FUNCTIONS_CALLED.format(literal)).fetchall():
        if key == "error_message":
            return f"the statement cannot be checked: {value}"
        name = str(value).lower()  # DuckDB looks functions up without case
        functions.add(name)
        if path.endswith(".function"):
            table_functions.add(name)
    refused = sorted(table_functions - ALLOWED_TABLE_FUNCTIONS)
    if refused:
        return (
            f"table function {', '.join(refused)} is not allowed: an answer may only read the "
            f"database (allowed: {', '.join(sorted(ALLOWED_TABLE_FUNCTIONS))})"
        )
    changing = sorted(functions & CONNECTION_CHANGING_FUNCTIONS)
    if changing:
        return f"function {', '.join(changing)} is not allowed: it changes the connection"
    return None


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
