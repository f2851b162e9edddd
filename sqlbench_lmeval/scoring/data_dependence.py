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
from sqlbench_lmeval.execution.outcome import FINISHED
from sqlbench_lmeval.execution.perturbed import perturbed_databases
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.scoring.compare import (
    column_magnitudes,
    compare,
    multiset_within,
    same_result,
)
from sqlbench_lmeval.scoring.gold_moves import GoldMoves, flag_keys
from sqlbench_lmeval.scoring.gold_ties import GoldTies, TieBatch, plan_batch, tie_verdict
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
    return _verdict(used, ordered)


def _verdict(used: Sequence[There], ordered: bool) -> str:
    """:func:`judge` of the copies where gold's result changed (``used``, already chosen)."""
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


class CopiesAhead:
    """The runs on the perturbed copies of answers that match gold, started while the other
    answers still run (the execute stage), so that :func:`judge_all` finds them done instead
    of running them after every answer has run, in a second batch.

    Guessed, never decided here: an answer is offered as its outcome arrives, and one whose
    result is gold's (``same_result``, either row order) is run on each copy where gold's
    stored result there (the gold cache, read a few answers at a time) differs from gold's
    (:func:`moved`, in gold's row order where the tie plan read it, else in either order).
    :func:`judge_all` takes a run from :attr:`done` only where it wants that very job (copy,
    SQL and limits), so a guess changes what runs when, never a verdict; an answer that
    matches only by tie-awareness, or whose gold on a copy is not stored yet, runs there later
    as before. What :func:`moved` said of gold's very outcomes is kept (:attr:`moves`), so
    that :func:`judge_all` does not compare them again after the batch. For an answer that is
    gold's text, the flags kept beside the gold cache (``gold_moves``) are read instead of
    gold's results there, where they are all stored (:attr:`flags`)."""

    def __init__(self, limits: Limits, gold_cache: GoldCache) -> None:
        self.limits = limits
        self.gold_cache = gold_cache
        self.gold_limits = replace(limits.for_gold(), count_work=False)
        self.store = GoldMoves.beside(gold_cache)
        #: (gold's job on a copy, row order): whether gold moved there, as stored.
        self.flags: dict[tuple[Job, bool], bool] = {}
        #: Jobs (copy, SQL and limits) and the outcome each gave: filled by the caller.
        self.done: dict[Job, Outcome] = {}
        #: Gold's jobs on the copies (under ``gold_limits``) and their cached outcomes, as read.
        self.gold_there: dict[Job, Outcome] = {}
        #: (gold's job on a copy, row order): gold's outcomes on the original and there, and
        #: whether it moved (:func:`moved`), for :func:`judge_all` where its outcomes are these.
        self.moves: dict[tuple[Job, bool], tuple[Outcome, Outcome, bool]] = {}
        self._offered: list[tuple[Item, str, Outcome, bool | None]] = []
        self._copies: dict[Database, tuple[Database, ...] | None] = {}
        self._scales: dict[tuple[Database, Database], Limits] = {}
        self._asked: set[Job] = set()

    def offer(
        self, item: Item, sql: str, outcome: Outcome, gold: Outcome | None, ordered: bool | None
    ) -> None:
        """An answer's ``outcome`` of ``sql`` on ``item``, just in, beside its gold's (None:
        not known yet) and whether gold's row order counts (None: not known yet)."""
        if gold is not None and same_result(outcome, gold, ordered=False):
            self._offered.append((item, sql, gold, ordered))

    def jobs(self, at_least: int = 1) -> list[Job]:
        """The copy runs of the answers offered since the last call that matched gold, once
        there are ``at_least`` such answers (each call reads the gold cache once)."""
        if len(self._offered) < at_least:
            return []
        offered, self._offered = self._offered, []
        wanted = []
        for item, sql, gold, ordered in offered:
            database = item.database
            if database not in self._copies:
                self._copies[database] = perturbed_databases(database)
            for copy in self._copies[database] or ():
                wanted.append((item, sql, gold, ordered, copy))
        gold_jobs = [Job(copy, item.gold_sql) for item, _, _, _, copy in wanted]
        flagged = self._read_flags(wanted, gold_jobs)
        read = iter(
            self.gold_cache.cached(
                [job for n, job in enumerate(gold_jobs) if n not in flagged], self.gold_limits
            )
        )
        jobs = []
        for n, ((item, sql, gold, ordered, copy), gold_job) in enumerate(
            zip(wanted, gold_jobs, strict=True)
        ):
            if n in flagged:
                continue  # gold's own text: judge_all reads this copy's flag, nothing else
            gold_there = next(read)
            if gold_there is None:
                continue
            self.gold_there[gold_job] = gold_there
            if ordered is None:  # gold's row order unknown: moved in this order at least
                if not moved(gold_there, gold, True):
                    continue
            elif not _moved_kept(self.moves, gold_job, ordered, gold, gold_there):
                continue  # gold stayed the same there: judge_all will not ask for this run
            if item.is_gold_text(sql):
                continue  # gold's own SQL: judge_all takes gold's outcome there (is_gold_there)
            key = (item.database, copy)
            if key not in self._scales:
                self._scales[key] = copy_limits(self.limits, *key)
            job = Job(copy, sql, limits=self._scales[key])
            if job not in self._asked:
                self._asked.add(job)
                jobs.append(job)
        return jobs

    def _read_flags(self, wanted, gold_jobs: list[Job]) -> set[int]:
        """The indexes in ``wanted`` of answers that are gold's text (row order known) whose
        flag on that copy is stored; the flags go to :attr:`flags`."""
        verbatim = [
            n
            for n, (item, sql, _, ordered, _) in enumerate(wanted)
            if item.is_gold_text(sql) and ordered is not None
        ]
        if not verbatim:
            return set()
        chosen = [gold_jobs[n] for n in verbatim]
        orders = [wanted[n][3] for n in verbatim]
        keys = flag_keys(self.gold_cache, chosen, self.gold_limits, orders)
        stored = self.store.load({key for key in keys if key is not None})
        flagged = set()
        for n, job, order, key in zip(verbatim, chosen, orders, keys, strict=True):
            if key in stored:
                self.flags[job, order] = stored[key]
                flagged.add(n)
        return flagged


