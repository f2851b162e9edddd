"""An answer stopped at its work budget (``Limits.work_budget``, on an engine that counts work as
it runs: SQLite) is ``timeout`` as it is: the budget is the same under any load. An answer that
runs past its time limit is run once more before it counts as ``timeout``: alone, on a fresh
worker, with nothing else of the run running; on an engine with a work budget under gold's time
limit, so that the budget and not the clock decides; elsewhere right after gold of its item ran
alone on that worker, under the larger of its limit and :data:`GOLD_FACTOR` times what gold
took then (the rule and why: docs/failures.md#an-answer-that-runs-out-of-time). So a load that
slows gold and the answer alike never makes an answer as costly as gold a ``timeout``; the
error of what still does not finish names the rule that applied (never a measured time: a
score must not depend on load), and :func:`timed_out_line` says it once per run.

>>> error = still_late(10.0)
>>> limit_in(error)
10.0
>>> line = timed_out_line([{"id": 3, "status": "timeout", "error": error}, {"id": 4}])
>>> line.split(": ")[1].split(", also")[0]
"items 3 under the answers' limit of 10 s (or three times gold's time, where longer)"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from sqlbench_lmeval.execution import Job, Limits, Outcome, Status, engines, execute_many
from sqlbench_lmeval.execution.deadline import BUDGET_STOP, stopped_at_budget
from sqlbench_lmeval.execution.pool import WorkerPool

#: An answer run again alone gets at least this many times what its gold took alone just before.
GOLD_FACTOR = 3.0
#: How many times gold and then the answer run alone at most: once more only where gold, run
#: again after the answer ran past, took :data:`GOLD_SLOWER` times as long as before or more
#: (the load rose meanwhile; at 0.2 s limits under CPU stress one round let TPC-DS's item 23,
#: gold's own SQL, end ``timeout``).
GOLD_ROUNDS = 2
GOLD_SLOWER = 1.25
#: Where docs/failures.md states the rule.
RULE = "docs/failures.md#an-answer-that-runs-out-of-time"
_LIMIT = re.compile(r"past the answers' limit of ([0-9.]+) s")


def settle(
    job: Job,
    gold: Job | None,
    outcome: Outcome,
    limits: Limits,
    workers: int | None = None,
    pool: WorkerPool | None = None,
) -> Outcome:
    """``outcome``, what ``job`` gave under ``limits`` in a batch, unless it ran past its time
    limit (a stop at the work budget stands: it is the same under any load). Then ``job`` runs
    alone on a fresh worker: on an engine that stops at ``limits.work_budget``, under gold's
    time limit with that budget; elsewhere ``gold`` (None: no gold to measure) runs alone there
    first, and ``job`` under the larger of ``limits.timeout_s`` and :data:`GOLD_FACTOR` times
    gold's time, both once more (:data:`GOLD_ROUNDS`) if gold then takes longer than before.
    That outcome counts (still past its time: its error says so, naming the
    answers' limit; the measured one stays out of the score, which must not depend on load)."""
    if outcome.status is not Status.TIMEOUT or stopped_at_budget(outcome):
        return outcome
    if pool is not None:
        pool.renew()  # one fresh worker, kept for gold and then the answer: nothing else runs
    if budgeted(job, limits):
        again = _alone(job, replace(limits, timeout_s=limits.for_gold().timeout_s), workers, pool)
        if again.status is not Status.TIMEOUT or stopped_at_budget(again):
            return again
        return Outcome(Status.TIMEOUT, error=still_late(limits.timeout_s, budget=True))
    allowed = limits.timeout_s
    for round_ in range(GOLD_ROUNDS):
        grown = allowed
        if gold is not None:
            measured = _alone(gold, replace(limits.for_gold(), count_work=False), workers, pool)
            if measured.status is Status.OK:
                grown = max(allowed, GOLD_FACTOR * measured.elapsed_s)
        if round_ and grown <= GOLD_SLOWER * allowed:
            break  # gold no slower than when the answer ran past: the answer's own cost
        allowed = grown
        again = _alone(job, replace(limits, timeout_s=allowed), workers, pool)
        if again.status is not Status.TIMEOUT or gold is None:
            break
    if again.status is not Status.TIMEOUT:
        return again
    return Outcome(Status.TIMEOUT, error=still_late(limits.timeout_s, gold is not None))


def budgeted(job: Job, limits: Limits) -> bool:
    """Whether ``job`` runs under a work budget: ``limits`` set one and its engine stops there."""
    return limits.work_budget is not None and engines.get(job.database.engine).stops_at_work_budget


def still_late(limit: float, measured: bool = True, budget: bool = False) -> str:
    """The error of an answer that ran past its time limit on both runs: the same whatever the
    load (``measured``: the second run's limit followed its gold's time; ``budget``: it had
    gold's time limit and the work budget).

    >>> still_late(10.0, measured=False)
    "ran past the answers' limit of 10 s, also when run again alone on a fresh worker"
    """
    if budget:
        again = " under gold's time limit, within its work budget"
    elif measured:
        again = " under the larger of that and three times its gold's time then"
    else:
        again = ""
    return (
        f"ran past the answers' limit of {limit:g} s, also when run again alone on a fresh "
        f"worker{again}"
    )


def limit_in(error: str | None) -> float | None:
    """The answers' limit :func:`still_late` wrote into ``error``, or None."""
    found = _LIMIT.search(error or "")
    return float(found.group(1)) if found else None


def timed_out_line(scores: Iterable[Mapping]) -> str | None:
    """The one line a run prints about its answers that timed out (None: none did): how many,
    which, under which limit or budget."""
    by_limit: dict[str, list[str]] = {}
    for score in scores:
        if score.get("status") == Status.TIMEOUT.value:
            by_limit.setdefault(_shown(score), []).append(str(score["id"]))
    if not by_limit:
        return None
    count = sum(map(len, by_limit.values()))
    shown = "; ".join(f"items {', '.join(ids)} {limit}" for limit, ids in by_limit.items())
    return f"{count} answer(s) timed out: {shown} (the rule: {RULE})"


def _shown(score: Mapping) -> str:
    error = score.get("error") or ""
    if error.startswith(BUDGET_STOP):
        return "at their work budget of" + error[len(BUDGET_STOP) :]
    limit = limit_in(error)
    if limit is None:  # a run scored before this rule: its own words
        return f"under their first run's limit ({error})"
    if "work budget" in error:
        where = " (then gold's, within the work budget)"
    elif "gold's time" in error:
        where = " (or three times gold's time, where longer)"
    else:
        where = ""
    return (
        f"under the answers' limit of {limit:g} s{where}, also when run again alone on a fresh "
        "worker"
    )


def _alone(job: Job, limits: Limits, workers: int | None, pool: WorkerPool | None) -> Outcome:
    """``job`` alone: on the pool's one idle worker (``settle`` renewed it), else on a fresh
    worker of its own."""
    return execute_many([job], limits, workers=workers, pool=pool)[0]
