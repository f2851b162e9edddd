"""What one scoring run carries from stage to stage (items, answers, gold, ties): a :class:`Batch`
is made by ``Scorer.run`` and handed to each of ``stages.STAGES`` in turn, the only code that
writes it.

>>> Batch(items=[], incoming=iter(())).answers
[]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sqlbench_lmeval.execution import Job, Outcome
from sqlbench_lmeval.execution.held_results import HeldResults
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.scoring.answer import Answer, Failure
from sqlbench_lmeval.scoring.data_dependence import CopiesAhead
from sqlbench_lmeval.scoring.gold_ties import GoldTies, TieBatch
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.sql.extract import Extraction
from sqlbench_lmeval.sql.table_reads import TableReads, surely_reads_no_table

#: One answer to score: (index of its item, raw output or None, the output's extraction and
#: failure when the caller already made them, else None).
Incoming = tuple[int, "str | None", "tuple[Extraction | None, Failure | None] | None"]


@dataclass(eq=False)
class Batch:
    """``items`` and the answers to them, consumed from ``incoming`` while the SQL of earlier
    ones runs (``expected``: about how many there are); ``stream`` is the lazy sequence of
    :class:`Answer` records the per-answer stages wrap and execution consumes; ``answers`` lists
    them in input order once made. Gold's jobs, outcomes, tie plan, row order and tie records
    are per item."""

    items: Sequence[Item]
    incoming: Iterable[Incoming]
    expected: int | None = None
    stream: Iterator[Answer] | None = None
    answers: list[Answer] = field(default_factory=list)
    gold_jobs: list[Job] = field(default_factory=list)
    tie_plan: TieBatch | None = None
    gold: list[Outcome] = field(default_factory=list)
    probes: list[Outcome] = field(default_factory=list)
    ordered: list[bool] = field(default_factory=list)
    ties: list[GoldTies | None] = field(default_factory=list)
    #: Per item index, whether gold reads no table (``sql.table_reads``), once asked.
    gold_reading: dict[int, bool] = field(default_factory=dict)
    #: The run's worker processes, shared by its batches (None: each batch starts its own).
    pool: WorkerPool | None = None
    #: The answers' results as the run holds them: within a bound (``execution.held_results``).
    held: HeldResults = field(default_factory=HeldResults)
    #: The runs on the perturbed copies made while the answers ran, and gold's results there
    #: (``data_dependence.CopiesAhead``; None: none).
    ahead: CopiesAhead | None = None

    def gold_reads_no_table(self, index: int, parsed: TableReads | None = None) -> bool:
        """Whether the gold of ``items[index]`` surely reads no table (a calculation on
        constants), read once per item; ``parsed``: an answer's extraction's parse, used where
        it is of gold's very text in gold's dialect (an answer that copies gold is then not
        tokenized again)."""
        if index not in self.gold_reading:
            item = self.items[index]
            self.gold_reading[index] = surely_reads_no_table(item.gold_sql, item.dialect, parsed)
        return self.gold_reading[index]
