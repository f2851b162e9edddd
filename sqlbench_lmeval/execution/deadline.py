"""A timer that stops a running query at its deadline, for engines that stop queries from
another thread (DuckDB's ``interrupt()``, a MySQL server's ``KILL QUERY``); the outcomes of a
query stopped at its deadline (:func:`stopped`) or at its work budget (:func:`over_budget`)."""

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


def over_budget(budget: int, unit: str, start: float) -> Outcome:
    """The outcome of a query stopped at its work budget (``Limits.work_budget``, counted in
    ``unit``): ``timeout``, with an error that is the same on every machine and load.

    >>> over_budget(1 << 28, "VM steps", time.monotonic()).error
    'stopped at its work budget of 268,435,456 VM steps'
    """
    return Outcome(
        Status.TIMEOUT,
        error=f"{BUDGET_STOP} {budget:,} {unit}",
        elapsed_s=time.monotonic() - start,
    )


def stopped_at_budget(outcome: Outcome) -> bool:
    """Whether ``outcome`` is a query stopped at its work budget (:func:`over_budget`)."""
    return outcome.status is Status.TIMEOUT and (outcome.error or "").startswith(BUDGET_STOP)


#: How the error of a query stopped at its work budget begins.
BUDGET_STOP = "stopped at its work budget of"


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
