"""What to run and under which limits: :class:`Database`, :class:`Limits`, :class:`Job`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal


@dataclass(frozen=True)
class Database:
    """A database file that is opened read-only, or (engines ``mysql``, ``postgres``) a
    database on a server.

    For ``mysql``, ``path`` is a URL ``mysql://user:password@host:port/dbname`` (see
    :mod:`sqlbench_lmeval.execution.mysql`); the setup hook gets the PyMySQL connection. For
    ``postgres``, a libpq URL ``postgresql://user@host:port/dbname?passfile=...`` (see
    :mod:`sqlbench_lmeval.execution.postgres`; no setup hook).

    ``setup`` names a trusted hook ``"pkg.module:function"``; it is imported in the worker and
    called with every new raw connection (``sqlite3.Connection`` or duckdb connection) after the
    read-only open and the memory limit but before the sandbox (authorizer, locked configuration)
    is closed, e.g. to register MySQL-compatible functions and a frozen clock.
    """

    engine: Literal["sqlite", "duckdb", "mysql", "postgres"]
    path: str
    setup: str | None = None

    @property
    def name(self) -> str:
        """The database's own name: the file's stem, or the database a server URL names."""
        if self.engine == "mysql":
            from sqlbench_lmeval.execution.mysql import database_name

            return database_name(self.path)
        if self.engine == "postgres":
            from sqlbench_lmeval.execution.postgres import database_name

            return database_name(self.path) or ""
        return PurePath(self.path).stem

    @property
    def public_path(self) -> str:
        """``path`` as outputs show it: a server URL without password, option file or password
        file."""
        if self.engine == "mysql":
            from sqlbench_lmeval.execution.mysql import public_url

            return public_url(self.path)
        if self.engine == "postgres":
            from sqlbench_lmeval.execution.postgres import public_url

            return public_url(self.path)
        return self.path


@dataclass(frozen=True)
class Limits:
    """Per-query limits, enforced inside the engine (and by killing the worker as a backstop)."""

    timeout_s: float = 10.0  # wall clock per query
    max_rows: int = 10_000  # more rows -> Status.TOO_MANY_ROWS
    memory_mb: int = 1024  # per worker: SQLite heap limit / DuckDB memory_limit


@dataclass(frozen=True)
class Job:
    """One query on one database; ``sql`` None, blank or comment-only gives Status.NO_SQL."""

    database: Database
    sql: str | None


DEFAULT_LIMITS = Limits()  # frozen, so safe to share as a default argument
