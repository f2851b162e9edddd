"""What a server engine sends: one statement whose first keyword makes it a query, read in the
engine's comment syntax (``lexis``); the server engines' own check before anything is sent,
behind the statement rule of extraction (docs/statement-rule.md).

>>> refusal("/* a note */ (SELECT 1)", "postgres", {"SELECT", "WITH"}, 0.0) is None
True
>>> refusal("# MySQL's comment\\nSET @x = 1", "mysql", {"SELECT", "WITH"}, 0.0).error
'only SELECT statements are allowed (got SET)'
>>> refusal("-- nothing but a comment", "mysql", {"SELECT"}, 0.0).status.value
'no_sql'"""

from __future__ import annotations

import time
from collections.abc import Collection

from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.sql.lexis import code_start, first_keyword, lexis


def refusal(sql: str, dialect: str, allowed: Collection[str], start: float) -> Outcome | None:
    """The outcome of ``sql`` when it is not sent: ``no_sql`` when only blanks and comments of
    ``dialect`` remain, an error when its first keyword is not in ``allowed``; None when it may
    be sent. ``start``: ``time.monotonic()`` when the query began."""
    rules = lexis(dialect)
    if code_start(sql, rules) >= len(sql):
        return Outcome(Status.NO_SQL, error="no statement to run")
    keyword = first_keyword(sql, rules)
    if keyword not in allowed:
        return Outcome(
            Status.ERROR,
            error=f"only SELECT statements are allowed (got {keyword or 'no keyword'})",
            elapsed_s=time.monotonic() - start,
        )
    return None
