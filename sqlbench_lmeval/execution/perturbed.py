"""Perturbed copies of a database file, to tell answers that read the data from constants: one
copy with every row twice, numbers and dates shifted by drawn amounts and texts broken up, one
with a drawn subset of the rows, numbers and dates moved a little and texts as they are; drawn
from a seed that no query can see, built once beside the original, for file engines only (what
the copies hold and why: docs/scoring.md#data-dependence).

>>> interleaved("Shanghai Tower"), interleaved("2024-01-01"), interleaved("北京")
('S~h~a~n~g~h~a~i~ ~T~o~w~e~r~', '2024-01-01', '北~京~')
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from sqlbench_lmeval.build_lock import exclusive_build
from sqlbench_lmeval.execution import engines
from sqlbench_lmeval.execution.job import Database
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

#: Bump when the perturbation changes: every copy is rebuilt. 2: two copies (issue 41).
PERTURBATION_VERSION = 2
FOLDER = ".perturbed"
#: The copies, each in its own folder of :data:`FOLDER` (the same file name: DuckDB names a
#: file's catalog by it): every row twice, and a subset of the rows.
DOUBLED = "doubled"
SUBSET = "subset"
COPIES = (DOUBLED, SUBSET)
#: What a killed build leaves in a copy's folder (removed under the build lock).
LEFTOVERS = (".*.tmp", ".*.tmp.wal", ".*.tmp-journal")
#: Written after every character of a text that holds a letter (so no substring of two or
#: more of its characters is left), and what the second instance of a row appends to it.
MARK = "~"
SECOND = "^"

_built: dict[tuple, tuple[Database, ...]] = {}
_lock = threading.Lock()


def interleaved(text: str, second: bool = False) -> str:
    """A text of a copy: :data:`MARK` after each character when it holds a letter, else (a
    number, a date, a code kept as text) unchanged; :data:`SECOND` appended in a row's second
    instance."""
    if any(character.isalpha() for character in text):
        text = "".join(character + MARK for character in text)
    return text + SECOND if second else text


def perturbed_databases(database: Database) -> tuple[Database, ...] | None:
    """The perturbed copies of ``database`` (:data:`COPIES`, built first if needed), with the
    same engine and setup hook; None when its engine keeps no copy (a server). Raises
    :class:`EvaluationUnavailable` when a copy cannot be built."""
    builder = engines.get(database.engine).build_perturbed
    if builder is None:
        return None
    original = Path(database.path).resolve()
    try:
        info = original.stat()
    except OSError as error:
        raise EvaluationUnavailable(f"the database file {original} is gone: {error}") from error
    memo = (database, info.st_ino, info.st_size, info.st_mtime_ns)
    with _lock:
        found = _built.get(memo)
        if found is not None:
            return found
        copies = []
        for copy in COPIES:
            record = {
                "perturbation_version": PERTURBATION_VERSION,
                "copy": copy,
                "original": str(original),
                "size": info.st_size,
                "mtime_ns": info.st_mtime_ns,
            }
            target = original.parent / FOLDER / copy / original.name
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
                    f"from constants) cannot be built at {target}: {type(error).__name__}: "
                    f"{error}"
                ) from error
            copies.append(Database(database.engine, str(target), database.setup))
        _built[memo] = tuple(copies)
        return _built[memo]


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
        builder(original, temporary, record["copy"])
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
    ``largest_span + 1``, ``largest_span`` the largest max - min of an integer column: what a
    row's second instance adds beyond the first's shift, so the two instances' keys never meet.

    >>> second_shift(0), second_shift(998), second_shift(999), second_shift(2.4e6)
    (1000, 1000, 10000, 10000000)
    >>> second_shift(1e32) == MAX_SHIFT
    True
    """
    reach = (largest_span or 0) + 1
    if reach < 1000:
        return 1000
    return min(MAX_SHIFT, 10 ** (math.floor(math.log10(reach)) + 1))


