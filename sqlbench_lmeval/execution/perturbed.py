"""A perturbed copy of a database file, to tell answers that read the data from constants: every
row twice with other values, built once beside the original, for file engines only (what the
copy holds and why: docs/scoring.md#data-dependence)."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
import threading
import urllib.parse
import uuid
from pathlib import Path

from sqlbench_lmeval.build_lock import exclusive_build
from sqlbench_lmeval.execution import engines
from sqlbench_lmeval.execution.job import Database
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

#: Bump when the perturbation changes: every copy is rebuilt.
PERTURBATION_VERSION = 1
FOLDER = ".perturbed"
#: What a killed build leaves in :data:`FOLDER` (removed under the build lock).
LEFTOVERS = (".*.tmp", ".*.tmp.wal", ".*.tmp-journal")
#: Appended to every text of a row's first and second copy.
TEXT_SUFFIXES = ("~", "~~")

_built: dict[tuple, Database] = {}
_lock = threading.Lock()


def perturbed_database(database: Database) -> Database | None:
    """The perturbed copy of ``database`` (built first if needed), with the same engine and
    setup hook; None when its engine keeps no copy (a server). Raises
    :class:`EvaluationUnavailable` when the copy cannot be built."""
    builder = engines.get(database.engine).build_perturbed
    if builder is None:
        return None
    original = Path(database.path).resolve()
    try:
        info = original.stat()
    except OSError as error:
        raise EvaluationUnavailable(f"the database file {original} is gone: {error}") from error
    record = {
        "perturbation_version": PERTURBATION_VERSION,
        "original": str(original),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
    }
    memo = (database, info.st_ino, info.st_size, info.st_mtime_ns)
    with _lock:
        found = _built.get(memo)
        if found is not None:
            return found
        target = original.parent / FOLDER / original.name
        try:
            if not _current(target, record):
                with exclusive_build(target.parent, LEFTOVERS):
                    if not _current(target, record):  # another process may have built it
                        _build(builder, original, target, record)
        except EvaluationUnavailable:
            raise
        except Exception as error:
            raise EvaluationUnavailable(
                f"the perturbed copy of {original} (which tells answers that read the data "
                f"from constants) cannot be built at {target}: {type(error).__name__}: {error}"
            ) from error
        copy = Database(database.engine, str(target), database.setup)
        _built[memo] = copy
        return copy


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _current(target: Path, record: dict) -> bool:
    try:
        return target.is_file() and json.loads(_record_path(target).read_text()) == record
    except (OSError, ValueError):
        return False


def _build(builder, original: Path, target: Path, record: dict) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        builder(original, temporary)
        _record_path(target).unlink(missing_ok=True)
        os.replace(temporary, target)
        _record_path(target).write_text(json.dumps(record))
    finally:
        for leftover in (temporary, Path(f"{temporary}.wal"), Path(f"{temporary}-journal")):
            leftover.unlink(missing_ok=True)


#: The largest ``K``: integers stay exact 64-bit integers (and exact in a double) up to there.
MAX_SHIFT = 10**15


def second_shift(largest_span: float) -> int:
    """``K``: the least power of ten (at least 1,000, at most :data:`MAX_SHIFT`) above
    ``largest_span + 1``, ``largest_span`` the largest max - min of an integer column: the
    first copy's keys reach max + 1, the second's start at min + K.

    >>> second_shift(0), second_shift(998), second_shift(999), second_shift(2.4e6)
    (1000, 1000, 10000, 10000000)
    >>> second_shift(1e32) == MAX_SHIFT
    True
    """
    reach = (largest_span or 0) + 1
    if reach < 1000:
        return 1000
    return min(MAX_SHIFT, 10 ** (math.floor(math.log10(reach)) + 1))


# -- SQLite ---------------------------------------------------------------------------------


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sqlite_collations(create_sql: str) -> dict[str, str]:
    """Column name (lower case) -> its COLLATE name, read from a CREATE TABLE statement."""
    import sqlglot  # heavy: only a build parses DDL
    from sqlglot import exp

    tree = sqlglot.parse_one(create_sql, read="sqlite")
    found = {}
    for column in tree.find_all(exp.ColumnDef):
        for constraint in column.constraints:
            if isinstance(constraint.kind, exp.CollateColumnConstraint):
                found[column.name.lower()] = constraint.kind.this.name
    return found


def build_sqlite(original: Path, temporary: Path) -> None:
    uri = "file:" + urllib.parse.quote(str(original)) + "?mode=ro"
    target = "file:" + urllib.parse.quote(str(temporary))
    conn = sqlite3.connect(target, uri=True, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("ATTACH DATABASE ? AS original", (uri,))
        schema = conn.execute(
            "SELECT type, name, sql FROM original.sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
        tables = {}
        for kind, name, sql in schema:
            if kind != "table" or sql.lstrip().upper().startswith("CREATE VIRTUAL"):
                continue
            columns = [
                (row[1], row[2] or "")
                for row in conn.execute(f"PRAGMA original.table_xinfo({_quote(name)})")
                if row[6] == 0  # hidden 0: a stored column, not a generated one
            ]
            tables[name] = columns
            collations = _sqlite_collations(sql)
            definitions = ", ".join(
                f"{_quote(column)} {declared}"
                + (f" COLLATE {collations[column.lower()]}" if column.lower() in collations else "")
                for column, declared in columns
            )
            conn.execute(f"CREATE TABLE main.{_quote(name)} ({definitions})")
        span = 0.0
        for name, columns in tables.items():
            for column, _ in columns:
                low, high = conn.execute(
                    f"SELECT MIN({_quote(column)}), MAX({_quote(column)}) FROM original."
                    f"{_quote(name)} WHERE typeof({_quote(column)}) = 'integer'"
                ).fetchone()
                if low is not None:
                    span = max(span, float(high) - float(low))
        shift = second_shift(span)
        for name, columns in tables.items():
            if not columns:
                continue
            names = ", ".join(_quote(column) for column, _ in columns)
            copies = [
                ", ".join(_sqlite_value(column, step, suffix) for column, _ in columns)
                for step, suffix in zip((1, shift), TEXT_SUFFIXES, strict=True)
            ]
            conn.execute(
                f"INSERT INTO main.{_quote(name)} ({names}) "
                f"SELECT {copies[0]} FROM original.{_quote(name)} "
                f"UNION ALL SELECT {copies[1]} FROM original.{_quote(name)}"
            )
            # An empty table gets one row of 1s (its column affinity makes them 1, 1.0, '1').
            conn.execute(
                f"INSERT INTO main.{_quote(name)} ({names}) SELECT "
                + ", ".join("1" for _ in columns)
                + f" WHERE NOT EXISTS (SELECT 1 FROM main.{_quote(name)})"
            )
        for name in tables:
            _index_like(conn, name)
        for kind, _, sql in schema:
            if kind == "view":
                conn.execute(sql)
        conn.execute("DETACH DATABASE original")
    finally:
        conn.close()


def _index_like(conn: sqlite3.Connection, table: str) -> None:
    """Index the copy of ``table`` on the columns the original indexes (its primary key, unique
    constraints and indexes, non-unique here): without them a join the original answers by
    lookups becomes a scan of every pair of rows."""
    keys = [row[1] for row in conn.execute(f"PRAGMA original.table_xinfo({_quote(table)})")]
    indexed = []
    pk = sorted(
        (row[5], row[1])
        for row in conn.execute(f"PRAGMA original.table_info({_quote(table)})")
        if row[5]
    )
    if pk:
        indexed.append([column for _, column in pk])
    for index in conn.execute(f"PRAGMA original.index_list({_quote(table)})").fetchall():
        columns = [
            row[2] for row in conn.execute(f"PRAGMA original.index_info({_quote(index[1])})")
        ]
        if columns and all(column in keys for column in columns):  # no expression index
            indexed.append(columns)
    for number, columns in enumerate(indexed):
        listed = ", ".join(_quote(column) for column in columns)
        index = _quote(f"perturbed_{table}_{number}")
        conn.execute(f"CREATE INDEX main.{index} ON {_quote(table)} ({listed})")


def _sqlite_value(column: str, step: int, suffix: str) -> str:
    """The SQL of one value of a row's copy: numbers + ``step``, text + ``suffix``."""
    quoted = _quote(column)
    return (
        f"CASE typeof({quoted}) WHEN 'integer' THEN {quoted} + {step} "
        f"WHEN 'real' THEN {quoted} + {step} WHEN 'text' THEN {quoted} || '{suffix}' "
        f"ELSE {quoted} END"
    )


