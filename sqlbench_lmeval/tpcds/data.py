"""TPC-DS data from DuckDB's ``tpcds`` extension, loaded from the file the
``duckdb-extension-tpcds`` package installs (nothing downloaded, no TPC query text stored here):
gold queries, schema DDL, and the built database with its manifest, built once under the lock,
checked and its gold run by the data layer (``data``; how it is built, checked and rebuilt:
docs/tpcds.md#data)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from sqlbench_lmeval.data.built import build_once
from sqlbench_lmeval.data.checksums import file_damage
from sqlbench_lmeval.data.damage import DataDamaged, damaged
from sqlbench_lmeval.data.gold import run_gold as run_gold_jobs
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, Outcome
from sqlbench_lmeval.execution.runner import default_timeout
from sqlbench_lmeval.paths import cache_dir as resolve_cache_dir
from sqlbench_lmeval.paths import gold_cache_dir, write_text_atomically

#: Bump when the build changes what ends up in the database or the manifest.
BUILDER_VERSION = 1

EXTENSION_PACKAGE = "duckdb_extension_tpcds"
DATABASE_NAME = "tpcds.duckdb"
#: The engine that runs the built database.
DATABASE_ENGINE = "duckdb"
MANIFEST_NAME = "manifest.json"
QUERY_COUNT = 99
#: What a killed build leaves: ``.<name>.<pid>.<random>.tmp`` files and DuckDB's ``.wal``.
BUILD_LEFTOVERS = (".*.tmp", ".*.tmp.wal")


def _duckdb():
    import duckdb  # heavy: imported on use, so `import sqlbench_lmeval.tpcds.data` stays cheap

    return duckdb


def extension_path() -> Path:
    """The TPC-DS extension file of the installed ``duckdb-extension-tpcds`` package."""
    duckdb = _duckdb()
    spec = importlib.util.find_spec(EXTENSION_PACKAGE)
    install = f"pip install duckdb-extension-tpcds=={duckdb.__version__}"
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"the TPC-DS extension package is not installed; run `{install}`")
    package = Path(next(iter(spec.submodule_search_locations)))
    path = package / "extensions" / f"v{duckdb.__version__}" / "tpcds.duckdb_extension"
    if not path.is_file():
        raise UserError(
            f"no TPC-DS extension for duckdb {duckdb.__version__} in {package} (the extension "
            f"only loads into the duckdb version it was built for); run `{install}`"
        )
    return path


def connect_with_extension(database: str | os.PathLike = ":memory:"):
    """A read-write DuckDB connection with the TPC-DS extension loaded."""
    duckdb = _duckdb()
    connection = duckdb.connect(str(database))
    try:
        path = str(extension_path()).replace("'", "''")
        connection.execute(f"LOAD '{path}'")
    except BaseException:
        connection.close()
        raise
    return connection


@lru_cache(maxsize=1)
def gold_queries() -> Mapping[int, str]:
    """``{query_nr: sql}`` for the 99 TPC-DS queries, as the extension ships them."""
    with contextlib.closing(connect_with_extension()) as connection:
        rows = connection.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall()
    queries = {int(number): sql.strip() for number, sql in rows}
    if sorted(queries) != list(range(1, QUERY_COUNT + 1)):
        raise RuntimeError(f"the TPC-DS extension returned queries {sorted(queries)}")
    return queries


@lru_cache(maxsize=1)
def _schema_rows() -> tuple[tuple[tuple[str, str, str, bool], ...], Mapping[str, tuple[str, ...]]]:
    """Columns ``(table, column, type, nullable)`` in order, and primary keys per table."""
    with contextlib.closing(connect_with_extension()) as connection:
        connection.execute("CALL dsdgen(sf=0, keys=true)")
        # Base tables of this database only (not the catalog's own views).
        columns = connection.execute(
            "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable "
            "FROM duckdb_columns() AS c JOIN duckdb_tables() AS t "
            "USING (database_name, schema_name, table_name) "
            "WHERE c.database_name = current_database() AND c.schema_name = 'main' "
            "ORDER BY c.table_name, c.column_index"
        ).fetchall()
        keys = connection.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type = 'PRIMARY KEY' AND database_name = current_database()"
        ).fetchall()
    return tuple(columns), {table: tuple(names) for table, names in keys}


def schema_mapping() -> dict[str, dict[str, str]]:
    """``{table: {column: type}}`` of the 24 tables (for sqlglot's ``qualify``)."""
    columns, _keys = _schema_rows()
    mapping: dict[str, dict[str, str]] = {}
    for table, column, data_type, _nullable in columns:
        mapping.setdefault(table, {})[column] = data_type
    return mapping


def primary_keys() -> dict[str, tuple[str, ...]]:
    """``{table: key columns}`` of the tables that have a primary key."""
    return dict(_schema_rows()[1])


@lru_cache(maxsize=1)
def schema_ddl() -> str:
    """CREATE TABLE statements of the 24 tables, one column per line, with primary keys."""
    columns, keys = _schema_rows()
    tables: dict[str, list[str]] = {}
    for table, column, data_type, nullable in columns:
        tables.setdefault(table, []).append(
            f"  {column} {data_type}" + ("" if nullable else " NOT NULL")
        )
    statements = []
    for table, lines in tables.items():
        if table in keys:
            lines = [*lines, f"  PRIMARY KEY ({', '.join(keys[table])})"]
        statements.append(f"CREATE TABLE {table} (\n" + ",\n".join(lines) + "\n);")
    return "\n\n".join(statements)


# ---------------------------------------------------------------- the database


def scale_factor_label(scale_factor: float) -> str:
    """``1`` -> ``"1"``, ``0.01`` -> ``"0.01"``: the folder name part and the version part."""
    return format(float(scale_factor), "g")


#: dsdgen never finishes below this scale factor (0.001 spun for minutes without output).
MIN_SCALE_FACTOR = 0.01


def check_scale_factor(scale_factor) -> float:
    """``scale_factor`` as a float of at least :data:`MIN_SCALE_FACTOR`, or a UserError."""
    try:
        value = float(scale_factor)
    except (TypeError, ValueError) as error:
        raise UserError(f"scale factor must be a number, got {scale_factor!r}") from error
    if not MIN_SCALE_FACTOR <= value < float("inf"):
        raise UserError(
            f"scale factor must be a number of at least {MIN_SCALE_FACTOR:g} "
            f"(TPC-DS's generator does not finish below it), got {scale_factor!r}"
        )
    return value


def database_dir(cache_dir=None, scale_factor: float = 1.0) -> Path:
    label = scale_factor_label(scale_factor)
    return resolve_cache_dir(cache_dir) / "tpcds" / f"v{BUILDER_VERSION}" / f"sf{label}"


def _manifest_file(directory: Path) -> dict | None:
    """The manifest in ``directory`` written by a finished build of this duckdb version, or
    None (no manifest, unreadable, or another duckdb version: its generator and storage may
    differ)."""
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("duckdb_version") != _duckdb().__version__:
        return None
    return manifest


def read_manifest(directory: Path) -> dict | None:
    """The manifest of a finished build in ``directory`` by this duckdb version, or None.

    A build by another duckdb version counts as missing: its generator and storage may differ.
    """
    manifest = _manifest_file(directory)
    if manifest is None or not (directory / DATABASE_NAME).is_file():
        return None
    return manifest


def damage(directory: Path, manifest: Mapping) -> str | None:
    """Why the database a finished build left in ``directory`` cannot be used, or None.

    Its size is recorded at build time (too large to hash on each load:
    ``data.checksums.file_damage``); a build recorded before that is opened instead (a
    truncated DuckDB file fails on its first read of the catalogue).
    """
    database = directory / DATABASE_NAME
    expected = manifest.get("database_bytes")
    reason = file_damage(database, size=expected)
    if reason is not None or expected is not None:
        return reason
    duckdb = _duckdb()
    try:
        with contextlib.closing(duckdb.connect(str(database), read_only=True)) as connection:
            connection.execute("SELECT count(*) FROM duckdb_tables()").fetchall()
    except duckdb.IOException as error:  # truncated, or not a DuckDB file at all
        return f"cannot be read ({str(error).splitlines()[0]})"
    except duckdb.Error:  # e.g. open in this process with other settings: not the file's fault
        return None
    return None


def _damaged_error(directory: Path, scale_factor: float, reason: str) -> DataDamaged:
    option = "" if scale_factor == 1.0 else f" --scale-factor {scale_factor_label(scale_factor)}"
    rebuild = f"`sqlbench-lmeval prepare tpcds{option}`"
    return damaged("the TPC-DS database", directory / DATABASE_NAME, reason, rebuild)


def ensure_database(
    cache_dir=None,
    scale_factor: float = 1.0,
    *,
    progress: bool = False,
    rebuild_damaged: bool = False,
    workers: int | None = None,
) -> dict:
    """The manifest of the TPC-DS database at ``scale_factor``, building it on first use (its
    gold run in ``workers`` processes into the gold cache of ``cache_dir``).

    A finished build whose DuckDB file was since deleted or changed raises DataDamaged
    naming the file and the command that rebuilds it (``prepare``: ``rebuild_damaged``), so
    that a run neither scores against a broken file nor rebuilds for minutes unasked.
    The manifest's ``database`` is the absolute path of the DuckDB file.
    """
    scale_factor = check_scale_factor(scale_factor)
    directory = database_dir(cache_dir, scale_factor)
    manifest = _manifest_file(directory)
    reason = None if manifest is None else damage(directory, manifest)
    if reason is not None and not rebuild_damaged:
        raise _damaged_error(directory, scale_factor, reason)
    if manifest is None or reason is not None:

        def built() -> dict | None:  # by another process meanwhile
            found = _manifest_file(directory)
            return found if found is not None and damage(directory, found) is None else None

        def build() -> dict:
            cache = GoldCache(gold_cache_dir(cache_dir))
            return _build(directory, scale_factor, cache, progress=progress, workers=workers)

        waiting = f"waiting for another build of the TPC-DS database in {directory} ..."
        manifest = build_once(
            directory, BUILD_LEFTOVERS, build, built=built, waiting=waiting if progress else None
        )
    manifest["database"] = str(directory / DATABASE_NAME)
    return manifest


def database(path: str | os.PathLike) -> Database:
    """The built DuckDB file at ``path`` as the execution layer opens it (read-only)."""
    return Database(engine=DATABASE_ENGINE, path=str(path))


#: The limits gold runs under when nobody gives others: scoring's defaults, so that the
#: results the build stores are the ones ``score``, ``gold`` and the lm-eval tasks look up.
GOLD_LIMITS = Limits(timeout_s=default_timeout(DATABASE_ENGINE))


def run_gold(
    path: str | os.PathLike,
    gold_cache: GoldCache,
    *,
    workers: int | None = None,
    progress: bool = False,
) -> dict[int, Outcome]:
    """Every gold query's outcome on the database at ``path``, run sandboxed through
    ``gold_cache`` under :data:`GOLD_LIMITS` (read from it when it holds them; the data
    layer's gold run, ``data.gold.run_gold``)."""
    queries = gold_queries()
    jobs = [Job(database(path), sql) for sql in queries.values()]
    description = "TPC-DS gold queries" if progress else None
    outcomes = run_gold_jobs(
        jobs, GOLD_LIMITS, cache=gold_cache, workers=workers, progress=description
    )
    return dict(zip(queries, outcomes, strict=True))


def _build(
    directory: Path,
    scale_factor: float,
    gold_cache: GoldCache,
    *,
    progress: bool,
    workers: int | None = None,
) -> dict:
    duckdb = _duckdb()
    target = directory / DATABASE_NAME
    temporary = directory / f".{DATABASE_NAME}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    say = print if progress else (lambda *_args, **_kwargs: None)
    try:
        say(f"building the TPC-DS database at scale factor {scale_factor_label(scale_factor)} ...")
        started = time.monotonic()
        connection = connect_with_extension(temporary)
        try:
            connection.execute("CALL dsdgen(sf=?)", [scale_factor])
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        build_seconds = time.monotonic() - started
        os.replace(temporary, target)
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + ".wal")):
            leftover.unlink(missing_ok=True)
    # Gold runs on the file in place, as scoring opens it (the cache memoizes the file's hash
    # by its path); without a manifest yet it is still an unfinished build, removed if this
    # fails.
    say(f"built in {build_seconds:.1f} s; running the 99 gold queries once ...")
    started = time.monotonic()
    try:
        outcomes = run_gold(target, gold_cache, workers=workers, progress=progress)
        gold_rows = _gold_row_counts(target, outcomes)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    gold_seconds = time.monotonic() - started
    manifest = {
        "builder_version": BUILDER_VERSION,
        "scale_factor": scale_factor,
        "duckdb_version": duckdb.__version__,
        "build_seconds": round(build_seconds, 2),
        "gold_seconds": round(gold_seconds, 2),
        "gold_row_counts": {str(number): count for number, count in gold_rows.items()},
        "database_bytes": target.stat().st_size,
    }
    write_text_atomically(directory / MANIFEST_NAME, json.dumps(manifest, indent=1) + "\n")
    # Which gold queries return no rows is prepare's summary to say (once), not the build's.
    say(f"gold ran in {gold_seconds:.1f} s")
    return manifest


