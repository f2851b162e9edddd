"""What a server engine sends: one statement whose first keyword makes it a query.

A server runs whatever statement its account may; extraction already refused every answer that
is not a query (``extract``), and this is the server engines' own check before anything is
sent, read in the engine's comment syntax (``lexis``: PostgreSQL's comments nest, MySQL's ``#``
is a comment and its executable comment ``/*! ... */`` is code): blanks, comments and opening
parentheses skipped, the first word must be one the engine allows.
"""

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
