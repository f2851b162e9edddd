"""One per-item score dict read back as typed fields: :class:`ScoredItem`, what every reader of
score dicts reads (lm-eval's ``process_results``, ``scoring.verdicts.aggregate``, ``verify``
and its checks, the report and the explorer) instead of the dict's keys. It reads the
dicts of this version (``scoring.answer.Answer.to_json``, ``scoring.sampled``'s voted ones with
their ``samples``, items left out as ``excluded``) and those older versions wrote (no
``ex_on_healthy_gold``, ``truncated``, ``category`` or ``gold_status``: each read as the older
version meant it), for TPC-DS and LogicCat alike: the fields every reader needs are named, every
number is kept as written in ``values`` (the dict's order), and the report's extras in
``numbers`` and ``details``.

>>> old = {"id": 4, "status": "ok", "ves": 1, "ex": 1, "gold_status": "ok", "reason": None}
>>> item = ScoredItem.from_score(old)  # written before items carried ex_on_healthy_gold
>>> item.ex, item.healthy_gold, dict(item.numbers), dict(item.values)
(1.0, True, {'ex_on_healthy_gold': 1.0}, {'ves': 1, 'ex': 1})
>>> ScoredItem.from_score({"id": 5, "status": "excluded", "reason": "gold_timeout"}).excluded
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sqlbench_lmeval.scoring.answer import READS_NO_TABLE, healthy_gold
from sqlbench_lmeval.scoring.cost import REQUESTS, TOKENIZER_NAME, TOKENS_FROM, Cost
from sqlbench_lmeval.scoring.data_dependence import DATA_DEPENDENCE
from sqlbench_lmeval.scoring.item import EXCLUDED, GOLD_HEALTHY
from sqlbench_lmeval.scoring.metrics import (
    ACCEPTABLE,
    EX,
    EX_ON_HEALTHY_GOLD,
    EX_SET,
    EX_STRICT,
    GOLD_WORK,
    LOGGED_NUMBERS,
    TIE_STATUS,
    VES,
    VOTED_EX,
    WORK,
)
from sqlbench_lmeval.vocabulary import Reason

#: Score-dict fields with a fixed meaning (the metrics among them: VES and EX's variants, named
#: by the metric registry); every other number lands in ``ScoredItem.numbers``.
_KNOWN_FIELDS = frozenset(
    {"id", "status", VES, EX, EX_STRICT, EX_SET, "category", "gold_status", "error"}
    | {"reason", "extraction", "extracted_sql", "flags", "ordered", "comparison_version"}
    | {"gold_error", "truncated", "repetition_loop", READS_NO_TABLE, DATA_DEPENDENCE}
    | LOGGED_NUMBERS  # work counts: they explain r_ves, they are not averaged
)

#: Fields kept per item for the explorer (``ScoredItem.details``): result previews, what the
#: score dict or the lm-eval sample says about the question and the answer, and what explains
#: the verdict: gold's ties (``tie_status``, ``acceptable``: a decimal string) and the work
#: counts r_ves divided; and where a metered answer's token counts came from (``scoring.cost``).
DETAIL_FIELDS = (
    "gold_preview",
    "prediction_preview",
    "executed_sql",
    "gold_error",
    "raw_output",
    "question",
    "gold_sql",
    "db_path",
    "db_id",
    "schema",
    "prompt",
    TIE_STATUS,
    ACCEPTABLE,
    WORK,
    GOLD_WORK,
    TOKENS_FROM,
    TOKENIZER_NAME,
)

#: The key of a sampled item's per-sample records (``scoring.sampled``).
SAMPLES = "samples"


@dataclass(frozen=True)
class ScoredItem:
    """One item's verdict, as ``scoring.answer.Answer.to_json`` (or ``scoring.sampled``) made it."""

    id: int
    status: str  # ok, error, timeout, too_many_rows, no_sql, crashed, missing, excluded
    ves: float  # NaN for an item left out (``excluded``: it has no numbers)
    ex: float
    ex_strict: float
    ex_set: float
    category: str | None = None
    gold_status: str = GOLD_HEALTHY
    error: str | None = None
    reason: str | None = None
    extraction: str | None = None
    extracted_sql: str | None = None
    flags: tuple[str, ...] = ()
    truncated: bool = False  # the output was cut off by the generation limit
    repetition_loop: bool = False  # ... while repeating itself (a larger limit would not help)
    reads_no_table: bool = False  # it ran but does not read the data (a constant answer)
    # How that was decided (``scoring.data_dependence.DataDependence``'s values); None where
    # nothing was decided (not matched, or gold a constant).
    data_dependence: str | None = None
    comparison_version: str | None = None  # the rules that judged it; None: not recorded
    # Every other number of the score dict: sim_*, structural_*, complexity counts, gold_* counts.
    numbers: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # DETAIL_FIELDS the score (or its sample) has, for the explorer; never averaged.
    details: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    # Every number of the score dict as written (an int stays an int), in the dict's order,
    # the id aside: what lm-eval's table, ``aggregate`` and ``verify`` pass on unchanged.
    values: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # A sampled item's per-sample records (``scoring.sampled``); None for a single answer.
    samples: tuple[Mapping, ...] | None = None

    @classmethod
    def from_score(cls, score: Mapping) -> ScoredItem:
        """Build from a score dict; a ``ValueError``/``KeyError``/``TypeError`` if malformed
        (an item left out, ``excluded``, has no VES or EX: they read as NaN)."""
        status = str(score["status"])
        number = score.get if status == EXCLUDED else score.__getitem__
        values = {
            name: value
            for name, value in score.items()
            # is_number, written out: this runs for every key of every item read
            if isinstance(value, (int, float)) and not isinstance(value, bool) and name != "id"
        }
        return cls(
            id=int(score["id"]),
            status=status,
            ves=_number(number(VES)),
            ex=_number(number(EX)),
            ex_strict=_number(score.get(EX_STRICT, math.nan)),
            ex_set=_number(score.get(EX_SET, math.nan)),
            category=score.get("category") or None,
            gold_status=str(score.get("gold_status") or GOLD_HEALTHY),
            error=score.get("error"),
            reason=score.get("reason"),
            extraction=score.get("extraction"),
            extracted_sql=score.get("extracted_sql"),
            flags=tuple(score.get("flags") or ()),
            truncated=bool(score.get("truncated")) or score.get("reason") == Reason.TRUNCATED,
            repetition_loop=bool(score.get("repetition_loop")),
            reads_no_table=bool(score.get(READS_NO_TABLE)),
            data_dependence=score.get(DATA_DEPENDENCE),
            comparison_version=score.get("comparison_version"),
            numbers=MappingProxyType(_other_numbers(score, values)),
            details=MappingProxyType(
                {name: score[name] for name in DETAIL_FIELDS if score.get(name) is not None}
            ),
            values=MappingProxyType(values),
            samples=None if SAMPLES not in score else tuple(score[SAMPLES] or ()),
        )

    @property
    def excluded(self) -> bool:
        """Whether the item is left out because its gold did not finish (in no mean)."""
        return self.status == EXCLUDED

    @property
    def healthy_gold(self) -> bool:
        """Whether its gold is healthy (``scoring.answer.healthy_gold``)."""
        return healthy_gold(self.gold_status, self.flags)

    @property
    def executed_sql(self) -> str | None:
        """The SQL that ran, in the engine's dialect (None: nothing ran)."""
        return self.details.get("executed_sql")

    @property
    def prediction_preview(self) -> object:
        """The first rows of the answer's result, as scoring previewed them (None: none kept)."""
        return self.details.get("prediction_preview")

    @property
    def tie_status(self) -> str | None:
        """How gold's ties were judged (``scoring.gold_ties``); None: not recorded."""
        return self.details.get(TIE_STATUS)

    @property
    def acceptable(self) -> object:
        """How many answers gold's ties make right (a decimal string); None: not recorded."""
        return self.details.get(ACCEPTABLE)

    @property
    def work(self) -> int | None:
        """The engine's count of the answer's work (what r_ves divided); None: not counted."""
        return self.details.get(WORK)

    @property
    def gold_work(self) -> int | None:
        """The same count of gold's work."""
        return self.details.get(GOLD_WORK)

    @property
    def cost(self) -> Cost | None:
        """What a metered answer cost (``scoring.cost``: tokens, latency, where the counts came
        from); None for an answer that was not metered."""
        if REQUESTS not in self.values:
            return None
        return Cost.from_json(
            {
                **self.values,
                TOKENS_FROM: self.details.get(TOKENS_FROM),
                TOKENIZER_NAME: self.details.get(TOKENIZER_NAME),
            }
        )

    @property
    def answers(self) -> list[str]:
        """The SQL it holds: its extracted answer, and in a sampled run (whose item has no
        answer of its own) each sample's."""
        found = [sample.get("extracted_sql") for sample in self.samples or ()]
        return [sql for sql in [self.extracted_sql, *found] if sql]


def _other_numbers(score: Mapping, values: Mapping) -> dict[str, float]:
    """The numbers (``values``: those of ``score``) outside :data:`_KNOWN_FIELDS`, as floats."""
    numbers = {name: float(value) for name, value in values.items() if name not in _KNOWN_FIELDS}
    # Scores made before items carried EX on healthy gold: the same number from the item's
    # gold health and EX (single answers only: a sampled item's EX is no vote).
    if (
        EX_ON_HEALTHY_GOLD not in score
        and VOTED_EX not in score
        and healthy_gold(str(score.get("gold_status") or ""), score.get("flags") or ())
        and is_number(score.get(EX))
    ):
        numbers[EX_ON_HEALTHY_GOLD] = float(score[EX])
    return numbers


def is_number(value) -> bool:
    """Whether a score-dict value is a number (a bool is a flag, not a number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value) -> float:
    return math.nan if value is None else float(value)


__all__ = ["DETAIL_FIELDS", "SAMPLES", "ScoredItem", "is_number"]
