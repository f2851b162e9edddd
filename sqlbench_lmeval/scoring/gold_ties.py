"""Gold's tie side: per item, a :class:`GoldTies` with its ``status`` (logged as ``tie_status``),
how many distinct answers are right (``acceptable``, a decimal string) and the
:class:`tie_compare.TieGold` that :func:`tie_verdict` accepts them by, planned and probed as
gold jobs of a batch (:func:`plan_batch`, :meth:`TieBatch.finish`) and stored beside the gold
cache. Bump :data:`TIE_VERSION` whenever ``tie_probe`` or ``tie_compare`` change what a record
holds (the statuses and the store: docs/ties.md#how-the-right-answers-are-found)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlbench_lmeval.execution import GoldCache, Job, Limits, Outcome, Status
from sqlbench_lmeval.execution.outcome import FINISHED
from sqlbench_lmeval.execution.record_file import load_derived, save_derived
from sqlbench_lmeval.scoring.compare import Verdict
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.tie_compare import (
    TIE_EQUIVALENT,
    TieGold,
    acceptable_count,
    accepts,
    tie_gold,
)
from sqlbench_lmeval.scoring.tie_probe import TiePlan, plan_ties
from sqlbench_lmeval.sql.table_reads import surely_reads_no_table
from sqlbench_lmeval.vocabulary import Reason, TieStatus

#: Version of what a tie record holds (the probe's text, the grouping, the checks). 2: keys
#: equal under the ``ex`` value rules are one tie group. 3: a record also keeps whether gold has
#: an outermost ORDER BY (its plan's parse), so a warm run parses no gold for its row order. 4: and
#: whether gold surely reads no table (``sql.table_reads``), so a warm run tokenizes no gold for
#: the judge's and data dependence's question either.
TIE_VERSION = "4"
#: The tie store's file name, in the gold cache's folder.
STORE_FILE = "tie-gold.sqlite"

NONE = TieStatus.NONE
ANSWERS = TieStatus.ANSWERS
NO_GOLD_RESULT = TieStatus.NO_GOLD_RESULT
NOT_HANDLED = TieStatus.NOT_HANDLED

#: Literal verdict reasons a tie resolution can explain: the same rows in another order within
#: a tie group, or other rows of a tie group the cut goes through.
RESOLVABLE = frozenset({Reason.ORDER, Reason.VALUES, Reason.ROW_COUNT})

# Gold text without these words has no ORDER BY, LIMIT, OFFSET or FETCH: nothing to plan.
_ORDER_WORDS = ("order", "limit", "offset", "fetch")


class GoldTies:
    """One item's tie record: ``status``, ``acceptable`` (decimal string, None unless the
    answers are known) and the answers, decoded from the store on first use."""

    __slots__ = ("status", "acceptable", "_answers", "_payload")

    def __init__(
        self,
        status: str,
        acceptable: str | None = None,
        answers: TieGold | None = None,
        payload: str | None = None,
    ) -> None:
        self.status = status
        self.acceptable = acceptable
        self._answers = answers
        self._payload = payload

    @property
    def answers(self) -> TieGold | None:
        """The right answers (None unless ``status`` is ``answers``)."""
        if self._answers is None and self._payload is not None:
            self._answers = TieGold.from_json(json.loads(self._payload))
            self._payload = None
        return self._answers

    @property
    def has_ties(self) -> bool:
        """Whether more than one answer is right."""
        return self.acceptable is not None and self.acceptable != "1"

    def __repr__(self) -> str:
        return f"GoldTies({self.status!r}, acceptable={self.acceptable!r})"


#: The record of gold without ORDER BY and cut (shared: it holds nothing item-specific).
UNORDERED = GoldTies(NONE)


def tie_verdict(
    verdict: Verdict, predicted: Outcome, gold: Outcome, ties: GoldTies | None
) -> Verdict:
    """``verdict`` (``compare.compare`` of the two outcomes) made tie-aware: a prediction that
    failed it only by order, values or row count and is one of gold's right answers
    (``tie_compare.accepts``) gets ``ex`` True with reason ``tie_equivalent``; ``ex_strict``
    and ``ex_set`` stay literal."""
    if (
        verdict.ex
        or ties is None
        or verdict.reason not in RESOLVABLE
        or predicted.status is not Status.OK
        or gold.status is not Status.OK
        or len(predicted.columns) != len(gold.columns)
    ):
        return verdict
    answers = ties.answers
    if answers is None or not accepts(predicted.rows, answers, gold_rows=gold.rows):
        return verdict
    return Verdict(True, verdict.ex_strict, verdict.ex_set, TIE_EQUIVALENT)


@lru_cache(maxsize=8192)
def plan_gold(sql: str, dialect: str, max_rows: int) -> TiePlan | None:
    """``tie_probe.plan_ties`` of gold, memoised; None when the text cannot hold an ORDER BY or
    a cut (a cheap exact pre-check: parsing costs ~0.4 ms)."""
    lowered = sql.lower()
    if not any(word in lowered for word in _ORDER_WORDS):
        return None
    return plan_ties(sql, dialect, max_rows)


def record_from(plan: TiePlan | None, gold: Outcome, probe: Outcome | None) -> GoldTies:
    """The tie record of gold from its plan (None: no order, no cut), its result and its
    probe's (None when the plan has no probe)."""
    if plan is None or (plan.handled and not plan.has_order_or_cut):
        return UNORDERED
    if not plan.handled:
        return GoldTies(f"{NOT_HANDLED}:{plan.reason}")
    if gold.status is not Status.OK:
        return GoldTies(NO_GOLD_RESULT)
    answers = tie_gold(plan, gold, probe)
    if isinstance(answers, str):
        return GoldTies(answers)
    return GoldTies(ANSWERS, str(acceptable_count(answers)), answers)


