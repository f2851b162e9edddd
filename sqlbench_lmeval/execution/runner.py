"""Run one :class:`Job` in this process: choose the engine, reuse its sandboxed connection (one per
database file), retry or wait out a failure of the evaluation itself (the rules:
docs/engines.md#connections)."""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import cache

from sqlbench_lmeval.execution import engines
from sqlbench_lmeval.execution.fetch import out_of_memory
from sqlbench_lmeval.execution.job import DEFAULT_LIMITS, Database, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.unavailable import (
    BUSY_WINDOW_S,
    ConnectionLost,
    EvaluationUnavailable,
    ServerBusy,
    busy_pauses,
)

MAX_OPEN_CONNECTIONS = 64
SETUP_FAILED = "setup hook failed"  # message prefix of a failed setup hook
RETRY_PAUSE_S = 1.0  # before the one retry of a failure of the evaluation itself
RECONNECT_WINDOW_S = 60.0  # how long a server that went away may take to come back
RECONNECT_STEP_S = 0.5  # between two attempts to reach it (a heartbeat each time)
LOSSES_ALLOWED = 3  # runs of one query that lost the connection before it counts as crashed

# key (engine, path, setup, memory_mb) -> (file signature, connection)
_connections: OrderedDict[tuple, tuple[tuple, object]] = OrderedDict()


def strip_sql(sql: str | None) -> str | None:
    """The statement text without surrounding blanks and trailing semicolons, or None if empty.

    Trailing ``;`` are empty statements; removing them never changes what runs (a ``;`` inside
    a trailing ``--`` comment is harmless to remove too).
    """
    if sql is None:
        return None
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text or None


@cache
def load_setup(spec: str) -> Callable:
    """Import the ``"pkg.module:function"`` hook named by ``Database.setup``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"setup must look like 'pkg.module:function', got {spec!r}")
    target = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"setup {spec!r} is not callable")
    return target


def _signature(path: str) -> tuple:
    info = os.stat(path)
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)


def _key(database: Database, limits: Limits) -> tuple:
    return (database.engine, database.path, database.setup, int(limits.memory_mb))


def _file_signature(database: Database) -> tuple:
    # A server, not a file: the engine module reconnects by itself when the server drops it.
    return ("server",) if engines.get(database.engine).server else _signature(database.path)


def is_open(database: Database, limits: Limits) -> bool:
    """Whether :func:`connection` would return a cached connection without opening one."""
    cached = _connections.get(_key(database, limits))
    if cached is None:
        return False
    try:
        return cached[0] == _file_signature(database)
    except OSError:
        return False


def connection(database: Database, limits: Limits) -> tuple[object, bool]:
    """The cached sandboxed connection for ``database`` and whether it was opened just now.

    Raises :class:`EvaluationUnavailable` when the database cannot be opened (file missing or
    unreadable, unknown engine, failed setup hook, ...): never a query's fault.
    """
    try:
        return _connection(database, limits)
    except EvaluationUnavailable:
        raise
    except Exception as error:
        raise EvaluationUnavailable(_open_failure(database, error)) from error


def _connection(database: Database, limits: Limits) -> tuple[object, bool]:
    engine = engines.get(database.engine)
    key = _key(database, limits)
    if not engine.server and not os.path.isfile(database.path):
        raise FileNotFoundError("no such file")
    signature = _file_signature(database)
    if engine.process_limits is not None:
        engine.process_limits(limits)  # process-wide: asserted here, where limits may change
    cached = _connections.get(key)
    if cached is not None:
        if cached[0] == signature:
            _connections.move_to_end(key)
            return cached[1], False
        _close(_connections.pop(key)[1])
    try:
        setup = load_setup(database.setup) if database.setup else None
    except Exception as error:
        raise _SetupError(f"{SETUP_FAILED}: {database.setup}: {error}") from error
    conn = engine.connect(database.path, limits, _guarded(setup, database.setup))
    _connections[key] = (signature, conn)
    while len(_connections) > MAX_OPEN_CONNECTIONS:
        _close(_connections.popitem(last=False)[1][1])
    return conn, True


def describe(database: Database) -> str:
    """``database`` for a message: the engine and the file, or the server URL without password."""
    return f"{database.engine} database {database.public_path}"


def _open_failure(database: Database, error: BaseException) -> str:
    if isinstance(error, (_SetupError, FileNotFoundError, ValueError)):
        text = str(error)
    else:
        text = f"{type(error).__name__}: {error}"
    message = f"cannot open the {describe(database)}: {text}"
    if isinstance(error, FileNotFoundError) or _is_data_error(database, error):
        message += " (rebuild the benchmark's data: `sqlbench-lmeval prepare`)"
    return message


def _is_data_error(database: Database, error: BaseException) -> bool:
    """Whether ``error`` comes from an engine library that says the data is broken (e.g. a
    damaged file), per the engine's ``error_modules``."""
    try:
        modules = engines.get(database.engine).error_modules
    except Exception:  # no such engine, or its driver is missing: the message says so
        return False
    return bool(modules) and (type(error).__module__ or "").startswith(modules)