def judge_all(
    cases: Sequence[Case],
    limits: Limits,
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    pool: WorkerPool | None = None,
    ahead: CopiesAhead | None = None,
) -> list[str]:
    """:func:`judge` of each case, in order, under ``limits``; :data:`NOT_TESTED` where the
    database has no copy. Gold and its tie probes run on the copies first, under gold's own
    time limit (``Limits.for_gold``) and through ``gold_cache`` (after the first run, a read),
    then each answer on the copies where its gold changed: where there are none the verdict is
    :data:`UNDECIDABLE` whatever the answer gives. The answers run there under their own limit
    scaled by the copy's size (``copy_scale``: the run is charged to the answer, not to gold),
    with the rule for an answer that runs past it (``timeouts.settle``). ``pool``: the run's
    worker processes (``execute_many``), if it keeps them; ``ahead``: the runs on the copies
    already made while the answers ran, and gold's results there already read
    (:class:`CopiesAhead`), taken instead of running or reading them again. An answer that is
    gold's text is judged from whether gold moved on each copy where ``gold_cache`` keeps that
    beside it (``gold_moves``, written here)."""
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
    # Gold's jobs name the copies; the items themselves are the originals' (plan_batch reads
    # their gold and dialect, and runs probes where the gold job runs).
    gold_jobs = [Job(copy, cases[i].item.gold_sql) for i, copy in pairs]
    store, keys = _flag_store(cases, pairs, gold_jobs, gold_limits, gold_cache)
    decided = _by_flags(cases, pairs, gold_jobs, keys, store, ahead)
    rest = [n for n, (i, _) in enumerate(pairs) if i not in decided]
    per_case: dict[int, list[There]] = {}
    if rest:
        per_case, gold, moved_there = _judged_on_copies(
            cases,
            [pairs[n] for n in rest],
            [gold_jobs[n] for n in rest],
            (limits, gold_limits),
            (workers, gold_cache, pool, ahead),
        )
        if store is not None:  # only what does not depend on the machine, as the gold cache
            kept = zip((keys[n] for n in rest), gold, moved_there, strict=True)
            store.save({k: m for k, g, m in kept if k is not None and g.status in FINISHED})
    for i, case in enumerate(cases):
        if copies[case.item.database] is not None:
            # Only copies found moved are listed: judge would compare gold there again.
            verdicts[i] = (
                decided[i] if i in decided else _verdict(per_case.get(i, []), case.ordered)
            )
    return verdicts