#: The subset's value hash: ``((v mod P) * A + B) mod P``, squared plus ``C`` mod P; a value
#: whose hash mod 100 is below :data:`DROP_PERCENT` is dropped with every row holding it in a
#: key column (:func:`is_key`). A fact table of TPC-DS holds 9 keys: 0.9 ** 9, 39% of its rows
#: stay.
PRIME = 2_147_483_647
DROP_PERCENT = 10
_KEY = re.compile(r"(id|_sk|key)$", re.IGNORECASE)


def is_key(column: str) -> bool:
    """Whether the subset drops a row by the integer in ``column``: a name that ends like a
    key's (``id``, ``_sk``, ``key``; on SQLite also the primary key's columns). Only keys, so a
    wide table keeps enough rows, and keys alike in every table, so a row that references a
    dropped key goes with it.

    >>> is_key("Customer_ID"), is_key("ss_item_sk"), is_key("Quantity")
    (True, True, False)
    """
    return _KEY.search(column) is not None


@dataclass(frozen=True)
class Draws:
    """One copy's amounts, drawn from :func:`draws`' seed. The doubled copy's: ``shift`` added
    to every integer and real (1 to 999), ``small`` to small integers and decimals (whose types
    bound them, 1 to 3), ``days`` to dates (1 to 400). The subset's: ``small`` added to every
    number and date (days), so literal filters still select rows, and ``a``, ``b``, ``c``, its
    key hash."""

    shift: int
    small: int
    days: int
    a: int
    b: int
    c: int

    def keeps(self, value: int) -> bool:
        """Whether the subset keeps the rows holding the integer ``value``."""
        hashed = ((value % PRIME) * self.a + self.b) % PRIME
        return (hashed * hashed + self.c) % PRIME % 100 >= DROP_PERCENT


def draws(copy: str, summary: list) -> Draws:
    """The amounts of ``copy`` of the database whose tables, columns and row counts are
    ``summary``: drawn from the SHA-256 of both and :data:`PERTURBATION_VERSION`, so every
    machine builds the same copies, while a query, which sees only a copy (whose row counts are
    not the original's), can neither see what they were drawn from nor undo the shifts.

    >>> draws(SUBSET, [["t", ["id"], 3]]) == draws(SUBSET, [["t", ["id"], 3]])
    True
    >>> draws(SUBSET, [["t", ["id"], 3]]) != draws(DOUBLED, [["t", ["id"], 3]])
    True
    """
    seed = json.dumps([PERTURBATION_VERSION, copy, summary], sort_keys=True)
    digest = hashlib.sha256(seed.encode()).digest()

    def number(start: int, low: int, high: int) -> int:
        return low + int.from_bytes(digest[start : start + 4], "big") % (high - low + 1)

    return Draws(
        shift=number(0, 1, 999),
        small=number(4, 1, 3),
        days=number(8, 1, 400),
        a=number(12, 1, PRIME - 1),
        b=number(16, 0, PRIME - 1),
        c=number(20, 0, PRIME - 1),
    )


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


