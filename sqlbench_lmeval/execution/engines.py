"""The engine registry: each engine module of this package declares one :class:`Engine`, and
everything that depends on the engine asks :func:`get` instead of switching on the name;
modules (and their optional drivers) are imported only when asked for (docs/adding-an-engine.md)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from sqlbench_lmeval.errors import DriverMissing

if TYPE_CHECKING:  # annotations only
    from sqlbench_lmeval.execution.limits import Limits
    from sqlbench_lmeval.execution.outcome import Outcome

#: The engine modules of this package, in the order ``--engine`` lists them.
NAMES = ("sqlite", "duckdb", "mysql", "postgres")

#: The server engines' drivers, optional dependencies: engine -> (the module its own module
#: imports, the distribution that installs it). Each engine's extra of ``pyproject.toml`` is
#: named like the engine.
DRIVERS = {"mysql": ("pymysql", "PyMySQL"), "postgres": ("psycopg", "psycopg")}


def file_stem(path: str) -> str:
    """A database file's own name: its stem."""
    return PurePath(path).stem


def as_given(path: str) -> str:
    return path


@dataclass(frozen=True)
class Engine:
    """What the rest of the package knows about one engine.

    ``connect(path, limits, setup)`` opens the sandboxed connection (or session handle) of one
    database; ``setup`` is the trusted hook of ``Database.setup`` (or None), called with each
    new raw connection before the sandbox closes. ``run(conn, sql, limits)`` runs exactly one
    statement on it and returns an :class:`Outcome`, never raising for bad SQL; it stops the
    query at ``limits.timeout_s`` itself (the engine's own cancel: an interrupt, a progress
    handler, ``KILL QUERY``, a cancel request) and raises
    :class:`~sqlbench_lmeval.execution.unavailable.EvaluationUnavailable` for failures of the
    evaluation itself.
    """

    name: str  # Database.engine, --engine, the "engine" of score files
    dialect: str  # sqlglot's name of the SQL it runs (gold and translated predictions)
    server: bool  # True: Database.path is a URL of a database on a server; False: a file
    connect: Callable[[str, Limits, Callable | None], object]
    run: Callable[[object, str, Limits], Outcome]
    #: What the gold cache keys on besides the data: the library's or the driver's version.
    version: Callable[[], str]
    #: A server database's content and identity for the gold cache key (e.g. table checksums
    #: and the server's version); None for a file engine, whose file's sha256 is the cache's.
    fingerprint: Callable[[str], str] | None = None
    #: A server engine's refusal of any account with more than SELECT on the benchmark's
    #: databases. ``connect`` calls it on every new connection (so no caller can skip it and
    #: no flag loosens it); declared here so that a server engine without one is a failing
    #: test. None for a file engine: the file is opened read-only and has no accounts.
    check_rights: Callable[..., None] | None = None
    database_name: Callable[[str], str] = file_stem  # the database a path names
    public_path: Callable[[str], str] = as_given  # the path as outputs show it (no secret)
    #: ``build_perturbed(original, target, copy)`` writes the perturbed ``copy`` (one of
    #: ``perturbed.COPIES``) of the database file ``original`` to ``target``
    #: (``execution.perturbed``: data dependence runs answers there); None for an engine that
    #: keeps no copy (a server).
    build_perturbed: Callable[[Path, Path, str], None] | None = None
    #: Process-wide limits to assert before each use (SQLite's heap limit), or None.
    process_limits: Callable[[Limits], None] | None = None
    #: Close every session this process holds (a server logs connections that vanish without
    #: a goodbye as aborted), or None when closing the connections is enough.
    close_all: Callable[[], None] | None = None
    #: True: ``run`` counts work as the query runs and stops it at ``Limits.work_budget``
    #: (:func:`~sqlbench_lmeval.execution.deadline.over_budget`), the same on every machine.
    stops_at_work_budget: bool = False
    #: The time limit per query when the user gives none; None: ``Limits``' default.
    default_timeout_s: float | None = None
    #: Modules whose exceptions while opening mean the data itself is broken (so the message
    #: says to rebuild it with ``prepare``) rather than a server that refused.
    error_modules: tuple[str, ...] = ()
    #: What ``Outcome.work`` of an OK query counts on this engine (e.g. "VM steps"), a count
    #: that every machine and run reproduce for the same engine version, data and SQL (the
    #: r_ves metric divides gold's by the prediction's); None: the engine counts no work.
    work_unit: str | None = None


_loaded: dict[str, Engine] = {}


class UnknownEngine(ValueError):
    """A name that is not one of :data:`NAMES`."""


class UnsupportedEngine(ValueError):
    """An engine that the benchmark asked for does not run on."""


def names() -> tuple[str, ...]:
    """Every engine's name, without importing any engine."""
    return NAMES


def known(name: str) -> bool:
    return name in NAMES


def choose(engine: str | None, supported: Sequence[str]) -> str:
    """The engine a benchmark runs on: ``engine`` (blanks and case ignored; default: the first
    of ``supported``, the benchmark's engines). Raises :class:`UnknownEngine` for a name that is
    no engine and :class:`UnsupportedEngine` for an engine not in ``supported``; a server engine
    whose driver is not installed raises :class:`~sqlbench_lmeval.errors.DriverMissing` here,
    before the benchmark does any work for it."""
    name = (engine or supported[0]).strip().lower()
    if name not in NAMES:
        raise UnknownEngine(f"unknown engine {engine!r}")
    if name not in supported:
        raise UnsupportedEngine(f"engine {name!r} is not one of {', '.join(supported)}")
    require_driver(name)
    return name


def require_driver(name: str) -> None:
    """Raise :class:`~sqlbench_lmeval.errors.DriverMissing` (one line naming the extra to
    install) when engine ``name`` needs a driver that is not installed; nothing is imported."""
    driver = DRIVERS.get(name)
    if driver is not None and importlib.util.find_spec(driver[0]) is None:
        raise driver_missing(name)


def driver_missing(name: str) -> DriverMissing:
    """The error for server engine ``name`` without its driver: one line naming the extra."""
    return DriverMissing(
        f"the {name} engine needs {DRIVERS[name][1]}, which is not installed: "
        f'pip install "sqlbench-lmeval[{name}]"'
    )


def get(name: str) -> Engine:
    """The engine ``name``, importing its module on first use. Raises :class:`UnknownEngine`
    for a name that is not an engine and :class:`~sqlbench_lmeval.errors.DriverMissing` (an
    ImportError) when its driver is not installed."""
    engine = _loaded.get(name)
    if engine is None:
        if name not in NAMES:
            expected = ", ".join(repr(n) for n in NAMES[:-1]) + f" or {NAMES[-1]!r}"
            raise UnknownEngine(f"unknown engine {name!r} (expected {expected})")
        require_driver(name)
        engine = importlib.import_module(f"{__package__}.{name}").ENGINE
        if engine.name != name:
            raise RuntimeError(f"module {__package__}.{name} declares engine {engine.name!r}")
        _loaded[name] = engine
    return engine


def loaded() -> list[Engine]:
    """The engines this process has used so far (e.g. to close their sessions at exit)."""
    return list(_loaded.values())


def driver_version(package: str) -> str:
    """``"<package> <installed version>"`` (``"<package> unknown"`` when not installed)."""
    # heavy: importlib.metadata (email, zipfile, ...) is a third of a worker process's imports,
    # and workers never ask for a version (the gold cache's keys are made in the parent)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{package} {version(package)}"
    except PackageNotFoundError:
        return f"{package} unknown"
