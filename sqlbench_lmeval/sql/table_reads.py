"""Does a query read the database at all? Answers that read no table are constants.

A LogicCat answer can be ``SELECT 646.8 UNION ALL SELECT 1292.2``: numbers the model computed
from the question, written as literals. It runs, and when the numbers are right it matches
gold, yet it never looked at the data. Scoring keeps such an answer's status and EX and marks
it (``reads_no_table`` in the score dict); ``ex_reads_data`` is EX with those answers counted
wrong (see ``scoring``). Some gold queries are themselves such calculations (116 of LogicCat's
4,036, none of TPC-DS's 99): answers to those items are not flagged.

A query reads a table when some FROM/JOIN (or ``TABLE t``) names one that is not a CTE of the
query: ``WITH r AS (SELECT 1) SELECT * FROM r``, ``FROM (VALUES ...)``, a table function such as
``generate_series(1, 3)`` and MySQL's ``DUAL`` read nothing. The test is a pure function of the
SQL text and its dialect; a query without the words FROM or TABLE cannot read a table and is
answered without parsing.
"""

from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp

# Without one of these words (outside nothing: a string holding "from" just means we parse),
# no table can be named.
_MAY_READ = re.compile(r"\b(from|table)\b", re.IGNORECASE)

#: Names that look like tables but hold no data: MySQL's (and Oracle's) one-row dummy.
_DUMMY_TABLES = frozenset({"dual"})


@lru_cache(maxsize=4096)
def reads_no_table(sql: str, dialect: str) -> bool | None:
    """True when ``sql`` (in sqlglot ``dialect``) reads no table of the database, False when it
    reads one, None when sqlglot cannot parse it (then nothing is claimed)."""
    if not _MAY_READ.search(sql):
        return True
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:  # sqlglot's errors, and anything a hostile text provokes in it
        return None
    trees = [tree for tree in trees if tree is not None]
    if not trees:
        return None
    return not any(_reads_table(tree) for tree in trees)


def _reads_table(tree: exp.Expression) -> bool:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):  # a table function, e.g. range(3)
            continue
        name = table.name.lower()
        if not table.db and (name in ctes or name in _DUMMY_TABLES):
            continue
        return True
    return False


__all__ = ["reads_no_table"]