# -- DuckDB ---------------------------------------------------------------------------------

_DUCKDB_INTEGERS = frozenset(
    "TINYINT SMALLINT INTEGER BIGINT HUGEINT UTINYINT USMALLINT UINTEGER UBIGINT UHUGEINT".split()
)
_DUCKDB_SMALL = frozenset("TINYINT SMALLINT UTINYINT USMALLINT".split())
_DUCKDB_FLOATS = frozenset({"FLOAT", "DOUBLE", "REAL"})
_DUCKDB_DATES = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S"})


def _duckdb_value(column: str, data_type: str, copy: int, shift: int) -> str:
    """The SQL of one value of a row's ``copy`` (1 or 2) in DuckDB, cast to its column type."""
    quoted = _quote(column)
    if data_type in _DUCKDB_INTEGERS or data_type in _DUCKDB_FLOATS:
        step = 1 if copy == 1 else (2 if data_type in _DUCKDB_SMALL else shift)
        value = f"{quoted} + {step}"
    elif data_type.startswith("DECIMAL"):
        value = f"{quoted} + {copy}"
    elif data_type in _DUCKDB_DATES:
        value = f"{quoted} + INTERVAL {1 if copy == 1 else 366} DAY"
    elif data_type == "VARCHAR":
        value = f"{quoted} || '{TEXT_SUFFIXES[copy - 1]}'"
    else:
        return quoted
    return f"CAST({value} AS {data_type})"


