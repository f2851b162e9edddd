"""The SQL dialect a prompt asks for, and the way from it to the dialect the engine runs.

Each benchmark executes on one engine, whose sqlglot dialect is ``Item.dialect`` (LogicCat:
``sqlite``, TPC-DS: ``duckdb``). A run may ask the model for another dialect - the TPC-DS paper
prompted for PostgreSQL, LogicCat's gold is MySQL - through ``--metadata '{"dialect": ...}'``,
a task variant (``tpcds_postgres``, ``logiccat_mysql``) or ``sqlbench-lmeval score --dialect``.
Then ``Item.prediction_dialect`` names it and, per item:

1. the prompt names that dialect (the benchmark's ``task`` module, with :func:`display_name`);
2. the extracted SQL is translated into the engine's dialect by the benchmark's
   ``transpile_prediction(item, sql)`` hook (:func:`engine_sql`); the text that ran is kept as
   ``executed_sql`` beside ``extracted_sql``;
3. a translation that fails is that item's outcome - status ``error`` with reason
   :data:`TRANSPILE_ERROR`, never an exception out of scoring;
4. structure (TPC-DS) is read from the prediction as written, in the prompted dialect.

With the default (the engine's own dialect) nothing is translated: ``executed_sql`` is the
extracted SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialects
from sqlglot.optimizer.annotate_types import annotate_types

from sqlbench_lmeval.errors import UserError

if TYPE_CHECKING:
    from sqlbench_lmeval.scoring.item import Item


class TranspileError(ValueError):
    """A prediction cannot be translated into the engine's dialect."""


#: The ``reason`` of an item whose prediction could not be translated to the engine's dialect.
TRANSPILE_ERROR = "transpile_error"

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

#: A benchmark's translation of ``sql`` (written in ``item.prediction_dialect``) into the
#: engine's dialect ``item.dialect``; it raises when it cannot.
Transpile = Callable[["Item", str], str]


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


@dataclass(frozen=True)
class EngineSql:
    """What runs for one prediction: the engine-dialect SQL, or why there is none."""

    sql: str | None  # None: nothing extracted, or the translation failed
    error: str | None = None  # the translation's failure, for the item's ``error`` field


def engine_sql(item: Item, sql: str | None, transpile: Transpile | None) -> EngineSql:
    """``sql`` (written in the item's prediction dialect) in the engine's dialect.

    Unchanged when the two dialects are the same or there is nothing to run. Any exception of
    ``transpile`` is the item's failure, named with both dialects (a crash in one
    translation must not stop the scoring of a whole run).
    """
    written = item.prompted_dialect
    if sql is None or written == item.dialect:
        return EngineSql(sql)
    if transpile is None:
        return EngineSql(None, f"cannot translate {written} to {item.dialect}: no translator")
    try:
        return EngineSql(transpile(item, sql))
    except Exception as error:  # every failure is this item's outcome, whatever raised it
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return EngineSql(None, f"cannot translate {written} to {item.dialect}: {message[:300]}")
