"""Built data that is not there, or was damaged after it was prepared: the errors that stop a
run naming the file and the command that rebuilds it, rather than rebuilding unasked (a
download where the cache was copied to, or minutes nobody asked for) or scoring against a
broken file (docs/failures.md#damaged-data-a-full-server-run-folders).

>>> error = damaged("the database", "/c/t.db", "is missing", "`prepare t`")
>>> str(error)
'the database /c/t.db is missing: it was damaged after it was prepared; rebuild it with `prepare t`'
"""

from __future__ import annotations

import os

from sqlbench_lmeval.errors import UserError


class DataMissing(UserError):
    """No complete built data in the cache (never built, or by another builder version)."""


class DataDamaged(DataMissing):
    """Built data that was prepared, and one of its files is since gone or changed."""


def damaged(
    what: str,
    path: str | os.PathLike,
    reason: str,
    rebuild: str,
    *,
    subject: str = "it",
    detail: str = "",
) -> DataDamaged:
    """The error for the file ``path`` (``what`` names it) found ``reason`` (as
    ``checksums.file_damage`` says it): ``subject`` was damaged after it was prepared
    (``detail``); ``rebuild`` is the command that rebuilds it, with any note after it."""
    return DataDamaged(
        f"{what} {path} {reason}: {subject} was damaged after it was prepared{detail}; "
        f"rebuild it with {rebuild}"
    )