def _forget(database: Database, limits: Limits) -> None:
    """Close and drop the cached connection of ``database``: the next job opens a fresh one."""
    cached = _connections.pop(_key(database, limits), None)
    if cached is not None:
        _close(cached[1])


class _SetupError(Exception):
    pass


# spec -> its guarded hook. One callable per spec: a server engine keeps one session per
# server, account and hook (``execution.mysql.connect``), so a new closure per database opened
# one connection per database in every worker (44 LogicCat databases, 2 workers: 82 measured).
_guards: dict[str | None, Callable] = {}


def _guarded(setup: Callable | None, spec: str | None) -> Callable | None:
    if setup is None:
        return None
    guard = _guards.get(spec)
    if guard is None or guard.setup is not setup:
        guard = _guards[spec] = _make_guard(setup, spec)
    return guard


def _make_guard(setup: Callable, spec: str | None) -> Callable:
    def call(conn) -> None:
        try:
            setup(conn)
        except Exception as error:
            raise _SetupError(f"{SETUP_FAILED}: {spec}: {error}") from error

    call.setup = setup
    return call


def default_timeout(engine: str | None) -> float:
    """The time limit per query when the user gives none: the engine's own
    (``Engine.default_timeout_s``), else :data:`DEFAULT_LIMITS`'."""
    try:
        own = engines.get(engine).default_timeout_s if engine else None
    except (ImportError, ValueError):  # its driver is missing, or no such engine: said later
        own = None
    return float(DEFAULT_LIMITS.timeout_s if own is None else own)


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:
        pass


def close_all() -> None:
    """Close every cached connection and server session (tests, and a worker before it exits:
    a server logs a connection dropped without a goodbye as aborted)."""
    while _connections:
        _close(_connections.popitem()[1][1])
    for engine in engines.loaded():  # engines are imported only when used
        if engine.close_all is not None:
            engine.close_all()


def execute(
    job: Job, limits: Limits = DEFAULT_LIMITS, *, heartbeat: Callable[[], object] | None = None
) -> Outcome:
    """Run ``job`` in this process; a query that fails becomes its Outcome.

    Raises :class:`EvaluationUnavailable` when the evaluation itself cannot run (see the module
    docstring), after one retry on a fresh connection, or after waiting ``RECONNECT_WINDOW_S``
    for a server that went away. ``heartbeat`` is called while waiting (the worker tells the
    pool's watchdog that it is not stuck in a query).
    """
    sql = strip_sql(job.sql)
    if sql is None:
        return Outcome(Status.NO_SQL, error="no SQL")
    start = time.monotonic()
    retried = False
    losses = 0
    gone_since: float | None = None
    while True:
        try:
            return _execute_once(job, sql, limits)
        except ConnectionLost as lost:
            now = time.monotonic()
            busy = isinstance(lost, ServerBusy)
            window = BUSY_WINDOW_S if busy else RECONNECT_WINDOW_S
            if lost.during_query:
                losses += 1
                if losses >= LOSSES_ALLOWED:
                    return Outcome(
                        Status.CRASHED,
                        error=f"the server connection was lost each of the {losses} times "
                        f"this query ran (the server came back each time): {lost}",
                        elapsed_s=now - start,
                    )
                gone_since = None  # it was there a moment ago: the window starts now
            if gone_since is None:
                gone_since = now
                pauses = busy_pauses()
                # An event worth a line: the run goes on, but an operator should know.
                print(
                    f"sqlbench-lmeval: {lost}; waiting up to {window:g} s for the "
                    f"{'server to free a connection' if busy else 'server'}, then the query "
                    "runs again",
                    file=sys.stderr,
                    flush=True,
                )
            elif now - gone_since >= window:
                if busy:
                    raise EvaluationUnavailable(
                        f"the server still had no free connection after {window:g} s: {lost}"
                    ) from lost
                raise EvaluationUnavailable(
                    f"{lost}; the server did not come back within {window:g} s"
                ) from lost
            _pause(next(pauses) if busy else RECONNECT_STEP_S, heartbeat)
        except EvaluationUnavailable:
            _forget(job.database, limits)
            if retried:
                raise
            retried = True
            _pause(RETRY_PAUSE_S, heartbeat)


def _pause(seconds: float, heartbeat: Callable[[], object] | None) -> None:
    if heartbeat is not None:
        heartbeat()
    time.sleep(seconds)
    if heartbeat is not None:
        heartbeat()


def _execute_once(job: Job, sql: str, limits: Limits) -> Outcome:
    conn, _ = connection(job.database, limits)
    start = time.monotonic()
    try:
        return engines.get(job.database.engine).run(conn, sql, limits)
    except EvaluationUnavailable:
        raise
    except MemoryError:
        return out_of_memory(limits, start)
    except Exception as error:
        message = f"{type(error).__name__}: {str(error) or type(error).__name__}"
        return Outcome(Status.ERROR, error=message, elapsed_s=time.monotonic() - start)
