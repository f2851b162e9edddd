"""The SQL dialect a prompt asks for, and the way from it to the dialect the engine runs: names,
checks and sqlglot's translation (how a run asks for another dialect and what happens to the
answer: docs/scoring.md#how-an-answer-is-scored, step 1).

>>> display_name("postgres"), check_dialect("PostgreSQL", default="duckdb")
('PostgreSQL', 'postgres')
>>> sqlglot_transpile("SELECT `a b` FROM t", read="mysql", write="duckdb")
'SELECT "a b" FROM t'
>>> sqlglot_transpile("SELECT 1; SELECT 2", read="duckdb", write="sqlite")
Traceback (most recent call last):
...
sqlbench_lmeval.sql.dialects.TranspileError: expected one statement, found 2"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialects
from sqlglot.optimizer.annotate_types import annotate_types

from sqlbench_lmeval.errors import UserError


class TranspileError(ValueError):
    """A prediction cannot be translated into the engine's dialect."""


#: How prompts name a dialect; sqlglot's name, capitalised, for the rest.
DISPLAY_NAMES = {
    "bigquery": "BigQuery",
    "clickhouse": "ClickHouse",
    "duckdb": "DuckDB",
    "mysql": "MySQL",
    "oracle": "Oracle",
    "postgres": "PostgreSQL",
    "snowflake": "Snowflake",
    "spark": "Spark",
    "sqlite": "SQLite",
    "trino": "Trino",
    "tsql": "SQL Server",
}

#: Spellings users type for a dialect sqlglot names otherwise.
_ALIASES = {"postgresql": "postgres", "sqlserver": "tsql", "mssql": "tsql"}


def check_dialect(name: str | None, default: str) -> str:
    """The sqlglot dialect ``name`` asks for (``default`` when None or empty); a UserError
    naming the choices when sqlglot has no such dialect."""
    if not name:
        return default
    wanted = _ALIASES.get(name.strip().lower(), name.strip().lower())
    known = sorted(d.value for d in Dialects if d.value)
    if wanted not in known:
        raise UserError(f"unknown SQL dialect {name!r}; choose one of {', '.join(known)}")
    return wanted


def display_name(dialect: str) -> str:
    """The name a prompt uses for a sqlglot dialect (``postgres`` -> ``PostgreSQL``)."""
    return DISPLAY_NAMES.get(dialect, dialect.capitalize())


def sqlglot_transpile(sql: str, read: str, write: str) -> str:
    """One statement read in ``read`` and written in ``write`` by sqlglot alone.

    Raises :class:`TranspileError` when the text does not parse in ``read`` or holds more or
    fewer than one statement. Constructs ``write`` lacks are written as sqlglot writes them
    (``unsupported_level`` IGNORE, as for LogicCat's gold): the engine judges them.
    """
    try:
        trees = [tree for tree in sqlglot.parse(sql, read=read) if tree is not None]
    except sqlglot.errors.SqlglotError as error:
        raise TranspileError(f"sqlglot cannot parse it as {read}: {error}") from None
    if len(trees) != 1:
        raise TranspileError(f"expected one statement, found {len(trees)}")
    return _typed(trees[0], read).sql(dialect=write, unsupported_level=sqlglot.ErrorLevel.IGNORE)


def _typed(tree: exp.Expression, dialect: str) -> exp.Expression:
    """``tree`` with the types sqlglot can infer without a schema, so that meanings that
    depend on them survive: PostgreSQL's ``7 / 2`` is 3 and DuckDB's 3.5, and sqlglot writes
    an integer division it can see as ``CAST(TRUNC(7 / 2) AS BIGINT)``."""
    try:
        return annotate_types(tree, dialect=dialect)
    except Exception:  # inference is an improvement, never a reason to fail the translation
        return tree
