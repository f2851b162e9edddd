"""The gold run of a benchmark's built data and the gold health of its results: every gold
query run sandboxed (through the gold cache when one is given), gold that did not finish on
this perhaps loaded machine run again under gold's own, longer limit, so that what a build
records does not depend on the load; and a gold result's status, in the vocabulary of
``scoring.item.Item`` (docs/scoring.md).

>>> gold_status(True, [(None, None)]), gold_status(True, []), gold_status(False, [])
('all_null', 'empty', 'error')
>>> health_counts(["ok", "empty", "ok"], [("random",), (), ("random", "clock_dependent")])
{'status': {'empty': 1, 'ok': 2}, 'flags': {'clock_dependent': 1, 'random': 2}}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from sqlbench_lmeval.execution import GoldCache, Job, Limits, Outcome, execute_many
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.vocabulary import GoldStatus, Status

# Gold statuses: what a gold query's result is (the gold_status of scoring.item.Item).
OK, EMPTY, ALL_NULL, NON_SELECT = (
    GoldStatus.OK,
    GoldStatus.EMPTY,
    GoldStatus.ALL_NULL,
    GoldStatus.NON_SELECT,
)
ERROR = Status.ERROR


def run_gold(
    jobs: Sequence[Job],
    limits: Limits,
    *,
    cache: GoldCache | None = None,
    workers: int | None = None,
    progress: str | None = None,
) -> list[Outcome]:
    """The outcome of every gold job, in order, under ``limits`` (through ``cache`` when
    given: read from it when it holds them, stored in it otherwise); the jobs that did not
    finish run again under ``limits.for_gold()``."""
    outcomes = _run(jobs, limits, cache, workers, progress)
    unfinished = [i for i, outcome in enumerate(outcomes) if outcome.status in UNFINISHED]
    if unfinished:
        again = _run([jobs[i] for i in unfinished], limits.for_gold(), cache, workers, None)
        for i, outcome in zip(unfinished, again, strict=True):
            outcomes[i] = outcome
    return outcomes


def _run(jobs, limits, cache, workers, progress) -> list[Outcome]:
    if cache is not None:
        return list(cache.run(jobs, limits, workers=workers, progress=progress))
    return list(execute_many(jobs, limits, workers=workers, progress=progress))


def gold_status(ok: bool, rows: Sequence[Sequence[object]]) -> str:
    """ok / empty / all_null / error from a gold query's execution result."""
    if not ok:
        return ERROR
    if not rows:
        return EMPTY
    if all(value is None for row in rows for value in row):
        return ALL_NULL
    return OK


def health_counts(
    statuses: Iterable[str], flags: Iterable[Iterable[str]]
) -> dict[str, dict[str, int]]:
    """Counts per gold status and per flag, each sorted by name (a build's health summary)."""
    status_counts = Counter(statuses)
    flag_counts = Counter(flag for item_flags in flags for flag in item_flags)
    return {
        "status": dict(sorted(status_counts.items())),
        "flags": dict(sorted(flag_counts.items())),
    }
