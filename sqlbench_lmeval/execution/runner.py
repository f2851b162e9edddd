"""Run one :class:`Job` in this process: choose the engine, reuse its sandboxed connection.

Connections are cached per database file (and re-opened when the file changes on disk), so a
worker opens each of LogicCat's 44 files once rather than once per query.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import cache

from sqlbench_lmeval.execution.job import DEFAULT_LIMITS, Database, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status

MAX_OPEN_CONNECTIONS = 64
SETUP_FAILED = "setup hook failed"  # message prefix; such errors are not cached as gold

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


def connection(database: Database, limits: Limits) -> tuple[object, bool]:
    """The cached sandboxed connection for ``database`` and whether it was opened just now.

    Raises FileNotFoundError, ValueError (unknown engine) or whatever opening/setup raised.
    """
    engine = _engine(database.engine)
    key = (database.engine, database.path, database.setup, int(limits.memory_mb))
    if database.engine in ("mysql", "postgres"):
        # A server, not a file: the engine module reconnects by itself when the server drops it.
        signature = ("server",)
    elif not os.path.isfile(database.path):
        raise FileNotFoundError(f"database file not found: {database.path}")
    else:
        signature = _signature(database.path)
    if database.engine == "sqlite":
        # hard_heap_limit is process-wide: assert it here, where limits may have changed.
        _set_heap_limit(limits)
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


_heap_limit = [0]


def _set_heap_limit(limits: Limits) -> None:
    wanted = int(limits.memory_mb) * 1024 * 1024
    if _heap_limit[0] != wanted:
        _heap_limit[0] = wanted
        # Any sandboxed connection refuses PRAGMA, so use a throwaway one.
        scratch = sqlite3.connect(":memory:")
        scratch.execute(f"PRAGMA hard_heap_limit = {wanted}")
        scratch.close()


class _SetupError(Exception):
    pass


def _guarded(setup: Callable | None, spec: str | None) -> Callable | None:
    if setup is None:
        return None

    def call(conn) -> None:
        try:
            setup(conn)
        except Exception as error:
            raise _SetupError(f"{SETUP_FAILED}: {spec}: {error}") from error

    return call


def _engine(name: str):
    if name == "sqlite":
        from sqlbench_lmeval.execution import sqlite as engine
    elif name == "duckdb":
        from sqlbench_lmeval.execution import duckdb as engine
    elif name == "mysql":
        from sqlbench_lmeval.execution import mysql as engine
    elif name == "postgres":
        from sqlbench_lmeval.execution import postgres as engine
    else:
        raise ValueError(
            f"unknown engine {name!r} (expected 'sqlite', 'duckdb', 'mysql' or 'postgres')"
        )
    return engine


def default_timeout(engine: str | None) -> float:
    """The time limit per query when the user gives none: the engine's own
    (``DEFAULT_TIMEOUT_S`` of its module), else :data:`DEFAULT_LIMITS`'."""
    try:
        module = _engine(engine) if engine else None
    except (ImportError, ValueError):  # its driver is missing, or no such engine: said later
        module = None
    return float(getattr(module, "DEFAULT_TIMEOUT_S", DEFAULT_LIMITS.timeout_s))


def _close(conn) -> None:
    try:
        conn.close()
    except Exception:
        pass


def close_all() -> None:
    """Close every cached connection (tests; the worker just exits)."""
    while _connections:
        _close(_connections.popitem()[1][1])


def execute(job: Job, limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """Run ``job`` in this process; every failure becomes an Outcome, nothing raises."""
    start = time.monotonic()
    sql = strip_sql(job.sql)
    if sql is None:
        return Outcome(Status.NO_SQL, error="no SQL")
    try:
        conn, _ = connection(job.database, limits)
        return _engine(job.database.engine).run(conn, sql, limits)
    except MemoryError:
        return Outcome(
            Status.ERROR,
            error=f"out of memory (limit {limits.memory_mb} MiB)",
            elapsed_s=time.monotonic() - start,
        )
    except Exception as error:
        message = str(error) or type(error).__name__
        if not isinstance(error, (_SetupError, FileNotFoundError, ValueError)):
            message = f"{type(error).__name__}: {message}"
        return Outcome(Status.ERROR, error=message, elapsed_s=time.monotonic() - start)
