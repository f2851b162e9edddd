"""The evaluation itself cannot run: never an item's outcome, always the end of the run, with a
message that names the cause (:class:`EvaluationUnavailable`; the kinds waited out first,
:class:`ConnectionLost` and :class:`ServerBusy`, and :class:`CacheUnwritable`). The cases and
why: docs/failures.md."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator

#: How long a server at its connection limit is waited for before the run stops.
BUSY_WINDOW_S = 180.0
#: The first pause before trying again; each next one doubles, up to BUSY_PAUSE_MAX_S.
BUSY_PAUSE_S = 0.5
BUSY_PAUSE_MAX_S = 8.0
BUSY_ADVICE = (
    "raise the server's max_connections, or run fewer evaluating machines or fewer --workers "
    "at once (a scoring machine holds at most three connections per worker and one more; a "
    "prepare three per worker and two more)"
)


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


class ServerBusy(ConnectionLost):
    """The server turns new connections away because it holds as many as it allows (MySQL's
    1040 ``Too many connections``, PostgreSQL's ``too many clients already``). Not a server that
    is gone: runs on other machines end and free theirs."""


def busy_pauses() -> Iterator[float]:
    """Pauses between attempts on a busy server: 0.5 s, doubling, at most BUSY_PAUSE_MAX_S."""
    pause = BUSY_PAUSE_S
    while True:
        yield pause
        pause = min(pause * 2, BUSY_PAUSE_MAX_S)


def wait_while_busy(connect: Callable, is_busy: Callable[[BaseException], bool], where: str):
    """``connect()``, tried again with growing pauses for up to BUSY_WINDOW_S while it fails with
    an error ``is_busy`` says is the server's connection limit (said once on stderr); then that
    error. For connections outside the worker processes (pre-flight checks, prepare): the
    workers wait in ``execution.runner``, where the watchdog hears from them meanwhile."""
    started = None
    pauses = busy_pauses()
    while True:
        try:
            return connect()
        except Exception as error:
            if not is_busy(error):
                raise
            now = time.monotonic()
            if started is None:
                started = now
                print(
                    f"sqlbench-lmeval: {where} has no free connection ({error}); waiting up "
                    f"to {BUSY_WINDOW_S:g} s for other clients to finish",
                    file=sys.stderr,
                    flush=True,
                )
            elif now - started >= BUSY_WINDOW_S:
                raise
            time.sleep(next(pauses))
