"""Does an answer that matched gold depend on the data? :func:`judge_all` runs such answers,
and gold first, on a perturbed copy of their database (``execution.perturbed``) and
:func:`judge` compares each one's result there with its result on the original by ``ex``'s
rule; an answer whose result stays while gold's changes is flagged ``reads_no_table`` (the
test, its values and its limits: docs/scoring.md#data-dependence).

>>> from sqlbench_lmeval.execution.outcome import Outcome, Status
>>> def result(n):
...     return Outcome(Status.OK, columns=("n",), rows=((n,),))
>>> gold, gold_on_copy = result(874), result(1748)  # gold reads the data: it changed
>>> judge(result(874), result(874), gold, gold_on_copy, False)  # SELECT 874 FROM store
'unchanged'
>>> judge(result(874), result(1748), gold, gold_on_copy, False)
'changed'
>>> judge(result(874), result(874), gold, result(874), False)  # gold stayed too: no flag
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
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.execution.perturbed import perturbed_database
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.scoring.compare import same_result
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.timeouts import settle
from sqlbench_lmeval.scoring.vocabulary import Vocabulary

#: The score-dict field that says how the answer's reading of the data was judged.
DATA_DEPENDENCE = "data_dependence"


class DataDependence(Vocabulary):
    """How an answer's reading of the data was judged (the score's ``data_dependence``)."""

    #: It names no table (syntactic, no run): flagged.
    NO_TABLE = "no_table"
    #: It matched gold, and its result on the perturbed copy is its result on the original
    #: while gold's changed: flagged.
    UNCHANGED = "unchanged"
    #: It matched gold, and its result changed on the perturbed copy: it reads the data.
    CHANGED = "changed"
    #: Gold's result did not change on the perturbed copy, or a run there did not finish: the
    #: test cannot tell, and nothing is flagged.
    UNDECIDABLE = "undecidable"
    #: The engine keeps no perturbed copy (a server): the syntactic test only.
    NOT_TESTED = "not_tested"


NO_TABLE = DataDependence.NO_TABLE
UNCHANGED = DataDependence.UNCHANGED
CHANGED = DataDependence.CHANGED
UNDECIDABLE = DataDependence.UNDECIDABLE
NOT_TESTED = DataDependence.NOT_TESTED
#: The values that flag an answer ``reads_no_table``.
FLAGGED = frozenset({NO_TABLE, UNCHANGED})


@dataclass(frozen=True)
class Case:
    """One answer that matched gold: its item, the SQL that ran, its and gold's outcomes on
    the original database and whether gold's row order counts."""

    item: Item
    sql: str
    answer: Outcome
    gold: Outcome
    ordered: bool


def judge(
    answer: Outcome, answer_perturbed: Outcome, gold: Outcome, gold_perturbed: Outcome, ordered
) -> str:
    """:data:`CHANGED`, :data:`UNCHANGED` or :data:`UNDECIDABLE`
    (docs/scoring.md#data-dependence)."""
    if answer_perturbed.status in UNFINISHED or gold_perturbed.status in UNFINISHED:
        return UNDECIDABLE
    if _same(gold_perturbed, gold, ordered):
        return UNDECIDABLE
    return UNCHANGED if _same(answer_perturbed, answer, ordered) else CHANGED


def _same(perturbed: Outcome, original: Outcome, ordered: bool) -> bool:
    if perturbed.status is not Status.OK or original.status is not Status.OK:
        return perturbed.status is original.status and perturbed.error == original.error
    return same_result(perturbed, original, ordered=ordered)


def judge_all(
    cases: Sequence[Case],
    limits: Limits,
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    pool: WorkerPool | None = None,
) -> list[str]:
    """:func:`judge` of each case, in order, under ``limits``; :data:`NOT_TESTED` where the
    database has no copy. Gold runs on the copies first, under gold's own time limit
    (``Limits.for_gold``) and through ``gold_cache`` (after the first run, a read), then only
    the answers whose gold changed there: where it did not, or did not finish, the verdict is
    :data:`UNDECIDABLE` whatever the answer gives. The answers run there under their own limit
    scaled by the copy's size (``copy_scale``: the run is charged to the answer, not to gold),
    with the rule for an answer that runs past it (``timeouts.settle``). ``pool``: the run's
    worker processes (``execute_many``), if it keeps them."""
    copies = {}
    for case in cases:
        database = case.item.database
        if database not in copies:
            copies[database] = perturbed_database(database)
    tested = [i for i, case in enumerate(cases) if copies[case.item.database] is not None]
    verdicts = [NOT_TESTED] * len(cases)
    if not tested:
        return verdicts
    gold_jobs = [Job(copies[cases[i].item.database], cases[i].item.gold_sql) for i in tested]
    # Gold's own, longer time limit (its cost is the benchmark's): on twice the data a heavy
    # gold query may need more than an answer's limit, and only what finishes is cached.
    # Nothing reads the work of a run here: SQLite runs each statement once, uncounted.
    gold_limits = replace(limits.for_gold(), count_work=False)
    if gold_cache is not None:
        gold = gold_cache.run(gold_jobs, gold_limits, workers=workers, pool=pool)
    else:
        gold = execute_many(gold_jobs, gold_limits, workers=workers, pool=pool)
    asked = []
    for i, gold_perturbed in zip(tested, gold, strict=True):
        case = cases[i]
        if gold_perturbed.status in UNFINISHED or _same(gold_perturbed, case.gold, case.ordered):
            verdicts[i] = UNDECIDABLE
        else:
            asked.append((i, gold_perturbed))
    answers = _on_copies(
        [(copies[cases[i].item.database], cases[i]) for i, _ in asked], limits, workers, pool
    )
    for (i, gold_perturbed), answer_perturbed in zip(asked, answers, strict=True):
        case = cases[i]
        verdicts[i] = judge(case.answer, answer_perturbed, case.gold, gold_perturbed, case.ordered)
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
    "DataDependence",
    "FLAGGED",
    "NOT_TESTED",
    "NO_TABLE",
    "UNCHANGED",
    "UNDECIDABLE",
    "Case",
    "judge",
    "judge_all",
]
