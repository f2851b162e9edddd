"""The report's "Cross-engine verdicts" section: where one model's verdict changes with the engine,
item by item, with each engine's gold status (docs/reports.md#reports-what-reporthtml-holds)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.report.analysis import (
    engines_differ,
    error_kind,
    outcome_of,
    paired_items,
    runs_by_view,
)
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.vocabulary import VerdictClass

TITLE = "Cross-engine verdicts"
EXPLANATION = paragraph(
    """
    Runs of the same items on different engines, paired by item id as in the paired comparison:
    every common item whose verdict (correct, wrong result, or the execution status) differs,
    with the gold status each engine judged. Their dataset versions differ by the engine alone.
    """
)


@dataclass(frozen=True)
class Verdict:
    """One run's verdict on an item: its outcome and status, and its engine's gold status."""

    outcome: str  # analysis.outcome_of: correct, wrong_result, error, timeout, ...
    status: str
    gold_status: str
    error: str | None = None
    reason: str | None = None  # compare's reason: why a result was wrong (values, order, ...)

    @classmethod
    def of(cls, item: ScoredItem) -> Verdict:
        return cls(outcome_of(item), item.status, item.gold_status, item.error, item.reason)

    def describe(self) -> str:
        """The verdict as a table cell: an error with its kind, a wrong result with its reason."""
        if self.status == Status.ERROR.value:
            return f"error ({error_kind(self.error)})"
        if self.outcome == VerdictClass.WRONG_RESULT and self.reason:
            return f"wrong result ({self.reason.replace('_', ' ')})"
        return self.outcome.replace("_", " ")


@dataclass(frozen=True)
class VerdictDifference:
    id: int
    category: str | None
    a: Verdict
    b: Verdict


@dataclass(frozen=True)
class EngineComparison:
    """Runs ``a`` and ``b`` on one view, run on different engines."""

    view: str
    a: str
    b: str
    engine_a: str
    engine_b: str
    n_common: int
    differences: tuple[VerdictDifference, ...]  # by item id


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    """The heading, then one level-3 heading per pair of runs on different engines (several
    per view when a view has more such pairs); nothing when there is no such pair."""
    comparisons = engine_comparisons(runs)
    if not comparisons:
        return []
    return [
        Section(TITLE, (EXPLANATION,)),
        *(
            _comparison_section(comparison)
            for view in context.views
            for comparison in comparisons
            if comparison.view == view
        ),
    ]


def _comparison_section(comparison: EngineComparison) -> Section:
    a = f"{comparison.a} ({comparison.engine_a})"
    b = f"{comparison.b} ({comparison.engine_b})"
    summary = (
        f"{comparison.a} on {comparison.engine_a} against {comparison.b} on "
        f"{comparison.engine_b}: {len(comparison.differences)} of {comparison.n_common} common "
        "items differ in verdict."
    )
    blocks: list[Block] = [summary]
    if comparison.differences:
        blocks.append(
            Table(
                (
                    "Item",
                    "Category",
                    a,
                    b,
                    f"Gold on {comparison.engine_a}",
                    f"Gold on {comparison.engine_b}",
                ),
                tuple(
                    (
                        str(d.id),
                        d.category or "–",
                        d.a.describe(),
                        d.b.describe(),
                        d.a.gold_status,
                        d.b.gold_status,
                    )
                    for d in comparison.differences
                ),
                (True, False, False, False, False, False),
            )
        )
    return Section(f"{comparison.view}: {a} vs {b}", tuple(blocks), level=3)


def engine_comparisons(runs: Sequence[Run]) -> list[EngineComparison]:
    """Every pair of runs on a shared view whose engines differ, with the differing items."""
    comparisons = []
    for view, having in runs_by_view(runs):
        for (run_a, result_a), (run_b, result_b) in combinations(having, 2):
            if not engines_differ(result_a, result_b):
                continue
            pairs = paired_items(result_a, result_b)
            differences = sorted(
                (
                    VerdictDifference(a.id, a.category or b.category, Verdict.of(a), Verdict.of(b))
                    for a, b in pairs
                    if outcome_of(a) != outcome_of(b)
                ),
                key=lambda difference: difference.id,
            )
            comparisons.append(
                EngineComparison(
                    view=view,
                    a=run_a.name,
                    b=run_b.name,
                    engine_a=result_a.engine,
                    engine_b=result_b.engine,
                    n_common=len(pairs),
                    differences=tuple(differences),
                )
            )
    return comparisons