@dataclass
class TieBatch:
    """The tie side of one scoring batch: records found in the store, plans and probe jobs
    for the rest (:func:`plan_batch`)."""

    records: list[GoldTies | None]  # per item; None: to be made by ``finish``
    plans: list[TiePlan | None]
    probe_of: dict[int, int]  # item index -> index in ``probe_jobs``
    probe_jobs: list[Job]
    #: item index -> index in ``probe_jobs`` of its plan's ``fallback_sql``: used in place of
    #: the probe when the probe fails with an error.
    fallback_of: dict[int, int]
    keys: list[str | None]  # per item: its record's key in the store (None: not storable)
    store: TieStore | None
    #: Per item, whether gold's outermost query has ORDER BY, from the plan's parse (gold is
    #: parsed once) or as its stored record keeps it.
    orders: list[bool | None]
    #: Per item, whether gold surely reads no table (``surely_reads_no_table`` of its text),
    #: as its stored record keeps it or found while planning; None: not asked (``reads``).
    no_table: list[bool | None]

    def finish(self, gold: Sequence[Outcome], probes: Sequence[Outcome]) -> list[GoldTies]:
        """Every item's record, given gold's outcomes (in item order) and the probes' (in
        ``probe_jobs`` order); new deterministic records are stored."""
        records: list[GoldTies] = []
        new: dict[str, tuple[GoldTies, bool | None, bool | None]] = {}
        for index, (record, plan) in enumerate(zip(self.records, self.plans, strict=True)):
            if record is None:
                slot = self.probe_of.get(index)
                probe = None if slot is None else probes[slot]
                fallback = self.fallback_of.get(index)
                if fallback is not None and probe is not None and probe.status is Status.ERROR:
                    probe = probes[fallback]
                record = record_from(plan, gold[index], probe)
                key = self.keys[index]
                # Only what does not depend on the machine is stored, as in the gold cache: a
                # record made from a timeout or a crash is used once.
                if (
                    key is not None
                    and gold[index].status in FINISHED
                    and (probe is None or probe.status in FINISHED)
                ):
                    new[key] = (record, self.orders[index], self.no_table[index])
            records.append(record)
        if new and self.store is not None:
            self.store.save(new)
        return records