def build_sqlite(original: Path, temporary: Path, copy: str) -> None:
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
        summary = []
        for name, columns in tables.items():
            (count,) = conn.execute(f"SELECT COUNT(*) FROM original.{_quote(name)}").fetchone()
            summary.append([name, [column for column, _ in columns], count])
            for column, _ in columns:
                low, high = conn.execute(
                    f"SELECT MIN({_quote(column)}), MAX({_quote(column)}) FROM original."
                    f"{_quote(name)} WHERE typeof({_quote(column)}) = 'integer'"
                ).fetchone()
                if low is not None:
                    span = max(span, float(high) - float(low))
        chosen = draws(copy, summary)
        steps = [chosen.shift, chosen.shift + second_shift(span)]
        primary = {
            name: {
                row[1]
                for row in conn.execute(f"PRAGMA original.table_info({_quote(name)})")
                if row[5]
            }
            for name in tables
        }
        conn.create_function("perturbed_text", 2, interleaved, deterministic=True)
        conn.create_function("kept_row", -1, lambda *values: _kept(chosen, values))
        for name, columns in tables.items():
            if not columns:
                continue
            names = ", ".join(_quote(column) for column, _ in columns)
            keys = [column for column, _ in columns if is_key(column) or column in primary[name]]
            listed = ", ".join([str(len(keys)), "rowid", *map(_quote, keys)])
            selects = [
                "SELECT "
                + ", ".join(_sqlite_value(column, steps[second], second) for column, _ in columns)
                + f" FROM original.{_quote(name)}"
                for second in ((0, 1) if copy == DOUBLED else (0,))
            ]
            if copy == SUBSET:  # texts as they are, numbers moved a little: rows go
                moved = ", ".join(
                    _sqlite_value(column, chosen.small, 0, texts=False) for column, _ in columns
                )
                selects = [f"SELECT {moved} FROM original.{_quote(name)} WHERE kept_row({listed})"]
            conn.execute(f"INSERT INTO main.{_quote(name)} ({names}) {' UNION ALL '.join(selects)}")
            # An empty table gets one row of 1s (its column affinity makes them 1, 1.0, '1').
            conn.execute(
                f"INSERT INTO main.{_quote(name)} ({names}) SELECT "
                + ", ".join("1" for _ in columns)
                + f" WHERE NOT EXISTS (SELECT 1 FROM original.{_quote(name)})"
            )
        for name in tables:
            _index_like(conn, name)
        for kind, _, sql in schema:
            if kind == "view":
                conn.execute(sql)
        conn.execute("DETACH DATABASE original")
    finally:
        conn.close()


def _kept(chosen: Draws, values: tuple) -> bool:
    """Whether the subset keeps a row (``values``: how many key columns its table has, its
    rowid, then its keys' values): none of the integers in its keys is dropped; in a table
    without keys, by its rowid."""
    count, rowid, keys = values[0], values[1], values[2:]
    integers = [v for v in keys if isinstance(v, int)] if count else [rowid]
    return all(chosen.keeps(v) for v in integers)


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


def _sqlite_value(column: str, step: int, second: int, texts: bool = True) -> str:
    """The SQL of one value of a row's instance: numbers + ``step``, text by
    :func:`interleaved` where ``texts`` (``second``: 1 in the row's second instance)."""
    quoted = _quote(column)
    text = f"WHEN 'text' THEN perturbed_text({quoted}, {second}) " if texts else ""
    return (
        f"CASE typeof({quoted}) WHEN 'integer' THEN {quoted} + {step} "
        f"WHEN 'real' THEN {quoted} + {step} {text}ELSE {quoted} END"
    )


# -- DuckDB ---------------------------------------------------------------------------------

_DUCKDB_INTEGERS = frozenset(
    "TINYINT SMALLINT INTEGER BIGINT HUGEINT UTINYINT USMALLINT UINTEGER UBIGINT UHUGEINT".split()
)
_DUCKDB_SMALL = frozenset("TINYINT SMALLINT UTINYINT USMALLINT".split())
_DUCKDB_FLOATS = frozenset({"FLOAT", "DOUBLE", "REAL"})
_DUCKDB_DATES = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S"})


def _duckdb_value(
    column: str, data_type: str, chosen: Draws, second: int, big: int, texts: bool = True
) -> str:
    """The SQL of one value of a row's instance (``second``: 1 in the second) in DuckDB, cast
    to its column type (NULL where a shifted value leaves it), texts broken up where
    ``texts``; ``big``: the second instance's :func:`second_shift`."""
    quoted = _quote(column)
    if data_type in _DUCKDB_SMALL or data_type.startswith("DECIMAL"):
        value = f"{quoted} + {chosen.small + second}"
    elif data_type in _DUCKDB_INTEGERS or data_type in _DUCKDB_FLOATS:
        value = f"{quoted} + {chosen.shift + second * big}"
    elif data_type in _DUCKDB_DATES:
        value = f"{quoted} + INTERVAL {chosen.days + second * 366} DAY"
    elif data_type == "VARCHAR" and texts:
        # interleaved(), in SQL: RE2's \pL is a letter, as str.isalpha() is.
        text = (
            f"CASE WHEN regexp_matches({quoted}, '\\pL') "
            f"THEN regexp_replace({quoted}, '(?s)(.)', '\\1{MARK}', 'g') ELSE {quoted} END"
        )
        return f"{text} || '{SECOND}'" if second else text
    else:
        return quoted
    return f"TRY_CAST({value} AS {data_type})"


