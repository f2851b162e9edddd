"""The evaluation itself cannot run: never an item's outcome, always the end of the run.

A model's query that fails is that item's status (``error``, ``timeout``, ...). When the
evaluation cannot evaluate at all - it cannot log in, the server cannot be reached, a database
or table of the benchmark is missing, gold that ran at ``prepare`` no longer runs, a database
file is missing or unreadable, no worker process starts, a setup hook fails, or an account holds
more than SELECT - scoring the item 0 would record the harness's failure as the model's.
Code that detects such a failure raises :class:`EvaluationUnavailable`; every layer lets it
through (runner -> worker -> pool -> scoring -> the ``score``/``gold`` commands and the lm-eval
filter), which stop the run with a message that names the cause.

The runner (``execution.runner``) retries such a failure once on a fresh connection before it
gives up; :class:`ConnectionLost` marks the one kind it waits out instead: a server that was
answering and went away (a restart), after which the item runs again. :class:`CacheUnwritable`
is a cache file under the cache folder that cannot be created, read or written (a read-only
folder, a full disk): scoring stops rather than going on uncached, as a cache that silently
stops caching would make every later run pay for gold again and hide a disk that fills up.
"""

from __future__ import annotations


class EvaluationUnavailable(RuntimeError):
    """The evaluation cannot run queries at all; the message names the cause and the fix."""


class ConnectionLost(EvaluationUnavailable):
    """A server this process was talking to dropped the connection or refuses new ones.

    ``during_query`` says the connection died while a query ran (the query may be the cause:
    the runner re-runs it a few times only); otherwise the server could not be reached. The
    runner waits for the server to come back and runs the item again; only a server that stays
    gone ends the run.
    """

    def __init__(self, message: str, *, during_query: bool = False) -> None:
        super().__init__(message)
        self.during_query = during_query


class CacheUnwritable(EvaluationUnavailable):
    """A cache file (gold results, tie records) cannot be created, read or written."""

    def __init__(self, path, error: BaseException) -> None:
        if isinstance(error, (FileExistsError, NotADirectoryError)):
            cause = f"{path.parent} or a folder above it is a file, not a folder"
        else:
            cause = f"{type(error).__name__}: {error}"
        super().__init__(
            f"the cache file {path} cannot be used ({cause}): make its folder writable and "
            "give it free space, or point the cache elsewhere (--cache-dir, or "
            "$SQLBENCH_LMEVAL_CACHE under lm_eval)"
        )
        self.path = path