def _flag_store(cases, pairs, gold_jobs, gold_limits, gold_cache):
    """The flags beside ``gold_cache`` (``gold_moves``; None without a cache) and each pair's
    key there (None: not keyed)."""
    if gold_cache is None:
        return None, [None] * len(pairs)
    orders = [cases[i].ordered for i, _ in pairs]
    keys = flag_keys(gold_cache, gold_jobs, gold_limits, orders)
    return GoldMoves.beside(gold_cache), keys


def _by_flags(cases, pairs, gold_jobs, keys, store, ahead) -> dict[int, str]:
    """The verdicts of the cases whose answer is gold's text and whose every copy's flag
    (``gold_moves``) is known, from ``ahead`` or else ``store``: :data:`CHANGED` where gold
    moved on some copy, else :data:`UNDECIDABLE`. Such an answer gives gold's result on each
    copy (:func:`is_gold_there`: gold finished wherever it moved), which matches itself."""
    held = {} if ahead is None else ahead.flags
    own = [n for n, (i, _) in enumerate(pairs) if cases[i].item.is_gold_text(cases[i].sql)]
    missing = {keys[n] for n in own if (gold_jobs[n], cases[pairs[n][0]].ordered) not in held}
    stored = {} if store is None else store.load({key for key in missing if key is not None})
    flags: dict[int, list[bool | None]] = {}
    for n in own:
        i = pairs[n][0]
        flag = held.get((gold_jobs[n], cases[i].ordered), stored.get(keys[n]))
        flags.setdefault(i, []).append(flag)
    return {i: CHANGED if any(f) else UNDECIDABLE for i, f in flags.items() if None not in f}


def _judged_on_copies(cases, pairs, gold_jobs, limits_pair, run_with):
    """For the cases of ``pairs`` ((case index, copy), gold's job on each): their copies where
    gold moved, each with the answer's outcome there, gold's and gold's tie record (by case
    index), gold's outcome on each pair's copy, and whether it moved there."""
    limits, gold_limits = limits_pair
    workers, gold_cache, pool, ahead = run_with
    tied, ties = _copy_ties(cases, pairs, gold_jobs, gold_limits, gold_cache)
    run = gold_jobs + ties.probe_jobs
    known = {} if ahead is None else ahead.gold_there
    outcomes = _gold_runs(run, known, gold_limits, gold_cache, workers, pool)
    gold = outcomes[: len(gold_jobs)]
    records: list[GoldTies | None] = [None] * len(pairs)
    finished = ties.finish([gold[n] for n in tied], outcomes[len(gold_jobs) :])
    for n, record in zip(tied, finished, strict=True):
        records[n] = record
    asked = _moved(pairs, cases, gold_jobs, gold, {} if ahead is None else ahead.moves)
    runs = [(pairs[n][1], cases[pairs[n][0]]) for n in asked]
    done = {} if ahead is None else ahead.done
    answers = _on_copies(runs, [gold[n] for n in asked], limits, workers, pool, done)
    answered = dict(zip(asked, answers, strict=True))
    per_case: dict[int, list[There]] = {}
    for n, (i, _) in enumerate(pairs):
        if n in answered:
            per_case.setdefault(i, []).append((answered[n], gold[n], records[n]))
    return per_case, gold, [n in answered for n in range(len(pairs))]


def _copy_ties(cases, pairs, gold_jobs, gold_limits, gold_cache) -> tuple[list[int], TieBatch]:
    """The pairs (case, copy) that need gold's tie record there, and its plan (``gold_jobs``:
    gold's per pair). Not a pair whose answer is gold's own text: it gets gold's outcome on the
    copy (:func:`is_gold_there`), which matches itself before any tie rule is asked."""
    tied = [n for n, (i, _) in enumerate(pairs) if not cases[i].item.is_gold_text(cases[i].sql)]
    items = [cases[pairs[n][0]].item for n in tied]
    return tied, plan_batch(items, [gold_jobs[n] for n in tied], gold_limits, gold_cache)


