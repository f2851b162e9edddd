"""Does an answer that matched gold read the data? :func:`judge_all` runs gold, then such
answers, on the perturbed copies of their database (``execution.perturbed``), and :func:`judge`
asks of each copy where gold's result changed whether the answer's result there is gold's, by
``ex``'s rule (tie-aware); one that is not, on any such copy, is flagged ``reads_no_table``
(the test, its copies and its limits: docs/scoring.md#data-dependence).

>>> from sqlbench_lmeval.execution.outcome import Outcome, Status
>>> def result(n):
...     return Outcome(Status.OK, columns=("n",), rows=((n,),))
>>> gold, gold_there = result(874), result(1313)  # gold reads the data: it changed
>>> judge([(result(874), gold_there, None)], gold, False)  # SELECT 874 FROM store
'differs'
>>> judge([(result(1748), gold_there, None)], gold, False)  # SELECT 874 * COUNT(*) / 12 ...
'differs'
>>> judge([(result(1313), gold_there, None)], gold, False)
'changed'
>>> judge([(result(874), result(874), None)], gold, False)  # gold stayed too: no flag
'undecidable'
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlbench_lmeval.execution import (
    Database,
    GoldCache,
    Job,
    Limits,
    Outcome,
    Status,
    execute_many,
)
from sqlbench_lmeval.execution.perturbed import perturbed_databases
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.scoring.compare import (
    column_magnitudes,
    compare,
    multiset_within,
    same_result,
)
from sqlbench_lmeval.scoring.gold_ties import GoldTies, plan_batch, tie_verdict
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.timeouts import settle
from sqlbench_lmeval.vocabulary import DataDependence

#: The score-dict field that says how the answer's reading of the data was judged.
DATA_DEPENDENCE = "data_dependence"


NO_TABLE = DataDependence.NO_TABLE
DIFFERS = DataDependence.DIFFERS
CHANGED = DataDependence.CHANGED
UNDECIDABLE = DataDependence.UNDECIDABLE
NOT_TESTED = DataDependence.NOT_TESTED
UNCHANGED = DataDependence.UNCHANGED
#: The values that flag an answer ``reads_no_table``.
FLAGGED = frozenset({NO_TABLE, DIFFERS, UNCHANGED})

#: One copy's outcomes: the answer's there, gold's there and gold's tie record there.
There = tuple[Outcome, Outcome, "GoldTies | None"]


@dataclass(frozen=True)
class Case:
    """One answer that matched gold: its item, the SQL that ran, its and gold's outcomes on
    the original database and whether gold's row order counts."""

    item: Item
    sql: str
    answer: Outcome
    gold: Outcome
    ordered: bool


def judge(copies: Sequence[There], gold: Outcome, ordered: bool) -> str:
    """:data:`CHANGED`, :data:`DIFFERS` or :data:`UNDECIDABLE` of an answer, given its and
    gold's outcomes on each copy and gold's on the original (docs/scoring.md#data-dependence):
    only the copies where gold's result changed count."""
    used = [(answer, there, ties) for answer, there, ties in copies if moved(there, gold, ordered)]
    if not used:
        return UNDECIDABLE
    if all(matches(answer, there, ties, ordered) for answer, there, ties in used):
        return CHANGED
    return DIFFERS


def moved(gold_there: Outcome, gold: Outcome, ordered: bool) -> bool:
    """Whether gold's result on a copy tells anything: it ran there and is not its result on
    the original."""
    return gold_there.status is Status.OK and not same_result(gold_there, gold, ordered=ordered)


def matches(answer: Outcome, gold: Outcome, ties: GoldTies | None, ordered: bool) -> bool:
    """Whether ``answer`` gives ``gold``'s result on a copy: ``ex`` of the two (tie-aware, as
    the judge stage compares), or some of gold's rows there, at least one (an answer that cuts
    its rows, ``LIMIT 1``, where gold's one row on the original is more on the copy).

    >>> def rows(*values):
    ...     return Outcome(Status.OK, ("v",), tuple((v,) for v in values))
    >>> matches(rows(3), rows(3, 7), None, False), matches(rows(), rows(3, 7), None, False)
    (True, False)
    >>> matches(rows(5), rows(3, 7), None, False), matches(rows(3, 3), rows(3, 7), None, False)
    (False, False)
    """
    if answer.status is not Status.OK:
        return False
    if same_result(answer, gold, ordered=ordered):
        return True
    if tie_verdict(compare(answer, gold, ordered=ordered), answer, gold, ties).ex:
        return True
    return (
        0 < len(answer.rows) < len(gold.rows)
        and len(answer.columns) == len(gold.columns)
        and multiset_within(
            list(answer.rows), list(gold.rows), column_magnitudes([*answer.rows, *gold.rows])
        )
    )


