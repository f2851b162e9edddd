"""A timer that stops a running query at its deadline, for engines that stop queries from
another thread (DuckDB's ``interrupt()``, a MySQL server's ``KILL QUERY``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sqlbench_lmeval.execution.outcome import Outcome, Status


def stopped(timeout_s: float, start: float) -> Outcome:
    """The outcome of a query stopped at its deadline (``start``: ``time.monotonic()`` when it
    began)."""
    return Outcome(
        Status.TIMEOUT,
        error=f"stopped after {timeout_s:g} s",
        elapsed_s=time.monotonic() - start,
    )


class Deadline:
    """Calls ``stop_query`` after ``timeout_s`` seconds unless :meth:`stop` came first.

    ``fired`` says whether it did, so the engine can report a timeout rather than the error
    the interrupted query raised.
    """

    def __init__(self, timeout_s: float, stop_query: Callable[[], object]) -> None:
        self._stop_query = stop_query
        self._lock = threading.Lock()
        self._active = True
        self.fired = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        # The lock makes "still running?" and the stop one step, so a late timer can never
        # stop the next query on the same connection.
        with self._lock:
            if self._active:
                self.fired = True
                self._stop_query()

    def stop(self) -> None:
        """The query finished: the deadline no longer applies."""
        with self._lock:
            self._active = False
        self._timer.cancel()