def plan_batch(
    items: Sequence[Item],
    gold_jobs: Sequence[Job],
    limits: Limits,
    gold_cache: GoldCache | None,
    reads: bool = False,
) -> TieBatch:
    """Read what the tie store holds for ``items`` (``gold_jobs[i]`` is item i's gold, on the
    database its probe runs on) and plan the rest: the probe jobs to run beside gold. With
    ``reads``, also whether each gold surely reads no table, and then every new record is
    stored, not only those of gold with an order or a cut (reading a record is cheaper than
    tokenizing gold)."""
    store = None if gold_cache is None else TieStore(Path(gold_cache.root) / STORE_FILE)
    keys: list[str | None] = [None] * len(items)
    if gold_cache is not None:
        gold_keys = gold_cache.keys(gold_jobs, limits)
        keys = [
            None if key is None else _record_key(key, item.dialect)
            for key, item in zip(gold_keys, items, strict=True)
        ]
    found = store.load({key for key in keys if key is not None}) if store is not None else {}
    records: list[GoldTies | None] = []
    plans: list[TiePlan | None] = []
    orders: list[bool | None] = []
    no_table: list[bool | None] = []
    probe_of: dict[int, int] = {}
    fallback_of: dict[int, int] = {}
    probe_jobs: list[Job] = []
    for index, (item, key, gold_job) in enumerate(zip(items, keys, gold_jobs, strict=True)):
        record, order, no_table_found = found.get(key, _UNKNOWN) if key else _UNKNOWN
        plan = None
        if record is None:
            plan = plan_gold(item.gold_sql, item.dialect, limits.max_rows)
            if reads:
                no_table_found = surely_reads_no_table(item.gold_sql, item.dialect)
            # No plan: the text holds no ORDER (nor LIMIT, OFFSET, FETCH), so no ORDER BY.
            order = plan is not None and plan.order_by
            if plan is None:
                if not (reads and key is not None):  # with ``reads``: by ``finish``, stored
                    record = UNORDERED
            elif plan.handled and plan.has_order_or_cut and plan.probe_sql is not None:
                probe_of[index] = len(probe_jobs)
                probe_jobs.append(Job(gold_job.database, plan.probe_sql))
                if plan.fallback_sql is not None:
                    fallback_of[index] = len(probe_jobs)
                    probe_jobs.append(Job(gold_job.database, plan.fallback_sql))
        records.append(record)
        plans.append(plan)
        orders.append(order)
        no_table.append(no_table_found)
    return TieBatch(
        records, plans, probe_of, probe_jobs, fallback_of, keys, store, orders, no_table
    )


_UNKNOWN = (None, None, None)  # no stored record: planned


def _record_key(gold_key: str, dialect: str) -> str:
    # Exactly json.dumps([TIE_VERSION, gold_key, dialect]): a list made json.dumps build an
    # encoder per call (~3x the time of three strings; a LogicCat run keys ~11,600 records).
    text = "[" + ", ".join(map(json.dumps, (TIE_VERSION, gold_key, dialect))) + "]"
    return hashlib.sha256(text.encode()).hexdigest()


class TieStore:
    """Tie records on disk, by key (an ``execution.record_file`` of JSON
    ``[status, acceptable, answers, ordered, no_table]``: the record, whether gold has an
    outermost ORDER BY and whether it surely reads no table); a damaged file is moved aside and
    counts as empty (the records are made again from the gold cache)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, keys: set[str]) -> dict[str, tuple[GoldTies, bool | None, bool | None]]:
        """Each stored record of ``keys``, with whether gold has an outermost ORDER BY and
        whether it surely reads no table."""
        found: dict[str, tuple[GoldTies, bool | None, bool | None]] = {}
        for key, payload in load_derived(self.path, keys).items():
            status, acceptable, answers, ordered, no_table = json.loads(payload)
            found[key] = (GoldTies(status, acceptable, payload=answers), ordered, no_table)
        return found

    def save(self, records: dict[str, tuple[GoldTies, bool | None, bool | None]]) -> None:
        """Store each record, with whether gold has an outermost ORDER BY and whether it
        surely reads no table."""
        payloads = {}
        for key, (record, ordered, no_table) in records.items():
            answers = record.answers
            encoded = None
            if answers is not None:
                encoded = json.dumps(answers.to_json(), separators=(",", ":"), allow_nan=False)
            payloads[key] = json.dumps(
                [record.status, record.acceptable, encoded, ordered, no_table]
            )
        save_derived(self.path, payloads)
