"""One answer on its way through scoring: the :class:`Answer` record the stages fill in, the
reason that wins (:meth:`Answer.reason`) and the score dict it becomes (:meth:`Answer.to_json`,
what a sample log, ``score`` and the explorer read); its rules are in docs/scoring.md#verdicts.

>>> from sqlbench_lmeval.execution import Database
>>> item = Item(1, "How many?", Database("sqlite", "/tmp/x.db"), "SELECT 1", "sqlite")
>>> missing = Answer(item, None, gold=Outcome(Status.OK, columns=("1",), rows=((1,),)))
>>> score = missing.to_json()
>>> score["status"], score["reason"], score["ex"], score["gold_status"]
('missing', 'missing', 0, 'ok')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from sqlbench_lmeval.execution import Outcome, Status
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION, Verdict
from sqlbench_lmeval.scoring.data_dependence import DATA_DEPENDENCE, FLAGGED, DataDependence
from sqlbench_lmeval.scoring.gold_ties import GoldTies
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY, GOLD_RAN, Item
from sqlbench_lmeval.scoring.metrics import (
    ACCEPTABLE,
    EX,
    EX_ON_HEALTHY_GOLD,
    GOLD_WORK,
    LOGGED_NUMBERS,
    TIE_STATUS,
    WORK,
    execution_metrics,
)
from sqlbench_lmeval.scoring.translate import EngineSql
from sqlbench_lmeval.sql.extract import Extraction
from sqlbench_lmeval.vocabulary import GoldFlag, GoldStatus, Reason, Refusal, ScoreStatus

#: The score-dict flag of an answer that ran but does not read the data where gold does (it
#: names no table, ``table_reads``, or its result does not depend on the data,
#: ``data_dependence``).
READS_NO_TABLE = "reads_no_table"

#: Extraction method of a document that could not be read: no output was looked at.
UNREAD_EXTRACTION = "failed"

#: Flags that make a gold result unrepeatable: no answer can be checked against it.
UNREPEATABLE_FLAGS = frozenset({GoldFlag.RANDOM})


#: Why a refused answer was not run (``Extraction.problem`` -> the item's error message).
REFUSED = {
    Refusal.EXECUTABLE_COMMENT: (
        "executable comment (/*! ... */ or /*M! ... */): a MySQL-family server runs its text as "
        "code on some versions only, so the answer has no one meaning: refused, not run"
    ),
    Refusal.MULTIPLE_STATEMENTS: "more than one statement: an answer must be exactly one query",
    Refusal.NOT_READ_ONLY: "not a read-only query (SELECT or WITH ... SELECT): refused, not run",
}


@dataclass(frozen=True)
class Failure:
    """Why one item was not scored normally: its ``reason`` and ``error`` message."""

    reason: str
    error: str

    @classmethod
    def at(cls, stage: str, error: BaseException) -> Failure:
        """An exception at ``stage`` as ``"<stage>: <type>: <first line of message>"``.

        >>> Failure.at("compare", ValueError("bad row\\nmore")).reason
        'compare: ValueError: bad row'
        """
        lines = str(error).strip().splitlines()
        text = f"{stage}: {type(error).__name__}" + (f": {lines[0][:300]}" if lines else "")
        return cls(text, text)


def gold_health(outcome: Outcome) -> str:
    """Judge a gold result: ok, empty, all_null, or the execution status when it did not run."""
    if outcome.status is not Status.OK:
        return outcome.status.value
    if not outcome.rows:
        return GoldStatus.EMPTY
    if all(value is None for row in outcome.rows for value in row):
        return GoldStatus.ALL_NULL
    return GOLD_HEALTHY


@dataclass(frozen=True)
class Unreadable:
    """What an lm-eval document that cannot be read as an :class:`Item` still says: its ``id``
    (-1 when it names none) and ``engine``; the item of :meth:`Answer.unreadable`."""

    id: int
    engine: str | None
    category = None
    flags = ()


def healthy_gold(gold_status: str, flags) -> bool:
    """Whether gold returned a non-empty, not all-NULL result that can be repeated (no
    RAND()): the items ``ex_on_healthy_gold`` is over."""
    return gold_status == GOLD_HEALTHY and not UNREPEATABLE_FLAGS & set(flags)


@dataclass(eq=False)
class Answer:
    """One answer to ``item`` and everything scoring learns about it, stage by stage.

    ``output`` is the raw model output (None: never submitted), ``index`` its item's place in
    the batch; ``extraction`` and ``failure``
    what the extractor made of it and why it cannot run, if so; ``run`` the SQL in the engine's
    dialect; ``outcome`` what running it gave (a failed outcome for an answer that did not run);
    ``gold``, ``ordered`` and ``ties`` gold's outcome, whether its row order counts and its tie
    record; ``verdict`` the comparison; ``dependence`` how its reading of the data was judged
    (``data_dependence``); ``metrics`` and ``item_values`` its numbers; ``fault`` an exception
    of a stage after execution, which makes the whole answer a scoring failure.
    """

    item: Item | Unreadable
    output: str | None
    index: int = 0  # of its item in the batch
    extraction: Extraction | None = None
    failure: Failure | None = None
    run: EngineSql | None = None
    outcome: Outcome | None = None
    gold: Outcome | None = None
    ordered: bool = False
    ties: GoldTies | None = None
    verdict: Verdict | None = None
    dependence: DataDependence | None = None
    metrics: dict = field(default_factory=dict)
    item_values: dict | None = None
    fault: Failure | None = None
    gold_preview: object = None
    prediction_preview: object = None

    @classmethod
    def unreadable(cls, item_id: int, failure: Failure, engine: str | None = None) -> Answer:
        """The answer to a document that could not be read as an item: status ``error``, every
        number defined on ``engine`` 0, ``failure`` as reason and error, gold ``unknown``.

        >>> score = Answer.unreadable(7, Failure("document", "unreadable"), "sqlite").to_json()
        >>> score["status"], score["reason"], score["extraction"], score["gold_status"]
        ('error', 'document', 'failed', 'unknown')
        """
        return cls(Unreadable(item_id, engine), None, fault=failure)

    @property
    def submitted(self) -> bool:
        """Whether its SQL goes to the engine: extracted, not refused, translated."""
        return self.failure is None and self.run is not None and self.run.error is None

    @property
    def judged(self) -> Outcome | None:
        """The outcome the verdict speaks of: a scoring failure's error in place of what ran."""
        if self.fault is not None:
            return Outcome(Status.ERROR, error=self.fault.error)
        return self.outcome

    @property
    def stopped(self) -> Failure | None:
        """What kept it from being compared: a refusal or failure before running, or a fault."""
        return self.fault or self.failure

    @property
    def gold_status(self) -> str:
        """Gold's status: a build-time verdict (non_select, an error SQLite hides) outranks
        what ran now."""
        if not isinstance(self.item, Item):
            return GoldStatus.UNKNOWN
        if self.item.gold_status != GOLD_HEALTHY:
            return self.item.gold_status
        return gold_health(self.gold)

    @property
    def truncated(self) -> bool:
        return self.extraction is not None and self.extraction.truncated

    @property
    def flagged(self) -> bool:
        """Whether it does not read the data where gold does (``reads_no_table``)."""
        return self.stopped is None and self.dependence in FLAGGED

    def fail(self, stage: str, error: BaseException) -> None:
        """Make it a scoring failure at ``stage``: nothing compared, every number 0."""
        self.fault = Failure.at(stage, error)
        self.verdict, self.dependence, self.metrics = None, None, {}

    def reason(self) -> str | None:
        """Which reason wins: missing; a failure (truncation first when a cut-off output was
        refused); a failed translation; truncation of an answer not correct; the verdict's."""
        if self.judged is None:
            return ScoreStatus.MISSING
        stopped = self.stopped
        if stopped is not None:
            return (
                Reason.TRUNCATED if self.truncated and stopped.reason in REFUSED else stopped.reason
            )
        if self.verdict is None:
            return None
        if self.run is not None and self.run.error is not None:
            return Reason.TRANSPILE_ERROR
        if self.truncated and not self.metrics.get(EX):
            return (
                Reason.TRUNCATED
            )  # cut off by the generation limit: that, not the SQL, failed first
        return self.verdict.reason

    def to_json(self) -> dict:
        """The score dict, key for key as every output writes it (an unreadable document's
        has no dialect and no previews: it has no item to take them from)."""
        item, judged, gold, ties = self.item, self.judged, self.gold, self.ties
        read = isinstance(item, Item)
        stopped = self.stopped
        compared = stopped is None and self.verdict is not None
        extraction = self.extraction
        result = {
            "id": item.id,
            "category": item.category,
            "status": ScoreStatus.MISSING if judged is None else judged.status.value,
            # Every per-answer metric defined on the item's engine: 0 unless compared.
            **dict.fromkeys(execution_metrics(item.database.engine if read else item.engine), 0),
            "extracted_sql": None if extraction is None else extraction.sql,
            "extraction": _extraction_method(extraction, read),
            # The dialect the answer was asked in, and the SQL that ran (translated from it).
            **({"prediction_dialect": item.prompted_dialect} if read else {}),
            "executed_sql": None if self.run is None or stopped is not None else self.run.sql,
            "truncated": self.truncated,
            "repetition_loop": extraction is not None and extraction.repetition_loop,
            READS_NO_TABLE: compared and self.flagged,
            DATA_DEPENDENCE: _plain(self.dependence) if compared else None,
            "error": None if judged is None else judged.error,
            "reason": self.reason(),
            "gold_status": self.gold_status,
            "gold_error": None if gold is None else gold.error,
            "flags": list(item.flags),
            "ordered": self.ordered,
            # Carried per item so a sample log alone says which rules judged it.
            "comparison_version": COMPARISON_VERSION,
            # What r_ves divided: the engine's count of work, never averaged.
            WORK: None if judged is None else judged.work,
            GOLD_WORK: None if gold is None else gold.work,
            # Gold's ties: how its right answers were had, and how many there are (a decimal
            # string: it can exceed what a JSON reader's float holds).
            TIE_STATUS: None if ties is None else ties.status,
            ACCEPTABLE: None if ties is None else ties.acceptable,
        }
        if compared:
            result.update(self.metrics)
        if healthy_gold(result["gold_status"], item.flags):
            # Carried by these items only: lm-eval's mean and ``aggregate``'s are over them.
            result[EX_ON_HEALTHY_GOLD] = result[EX]
        if self.item_values is not None:
            result.update(self.item_values)
        if not read:
            return result
        result["gold_preview"] = self.gold_preview
        result["prediction_preview"] = self.prediction_preview
        if gold.status in UNFINISHED and self.item.gold_status in GOLD_RAN:
            _exclude(result, gold)  # only left by recheck_gold when asked to exclude such items
        return result


def _extraction_method(extraction: Extraction | None, read: bool) -> str:
    """How the SQL was found: the extractor's method, ``missing`` for no output, ``failed``
    for a document that could not be read."""
    if extraction is not None:
        return extraction.method
    return ScoreStatus.MISSING if read else UNREAD_EXTRACTION


def _plain(value):
    """An enum member as the plain string the score dicts carry (JSON, counts, text)."""
    return value.value if isinstance(value, Enum) else value


def _exclude(score: dict, gold: Outcome) -> None:
    """Make ``score`` that of an item left out because its gold did not finish: status
    ``excluded``, no metric numbers (it is in no mean), the answer's own status kept."""
    score["prediction_status"] = score["status"]
    score["status"] = ScoreStatus.EXCLUDED
    score["reason"] = f"gold_{gold.status.value}"
    for name in [
        name
        for name, value in score.items()
        if isinstance(value, (int, float))
        and not isinstance(value, bool)
        and name != "id"
        and name not in LOGGED_NUMBERS
    ]:
        del score[name]