def _gold_row_counts(database: Path, outcomes: Mapping[int, Outcome]) -> dict[int, int]:
    """Rows returned by every gold query: the sandboxed run's, and for a query that did not
    finish there (over the time limit on a busy machine, more rows than the cap) a count in
    this process, where gold (our own trusted SQL) runs without limits."""
    counts = {number: len(outcome.rows) for number, outcome in outcomes.items() if outcome.ok}
    unfinished = [number for number in gold_queries() if number not in counts]
    if unfinished:
        duckdb = _duckdb()
        with contextlib.closing(duckdb.connect(str(database), read_only=True)) as connection:
            for number in unfinished:
                counts[number] = len(connection.execute(gold_queries()[number]).fetchall())
    return dict(sorted(counts.items()))


def empty_gold_queries(manifest: Mapping) -> list[int]:
    """Gold queries that return no rows in the database the manifest describes."""
    return sorted(int(n) for n, count in manifest["gold_row_counts"].items() if count == 0)


def empty_gold_summary(numbers: Sequence[int]) -> str:
    """``numbers`` (of gold queries that return no rows) said so that a query number is not
    taken for a count: "1 gold query returns no rows at this scale: q17"."""
    if not numbers:
        return "every gold query returns rows at this scale"
    names = ", ".join(f"q{number}" for number in numbers)
    if len(numbers) == 1:
        return f"1 gold query returns no rows at this scale: {names}"
    return f"{len(numbers)} gold queries return no rows at this scale: {names}"