def build_duckdb(original: Path, temporary: Path) -> None:
    """:func:`_build_duckdb_here` in a child process: DuckDB will not attach a file that this
    process already has open (a worker run in process, a test), and the build's memory is
    returned when the child ends."""
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(original), str(temporary)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {done.returncode}")


def _build_duckdb_here(original: Path, temporary: Path) -> None:
    import duckdb  # heavy: only a DuckDB build needs it here

    conn = duckdb.connect(str(temporary))
    try:
        quoted = str(original).replace("'", "''")
        conn.execute(f"ATTACH '{quoted}' AS original (READ_ONLY)")
        conn.execute("SET threads = 2")
        tables = conn.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() "
            "WHERE database_name = 'original' ORDER BY schema_name, table_name"
        ).fetchall()
        columns: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for schema, table in tables:
            columns[schema, table] = conn.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                "'original' AND schema_name = ? AND table_name = ? ORDER BY column_index",
                [schema, table],
            ).fetchall()
        span = 0.0
        for (schema, table), cols in columns.items():
            numeric = [c for c, t in cols if t in _DUCKDB_INTEGERS]
            if not numeric:
                continue
            parts = ", ".join(
                f"MAX({_quote(c)})::DOUBLE - MIN({_quote(c)})::DOUBLE" for c in numeric
            )
            row = conn.execute(
                f"SELECT {parts} FROM original.{_quote(schema)}.{_quote(table)}"
            ).fetchone()
            span = max([span, *(value for value in row if value is not None)])
        shift = second_shift(span)
        for (schema, table), cols in columns.items():
            # Unqualified: the temporary file's catalog is named after it, not "main".
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {_quote(schema)}")
            definitions = ", ".join(f"{_quote(c)} {t}" for c, t in cols)
            name = f"{_quote(schema)}.{_quote(table)}"
            conn.execute(f"CREATE TABLE {name} ({definitions})")
            copies = [
                ", ".join(_duckdb_value(c, t, copy, shift) for c, t in cols) for copy in (1, 2)
            ]
            conn.execute(
                f"INSERT INTO {name} SELECT {copies[0]} FROM original.{name} "
                f"UNION ALL SELECT {copies[1]} FROM original.{name}"
            )
            ones = ", ".join(f"TRY_CAST(1 AS {t})" for _, t in cols)
            conn.execute(
                f"INSERT INTO {name} SELECT {ones} WHERE NOT EXISTS (SELECT 1 FROM {name})"
            )
        for (sql,) in conn.execute(
            "SELECT sql FROM duckdb_views() WHERE database_name = 'original' AND NOT internal"
        ).fetchall():
            conn.execute(sql)
        conn.execute("DETACH original")
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


if __name__ == "__main__":  # the child of build_duckdb: ORIGINAL TEMPORARY
    _build_duckdb_here(Path(sys.argv[1]), Path(sys.argv[2]))


__all__ = [
    "FOLDER",
    "PERTURBATION_VERSION",
    "build_duckdb",
    "build_sqlite",
    "perturbed_database",
    "second_shift",
]
