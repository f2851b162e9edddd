"""An answer that runs past its time limit is run once more before it counts as ``timeout``: alone,
on a fresh worker, with nothing else of the run running, right after gold of its item ran alone
on that worker, and under the larger of its limit and :data:`GOLD_FACTOR` times what gold took
then (the rule and why: docs/failures.md#an-answer-that-runs-out-of-time). So a load that slows
gold and the answer alike never makes an answer as costly as gold a ``timeout``; the error of
what still does not finish names the rule (never a measured time: a score must not depend on
load), and :func:`timed_out_line` says it once per run.

>>> error = still_late(10.0)
>>> limit_in(error)
10.0
>>> line = timed_out_line([{"id": 3, "status": "timeout", "error": error}, {"id": 4}])
>>> line.split(": ")[1]
"items 3 under the answers' limit of 10 s (or three times gold's time, where longer) (the rule"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from sqlbench_lmeval.execution import Job, Limits, Outcome, Status, execute_many
from sqlbench_lmeval.execution.pool import WorkerPool

#: An answer run again alone gets at least this many times what its gold took alone just before.
GOLD_FACTOR = 3.0
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
    """``outcome``, what ``job`` gave under ``limits`` in a batch, unless it timed out: then
    ``gold`` (None: no gold to measure) runs alone on a fresh worker, then ``job`` alone on
    the same worker under the larger of ``limits.timeout_s`` and :data:`GOLD_FACTOR` times
    gold's time, and that outcome counts (still ``timeout``: its error says so, naming the
    answers' limit; the measured one stays out of the score, which must not depend on load)."""
    if outcome.status is not Status.TIMEOUT:
        return outcome
    allowed = limits.timeout_s
    if pool is not None:
        pool.renew()  # one fresh worker, kept for gold and then the answer: nothing else runs
    if gold is not None:
        measured = _alone(gold, replace(limits.for_gold(), count_work=False), workers, pool)
        if measured.status is Status.OK:
            allowed = max(allowed, GOLD_FACTOR * measured.elapsed_s)
    again = _alone(job, replace(limits, timeout_s=allowed), workers, pool)
    if again.status is not Status.TIMEOUT:
        return again
    return Outcome(Status.TIMEOUT, error=still_late(limits.timeout_s, gold is not None))


def still_late(limit: float, measured: bool = True) -> str:
    """The error of an answer that timed out on both runs: the same whatever the load.

    >>> still_late(10.0, measured=False)
    "ran past the answers' limit of 10 s, also when run again alone on a fresh worker"
    """
    again = " under the larger of that and three times its gold's time then" if measured else ""
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
    which, under which limit."""
    by_limit: dict[str, list[str]] = {}
    for score in scores:
        if score.get("status") == Status.TIMEOUT.value:
            by_limit.setdefault(_shown(score), []).append(str(score["id"]))
    if not by_limit:
        return None
    count = sum(map(len, by_limit.values()))
    shown = "; ".join(f"items {', '.join(ids)} under {limit}" for limit, ids in by_limit.items())
    return (
        f"{count} answer(s) timed out, also when run again alone on a fresh worker: {shown} "
        f"(the rule: {RULE})"
    )


def _shown(score: Mapping) -> str:
    error = score.get("error")
    limit = limit_in(error)
    if limit is None:  # a run scored before this rule: its own words
        return f"their first run ({error})"
    where = " (or three times gold's time, where longer)" if "gold's time" in error else ""
    return f"the answers' limit of {limit:g} s{where}"


def _alone(job: Job, limits: Limits, workers: int | None, pool: WorkerPool | None) -> Outcome:
    """``job`` alone: on the pool's one idle worker (``settle`` renewed it), else on a fresh
    worker of its own."""
    return execute_many([job], limits, workers=workers, pool=pool)[0]