def duckdb_kept_sql(integers: list[str], chosen: Draws) -> str:
    """The SQL of :meth:`Draws.keeps` of every integer key column of a row (NULL keeps it);
    ``rowid`` for a table without one."""
    tests = []
    for column in integers or ["rowid"]:
        # In the column's own type first (HUGEINT throughout is slower), then BIGINT: every
        # product stays below 2 ** 62.
        value = f"((CAST({column} % {PRIME} AS BIGINT) + {PRIME}) % {PRIME})"
        hashed = f"(({value} * {chosen.a} + {chosen.b}) % {PRIME})"
        tests.append(
            f"({column} IS NULL OR ({hashed} * {hashed} + {chosen.c}) % {PRIME} % 100 "
            f">= {DROP_PERCENT})"
        )
    return " AND ".join(tests)


def build_duckdb(original: Path, temporary: Path, copy: str) -> None:
    """:func:`_build_duckdb_here` in a child process: DuckDB will not attach a file that this
    process already has open (a worker run in process, a test), and the build's memory is
    returned when the child ends."""
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(original), str(temporary), copy],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {done.returncode}")


def _build_duckdb_here(original: Path, temporary: Path, copy: str) -> None:
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
        summary = []
        for schema, table in tables:
            columns[schema, table] = conn.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                "'original' AND schema_name = ? AND table_name = ? ORDER BY column_index",
                [schema, table],
            ).fetchall()
            (count,) = conn.execute(
                f"SELECT COUNT(*) FROM original.{_quote(schema)}.{_quote(table)}"
            ).fetchone()
            summary.append([f"{schema}.{table}", [c for c, _ in columns[schema, table]], count])
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
        big = second_shift(span)
        chosen = draws(copy, summary)
        for (schema, table), cols in columns.items():
            # Unqualified: the temporary file's catalog is named after it, not "main".
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {_quote(schema)}")
            definitions = ", ".join(f"{_quote(c)} {t}" for c, t in cols)
            name = f"{_quote(schema)}.{_quote(table)}"
            conn.execute(f"CREATE TABLE {name} ({definitions})")
            selects = [
                "SELECT "
                + ", ".join(_duckdb_value(c, t, chosen, second, big) for c, t in cols)
                + f" FROM original.{name}"
                for second in ((0, 1) if copy == DOUBLED else (0,))
            ]
            if copy == SUBSET:  # texts as they are, numbers moved a little: rows go
                integers = [_quote(c) for c, t in cols if t in _DUCKDB_INTEGERS and is_key(c)]
                little = replace(chosen, shift=chosen.small, days=chosen.small)
                moved = ", ".join(_duckdb_value(c, t, little, 0, big, texts=False) for c, t in cols)
                selects = [
                    f"SELECT {moved} FROM original.{name} WHERE {duckdb_kept_sql(integers, chosen)}"
                ]
            conn.execute(f"INSERT INTO {name} {' UNION ALL '.join(selects)}")
            ones = ", ".join(f"TRY_CAST(1 AS {t})" for _, t in cols)
            conn.execute(
                f"INSERT INTO {name} SELECT {ones} WHERE NOT EXISTS (SELECT 1 FROM original.{name})"
            )
        for (sql,) in conn.execute(
            "SELECT sql FROM duckdb_views() WHERE database_name = 'original' AND NOT internal"
        ).fetchall():
            conn.execute(sql)
        conn.execute("DETACH original")
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


if __name__ == "__main__":  # the child of build_duckdb: ORIGINAL TEMPORARY COPY
    _build_duckdb_here(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])


__all__ = [
    "COPIES",
    "DOUBLED",
    "Draws",
    "FOLDER",
    "PERTURBATION_VERSION",
    "SUBSET",
    "build_duckdb",
    "build_sqlite",
    "draws",
    "duckdb_kept_sql",
    "interleaved",
    "is_key",
    "perturbed_databases",
    "second_shift",
]