def _moved(pairs, cases, gold_jobs, gold, moves) -> list[int]:
    """The pairs (case, copy) where gold's result moved on the copy (``gold``: its outcomes
    there), as :func:`_moved_kept` tells it."""
    return [
        n
        for n, (i, _) in enumerate(pairs)
        if _moved_kept(moves, gold_jobs[n], cases[i].ordered, cases[i].gold, gold[n])
    ]


def _moved_kept(
    moves: dict[tuple[Job, bool], tuple[Outcome, Outcome, bool]],
    gold_job: Job,
    ordered: bool,
    gold: Outcome,
    there: Outcome,
) -> bool:
    """:func:`moved` of gold's outcome on the original (``gold``) and on ``gold_job``'s copy
    (``there``), in row order ``ordered``: as ``moves`` keeps it where it compared these very
    outcomes (:attr:`CopiesAhead.moves`), else compared now and kept there."""
    key = (gold_job, ordered)
    found = moves.get(key)
    if found is None or found[0] is not gold or found[1] is not there:
        found = moves[key] = (gold, there, moved(there, gold, ordered))
    return found[2]


def _gold_runs(run, known, gold_limits, gold_cache, workers, pool) -> list[Outcome]:
    """Gold's outcomes of ``run`` (jobs on the copies): those in ``known`` as read before,
    the rest through ``gold_cache`` (None: run)."""
    missing = [job for job in run if job not in known]
    if gold_cache is not None:
        fetched = iter(gold_cache.run(missing, gold_limits, workers=workers, pool=pool))
    else:
        fetched = iter(execute_many(missing, gold_limits, workers=workers, pool=pool))
    return [known[job] if job in known else next(fetched) for job in run]


def _on_copies(
    runs, gold, limits: Limits, workers, pool, done: dict[Job, Outcome]
) -> list[Outcome]:
    """The answers of ``runs`` ((copy, case) pairs) on their copies, each charged to the
    answer: the answers' limit scaled by its copy's size (``copy_scale``), and one that runs
    past it settled as on the original (``timeouts.settle``: alone, after gold on the copy).
    An answer whose SQL is gold's gets gold's outcome there (``gold``, per run) where gold
    finished (:func:`is_gold_there`). Those not in ``done`` run in one batch, each job under
    its own scaled limits, so every worker has work until the last."""
    memo: dict[tuple[Database, Database], Limits] = {}
    scaled = []
    for copy, case in runs:
        key = (case.item.database, copy)
        if key not in memo:
            memo[key] = copy_limits(limits, *key)
        scaled.append(memo[key])
    jobs = [
        None if is_gold_there(case, there) else Job(copy, case.sql, limits=own)
        for (copy, case), own, there in zip(runs, scaled, gold, strict=True)
    ]
    missing = [job for job in jobs if job is not None and job not in done]
    ran = dict(zip(missing, execute_many(missing, limits, workers=workers, pool=pool), strict=True))
    outcomes = []
    for (copy, case), own, there, job in zip(runs, scaled, gold, jobs, strict=True):
        if job is None:
            outcomes.append(there)
            continue
        outcome = done[job] if job in done else ran[job]
        outcomes.append(
            settle(Job(copy, case.sql), Job(copy, case.item.gold_sql), outcome, own, workers, pool)
        )
    return outcomes


def is_gold_there(case: Case, there: Outcome) -> bool:
    """Whether ``case``'s answer on a copy is gold's outcome ``there``, not run: its SQL is
    gold's (``Item.is_gold_text``) and gold finished there; where gold did not finish, the
    answer runs under its own limits."""
    return case.item.is_gold_text(case.sql) and there.status in FINISHED


def copy_limits(limits: Limits, original: Database, copy: Database) -> Limits:
    """The limits of an answer's run on ``copy``: the answers' time limit and work budget times
    :func:`copy_scale`, no work counted (nothing reads it there)."""
    scale = copy_scale(original, copy)
    budget = limits.work_budget
    return replace(
        limits,
        timeout_s=limits.timeout_s * scale,
        count_work=False,
        work_budget=None if budget is None else int(budget * scale),
    )


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
    "copy_limits",
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
    "CopiesAhead",
    "judge",
    "judge_all",
    "matches",
    "moved",
]
