"""A prediction in the engine's dialect: the benchmark's translator applied to one item's SQL, when
the prompt asked for another dialect than the engine runs (:mod:`sqlbench_lmeval.sql.dialects`);
:func:`engine_sql` gives the SQL that runs, or why none does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.vocabulary import Reason

#: The ``reason`` of an item whose prediction could not be translated to the engine's dialect.
TRANSPILE_ERROR = Reason.TRANSPILE_ERROR

#: A benchmark's translation of ``sql`` (written in ``item.prediction_dialect``) into the
#: engine's dialect ``item.dialect``; it raises when it cannot.
Transpile = Callable[[Item, str], str]


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
