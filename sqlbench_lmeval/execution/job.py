"""What to run: :class:`Database` and :class:`Job` (and, from :mod:`.limits`, under which
:class:`Limits`)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlbench_lmeval.execution import engines

# Limits live a module down, where the engine registry can name them without importing this
# module (which asks the registry); most callers import them from here with the jobs they limit.
from sqlbench_lmeval.execution.limits import DEFAULT_LIMITS, GOLD_MIN_TIMEOUT_S, Limits


@dataclass(frozen=True)
class Database:
    """A database file that is opened read-only, or (a server engine) a database on a server.

    ``engine`` is a name of :mod:`~sqlbench_lmeval.execution.engines`' registry. For a server
    engine ``path`` is a URL in the form its module documents (e.g.
    ``mysql://user:password@host:port/dbname``).

    ``setup`` names a trusted hook ``"pkg.module:function"``; it is imported in the worker and
    called with every new raw connection (``sqlite3.Connection`` or duckdb connection) after the
    read-only open and the memory limit but before the sandbox (authorizer, locked configuration)
    is closed, e.g. to register MySQL-compatible functions and a frozen clock.
    """

    engine: str
    path: str
    setup: str | None = None

    @property
    def name(self) -> str:
        """The database's own name: the file's stem, or the database a server URL names."""
        if not engines.known(self.engine):  # opening it says so; a message still names it
            return engines.file_stem(self.path)
        return engines.get(self.engine).database_name(self.path)

    @property
    def public_path(self) -> str:
        """``path`` as outputs show it: a server URL without password, option file or password
        file."""
        if not engines.known(self.engine):
            return self.path
        return engines.get(self.engine).public_path(self.path)


@dataclass(frozen=True)
class Job:
    """One query on one database; ``sql`` None, blank or comment-only gives Status.NO_SQL.
    ``limits``: this job's own, where a batch mixes jobs of several (``execute_many``: the
    batch's limits for the others)."""

    database: Database
    sql: str | None
    limits: Limits | None = None


__all__ = ["DEFAULT_LIMITS", "GOLD_MIN_TIMEOUT_S", "Database", "Job", "Limits"]