def judge_all(
    cases: Sequence[Case],
    limits: Limits,
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    pool: WorkerPool | None = None,
) -> list[str]:
    """:func:`judge` of each case, in order, under ``limits``; :data:`NOT_TESTED` where the
    database has no copy. Gold and its tie probes run on the copies first, under gold's own
    time limit (``Limits.for_gold``) and through ``gold_cache`` (after the first run, a read),
    then each answer on the copies where its gold changed: where there are none the verdict is
    :data:`UNDECIDABLE` whatever the answer gives. The answers run there under their own limit
    scaled by the copy's size (``copy_scale``: the run is charged to the answer, not to gold),
    with the rule for an answer that runs past it (``timeouts.settle``). ``pool``: the run's
    worker processes (``execute_many``), if it keeps them."""
    copies = {}
    for case in cases:
        database = case.item.database
        if database not in copies:
            copies[database] = perturbed_databases(database)
    pairs = [  # (case index, copy): every copy of every case whose engine keeps copies
        (i, copy) for i, case in enumerate(cases) for copy in copies[case.item.database] or ()
    ]
    verdicts = [NOT_TESTED] * len(cases)
    if not pairs:
        return verdicts
    # Gold's own, longer time limit (its cost is the benchmark's): on a copy a heavy gold query
    # may need more than an answer's limit, and only what finishes is cached. Nothing reads the
    # work of a run here: SQLite runs each statement once, uncounted.
    gold_limits = replace(limits.for_gold(), count_work=False)
    items = [replace(cases[i].item, database=copy) for i, copy in pairs]
    gold_jobs = [Job(item.database, item.gold_sql) for item in items]
    ties = plan_batch(items, gold_jobs, gold_limits, gold_cache)
    run = gold_jobs + ties.probe_jobs
    if gold_cache is not None:
        outcomes = gold_cache.run(run, gold_limits, workers=workers, pool=pool)
    else:
        outcomes = execute_many(run, gold_limits, workers=workers, pool=pool)
    gold = outcomes[: len(gold_jobs)]
    records = ties.finish(gold, outcomes[len(gold_jobs) :])
    asked = [n for n, (i, _) in enumerate(pairs) if moved(gold[n], cases[i].gold, cases[i].ordered)]
    answers = _on_copies([(pairs[n][1], cases[pairs[n][0]]) for n in asked], limits, workers, pool)
    answered = dict(zip(asked, answers, strict=True))
    per_case: dict[int, list[There]] = {}
    for n, (i, _) in enumerate(pairs):
        if n in answered:
            per_case.setdefault(i, []).append((answered[n], gold[n], records[n]))
    for i, case in enumerate(cases):
        if copies[case.item.database] is not None:
            verdicts[i] = judge(per_case.get(i, []), case.gold, case.ordered)
    return verdicts


def _on_copies(runs, limits: Limits, workers, pool) -> list[Outcome]:
    """The answers of ``runs`` ((copy, case) pairs) on their copies, each charged to the
    answer: the answers' limit scaled by its copy's size (``copy_scale``), and one that runs
    past it settled as on the original (``timeouts.settle``: alone, after gold on the copy)."""
    by_scale: dict[float, list[int]] = {}
    for index, (copy, case) in enumerate(runs):
        by_scale.setdefault(copy_scale(case.item.database, copy), []).append(index)
    found: list[Outcome | None] = [None] * len(runs)
    for scale, chosen in by_scale.items():
        scaled = replace(limits, timeout_s=limits.timeout_s * scale, count_work=False)
        jobs = [Job(runs[i][0], runs[i][1].sql) for i in chosen]
        for i, job, outcome in zip(
            chosen, jobs, execute_many(jobs, scaled, workers=workers, pool=pool), strict=True
        ):
            gold = Job(job.database, runs[i][1].item.gold_sql)
            found[i] = settle(job, gold, outcome, scaled, workers, pool)
    return found  # type: ignore[return-value]


def copy_scale(original: Database, copy: Database) -> float:
    """How many times the original's size ``copy`` is (its file's bytes over the original's,
    rounded up to a quarter, at least 1): what the answers' time limit is multiplied by there,
    whatever the copy changed.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name, size in (("a.db", 1000), ("b.db", 1900)):
    ...     with open(os.path.join(folder, name), "wb") as file:
    ...         _ = file.write(bytes(size))
    >>> copy_scale(Database("sqlite", f"{folder}/a.db"), Database("sqlite", f"{folder}/b.db"))
    2.0
    """
    try:
        ratio = os.path.getsize(copy.path) / max(1, os.path.getsize(original.path))
    except OSError:  # not files (a server keeps no copy): the answers' limit
        return 1.0
    return max(1.0, math.ceil(ratio * 4) / 4)


__all__ = [
    "CHANGED",
    "copy_scale",
    "DATA_DEPENDENCE",
    "DIFFERS",
    "DataDependence",
    "FLAGGED",
    "NOT_TESTED",
    "NO_TABLE",
    "UNCHANGED",
    "UNDECIDABLE",
    "Case",
    "judge",
    "judge_all",
    "matches",
    "moved",
]
