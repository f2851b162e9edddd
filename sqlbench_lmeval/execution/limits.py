"""Under which limits a query runs: :class:`Limits` (time, rows, memory, work, gold's own time
limit), :data:`DEFAULT_LIMITS`.

>>> DEFAULT_LIMITS.for_gold().timeout_s, DEFAULT_LIMITS.for_gold().work_budget
(60.0, None)
"""

from __future__ import annotations

from dataclasses import dataclass

#: The answers' work budget on an engine that counts work as it runs: 2**28 SQLite VM steps,
#: about 5 s of a VM-bound recursive loop on this project's 2-core machine, so it decides before the
#: 10 s time limit on a quiet machine; LogicCat's heaviest gold (item 1440) takes 70.5 million.
WORK_BUDGET = 1 << 28


@dataclass(frozen=True)
class Limits:
    """Per-query limits, enforced inside the engine (and by killing the worker as a backstop)."""

    timeout_s: float = 10.0  # wall clock per query
    max_rows: int = 10_000  # more rows -> Status.TOO_MANY_ROWS
    memory_mb: int = 1024  # per worker: SQLite heap limit / DuckDB memory_limit
    #: Gold's own time limit, for gold that did not finish within ``timeout_s`` (its cost is
    #: the benchmark's, not the model's); None: the larger of ``GOLD_MIN_TIMEOUT_S`` and
    #: ``timeout_s``. Not part of the gold cache's key: only gold that finished is stored.
    gold_timeout_s: float | None = None
    #: Gold that still does not finish within its limit: False stops the run naming the items;
    #: True leaves those items out of every mean (never scored 0) and counts them apart.
    exclude_unfinished_gold: bool = False
    #: False where nothing reads a run's ``Outcome.work`` (the runs on a perturbed copy, which
    #: only compare results): SQLite then runs a statement once, without its exact step count
    #: (docs/r-ves.md#how-each-engine-counts-work), DuckDB reads no profile, and ``work`` is
    #: None. Part of the gold cache's key when False.
    count_work: bool = True
    #: The most work an answer may do, in the engine's unit of work, on an engine that counts
    #: it as it runs (``Engine.stops_at_work_budget``: SQLite's VM steps); the others ignore it.
    #: A query stopped there is ``timeout`` whatever the machine's load (the rule:
    #: docs/failures.md#an-answer-that-runs-out-of-time). None: no budget, as under gold's own
    #: limits (``for_gold``). Not part of the gold cache's key: a stopped query is never
    #: stored, and one that finished gives the same outcome under any budget.
    work_budget: int | None = WORK_BUDGET

    def for_gold(self) -> Limits:
        """These limits with gold's own time limit (see ``gold_timeout_s``) and no work budget
        (gold's cost is the benchmark's)."""
        timeout = self.gold_timeout_s
        if timeout is None:
            timeout = max(GOLD_MIN_TIMEOUT_S, self.timeout_s)
        return Limits(
            timeout_s=timeout,
            max_rows=self.max_rows,
            memory_mb=self.memory_mb,
            count_work=self.count_work,
            work_budget=None,
        )


#: The least time gold gets when it did not finish within the answers' limit (a gold query of
#: the benchmark that needs 20 s on a loaded machine is not the model's failure).
GOLD_MIN_TIMEOUT_S = 60.0


DEFAULT_LIMITS = Limits()  # frozen, so safe to share as a default argument
